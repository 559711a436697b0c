// The operators' daily reconciliation (/ops/reconciliation, docs/reconciliation.md), over HTTP against the
// Paystack stand-in and imported bank statements: a Paystack day where everything matches, a day with each
// kind of difference, Paystack's list failing, MTN MoMo without a report, bank statement lines matched and
// not, bad input and who may see it. Each test reconciles a day of its own far from today (its records are
// moved there), so a database shared with other test files holds nothing else on that day.
import assert from 'node:assert/strict';
import { randomInt, randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import type { LightMyRequestResponse } from 'fastify';
import { createMerchant, type CreatedMerchant } from '../../src/accounts/service.ts';
import { createOperator } from '../../src/ops/service.ts';
import { setPayoutAccess } from '../../src/payouts/settings.ts';
import { processDuePayouts } from '../../src/payouts/processing.ts';
import { createPaystack } from '../../src/rails/paystack/index.ts';
import { REPORT_PAGE_SIZE } from '../../src/rails/paystack/reports.ts';
import { parseDay, yesterdayInAccra } from '../../src/reconciliation/model.ts';
import { collectionAccounts } from '../../src/rails/bank-transfer/accounts.ts';
import { importStatement } from '../../src/statements/service.ts';
import { BANK_ENV, gcbStatement, cedis, liveTransfer, uniqueWords } from '../support/bank-statements.ts';
import { ConsoleClient } from '../support/console-client.ts';
import { storageKind } from '../support/helpers.ts';
import {
  eventually,
  freePort,
  liveSession,
  merchantSession,
  payerAttempt,
  startLiveApp,
  type LiveApp,
} from '../support/live.ts';
import { fund, WEBHOOK_URL } from '../support/payouts-fixtures.ts';
import { startPaystackStandIn, STAND_IN_GHANA_BANKS, type PaystackStandIn } from '../support/standins/paystack.ts';

const SECRET = 'sk_test_reconciliation_secret';
const PASSWORD = 'reconciliation-password-1';
const GCB_PAYSTACK_CODE = STAND_IN_GHANA_BANKS.find((bank) => bank.name.startsWith('GCB'))!.code;

/** A day of its own for each test: somewhere in 2040-2089, noon in Accra is when its records happened. */
function freshDay(): { day: string; noon: Date } {
  const date = new Date(Date.UTC(2040, 0, 1) + randomInt(0, 50 * 365) * 86_400_000);
  const day = date.toISOString().slice(0, 10);
  return { day, noon: new Date(parseDay(day)!.start.getTime() + 12 * 3_600_000) };
}

/** The rows of the differences table, as [kind, row html]. */
const differenceRows = (body: string) =>
  [...body.matchAll(/<tr data-kind="([a-z_]+)">([\s\S]*?)<\/tr>/g)].map((found) => [found[1]!, found[2]!] as const);

describe(`the operators' daily reconciliation (${storageKind})`, () => {
  let paystack: PaystackStandIn;
  let app: LiveApp;
  let m: CreatedMerchant;
  let ops: ConsoleClient;
  let tellerEmail: string;
  let gcbId: string;

  const db = () => app.t.db;
  const page = (query: string) => ops.get(`/ops/reconciliation${query}`);
  const api = (method: string, path: string, body?: unknown) => app.http(method, path, { key: m.live_api_key, body });

  /** A Live Mobile Money charge through Paystack that Paystack settles and Sika records paid. */
  async function paidCharge(
    amountMinor: number,
  ): Promise<{ attemptId: string; reference: string; chargedMinor: number }> {
    const session = await liveSession(app, m, amountMinor);
    const res = await payerAttempt(app, session.id, { rail: 'momo', operator: 'at', phone: '0261234567' });
    assert.equal(res.status, 201, res.text);
    assert.equal(res.json.provider, 'paystack');
    paystack.settleCharge(res.json.provider_reference, 'success');
    await paystack.webhooksIdle();
    await eventually(async () =>
      (await merchantSession(app, m, session.id)).json.status === 'success' ? true : undefined,
    );
    return {
      attemptId: res.json.attempt_reference,
      reference: res.json.provider_reference,
      chargedMinor: res.json.amount_charged_minor,
    };
  }

  /** A Live bank payout through Paystack Transfers, paid. */
  async function paidPayout(amountMinor: number): Promise<{ payoutId: string; reference: string }> {
    const account = String(randomInt(1_000_000_000, 9_999_999_999));
    paystack.setAccount(GCB_PAYSTACK_CODE, account, 'KOFI MENSAH');
    const recipient = await api('POST', '/api/v1/payouts/recipients', {
      bank_id: gcbId,
      account_number: account,
      account_name: 'Kofi Mensah',
    });
    assert.equal(recipient.status, 201, recipient.text);
    const payout = await api('POST', '/api/v1/payouts', {
      recipient_id: recipient.json.id,
      amount_minor: amountMinor,
      client_reference: `rec-${randomUUID()}`,
    });
    assert.equal(payout.status, 201, payout.text);
    const row = async () =>
      (
        await db().query<{ status: string; processing_step: string | null; provider_reference: string | null }>(
          'SELECT status, processing_step, provider_reference FROM payouts WHERE id = $1',
          [payout.json.id],
        )
      )[0]!;
    const sent = async () => (await row()).processing_step === 'awaiting_result';
    for (let i = 0; i < 10 && !(await sent()); i++) {
      await db().query('UPDATE payouts SET next_step_at = now() WHERE id = $1', [payout.json.id]);
      await processDuePayouts(db(), app.t.app.deps.providers, { only: [payout.json.id] });
    }
    const reference = (await row()).provider_reference!;
    assert.ok(reference, 'the transfer was sent');
    paystack.settleTransfer(reference, 'success');
    await paystack.webhooksIdle();
    await eventually(async () => ((await row()).status === 'paid' ? true : undefined));
    return { payoutId: payout.json.id, reference };
  }

  /** Moves a paid attempt (Sika and Paystack both) to `at`. */
  async function moveCharge(
    charge: { attemptId: string; reference: string },
    at: Date,
    options: { atPaystack?: boolean } = {},
  ) {
    await db().query('UPDATE payment_attempts SET finalized_at = $2 WHERE id = $1', [charge.attemptId, at]);
    if (options.atPaystack !== false) paystack.backdate(charge.reference, at);
  }

  before(async () => {
    const port = await freePort();
    paystack = await startPaystackStandIn({
      secretKey: SECRET,
      webhookUrl: `http://127.0.0.1:${port}/api/v1/providers/paystack/webhook`,
    });
    app = await startLiveApp(port, { PAYSTACK_SECRET_KEY: SECRET, PAYSTACK_BASE_URL: paystack.baseUrl, ...BANK_ENV });
    m = await app.t.merchant({ webhookUrl: WEBHOOK_URL });
    await setPayoutAccess(db(), m.merchant_id, 'live', { payout_access: true });
    await fund(app.t, m.merchant_id, 'live', 10_000_000);
    gcbId = (await api('GET', '/api/v1/payouts/capabilities')).json.banks.find(
      (bank: { code: string }) => bank.code === 'GCB',
    ).id;
    const operatorEmail = `reconciliation-${randomUUID()}@example.com`;
    tellerEmail = `teller-${randomUUID()}@example.com`;
    await createOperator(db(), { email: operatorEmail, password: PASSWORD, role: 'operator' });
    await createOperator(db(), { email: tellerEmail, password: PASSWORD, role: 'teller' });
    ops = await new ConsoleClient(app.t, '/ops').signedIn(operatorEmail, PASSWORD);
  });
  after(async () => {
    await app?.t.close();
    await paystack?.close();
  });

  it('is linked from the navigation and shows yesterday (Africa/Accra) for Paystack by default', async () => {
    const home = await ops.get('/ops');
    assert.match(home.body, /<a href="\/ops\/reconciliation">Reconciliation<\/a>/);
    const res = await page('');
    assert.equal(res.statusCode, 200, res.body.slice(0, 300));
    assert.match(res.body, /<a href="\/ops\/reconciliation" aria-current="page">Reconciliation<\/a>/);
    assert.match(res.body, new RegExp(`<h1>Reconciliation: Paystack, ${yesterdayInAccra(new Date())}</h1>`));
    assert.match(res.body, /<option value="paystack" selected>Paystack<\/option>/);
  });

  it('a Paystack day where everything matches: both charges and the payout matched, no differences, equal totals; the lists were read with perPage, page, from and to', async () => {
    const { day, noon } = freshDay();
    const first = await paidCharge(20_000);
    const second = await paidCharge(35_000);
    const payout = await paidPayout(7_500);
    await moveCharge(first, noon);
    await moveCharge(second, new Date(noon.getTime() + 60_000));
    await db().query('UPDATE payouts SET paid_at = $2 WHERE id = $1', [payout.payoutId, noon]);
    paystack.backdate(payout.reference, noon);

    const res = await page(`?provider=paystack&day=${day}`);
    assert.equal(res.statusCode, 200, res.body.slice(0, 300));
    assert.match(res.body, /Differences \(0\)/);
    assert.match(res.body, /Matched \(3\)/);
    for (const id of [first.attemptId, second.attemptId, payout.payoutId])
      assert.ok(res.body.includes(id), `${id} is listed as matched`);
    const collections = [...res.body.matchAll(/data-total="collections">([^<]+)</g)].map((found) => found[1]);
    assert.deepEqual(
      collections,
      [
        `GHS ${cedis(first.chargedMinor + second.chargedMinor)}`,
        `GHS ${cedis(first.chargedMinor + second.chargedMinor)}`,
      ],
      'Sika and Paystack total the same',
    );
    const payouts = [...res.body.matchAll(/data-total="payouts">([^<]+)</g)].map((found) => found[1]);
    assert.deepEqual(payouts, ['GHS 75.00', 'GHS 75.00']);

    const window = parseDay(day)!;
    for (const path of ['/transaction?', '/transfer?']) {
      const asked = paystack.requests.filter((r) => r.method === 'GET' && r.path.startsWith(path)).at(-1);
      assert.ok(asked, `Paystack was asked ${path}`);
      const query = new URL(asked.path, 'http://x').searchParams;
      assert.equal(query.get('perPage'), String(REPORT_PAGE_SIZE));
      assert.equal(query.get('page'), '1');
      assert.equal(query.get('to'), new Date(window.end.getTime() - 1).toISOString());
      assert.ok(
        Date.parse(query.get('from')!) < window.start.getTime(),
        'the window opens before the day (a charge created the evening before)',
      );
    }
  });

  it('a Paystack day with each kind of difference: reported but not in Sika, paid in Sika but failed at Paystack, amounts differ, paid in Sika but not reported', async () => {
    const { day, noon } = freshDay();
    const failedThere = await paidCharge(10_000);
    const otherAmount = await paidCharge(12_000);
    const unreported = await paidCharge(14_000);
    await moveCharge(failedThere, noon);
    await moveCharge(otherAmount, noon);
    // Sika's record is on the day; Paystack's stays today, outside the window it is asked for.
    await moveCharge(unreported, noon, { atPaystack: false });
    paystack.listAs(failedThere.reference, { status: 'failed' });
    paystack.listAs(otherAmount.reference, { amountMinor: otherAmount.chargedMinor - 500 });
    const outside = paystack.recordOutsideCharge({
      reference: `dashboard-${randomUUID()}`,
      amountMinor: 9_900,
      at: new Date(noon.getTime() + 3_600_000),
    });

    const res = await page(`?provider=paystack&day=${day}`);
    assert.equal(res.statusCode, 200, res.body.slice(0, 300));
    assert.match(res.body, /Differences \(4\)/);
    assert.match(res.body, /Matched \(0\)/);
    const rows = differenceRows(res.body);
    const rowOf = (kind: string) =>
      rows.find(([k]) => k === kind)?.[1] ?? assert.fail(`no ${kind} row in ${rows.map(([k]) => k).join(', ')}`);
    assert.deepEqual(rows.map(([kind]) => kind).sort(), [
      'amount_differs',
      'missing_at_provider',
      'missing_in_sika',
      'status_differs',
    ]);
    assert.ok(rowOf('missing_in_sika').includes(outside.reference) && rowOf('missing_in_sika').includes('GHS 99.00'));
    assert.match(rowOf('missing_in_sika'), /In the provider&#39;s report, not in Sika/);
    assert.ok(rowOf('status_differs').includes(failedThere.attemptId));
    assert.match(rowOf('status_differs'), /Sika: paid; provider: failed/);
    assert.ok(rowOf('amount_differs').includes(otherAmount.attemptId));
    assert.ok(rowOf('amount_differs').includes(`provider: GHS ${cedis(otherAmount.chargedMinor - 500)}`));
    assert.ok(rowOf('missing_at_provider').includes(unreported.attemptId));
  });

  it("Paystack answering its list with a 5xx: the page says the report is unavailable and lists Sika's records, claiming no match", async () => {
    const { day, noon } = freshDay();
    const charge = await paidCharge(16_000);
    await moveCharge(charge, noon);
    paystack.next({ endpoint: 'transaction.list' }, { kind: 'http_error', status: 502 });
    const res = await page(`?provider=paystack&day=${day}`);
    assert.equal(res.statusCode, 200, res.body.slice(0, 300));
    assert.match(res.body, /data-report="unavailable"><strong>Provider report unavailable\.<\/strong>/);
    assert.match(res.body, /HTTP 502/);
    assert.doesNotMatch(res.body, /Differences \(/);
    assert.doesNotMatch(res.body, /Matched \(/);
    assert.match(res.body, /Sika's records \(1\)/);
    assert.ok(res.body.includes(charge.attemptId));
    // Once Paystack answers again, the same day reconciles.
    const again = await page(`?provider=paystack&day=${day}`);
    assert.match(again.body, /Matched \(1\)/);
  });

  it('the Paystack adapter reads every page of a long list (perPage pages until pageCount)', async () => {
    const { noon } = freshDay();
    const count = REPORT_PAGE_SIZE * 2 + 7;
    for (let i = 0; i < count; i++)
      paystack.recordOutsideCharge({
        reference: `bulk-${randomUUID()}`,
        amountMinor: 100 + i,
        at: new Date(noon.getTime() + i * 1_000),
      });
    const adapter = createPaystack({ secretKey: SECRET, baseUrl: paystack.baseUrl, timeoutMs: 2_000 });
    const before = paystack.count('transaction.list');
    const report = await adapter.reports.transactions({
      from: new Date(noon.getTime() - 60_000),
      to: new Date(noon.getTime() + 3_600_000),
    });
    assert.equal(report.filter((item) => item.kind === 'collection').length, count);
    assert.equal(new Set(report.map((item) => item.reference)).size, count, 'no record twice');
    assert.equal(paystack.count('transaction.list') - before, 3);
    assert.ok(report.every((item) => item.status === 'paid' && item.currency === 'GHS'));
  });

  it('MTN MoMo has no transactions list: the page says there is no provider report and claims no match', async () => {
    const { day } = freshDay();
    const res = await page(`?provider=mtn_momo&day=${day}`);
    assert.equal(res.statusCode, 200, res.body.slice(0, 300));
    assert.match(
      res.body,
      /data-report="none"><strong>No provider report\.<\/strong> MTN MoMo&#39;s Open API offers no transactions list/,
    );
    assert.doesNotMatch(res.body, /Differences \(/);
    assert.match(res.body, /Sika's records \(0\)/);
  });

  it("bank transfers: the day's statement lines against Live bank transfers: the matched credit with its attempt, the unmatched credit listed as a difference", async () => {
    const { day, noon } = freshDay();
    const transfer = await liveTransfer(app.t, m, 45_000);
    const stranger = uniqueWords();
    const [y, mo, d] = day.split('-');
    const csv = gcbStatement([
      {
        date: `${d}/${mo}/${y}`,
        narration: `TRF FROM AMA ${transfer.reference}`,
        credit: cedis(transfer.chargedMinor),
      },
      { date: `${d}/${mo}/${y}`, narration: stranger, credit: '120.00' },
    ]);
    const result = await importStatement(db(), {
      bankCode: 'GCB',
      fileName: `${day}.csv`,
      csv: Buffer.from(csv),
      importedBy: { type: 'operator', id: randomUUID(), email: null },
      checkoutUrlHost: app.t.config.checkoutUrlHost,
      collectionAccounts: collectionAccounts(app.t.config.providers.bankTransfer),
    });
    assert.equal(result.matched, 1);
    assert.equal(result.unmatched, 1);
    await db().query('UPDATE payment_attempts SET finalized_at = $2 WHERE id = $1', [transfer.attemptId, noon]);

    const res = await page(`?provider=bank_transfer&day=${day}`);
    assert.equal(res.statusCode, 200, res.body.slice(0, 300));
    assert.match(res.body, /Statement lines of the day \(2\)/);
    assert.match(res.body, /Matched \(1\)/);
    assert.ok(res.body.includes(transfer.attemptId));
    const rows = differenceRows(res.body);
    assert.deepEqual(
      rows.map(([kind]) => kind),
      ['missing_in_sika'],
    );
    assert.ok(rows[0]![1].includes(stranger), 'the unmatched credit is named by its narration');
    assert.match(rows[0]![1], /statement line <span class="mono">[0-9a-f-]{36}<\/span>/);
    assert.match(rows[0]![1], /Statement credit matched to no payment/);
  });

  it('a bad day or provider is a 400 page with the form, never a 500', async () => {
    for (const query of [
      '?provider=stripe',
      '?day=2026-02-30',
      '?day=yesterday',
      '?day=02/03/2026',
      '?day=1999-12-31',
      '?provider=paystack&day=2026-13-01',
    ]) {
      const res = await page(query);
      assert.equal(res.statusCode, 400, `${query}: ${res.body.slice(0, 200)}`);
      assert.match(String(res.headers['content-type']), /^text\/html/);
      assert.match(res.body, /role="alert"/);
      assert.match(res.body, /<form method="get" action="\/ops\/reconciliation"/);
    }
    const repeated = await page('?day=2026-03-01&day=2026-03-02');
    assert.equal(repeated.statusCode, 400);
  });

  it("a teller, a merchant's dashboard user and a visitor signed in nowhere cannot see it", async () => {
    const teller = await new ConsoleClient(app.t, '/ops').signedIn(tellerEmail, PASSWORD);
    const asTeller = await teller.get('/ops/reconciliation?provider=paystack');
    assert.equal(asTeller.statusCode, 303);
    assert.equal(asTeller.headers.location, '/ops/teller');
    const anonymous = await app.t.app.inject({ method: 'GET', url: '/ops/reconciliation' });
    assert.equal(anonymous.statusCode, 303);
    assert.equal(anonymous.headers.location, '/ops/login');
    const ownerEmail = `owner-${randomUUID()}@example.com`;
    await createMerchant(db(), {
      name: 'Reconciliation Peeker Ltd',
      email: ownerEmail,
      password: PASSWORD,
      webhookUrl: null,
    });
    const owner = await new ConsoleClient(app.t, '/dashboard').signedIn(ownerEmail, PASSWORD);
    const asOwner: LightMyRequestResponse = await app.t.app.inject({
      method: 'GET',
      url: '/ops/reconciliation',
      headers: { cookie: `sika_dashboard=${owner.session}` },
    });
    assert.equal(asOwner.statusCode, 303);
    assert.equal(asOwner.headers.location, '/ops/login');
  });
});
