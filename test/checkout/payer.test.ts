// The hosted-checkout payer API (SPEC 2.2-2.5, 2.8, 3.1-3.2, 4.2, 7; DESIGN §3 "Checkout session
// lifecycle", "Quotes and fees"): options, the public session, quotes, attempts, status, Telecel
// verification, cash slips and Live-key sessions. No API key on these endpoints.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { CreatedMerchant } from '../../src/accounts/service.ts';
import { startTestApp, storageKind, type TestContext } from '../support/helpers.ts';
import { assertErrorEnvelope, call, syncCodes } from '../support/http.ts';
import {
  AT_PHONE,
  MTN_PHONE,
  TELECEL_PHONE,
  attemptRows,
  backdate,
  createSession,
  getAttempt,
  getPublic,
  getQuote,
  momoBody,
  postAttempt,
  runExpiry,
  sessionRow,
  simulate,
  startAttempt,
} from '../support/checkout.ts';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const ISO_UTC = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/;

describe(`hosted checkout payer API (${storageKind})`, () => {
  let t: TestContext;
  before(async () => {
    t = await startTestApp();
  });
  after(() => t.close());

  const merchantName = async (m: CreatedMerchant) =>
    (await t.db.query<{ name: string }>('SELECT name FROM merchants WHERE id = $1', [m.merchant_id]))[0]!.name;
  const cashSlip = (sessionId: string, amount: number) =>
    call(t, 'POST', '/api/v1/checkout/cash-slips', { body: { session_id: sessionId, amount_minor: amount } });
  const authorize = (sessionId: string, ref: string, code: string) =>
    call(t, 'POST', `/api/v1/checkout/sessions/${sessionId}/provider-attempts/${ref}/authorize`, { body: { code } });
  const resend = (sessionId: string, ref: string) =>
    call(t, 'POST', `/api/v1/checkout/sessions/${sessionId}/provider-attempts/${ref}/resend`);

  /** A Test session of 50000 pesewas of a fresh merchant. */
  async function freshSession(body: Record<string, string | number> = {}) {
    const m = await t.merchant();
    const session = await createSession(t, m, body);
    return { m, session };
  }

  /** A session made successful by a simulated momo payment. */
  async function paidSession() {
    const { m, session } = await freshSession();
    const attempt = await startAttempt(t, session.id, momoBody(50000));
    await simulate(t, m, attempt.attempt_reference, 'paid');
    return { m, session, attempt };
  }

  describe('options', () => {
    it('lists the four payment methods, cash as the branch payment method, and 15 banks each with uuid ids and active branches', async () => {
      const res = await call(t, 'GET', '/api/v1/checkout/options');
      assert.equal(res.statusCode, 200, res.body);
      const body = res.json();
      assert.deepEqual(
        body.payment_methods.map((c: { value: string }) => c.value),
        ['momo', 'card', 'bank_transfer', 'cash'],
      );
      for (const choice of [...body.payment_methods, ...body.branch_payment_methods]) {
        assert.equal(typeof choice.label, 'string');
        assert.ok(choice.label.length > 0);
      }
      assert.deepEqual(
        body.branch_payment_methods.map((c: { value: string }) => c.value),
        ['cash'],
      );
      const SEEDED = [
        'GCB',
        'ECO',
        'STB',
        'ABS',
        'SCB',
        'FBL',
        'CAL',
        'ZEN',
        'UBA',
        'ACC',
        'RBG',
        'ADB',
        'PBL',
        'CBG',
        'GTB',
      ];
      // A fresh storage holds exactly the 15 seeded banks; a shared PostgreSQL may hold operator-added ones too.
      if (storageKind === 'embedded') assert.equal(body.banks.length, 15);
      const codes = new Set<string>();
      const branchIds = new Set<string>();
      for (const bank of body.banks) {
        assert.match(bank.id, UUID);
        assert.equal(typeof bank.name, 'string');
        assert.equal(typeof bank.code, 'string');
        codes.add(bank.code);
        assert.ok(bank.branches.length >= 1, `${bank.name} has no branch`);
        for (const branch of bank.branches) {
          assert.deepEqual(Object.keys(branch).sort(), ['code', 'id', 'name']);
          assert.match(branch.id, UUID);
          assert.ok(branch.code.startsWith(`${bank.code}-`), branch.code);
          branchIds.add(branch.id);
        }
      }
      assert.equal(codes.size, body.banks.length, 'bank codes are distinct');
      for (const code of SEEDED) assert.ok(codes.has(code), `seeded bank ${code} is listed`);
      // Exactly the active banks with at least one active branch, and every active branch of them once.
      const expected = await t.db.query<{ bank_id: string; branch_id: string }>(
        'SELECT b.id AS bank_id, br.id AS branch_id FROM banks b JOIN bank_branches br ON br.bank_id = b.id AND br.active WHERE b.active',
      );
      assert.equal(body.banks.length, new Set(expected.map((r) => r.bank_id)).size);
      assert.deepEqual(
        [...branchIds].sort(),
        expected.map((r) => r.branch_id).sort(),
        'every active branch is listed once',
      );
    });
  });

  describe('public session', () => {
    it('shows the payer view: merchant name, Test rails, test_simulation card mode, the invoice lines of its invoice_ref and the return URL', async () => {
      const m = await t.merchant();
      await syncCodes(t, m.test_api_key, [
        { code: 'TUITION', name: 'Tuition' },
        { code: 'LIBRARY', name: 'Library' },
      ]);
      const ingest = await call(t, 'POST', '/api/v1/invoice-lines', {
        key: m.test_api_key,
        body: {
          invoice_ref: 'INV-PUB-1',
          currency: 'GHS',
          lines: [
            { code: 'TUITION', name: 'Tuition, term 1', amount_minor: 45000 },
            { code: 'LIBRARY', name: 'Library', amount_minor: 5000 },
          ],
        },
      });
      assert.equal(ingest.statusCode, 200, ingest.body);
      // A line of another invoice must not show up.
      await call(t, 'POST', '/api/v1/invoice-lines', {
        key: m.test_api_key,
        body: { invoice_ref: 'INV-PUB-2', lines: [{ code: 'TUITION', name: 'Other', amount_minor: 1 }] },
      });
      const session = await createSession(t, m, {
        amount_minor: 50000,
        invoice_ref: 'INV-PUB-1',
        description: 'School fees',
        customer: { name: 'Kofi Boateng', email: 'kofi@example.com' },
        callback_url: 'https://shop.example.com/return?order=7',
      });
      const res = await getPublic(t, session.id);
      assert.equal(res.statusCode, 200, res.body);
      const view = res.json();
      assert.equal(view.id, session.id);
      assert.equal(view.merchant_name, await merchantName(m));
      assert.equal(view.status, 'open');
      assert.equal(view.amount_minor, 50000);
      assert.equal(view.currency, 'GHS');
      assert.equal(view.invoice_ref, 'INV-PUB-1');
      assert.equal(view.description, 'School fees');
      assert.equal(view.customer_name, 'Kofi Boateng');
      assert.deepEqual(view.allowed_rails, ['momo', 'card', 'bank_transfer', 'cash']);
      assert.equal(view.expires_at, session.expires_at);
      assert.match(view.expires_at, ISO_UTC);
      assert.equal(view.card_collection_mode, 'test_simulation');
      // Order within the invoice is not specified: compare by code.
      const byCode = [...view.line_items].sort((a: { code: string }, b: { code: string }) =>
        a.code.localeCompare(b.code),
      );
      assert.deepEqual(byCode, [
        { code: 'LIBRARY', name: 'Library', amount_minor: 5000, currency: 'GHS' },
        { code: 'TUITION', name: 'Tuition, term 1', amount_minor: 45000, currency: 'GHS' },
      ]);
      assert.equal(
        view.return_to_merchant_url,
        `https://shop.example.com/return?order=7&session_id=${session.id}&status=open`,
      );
      // No customer email or metadata on the payer view.
      assert.equal(res.body.includes('kofi@example.com'), false);
    });

    it('carries the current status in return_to_merchant_url once the session has succeeded', async () => {
      const m = await t.merchant();
      const session = await createSession(t, m, { callback_url: 'https://shop.example.com/done' });
      const attempt = await startAttempt(t, session.id, momoBody(50000));
      await simulate(t, m, attempt.attempt_reference, 'paid');
      const view = (await getPublic(t, session.id)).json();
      assert.equal(view.status, 'success');
      const url = new URL(view.return_to_merchant_url);
      assert.equal(url.origin + url.pathname, 'https://shop.example.com/done');
      assert.equal(url.searchParams.get('session_id'), session.id);
      assert.equal(url.searchParams.get('status'), 'success');
    });

    it('shows an open session past its expiry as expired before the worker runs', async () => {
      const { session } = await freshSession();
      await backdate(t, session.id);
      assert.equal((await getPublic(t, session.id)).json().status, 'expired');
    });

    it('answers 404 NOT_FOUND for an unknown session id on the session, quote, attempt and cash-slip endpoints', async () => {
      assertErrorEnvelope(await getPublic(t, 'cs_doesnotexist'), 404, 'NOT_FOUND');
      assertErrorEnvelope(await getQuote(t, 'cs_doesnotexist'), 404, 'NOT_FOUND');
      assertErrorEnvelope(await postAttempt(t, 'cs_doesnotexist', momoBody(50000)), 404, 'NOT_FOUND');
      assertErrorEnvelope(await cashSlip('cs_doesnotexist', 50200), 404, 'NOT_FOUND');
    });
  });

  describe('quote', () => {
    it('quotes the default fees for 50000: momo 750 payer-borne, card 1250 merchant-borne, bank transfer 500 merchant-borne, cash 200 payer-borne', async () => {
      const { session } = await freshSession({ amount_minor: 50000 });
      const res = await getQuote(t, session.id);
      assert.equal(res.statusCode, 200, res.body);
      const quote = res.json();
      assert.equal(typeof quote.id, 'string');
      assert.equal(quote.status, 'open');
      assert.equal(quote.base_minor, 50000);
      assert.equal(quote.currency, 'GHS');
      assert.equal(quote.expires_at, session.expires_at);
      assert.deepEqual(quote.allowed_rails, ['momo', 'card', 'bank_transfer', 'cash']);
      assert.deepEqual(quote.surcharges, {
        momo: { bearer: 'payer', fee_minor: 750, surcharge_minor: 750, total_minor: 50750, currency: 'GHS' },
        card: { bearer: 'merchant', fee_minor: 1250, surcharge_minor: 0, total_minor: 50000, currency: 'GHS' },
        bank_transfer: { bearer: 'merchant', fee_minor: 500, surcharge_minor: 0, total_minor: 50000, currency: 'GHS' },
        cash: { bearer: 'payer', fee_minor: 200, surcharge_minor: 200, total_minor: 50200, currency: 'GHS' },
      });
    });

    it('caps the bank transfer fee at GHS 10.00: 1000 at exactly 100000 and still 1000 at 250000', async () => {
      const m = await t.merchant();
      const atCap = await createSession(t, m, { amount_minor: 100000 });
      const above = await createSession(t, m, { amount_minor: 250000 });
      const below = await createSession(t, m, { amount_minor: 99949 });
      assert.equal((await getQuote(t, atCap.id)).json().surcharges.bank_transfer.fee_minor, 1000);
      const q = (await getQuote(t, above.id)).json().surcharges.bank_transfer;
      assert.deepEqual(q, {
        bearer: 'merchant',
        fee_minor: 1000,
        surcharge_minor: 0,
        total_minor: 250000,
        currency: 'GHS',
      });
      // 999.49 rounds half up to 999
      assert.equal((await getQuote(t, below.id)).json().surcharges.bank_transfer.fee_minor, 999);
    });

    it('rounds percentage fees half up to the pesewa', async () => {
      const m = await t.merchant();
      // momo 1.5%: 33 -> 0.495 -> 0; 34 -> 0.51 -> 1; 100 -> 1.5 -> 2; 300 -> 4.5 -> 5 (not 4: half up, not half even)
      // card 2.5%: 20 -> 0.5 -> 1; 60 -> 1.5 -> 2; 100 -> 2.5 -> 3
      const expected: [number, number, number][] = [
        [33, 0, 1],
        [34, 1, 1],
        [100, 2, 3],
        [300, 5, 8],
        [20, 0, 1],
        [60, 1, 2],
      ];
      for (const [base, momoFee, cardFee] of expected) {
        const session = await createSession(t, m, { amount_minor: base });
        const { surcharges } = (await getQuote(t, session.id)).json();
        assert.equal(surcharges.momo.fee_minor, momoFee, `momo fee of ${base}`);
        assert.equal(surcharges.momo.surcharge_minor, momoFee);
        assert.equal(surcharges.momo.total_minor, base + momoFee, `momo total of ${base}`);
        assert.equal(surcharges.card.fee_minor, cardFee, `card fee of ${base}`);
        assert.equal(surcharges.card.total_minor, base);
        assert.equal(surcharges.cash.total_minor, base + 200);
      }
    });

    it('refuses a quote for a session that has succeeded or expired with 409 SESSION_NOT_PAYABLE', async () => {
      const { session } = await paidSession();
      assertErrorEnvelope(await getQuote(t, session.id), 409, 'SESSION_NOT_PAYABLE');

      const expired = (await freshSession()).session;
      await backdate(t, expired.id);
      assertErrorEnvelope(await getQuote(t, expired.id), 409, 'SESSION_NOT_PAYABLE'); // past its time, before the worker
      await runExpiry(t);
      assert.equal((await sessionRow(t, expired.id)).status, 'expired');
      assertErrorEnvelope(await getQuote(t, expired.id), 409, 'SESSION_NOT_PAYABLE');
    });

    it('refuses a quote while an attempt is pending with 409 SESSION_NOT_PAYABLE', async () => {
      const { session } = await freshSession();
      await startAttempt(t, session.id, momoBody(50000));
      assertErrorEnvelope(await getQuote(t, session.id), 409, 'SESSION_NOT_PAYABLE');
    });
  });

  describe('attempts', () => {
    it('starts a momo attempt from a local number with spaces: 201 pending, the quoted total charged, a prompt naming only the last four digits', async () => {
      const { session } = await freshSession();
      const res = await postAttempt(t, session.id, {
        rail: 'momo',
        amount_minor: 50750,
        operator: 'mtn',
        phone: '024 123 4567',
      });
      assert.equal(res.statusCode, 201, res.body);
      const a = res.json();
      assert.match(a.attempt_reference, /^att_/);
      assert.equal(a.provider, 'sika_test');
      assert.ok(a.provider_reference.length > 0);
      assert.equal(a.rail, 'momo');
      assert.equal(a.status, 'pending');
      assert.equal(a.amount_charged_minor, 50750);
      assert.equal(a.currency, 'GHS');
      assert.equal(a.replayed, false);
      assert.equal(a.instructions.mode, 'mobile_money_prompt');
      assert.equal(a.instructions.rail, 'momo');
      assert.equal(a.instructions.amount_minor, 50750);
      assert.equal(a.instructions.currency, 'GHS');
      assert.equal(a.instructions.operator, 'mtn');
      assert.equal(a.instructions.phone_last4, '4567');
      for (const form of ['241234567', '024 123 4567', '0241234567', '+233'])
        assert.equal(res.body.includes(form), false, `the response shows ${form}`);
      assert.equal((await sessionRow(t, session.id)).status, 'pending');
      const status = await getAttempt(t, session.id, a.attempt_reference);
      assert.equal(status.body.includes('241234567'), false);
    });

    it('accepts the +233 form with hyphens and replays it as the same attempt when sent again in the local form', async () => {
      const { session } = await freshSession();
      const first = await postAttempt(t, session.id, {
        rail: 'momo',
        amount_minor: 50750,
        operator: 'at',
        phone: '+233-26-123-4567',
      });
      assert.equal(first.statusCode, 201, first.body);
      assert.equal(first.json().instructions.phone_last4, '4567');
      assert.equal(first.body.includes('261234567'), false);
      const again = await postAttempt(t, session.id, {
        rail: 'momo',
        amount_minor: 50750,
        operator: 'at',
        phone: AT_PHONE,
      });
      assert.equal(again.statusCode, 200, again.body);
      assert.equal(again.json().replayed, true);
      assert.equal(again.json().attempt_reference, first.json().attempt_reference);
      assert.equal(again.body.includes('261234567'), false);
      assert.equal((await attemptRows(t, session.id)).length, 1);
    });

    it('refuses a malformed phone, a phone of no network and an unknown operator with 400 and creates nothing (a ported number is accepted: checkout-course)', async () => {
      const { session } = await freshSession();
      const cases: [Record<string, string | number>, string][] = [
        [{ phone: '12345' }, 'phone'],
        [{ phone: '0241234' }, 'phone'],
        [{ phone: '+44 20 7946 0958' }, 'phone'],
        [{ phone: '0311234567' }, 'phone'], // no Mobile Money network has 31
        [{ operator: 'vodafone' }, 'operator'],
        [{ operator: '' }, 'operator'],
      ];
      for (const [change, field] of cases) {
        const res = await postAttempt(t, session.id, { ...momoBody(50000), ...change });
        const error = assertErrorEnvelope(res, 400, 'INVALID_ARGUMENT');
        assert.ok(
          error.fields?.some((f) => f.field === field),
          `${JSON.stringify(change)} should name ${field}: ${res.body}`,
        );
      }
      const noNetwork = await postAttempt(t, session.id, { ...momoBody(50000), phone: '0311234567' });
      assert.match(noNetwork.json().error.message, /^phone must be a Ghana mobile number/);
      assert.equal(noNetwork.body.includes('311234567'), false, 'the error must not repeat the full number');
      const noPhone = await postAttempt(t, session.id, { rail: 'momo', amount_minor: 50750, operator: 'mtn' });
      assertErrorEnvelope(noPhone, 400, 'INVALID_ARGUMENT');
      assertErrorEnvelope(
        await postAttempt(t, session.id, { rail: 'paypal', amount_minor: 50000 }),
        400,
        'INVALID_ARGUMENT',
      );
      assert.equal((await attemptRows(t, session.id)).length, 0);
      assert.equal((await sessionRow(t, session.id)).status, 'open');
    });

    it('refuses an amount other than the quoted total with 409 PAYMENT_AMOUNT_MISMATCH and leaves the session open', async () => {
      const { session } = await freshSession();
      for (const amount of [50000, 50749, 50751]) {
        assertErrorEnvelope(
          await postAttempt(t, session.id, { ...momoBody(50000), amount_minor: amount }),
          409,
          'PAYMENT_AMOUNT_MISMATCH',
        );
      }
      // card is merchant-borne: the payer pays the base, not base + fee
      assertErrorEnvelope(
        await postAttempt(t, session.id, { rail: 'card', amount_minor: 51250 }),
        409,
        'PAYMENT_AMOUNT_MISMATCH',
      );
      assert.equal((await attemptRows(t, session.id)).length, 0);
      assert.equal((await sessionRow(t, session.id)).status, 'open');
    });

    it('replays an identical POST while the attempt is pending (200, replayed true, same reference) and refuses a different one with 409 PAYMENT_ATTEMPT_PENDING', async () => {
      const { session } = await freshSession();
      const first = await startAttempt(t, session.id, momoBody(50000));
      const again = await postAttempt(t, session.id, momoBody(50000));
      assert.equal(again.statusCode, 200, again.body);
      const replay = again.json();
      assert.equal(replay.replayed, true);
      assert.equal(replay.attempt_reference, first.attempt_reference);
      assert.equal(replay.provider_reference, first.provider_reference);
      assert.equal(replay.amount_charged_minor, first.amount_charged_minor);
      assertErrorEnvelope(
        await postAttempt(t, session.id, momoBody(50000, '0541234567')),
        409,
        'PAYMENT_ATTEMPT_PENDING',
      ); // another MTN wallet
      assertErrorEnvelope(
        await postAttempt(t, session.id, { rail: 'card', amount_minor: 50000 }),
        409,
        'PAYMENT_ATTEMPT_PENDING',
      );
      assertErrorEnvelope(
        await postAttempt(t, session.id, { rail: 'bank_transfer', amount_minor: 50000 }),
        409,
        'PAYMENT_ATTEMPT_PENDING',
      );
      assert.equal((await attemptRows(t, session.id)).length, 1);
    });

    it('lets the payer try again after a failed attempt, with a new attempt reference', async () => {
      const { m, session } = await freshSession();
      const first = await startAttempt(t, session.id, momoBody(50000));
      await simulate(t, m, first.attempt_reference, 'failed');
      const second = await startAttempt(t, session.id, momoBody(50000));
      assert.notEqual(second.attempt_reference, first.attempt_reference);
      assert.equal(second.replayed, false);
    });

    it('starts a Test card attempt for the base amount with test_simulation instructions', async () => {
      const { session } = await freshSession();
      const a = await startAttempt(t, session.id, { rail: 'card', amount_minor: 50000 });
      assert.equal(a.status, 'pending');
      assert.equal(a.amount_charged_minor, 50000);
      assert.equal(a.instructions.mode, 'test_simulation');
      assert.equal(a.instructions.rail, 'card');
      const row = (await attemptRows(t, session.id))[0]!;
      assert.deepEqual(
        { fee: row.fee_minor, bearer: row.bearer, base: row.base_minor },
        { fee: 1250, bearer: 'merchant', base: 50000 },
      );
    });

    it('starts a bank transfer attempt whose instructions carry the reference to quote', async () => {
      const { session } = await freshSession();
      const a = await startAttempt(t, session.id, {
        rail: 'bank_transfer',
        amount_minor: 50000,
        account_name: 'Ama Mensah',
      });
      assert.equal(a.instructions.mode, 'bank_transfer');
      assert.equal(a.instructions.rail, 'bank_transfer');
      assert.equal(a.instructions.amount_minor, 50000);
      assert.equal(typeof a.instructions.reference, 'string');
      assert.ok((a.instructions.reference as string).length > 0);
      assert.equal(a.instructions.reference, a.provider_reference);
    });

    it('reports status: session pending and not finalized while the attempt is pending, refreshed only with ?refresh=1', async () => {
      const { session } = await freshSession();
      const a = await startAttempt(t, session.id, momoBody(50000));
      const res = await getAttempt(t, session.id, a.attempt_reference);
      assert.equal(res.statusCode, 200, res.body);
      const s = res.json();
      assert.equal(s.attempt_reference, a.attempt_reference);
      assert.equal(s.provider, 'sika_test');
      assert.equal(s.provider_reference, a.provider_reference);
      assert.equal(s.rail, 'momo');
      assert.equal(s.status, 'pending');
      assert.equal(s.amount_charged_minor, 50750);
      assert.equal(s.currency, 'GHS');
      assert.equal(s.session_id, session.id);
      assert.equal(s.session_status, 'pending');
      assert.equal(s.session_finalized_at, null);
      assert.equal(typeof s.raw_status, 'string');
      assert.equal(s.refreshed, false);
      assert.equal(s.finalized, false);
      const refreshed = await getAttempt(t, session.id, a.attempt_reference, true);
      assert.equal(refreshed.statusCode, 200, refreshed.body);
      assert.equal(refreshed.json().refreshed, true);
      assert.equal(refreshed.json().status, 'pending'); // the Test simulator has no news of its own
      assert.equal(refreshed.json().finalized, false);
      const viaTrue = await call(
        t,
        'GET',
        `/api/v1/checkout/sessions/${session.id}/provider-attempts/${a.attempt_reference}`,
        { query: { refresh: 'true' } },
      );
      assert.equal(viaTrue.json().refreshed, true);
      const viaZero = await call(
        t,
        'GET',
        `/api/v1/checkout/sessions/${session.id}/provider-attempts/${a.attempt_reference}`,
        { query: { refresh: '0' } },
      );
      assert.equal(viaZero.statusCode, 200, viaZero.body);
      assert.equal(viaZero.json().refreshed, false);
      const bad = await call(
        t,
        'GET',
        `/api/v1/checkout/sessions/${session.id}/provider-attempts/${a.attempt_reference}`,
        { query: { refresh: 'maybe' } },
      );
      assertErrorEnvelope(bad, 400, 'INVALID_ARGUMENT');
    });

    it('reports status 404 for an unknown attempt and for an attempt of another session', async () => {
      const one = (await freshSession()).session;
      const other = (await freshSession()).session;
      const a = await startAttempt(t, one.id, momoBody(50000));
      assertErrorEnvelope(await getAttempt(t, one.id, 'att_doesnotexist'), 404, 'NOT_FOUND');
      assertErrorEnvelope(await getAttempt(t, other.id, a.attempt_reference), 404, 'NOT_FOUND');
    });

    it('refuses a new attempt on a session that has succeeded with 409 SESSION_NOT_PAYABLE', async () => {
      const { session } = await paidSession();
      assertErrorEnvelope(
        await postAttempt(t, session.id, { rail: 'card', amount_minor: 50000 }),
        409,
        'SESSION_NOT_PAYABLE',
      );
    });

    it('refuses a new attempt on a session past its expiry with 409 SESSION_NOT_PAYABLE', async () => {
      const { session } = await freshSession();
      await backdate(t, session.id);
      assertErrorEnvelope(await postAttempt(t, session.id, momoBody(50000)), 409, 'SESSION_NOT_PAYABLE');
      assert.equal((await attemptRows(t, session.id)).length, 0);
    });
  });

  describe('Telecel verification and prompt re-sends', () => {
    it('asks for a verification code on Telecel: a wrong code is 400, 123456 is accepted', async () => {
      const { session } = await freshSession();
      const a = await startAttempt(t, session.id, momoBody(50000, TELECEL_PHONE, 'telecel'));
      assert.equal(a.instructions.mode, 'verification_code');
      assert.equal(a.instructions.operator, 'telecel');
      const before = (await getAttempt(t, session.id, a.attempt_reference)).json();
      assert.equal(before.verification_required, true);
      assertErrorEnvelope(await authorize(session.id, a.attempt_reference, '000000'), 400, 'PROVIDER_PAYMENT_REJECTED');
      assertErrorEnvelope(await authorize(session.id, a.attempt_reference, 'x!'), 400, 'INVALID_ARGUMENT');
      assert.equal((await getAttempt(t, session.id, a.attempt_reference)).json().verification_required, true);
      const ok = await authorize(session.id, a.attempt_reference, '123456');
      assert.equal(ok.statusCode, 200, ok.body);
      assert.equal(ok.json().attempt_reference, a.attempt_reference);
      assert.equal(ok.json().status, 'pending');
      assert.equal(ok.json().verification_required, false);
      assert.equal(ok.json().session_status, 'pending');
    });

    it('refuses a code for an MTN attempt, which needs none, with 409', async () => {
      const { session } = await freshSession();
      const a = await startAttempt(t, session.id, momoBody(50000, MTN_PHONE, 'mtn'));
      assert.equal(a.instructions.mode, 'mobile_money_prompt');
      assertErrorEnvelope(await authorize(session.id, a.attempt_reference, '123456'), 409, 'VERIFICATION_NOT_REQUIRED');
    });

    it('re-sends the prompt three times, counting resends_left down, then refuses with 409', async () => {
      const { session } = await freshSession();
      const a = await startAttempt(t, session.id, momoBody(50000));
      assert.equal((await getAttempt(t, session.id, a.attempt_reference)).json().resends_left, 3);
      for (const left of [2, 1, 0]) {
        const res = await resend(session.id, a.attempt_reference);
        assert.equal(res.statusCode, 200, res.body);
        assert.equal(res.json().resends_left, left);
        assert.equal(res.json().status, 'pending');
      }
      const refused = await resend(session.id, a.attempt_reference);
      assert.equal(refused.statusCode, 409, refused.body);
      assert.equal(refused.json().error.code, 'RESEND_LIMIT_REACHED');
    });

    it('refuses to re-send or authorize an attempt that has ended with 409', async () => {
      const { m, session } = await freshSession();
      const a = await startAttempt(t, session.id, momoBody(50000, TELECEL_PHONE, 'telecel'));
      await simulate(t, m, a.attempt_reference, 'failed');
      assert.equal((await resend(session.id, a.attempt_reference)).statusCode, 409);
      assert.equal((await authorize(session.id, a.attempt_reference, '123456')).statusCode, 409);
    });
  });

  describe('cash slips', () => {
    it('creates a slip for the cash total (201) and returns the same slip on a repeat (200, replayed true)', async () => {
      const m = await t.merchant();
      const session = await createSession(t, m, {
        amount_minor: 50000,
        invoice_ref: 'INV-CASH-1',
        description: 'Fees',
        customer: { name: 'Yaw' },
      });
      const res = await cashSlip(session.id, 50200);
      assert.equal(res.statusCode, 201, res.body);
      const slip = res.json();
      assert.ok(slip.slip_token.length >= 16);
      assert.match(slip.reference, /^SK-[0-9A-Z]{4}-[0-9A-Z]{4}$/);
      assert.equal(slip.amount_minor, 50200);
      assert.equal(slip.currency, 'GHS');
      assert.equal(slip.merchant_name, await merchantName(m));
      assert.equal(slip.session_reference, session.id);
      assert.equal(slip.invoice_ref, 'INV-CASH-1');
      assert.equal(slip.description, 'Fees');
      assert.equal(slip.customer_name, 'Yaw');
      assert.equal(slip.status, 'active');
      assert.equal(slip.expires_at, session.expires_at);
      assert.equal(slip.replayed, false);
      assert.equal(slip.can_record, true);
      const again = await cashSlip(session.id, 50200);
      assert.equal(again.statusCode, 200, again.body);
      assert.equal(again.json().replayed, true);
      assert.equal(again.json().slip_token, slip.slip_token);
      assert.equal(again.json().reference, slip.reference);
      assert.equal((await t.db.query('SELECT 1 FROM cash_slips WHERE session_id = $1', [session.id])).length, 1);
      assert.equal((await attemptRows(t, session.id)).length, 1);
    });

    it('refuses a slip for another amount with 409 PAYMENT_AMOUNT_MISMATCH, before and after the slip exists', async () => {
      const { session } = await freshSession();
      assertErrorEnvelope(await cashSlip(session.id, 50000), 409, 'PAYMENT_AMOUNT_MISMATCH');
      assert.equal((await attemptRows(t, session.id)).length, 0);
      assert.equal((await cashSlip(session.id, 50200)).statusCode, 201);
      assertErrorEnvelope(await cashSlip(session.id, 50201), 409, 'PAYMENT_AMOUNT_MISMATCH');
      assert.equal((await attemptRows(t, session.id)).length, 1);
    });

    it('refuses a slip for a session that has succeeded with 409 SESSION_NOT_PAYABLE', async () => {
      const { session } = await paidSession();
      assertErrorEnvelope(await cashSlip(session.id, 50200), 409, 'SESSION_NOT_PAYABLE');
    });

    it('refuses the slip again once the session time has passed (before the expiry worker runs) with 409 SESSION_NOT_PAYABLE, making no second slip', async () => {
      const { session } = await freshSession();
      const slip = (await cashSlip(session.id, 50200)).json();
      await backdate(t, session.id); // time passes: the session and its slip are past their expiry
      assertErrorEnvelope(await cashSlip(session.id, 50200), 409, 'SESSION_NOT_PAYABLE');
      assertErrorEnvelope(
        await postAttempt(t, session.id, { rail: 'cash', amount_minor: 50200 }),
        409,
        'SESSION_NOT_PAYABLE',
      );
      const slips = await t.db.query<{ slip_token: string }>(
        'SELECT slip_token FROM cash_slips WHERE session_id = $1',
        [session.id],
      );
      assert.deepEqual(
        slips.map((r) => r.slip_token),
        [slip.slip_token],
      );
      assert.equal((await attemptRows(t, session.id)).length, 1);
    });

    it('refuses a malformed slip request with 400', async () => {
      const { session } = await freshSession();
      assertErrorEnvelope(await cashSlip(session.id, 0), 400, 'INVALID_ARGUMENT');
      assertErrorEnvelope(
        await call(t, 'POST', '/api/v1/checkout/cash-slips', { body: { amount_minor: 50200 } }),
        400,
        'INVALID_ARGUMENT',
      );
      assertErrorEnvelope(await cashSlip('x'.repeat(81), 50200), 400, 'INVALID_ARGUMENT');
    });

    it('cancels the slip and its attempt when the payer switches to Mobile Money', async () => {
      const { session } = await freshSession();
      const slip = (await cashSlip(session.id, 50200)).json();
      const momo = await startAttempt(t, session.id, momoBody(50000));
      const attempts = await attemptRows(t, session.id);
      assert.equal(attempts.length, 2);
      const cash = attempts.find((a) => a.rail === 'cash')!;
      assert.equal(cash.status, 'cancelled');
      assert.equal(attempts.find((a) => a.id === momo.attempt_reference)!.status, 'pending');
      const stored = await t.db.query<{ status: string }>('SELECT status FROM cash_slips WHERE slip_token = $1', [
        slip.slip_token,
      ]);
      assert.equal(stored[0]!.status, 'cancelled');
      assert.equal((await sessionRow(t, session.id)).status, 'pending');
      // The slip is not replayed any more: a new cash request must wait for the momo attempt.
      assertErrorEnvelope(await cashSlip(session.id, 50200), 409, 'PAYMENT_ATTEMPT_PENDING');
    });

    it('a cash attempt through provider-attempts is the same slip as the cash-slips endpoint', async () => {
      const { session } = await freshSession();
      const slip = (await cashSlip(session.id, 50200)).json();
      const res = await postAttempt(t, session.id, { rail: 'cash', amount_minor: 50200 });
      assert.equal(res.statusCode, 200, res.body);
      assert.equal(res.json().replayed, true);
      assert.equal(res.json().instructions.mode, 'cash_deposit');
      assert.equal(res.json().instructions.slip_reference, slip.reference);
    });
  });

  describe('Live key sessions', () => {
    it('offer only cash, and a momo attempt is 409 RAIL_NOT_OFFERED with nothing created', async () => {
      const m = await t.merchant();
      const session = await createSession(t, m, { amount_minor: 50000 }, { live: true });
      const view = (await getPublic(t, session.id)).json();
      assert.deepEqual(view.allowed_rails, ['cash']);
      assert.equal(view.livemode, true);
      assert.notEqual(view.card_collection_mode, 'test_simulation');
      const quote = (await getQuote(t, session.id)).json();
      assert.deepEqual(quote.allowed_rails, ['cash']);
      assert.deepEqual(Object.keys(quote.surcharges), ['cash']);
      // A rail the session does not offer is the caller's choice to change (409), not an outage (503 PROVIDER_RAIL_UNAVAILABLE).
      assertErrorEnvelope(await postAttempt(t, session.id, momoBody(50000)), 409, 'RAIL_NOT_OFFERED');
      assertErrorEnvelope(
        await postAttempt(t, session.id, { rail: 'card', amount_minor: 50000 }),
        409,
        'RAIL_NOT_OFFERED',
      );
      assert.equal((await attemptRows(t, session.id)).length, 0);
      assert.equal((await sessionRow(t, session.id)).status, 'open');
      // cash still works in Live
      assert.equal((await cashSlip(session.id, 50200)).statusCode, 201);
    });
  });
});
