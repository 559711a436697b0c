// The settlement run raced on three OS processes (issue 34, "Done when": "A multi-process test races the run on
// three processes"). PostgreSQL only (embedded storage allows one process per data dir). A private database on
// the DATABASE_URL server holds 20 Test merchants, each with a verified settlement account, a daily schedule
// whose periods since three days ago are due, available money (credits on several rails) and one credit still
// clearing (Test clearing rehearsed: MoMo waits a business day). Three child processes
// (test/support/settlement-runner.ts), started together, each settle the 20 merchants with settleMerchant in an
// order of their own, then call the worker's pass (runDueSettlements) in a loop until 2 s have passed. Afterwards:
//   - no child crashed, and together they made exactly the settlements the table holds, none twice;
//   - exactly one settlement per merchant and period, one per merchant here (the money is all in the first period
//     due; later periods find nothing to pay), of the whole available balance read before the race;
//   - the pending credit was not paid: available is 0 and pending is untouched afterwards;
//   - each settlement's transactions sum to its amount; the ledger's invariants hold; every schedule is past now.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { createInterface } from 'node:readline';
import { after, before, describe, it } from 'node:test';
import pg from 'pg';
import { createMerchant } from '../../src/accounts/service.ts';
import { openDb, type Db } from '../../src/db/index.ts';
import { upsertClearingSettings } from '../../src/ledger/clearing.ts';
import { applyPendingCredits, balance, checkInvariants, creditPayment } from '../../src/ledger/service.ts';
import { createRecipient } from '../../src/payouts/recipients.ts';
import { updateSchedule } from '../../src/payouts/settlement-schedule.ts';
import { storageKind } from '../support/helpers.ts';

const MERCHANTS = 20;
const CHILDREN = 3;
const RUN_MS = 2_000;
const DAY_MS = 86_400_000;
const SKIP = storageKind !== 'postgres' && 'PostgreSQL only: embedded storage allows one process per data dir';

interface ChildResult {
  code: number | null;
  stdout: string;
  stderr: string;
  result: { passes: number; made: string[] } | null;
}

describe(`settlement run raced on three processes (${storageKind})`, { skip: SKIP }, () => {
  const name = `sika_race_${randomUUID().replace(/-/g, '').slice(0, 12)}`;
  let adminUrl = '';
  let databaseUrl = '';
  let db: Db;

  before(async () => {
    adminUrl = process.env.DATABASE_URL!;
    const admin = new pg.Client({ connectionString: adminUrl });
    await admin.connect();
    try {
      await admin.query(`CREATE DATABASE ${name}`);
    } finally {
      await admin.end();
    }
    const url = new URL(adminUrl);
    url.pathname = `/${name}`;
    databaseUrl = url.toString();
    db = await openDb({ databaseUrl, dataDir: null });
  });

  after(async () => {
    await db?.close();
    const admin = new pg.Client({ connectionString: adminUrl });
    await admin.connect();
    try {
      await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    } finally {
      await admin.end();
    }
  });

  function startChild(
    merchantIds: string[],
    n: number,
  ): { ready: Promise<void>; go: () => void; done: Promise<ChildResult> } {
    const child = spawn(process.execPath, ['--import', 'tsx', 'test/support/settlement-runner.ts'], {
      env: {
        ...process.env,
        DATABASE_URL: databaseUrl,
        RUNNER_MS: String(RUN_MS),
        RUNNER_MERCHANTS: merchantIds.join(','),
        RUNNER_SEED: String(7 + n * 1_000),
      },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    const ready = new Promise<void>((resolve, reject) => {
      const lines = createInterface({ input: child.stdout });
      lines.on('line', (line) => {
        stdout += `${line}\n`;
        if (line === 'ready') resolve();
      });
      child.on('exit', (code) => reject(new Error(`child exited (${code}) before ready: ${stderr}`)));
    });
    const done = new Promise<ChildResult>((resolve) => {
      child.on('exit', (code) => {
        const last = stdout.trim().split('\n').at(-1) ?? '';
        let result: ChildResult['result'] = null;
        try {
          result = last.startsWith('{') ? JSON.parse(last) : null;
        } catch {
          result = null;
        }
        resolve({ code, stdout, stderr, result });
      });
    });
    return { ready, go: () => child.stdin.end('go\n'), done };
  }

  it('three processes running the settlement worker at once make exactly one settlement per merchant and period, of the whole available balance', {
    timeout: 180_000,
  }, async (tc) => {
    const system = { type: 'system' as const, id: 'settlement-race', email: null };
    const threeDaysAgo = new Date(Date.now() - 3 * DAY_MS);
    const merchants: { id: string; availableMinor: number; pendingMinor: number }[] = [];
    for (let i = 0; i < MERCHANTS; i++) {
      const m = await createMerchant(
        db,
        { name: `Race ${i}`, email: `race-${i}-${randomUUID()}@example.com`, webhookUrl: null, payoutApproval: false },
        { allowPrivateTargets: true },
      );
      const principal = { merchantId: m.merchant_id, environment: 'test' as const, apiKeyId: '', apiKeyPrefix: '' };
      const recipient = await createRecipient(db, principal, {
        account_type: 'momo',
        network: 'mtn',
        phone: '0241234567',
        account_name: 'Ama Owusu',
      });
      await db.query(`UPDATE recipients SET verification_status = 'verified', verified_at = now() WHERE id = $1`, [
        recipient.id,
      ]);
      // Test clearing rehearsed: MoMo waits a business day (the ledger's defaults), card and cash clear at once.
      await db.transaction((tx) =>
        upsertClearingSettings(tx, m.merchant_id, 'test', { test_clearing: true, clearing_days: { card: 0 } }),
      );
      await db.transaction(async (tx) => {
        for (const [rail, chargedMinor] of [
          ['card', 10_000 + i],
          ['cash', 2_500 * (i + 1)],
          ['bank_transfer', 777],
          ['momo', 5_000],
        ] as const)
          await creditPayment(tx, {
            merchantId: m.merchant_id,
            environment: 'test',
            paymentId: `att_${randomUUID()}`,
            chargedMinor,
            payerFeeMinor: 0,
            merchantFeeMinor: Math.floor(chargedMinor / 50),
            rail,
          });
      });
      await applyPendingCredits(db, m.merchant_id, 'test');
      await updateSchedule(
        db,
        {
          merchantId: m.merchant_id,
          environment: 'test',
          actor: system,
          channel: 'dashboard',
          baseUrl: null,
          now: threeDaysAgo,
        },
        { interval: 'daily', time: '00:00', recipient_id: recipient.id },
      );
      const b = await balance(db, m.merchant_id, 'test');
      assert.ok(b.available_minor > 0 && b.pending_minor > 0, `merchant ${i} has available and pending money`);
      merchants.push({ id: m.merchant_id, availableMinor: b.available_minor, pendingMinor: b.pending_minor });
    }
    const due = await db.query<{ n: number }>(
      'SELECT count(*)::int AS n FROM settlement_schedules WHERE next_run_at <= now() AND paused_at IS NULL',
    );
    assert.equal(due[0]!.n, MERCHANTS, 'every schedule is due');

    const children = Array.from({ length: CHILDREN }, (_, n) =>
      startChild(
        merchants.map((m) => m.id),
        n,
      ),
    );
    await Promise.all(children.map((c) => c.ready));
    for (const c of children) c.go();
    const results = await Promise.all(children.map((c) => c.done));
    for (const [n, r] of results.entries()) {
      assert.equal(r.code, 0, `child ${n} crashed: ${r.stderr}`);
      assert.ok(r.result, `child ${n} printed its result: ${r.stdout}`);
      assert.ok(r.result.passes >= 1, `child ${n} ran`);
    }
    const madeByChildren = results.flatMap((r) => r.result!.made);
    tc.diagnostic(
      `settlements made per child: ${results.map((r) => `${r.result!.made.length} in ${r.result!.passes} passes`).join(', ')}`,
    );
    assert.equal(new Set(madeByChildren).size, madeByChildren.length, 'no settlement reported by two children');

    const settlements = await db.query<{
      id: string;
      merchant_id: string;
      amount_minor: number;
      status: string;
      settlement_period_end: Date;
    }>(
      `SELECT id, merchant_id, amount_minor::int AS amount_minor, status, settlement_period_end FROM payouts WHERE type = 'settlement' ORDER BY id`,
    );
    assert.deepEqual(
      settlements.map((s) => s.id).sort(),
      [...madeByChildren].sort(),
      'the children made exactly the settlements the table holds',
    );
    const perPeriod = await db.query(
      `SELECT merchant_id, settlement_period_end FROM payouts WHERE type = 'settlement'
        GROUP BY merchant_id, environment, settlement_period_end HAVING count(*) > 1`,
    );
    assert.deepEqual(perPeriod, [], 'one settlement per merchant and period');
    for (const m of merchants) {
      const mine = settlements.filter((s) => s.merchant_id === m.id);
      assert.equal(mine.length, 1, `merchant ${m.id}: one settlement (the money is all in the first period due)`);
      assert.equal(
        mine[0]!.amount_minor,
        m.availableMinor,
        'the settlement is the whole available balance before the race',
      );
      assert.equal(mine[0]!.status, 'paid', 'a Test settlement is paid at once');
      const b = await balance(db, m.id, 'test');
      assert.equal(b.available_minor, 0, 'nothing available is left behind');
      assert.equal(b.pending_minor, m.pendingMinor, 'the credit still clearing was not paid out');
      const [sum] = await db.query<{ paid: string }>(
        `SELECT coalesce(sum(b.net_minor), 0)::text AS paid FROM settlement_transactions st
           JOIN balance_transactions b ON b.entry_id = st.entry_id JOIN journal_entries e ON e.id = st.entry_id
          WHERE st.payout_id = $1 AND e.reference_id <> st.payout_id`,
        [mine[0]!.id],
      );
      assert.equal(Number(sum!.paid), m.availableMinor, 'its transactions sum to its amount');
    }
    const late = await db.query(
      'SELECT merchant_id FROM settlement_schedules WHERE next_run_at <= now() AND paused_at IS NULL',
    );
    assert.deepEqual(late, [], 'every period due was run');
    assert.deepEqual(await checkInvariants(db), []);
  });
});
