// The reconciliation's rows and totals (issue 30, docs/reconciliation.md): one row per difference (a bank
// transfer whose mismatched credit was then paid is one row, not "Amount differs" and "Paid in Sika, no
// statement line"); a day with no records on either side says so instead of "every record matched"; the
// statement totals are per collection account and leave out lines of voided imports and of other accounts.
// Over HTTP through the console; each test reconciles a day of its own far from today (records moved there),
// so a shared database holds nothing else on it.
import assert from 'node:assert/strict';
import { randomInt, randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import type { Actor } from '../../src/audit/log.ts';
import { applyOutcome } from '../../src/checkout/payments.ts';
import { checkInvariants } from '../../src/ledger/service.ts';
import type { CollectionAccount } from '../../src/rails/bank-transfer/accounts.ts';
import { oneRowPerRecord, parseDay, type Difference, type SikaRecord } from '../../src/reconciliation/model.ts';
import { importStatement, voidImport } from '../../src/statements/service.ts';
import { cedis, statementsConsole, gcbStatement, liveTransfer, uniqueWords } from '../support/bank-statements.ts';
import type { ConsoleClient } from '../support/console-client.ts';
import { storageKind, type TestContext } from '../support/helpers.ts';

const PASSWORD = 'reconciliation-rows-password';

/** A day of its own: somewhere in 2040-2089; noon in Accra is when its records happened. */
function freshDay(): { day: string; noon: Date; slashed: string } {
  const date = new Date(Date.UTC(2040, 0, 1) + randomInt(0, 50 * 365) * 86_400_000);
  const day = date.toISOString().slice(0, 10);
  const [y, m, d] = day.split('-');
  return { day, noon: new Date(parseDay(day)!.start.getTime() + 12 * 3_600_000), slashed: `${d}/${m}/${y}` };
}
const differenceRows = (body: string) =>
  [...body.matchAll(/<tr data-kind="([a-z_]+)">([\s\S]*?)<\/tr>/g)].map((found) => [found[1]!, found[2]!] as const);

describe(`the reconciliation's rows and totals (${storageKind})`, () => {
  let t: TestContext;
  let ops: ConsoleClient;
  let operator: Actor;
  let accounts: CollectionAccount[];

  before(async () => {
    ({ t, ops, operator, accounts } = await statementsConsole('rows', PASSWORD));
  });
  after(() => t.close());

  const importCsv = (csv: string, bankCode = 'GCB', with_: readonly CollectionAccount[] = accounts) =>
    importStatement(t.db, {
      bankCode,
      fileName: `${randomUUID()}.csv`,
      csv,
      importedBy: operator,
      checkoutUrlHost: t.config.checkoutUrlHost,
      collectionAccounts: with_,
    });

  it('merges differences naming one record into one row (pure rule)', () => {
    const record = { kind: 'collection', id: 'att_1', reference: 'SK1' } as SikaRecord;
    const rows = oneRowPerRecord([
      {
        kind: 'amount_differs',
        reference: 'SK1',
        sika: record,
        provider: null,
        lineId: 'l1',
        note: 'The credit is GHS 500.00',
      },
      {
        kind: 'missing_at_provider',
        reference: 'SK1',
        sika: record,
        provider: null,
        note: 'Paid in Sika, but no matched statement line paid it',
      },
      { kind: 'missing_in_sika', reference: 'X', sika: null, provider: null, lineId: 'l2', note: 'A credit' },
      { kind: 'missing_in_sika', reference: 'Y', sika: null, provider: null, lineId: 'l3', note: 'Another' },
    ] satisfies Difference[]);
    assert.deepEqual(
      rows.map((r) => [r.kind, r.note]),
      [
        ['amount_differs', 'The credit is GHS 500.00; paid in Sika, but no matched statement line paid it'],
        ['missing_in_sika', 'A credit'],
        ['missing_in_sika', 'Another'],
      ],
    );
  });

  it('a transfer with a credit of another amount that was then paid is one row ("Amount differs"), not two', async () => {
    const { day, noon, slashed } = freshDay();
    const m = await t.merchant();
    const transfer = await liveTransfer(t, m, 50_500);
    const result = await importCsv(
      gcbStatement([
        {
          date: slashed,
          narration: `TRF ${transfer.reference} ${uniqueWords()}`,
          credit: cedis(transfer.chargedMinor - 500),
        },
      ]),
    );
    assert.equal(result.amount_mismatch, 1);
    // The payment is then paid without a matched line (as an operator's approval under Review did).
    await t.db.transaction((tx) =>
      applyOutcome(tx, transfer.attemptId, 'paid', {
        checkoutUrlHost: t.config.checkoutUrlHost,
        source: 'operator_approve',
      }),
    );
    await t.db.query('UPDATE payment_attempts SET finalized_at = $2 WHERE id = $1', [transfer.attemptId, noon]);

    const res = await ops.get(`/ops/reconciliation?provider=bank_transfer&day=${day}`);
    assert.equal(res.statusCode, 200, res.body.slice(0, 300));
    const rows = differenceRows(res.body).filter(
      ([, row]) => row.includes(transfer.reference) || row.includes(transfer.attemptId),
    );
    assert.equal(rows.length, 1, `one row for ${transfer.reference}: ${rows.map(([kind]) => kind).join(', ')}`);
    assert.equal(rows[0]![0], 'amount_differs');
    assert.match(rows[0]![1], /Amount differs/);
    assert.match(rows[0]![1], /Sika recorded the payment paid with no matched statement line/);
    assert.ok(rows[0]![1].includes(transfer.attemptId), 'the row names the payment');
    assert.match(res.body, /Differences \(1\)/);
    assert.deepEqual(await checkInvariants(t.db, m.merchant_id), []);
  });

  it('a day with no records on either side says so, never "every record matched"', async () => {
    const { day } = freshDay();
    const res = await ops.get(`/ops/reconciliation?provider=bank_transfer&day=${day}`);
    assert.equal(res.statusCode, 200);
    assert.match(res.body, /Differences \(0\)/);
    assert.match(res.body, /No records on either side for this day\./);
    assert.doesNotMatch(res.body, /every record on both sides matched/);
  });

  it("statement totals are per collection account and leave out voided imports and other accounts' lines", async () => {
    const { day, slashed } = freshDay();
    const withEco: CollectionAccount[] = [
      ...accounts,
      {
        bankCode: 'ECO',
        bankName: 'Ecobank Ghana',
        branch: 'Ridge',
        accountNumber: '144100200300',
        accountName: 'Sika Collections Ltd',
      },
    ];
    const kept = uniqueWords();
    await importCsv(
      gcbStatement([
        { date: slashed, narration: kept, credit: '120.00' },
        { date: slashed, narration: uniqueWords(), credit: '30.50' },
      ]),
    );
    // A statement imported under another bank (as before imports were limited to collection accounts).
    const wrong = uniqueWords();
    await importCsv(gcbStatement([{ date: slashed, narration: wrong, credit: '3,762.00' }]), 'ECO', withEco);
    // A GCB import voided.
    const voidedWords = uniqueWords();
    const voided = await importCsv(gcbStatement([{ date: slashed, narration: voidedWords, credit: '999.00' }]));
    await voidImport(t.db, operator, voided.import_id, 'Imported twice');

    const res = await ops.get(`/ops/reconciliation?provider=bank_transfer&day=${day}`);
    assert.equal(res.statusCode, 200);
    const body = res.body;
    assert.match(body, /aria-label="Statement credits, GCB Bank \(GCB\) 1011130012345, Sika Collections Ltd"/);
    assert.match(
      body,
      /Statement credits, GCB Bank \(GCB\) 1011130012345, Sika Collections Ltd<\/div>\s*<div class="value" data-total="collections">GHS 150\.50<\/div><div class="muted">2 credits<\/div>/,
    );
    assert.match(body, /Statement lines of the day \(2\)/);
    assert.ok(body.includes(kept));
    assert.ok(!body.includes(wrong), "the other account's line is not listed");
    assert.ok(!body.includes(voidedWords), "the voided import's line is not listed");
    assert.match(
      body,
      /data-other-accounts="1">1 statement line of this day is kept under a bank that is not a collection account/,
    );
    assert.equal(differenceRows(body).filter(([kind]) => kind === 'missing_in_sika').length, 2);
    assert.deepEqual(await checkInvariants(t.db), []);
  });
});
