// A month of Test history for one merchant (issue 36): payments on several rails and MoMo networks, failed
// attempts with their reasons, refunds and a settlement, so the dashboard's home has something to show. Every
// payment, refund and settlement goes through the real code paths (the public API through inject, the
// settlement run); then each day's sessions, attempts and refunds are moved back to that day by SQL, oldest day
// first. The ledger's rows keep the time they were written (journal rows are immutable, and balance_transactions'
// seq follows created_at): the balance and its movements are today's, the home page's figures the month's.
// The failure reasons are written by SQL too: a Test simulation has no provider code to map one from.
//
//   node --import tsx scripts/demo-history.ts <merchant e-mail> [days]
// on the deployment's storage (DATABASE_URL or DATA_DIR, with the server stopped when embedded).
import { randomUUID } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import type { Db } from '../src/db/index.ts';
import type { FailureReason } from '../src/lib/payment-failures.ts';
import { settleMerchant } from '../src/payouts/settlement-run.ts';
import { verifyTestRecipients } from '../src/payouts/recipients.ts';
import { LiveProviders } from '../src/rails/live.ts';

export interface DemoMerchant {
  merchant_id: string;
  test_api_key: string;
}

export interface DemoHistoryOptions {
  /** Days back from today, today included (default 30). */
  days?: number;
  /** The most sessions a day (default 5; each day has 1 to this many). */
  sessionsPerDayMax?: number;
  /** Seeds the choices, so a run is the same each time (default 36). */
  seed?: number;
  /** The instant taken as now (default the clock's). */
  now?: Date;
}

export interface DemoHistory {
  sessions: number;
  paid: number;
  failedAttempts: number;
  refunds: number;
  settlements: number;
}

type Pay =
  | { rail: 'momo'; operator: 'mtn' | 'telecel' | 'at'; phone: string }
  | { rail: 'card' }
  | { rail: 'bank_transfer' };

const METHODS: Pay[] = [
  { rail: 'momo', operator: 'mtn', phone: '0241234567' },
  { rail: 'momo', operator: 'mtn', phone: '0541234567' },
  { rail: 'momo', operator: 'telecel', phone: '0201234567' },
  { rail: 'momo', operator: 'at', phone: '0261234567' },
  { rail: 'card' },
  { rail: 'bank_transfer' },
];
const REASONS: FailureReason[] = [
  'insufficient_funds',
  'insufficient_funds',
  'insufficient_funds',
  'wrong_pin',
  'wrong_pin',
  'timed_out',
  'declined_by_payer',
  'number_not_registered',
];
const CUSTOMERS = ['Ama Mensah', 'Kwame Boateng', 'Efua Owusu', 'Yaw Asante', 'Akosua Darko', 'Kofi Agyeman'];
const DAY_MS = 86_400_000;
const HOUR_MS = 3_600_000;
/** A demo day's payments fall between these hours (Africa/Accra). */
const OPENING_HOUR = 7;
const CLOSING_HOUR = 21;

// The tables a day's rows are moved back in, with their time columns (the ledger's are left as written).
const DATED: [table: string, columns: string[]][] = [
  ['checkout_sessions', ['created_at', 'updated_at', 'finalized_at', 'expires_at']],
  ['payment_attempts', ['created_at', 'updated_at', 'finalized_at']],
  ['refunds', ['created_at', 'updated_at', 'succeeded_at']],
];

/** A small LCG: the same seed, the same month. */
function randomOf(seed: number) {
  let state = seed % 2_147_483_647 || 1;
  return () => {
    state = (state * 48_271) % 2_147_483_647;
    return state / 2_147_483_647;
  };
}

export async function generateDemoHistory(
  app: FastifyInstance,
  db: Db,
  merchant: DemoMerchant,
  options: DemoHistoryOptions = {},
): Promise<DemoHistory> {
  const days = options.days ?? 30;
  const perDayMax = options.sessionsPerDayMax ?? 5;
  const random = randomOf(options.seed ?? 36);
  const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)]!;
  const now = options.now ?? new Date();
  const owner = { merchantId: merchant.merchant_id, environment: 'test' as const };
  const counts: DemoHistory = { sessions: 0, paid: 0, failedAttempts: 0, refunds: 0, settlements: 0 };

  const api = async (method: 'GET' | 'POST', url: string, body?: unknown) => {
    const res = await app.inject({
      method,
      url,
      headers: {
        authorization: `Bearer ${merchant.test_api_key}`,
        ...(body === undefined ? {} : { 'content-type': 'application/json', 'idempotency-key': randomUUID() }),
      },
      payload: body === undefined ? undefined : JSON.stringify(body),
    });
    if (res.statusCode >= 300) throw new Error(`${method} ${url}: ${res.statusCode} ${res.body}`);
    return res.json() as Record<string, unknown>;
  };
  const payer = async (url: string, body: unknown) => {
    const res = await app.inject({
      method: 'POST',
      url,
      headers: { 'content-type': 'application/json' },
      payload: JSON.stringify(body),
    });
    if (res.statusCode >= 300) throw new Error(`POST ${url}: ${res.statusCode} ${res.body}`);
    return res.json() as { attempt_reference: string };
  };

  /** One attempt on the session with this method, decided as asked; its reason recorded when it failed. */
  async function attempt(sessionId: string, totals: Record<string, { total_minor: number }>, pay: Pay, ok: boolean) {
    const started = await payer(`/api/v1/checkout/sessions/${sessionId}/provider-attempts`, {
      ...pay,
      amount_minor: totals[pay.rail]!.total_minor,
    });
    const reference = started.attempt_reference;
    await api('POST', `/api/v1/test/payment-attempts/${reference}/simulate`, { outcome: ok ? 'paid' : 'failed' });
    if (!ok) {
      counts.failedAttempts++;
      await db.query(`UPDATE payment_attempts SET failure_reason = $2 WHERE id = $1`, [reference, pick(REASONS)]);
    }
  }

  /**
   * A day's sessions: most paid (some after a failed try), a few only failed, now and then a refund; each moved
   * back to a time of that day (`dayStart` to `dayEnd`) once made.
   */
  async function day(dayStart: number, dayEnd: number) {
    const sessions = 1 + Math.floor(random() * perDayMax);
    for (let i = 0; i < sessions; i++) {
      const mark = await dbNow(db);
      await oneSession();
      await backdate(mark, new Date(dayStart + random() * (dayEnd - dayStart)));
    }
  }

  /** One session: most paid (some after a failed try), a few only failed, now and then a refund. */
  async function oneSession() {
    const amount = (5 + Math.floor(random() * 60)) * 500 + (random() < 0.3 ? 50 : 0);
    const session = await api('POST', '/api/v1/sessions', {
      amount_minor: amount,
      invoice_ref: `DEMO-${randomUUID().slice(0, 8).toUpperCase()}`,
      customer_name: pick(CUSTOMERS),
    });
    counts.sessions++;
    const id = String(session.id);
    const quote = await api('GET', `/api/v1/checkout/sessions/${id}/quote`);
    const totals = quote.surcharges as Record<string, { total_minor: number }>;
    const roll = random();
    const pay = pick(METHODS);
    if (roll < 0.2) await attempt(id, totals, pay.rail === 'momo' ? pay : METHODS[0]!, false);
    if (roll < 0.1) return; // gave up
    await attempt(id, totals, pay, true);
    counts.paid++;
    if (random() < 0.12) {
      const part = random() < 0.5 ? amount : Math.floor(amount / 2);
      await api('POST', '/api/v1/refunds', { session_id: id, amount_minor: part, reason: 'requested_by_customer' });
      counts.refunds++;
    }
  }

  /** Moves the rows written since `mark` back to `target` (the same offset for each, so their order holds). */
  async function backdate(mark: Date, target: Date) {
    const offsetMs = Math.max(0, mark.getTime() - target.getTime());
    if (offsetMs === 0) return;
    const shift = `make_interval(secs => $3::double precision / 1000)`;
    for (const [table, columns] of DATED) {
      await db.query(
        `UPDATE ${table} SET ${columns.map((c) => `${c} = ${c} - ${shift}`).join(', ')}
          WHERE merchant_id = $1 AND environment = 'test' AND created_at >= $2`,
        [merchant.merchant_id, mark, offsetMs],
      );
    }
  }

  // Ghana keeps GMT all year: a day's business hours in UTC are Accra's.
  const startOfToday = Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate());
  for (let back = days - 1; back >= 1; back--) {
    const dayStart = startOfToday - back * DAY_MS;
    await day(dayStart + OPENING_HOUR * HOUR_MS, dayStart + CLOSING_HOUR * HOUR_MS);
  }
  counts.settlements += await settle(db, api, owner, now);
  // Today's, after the settlement (what the next one will pay), between opening time and now.
  await day(Math.min(startOfToday + OPENING_HOUR * HOUR_MS, now.getTime()), now.getTime());
  return counts;
}

const dbNow = async (db: Db) => (await db.query<{ now: Date }>('SELECT clock_timestamp() AS now'))[0]!.now;

/**
 * A daily schedule to a verified bank account, its first run due now and the account past its 24-hour hold
 * (set by SQL: the demo has no day to wait), then the settlement run as the worker would make it.
 */
async function settle(
  db: Db,
  api: (method: 'GET' | 'POST', url: string, body?: unknown) => Promise<Record<string, unknown>>,
  owner: { merchantId: string; environment: 'test' },
  now: Date,
): Promise<number> {
  const capabilities = (await api('GET', '/api/v1/payouts/capabilities')) as { banks?: { id: string }[] };
  const bankId = capabilities.banks?.[0]?.id;
  if (!bankId) return 0;
  const recipient = await api('POST', '/api/v1/payouts/recipients', {
    bank_id: bankId,
    account_number: '1234567890',
    account_name: 'Demo Settlement Account',
  });
  await db.query(`UPDATE recipients SET created_at = now() - interval '1 minute' WHERE id = $1`, [recipient.id]);
  await verifyTestRecipients(db);
  await api('POST', '/api/v1/settlements/schedule', { interval: 'daily', time: '10:00', recipient_id: recipient.id });
  await db.query(
    `UPDATE settlement_schedules SET recipient_active_at = $3::timestamptz - interval '2 days', next_run_at = $3::timestamptz - interval '1 minute'
      WHERE merchant_id = $1 AND environment = $2`,
    [owner.merchantId, owner.environment, now],
  );
  const made = await settleMerchant({ db, providers: LiveProviders.none() }, owner, now);
  return made.length;
}

if (process.argv[1] && import.meta.filename === process.argv[1]) {
  const [email, daysArg] = process.argv.slice(2);
  if (!email || email.startsWith('-')) {
    console.error('usage: node --import tsx scripts/demo-history.ts <merchant e-mail> [days]');
    process.exit(email === '--help' || email === '-h' ? 0 : 2);
  }
  const { loadConfig } = await import('../src/config/index.ts');
  const { openDb } = await import('../src/db/index.ts');
  const { buildApp } = await import('../src/app.ts');
  const { createApiKey } = await import('../src/accounts/api-keys.ts');
  const config = loadConfig({ ...process.env, LOG_LEVEL: 'silent', WORKERS: 'off' });
  const db = await openDb(config);
  try {
    const [row] = await db.query<{ id: string }>(
      `SELECT m.id FROM merchants m JOIN users u ON u.merchant_id = m.id WHERE lower(u.email) = lower($1)`,
      [email],
    );
    if (!row) {
      console.error(`no merchant has a user ${email}`);
      process.exitCode = 1;
    } else {
      const key = await createApiKey(db, {
        merchantId: row.id,
        environment: 'test',
        actor: { type: 'cli', id: 'scripts/demo-history.ts', email: null },
      });
      const app = await buildApp({ config, db, logger: false, payoutRail: null });
      try {
        await app.ready();
        const made = await generateDemoHistory(
          app,
          db,
          { merchant_id: row.id, test_api_key: key.key },
          { days: daysArg ? Number(daysArg) : 30 },
        );
        console.log(JSON.stringify(made));
      } finally {
        await app.close();
      }
    }
  } finally {
    await db.close();
  }
}
