// The teller desk (issue 30): a Test slip is refused on lookup (no amount to collect, no form, its environment
// shown) and in the service (a forged POST writes nothing); a slip reference is found with or without its
// dashes and in any case; the cash received is read in GHS with commas only between groups of three digits
// (1,220.00 is GHS 1,220.00; 1,22.00 is refused); the amount a slip asks for is said in GHS, never pesewas.
// Over HTTP, on the storage the run picks, with the ledger's invariants checked after each deposit.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import type { CreatedMerchant } from '../../src/accounts/service.ts';
import { normaliseSlipReference } from '../../src/checkout/cash-slips.ts';
import { parseCedis } from '../../src/lib/ghana.ts';
import { checkInvariants } from '../../src/ledger/service.ts';
import { createOperator } from '../../src/ops/service.ts';
import { ConsoleClient, flashOf } from '../support/console-client.ts';
import { startTestApp, storageKind, type TestContext } from '../support/helpers.ts';
import { call } from '../support/http.ts';

const PASSWORD = 'teller-desk-password';
const unescapeHtml = (text: string) =>
  text
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&amp;/g, '&');

describe(`the teller desk (${storageKind})`, () => {
  let t: TestContext;
  let teller: ConsoleClient;
  let branchId: string;

  before(async () => {
    t = await startTestApp();
    const email = `teller-${randomUUID()}@example.com`;
    await createOperator(t.db, { email, password: PASSWORD, role: 'teller' });
    teller = await new ConsoleClient(t, '/ops').signedIn(email, PASSWORD);
    branchId = (await t.db.query<{ id: string }>('SELECT id FROM bank_branches WHERE active ORDER BY id LIMIT 1'))[0]!
      .id;
  });
  after(() => t.close());

  /** A cash slip for a new session of the key's environment. */
  async function slipFor(key: string, amountMinor: number) {
    const session = await call(t, 'POST', '/api/v1/sessions', {
      key,
      body: { amount_minor: amountMinor, invoice_ref: `INV-${randomUUID().slice(0, 8)}` },
    });
    assert.equal(session.statusCode, 201, session.body);
    const sessionId = session.json().id as string;
    const quote = await call(t, 'GET', `/api/v1/checkout/sessions/${sessionId}/quote`);
    const total = quote.json().surcharges.cash.total_minor as number;
    const slip = await call(t, 'POST', '/api/v1/checkout/cash-slips', {
      body: { session_id: sessionId, amount_minor: total },
    });
    assert.equal(slip.statusCode, 201, slip.body);
    return { sessionId, total, reference: slip.json().reference as string };
  }

  const slipRow = async (reference: string) =>
    (
      await t.db.query<{ status: string; recorded_branch_id: string | null }>(
        'SELECT status, recorded_branch_id FROM cash_slips WHERE reference = $1',
        [reference],
      )
    )[0]!;
  const sessionStatus = async (id: string) =>
    (await t.db.query<{ status: string }>('SELECT status FROM checkout_sessions WHERE id = $1', [id]))[0]!.status;
  const record = (reference: string, amount: string) =>
    teller.post('/ops/teller/record', { reference, amount, branch_id: branchId });

  it('a Test slip is refused on lookup: its environment shown, no amount to collect, no form', async () => {
    const m: CreatedMerchant = await t.merchant();
    const slip = await slipFor(m.test_api_key, 10_000);
    const page = await teller.get(`/ops/teller?reference=${encodeURIComponent(slip.reference)}`);
    assert.equal(page.statusCode, 200);
    const body = unescapeHtml(page.body);
    assert.match(body, new RegExp(`aria-label="Slip ${slip.reference}"`));
    assert.match(body, /<span class="badge warn"[^>]*>Test<\/span>/, 'the slip shows it is a Test slip');
    assert.match(
      body,
      /This is a Test slip: take no cash for it\. Test deposits are recorded through the Test simulator only\./,
    );
    assert.doesNotMatch(body, /Amount to collect/);
    assert.doesNotMatch(body, /action="\/ops\/teller\/record"/, 'no deposit form');
  });

  it('a forged POST for a Test slip is refused and writes nothing (no deposit, no audit row, the session still open)', async () => {
    const m = await t.merchant();
    const slip = await slipFor(m.test_api_key, 10_200);
    await teller.get('/ops/teller');
    const res = await record(slip.reference, (slip.total / 100).toFixed(2));
    assert.equal(res.statusCode, 409);
    assert.match(
      unescapeHtml(flashOf(res.body)),
      /This is a Test slip: take no cash for it\. Test deposits are recorded through the Test simulator only\./,
    );
    assert.doesNotMatch(res.body, /Deposit recorded/);
    assert.deepEqual(await slipRow(slip.reference), { status: 'active', recorded_branch_id: null });
    assert.equal(await sessionStatus(slip.sessionId), 'pending');
    const audits = await t.db.query('SELECT 1 FROM audit_log WHERE action = $1 AND object_id = $2', [
      'cash_slip.record_deposit',
      slip.reference,
    ]);
    assert.equal(audits.length, 0);
    assert.deepEqual(await checkInvariants(t.db, m.merchant_id), []);
  });

  it('a Live slip is found without its dashes and in lower case; it shows Live and asks for its amount in GHS', async () => {
    const m = await t.merchant();
    const slip = await slipFor(m.live_api_key, 50_000);
    const compact = slip.reference.replace(/-/g, '');
    assert.equal(normaliseSlipReference(compact), slip.reference);
    assert.equal(normaliseSlipReference(` ${compact.toLowerCase()} `), slip.reference);
    assert.equal(normaliseSlipReference(slip.reference.replace(/-/g, ' ')), slip.reference);
    for (const typed of [compact, compact.toLowerCase(), slip.reference.toLowerCase()]) {
      const page = await teller.get(`/ops/teller?reference=${encodeURIComponent(typed)}`);
      const body = unescapeHtml(page.body);
      assert.match(body, new RegExp(`aria-label="Slip ${slip.reference}"`), `found as ${typed}`);
      assert.match(body, /<span class="badge ok"[^>]*>Live<\/span>/);
      assert.match(body, /Amount to collect: GHS \d[\d,]*\.\d\d/);
      assert.match(body, /action="\/ops\/teller\/record"/);
    }
    const missing = await teller.get('/ops/teller?reference=SKN8SGMJ5');
    assert.match(unescapeHtml(missing.body), /No slip with reference SKN8SGMJ5\./);
  });

  it('the wrong amount is refused in GHS (never pesewas); the right one, typed without dashes, records the deposit', async () => {
    const m = await t.merchant();
    const slip = await slipFor(m.live_api_key, 50_000);
    await teller.get('/ops/teller');
    const wrong = await record(slip.reference, ((slip.total - 100) / 100).toFixed(2));
    assert.equal(wrong.statusCode, 409);
    const said = unescapeHtml(flashOf(wrong.body));
    assert.match(said, /^The slip is for GHS [\d,]+\.\d\d; take exactly that amount\.$/);
    assert.doesNotMatch(wrong.body, /pesewas/);
    const done = await record(slip.reference.replace(/-/g, '').toLowerCase(), (slip.total / 100).toFixed(2));
    assert.equal(done.statusCode, 200, flashOf(done.body));
    assert.match(
      unescapeHtml(flashOf(done.body)),
      /^Deposit recorded: GHS [\d,]+\.\d\d\. The payment is paid and the checkout is success\.$/,
    );
    assert.equal((await slipRow(slip.reference)).status, 'used');
    assert.equal(await sessionStatus(slip.sessionId), 'success');
    assert.deepEqual(await checkInvariants(t.db, m.merchant_id), []);
  });

  it('1,220.00 is read as GHS 1,220.00 and records a slip of that amount; 1,22.00 is refused with a human message and nothing is written', async () => {
    assert.equal(parseCedis('1,220.00'), 122_000);
    assert.equal(parseCedis('1,234,567.5'), 123_456_750);
    assert.equal(parseCedis('1220'), 122_000);
    for (const bad of ['1,22.00', '12,20.00', '1,2200.00', ',122.00', '1,220,', '1..2'])
      assert.equal(parseCedis(bad), null, bad);

    const m = await t.merchant();
    const slip = await slipFor(m.live_api_key, 120_000);
    await t.db.query('UPDATE cash_slips SET amount_minor = 122000 WHERE reference = $1', [slip.reference]);
    await t.db.query('UPDATE payment_attempts SET amount_charged_minor = 122000 WHERE provider_reference = $1', [
      slip.reference,
    ]);
    await teller.get('/ops/teller');
    const refused = await record(slip.reference, '1,22.00');
    assert.equal(refused.statusCode, 400);
    const said = unescapeHtml(refused.body);
    assert.match(
      flashOf(refused.body),
      /[Aa]mount.*an amount in GHS above zero/,
      'a sentence naming the field and what it takes',
    );
    assert.doesNotMatch(said, /must match pattern|pesewas/);
    assert.equal((await slipRow(slip.reference)).status, 'active', 'nothing recorded');
    const done = await record(slip.reference, '1,220.00');
    assert.equal(done.statusCode, 200, flashOf(done.body));
    assert.match(unescapeHtml(flashOf(done.body)), /^Deposit recorded: GHS 1,220\.00\./);
    assert.equal((await slipRow(slip.reference)).status, 'used');
    assert.deepEqual(await checkInvariants(t.db, m.merchant_id), []);
  });
});
