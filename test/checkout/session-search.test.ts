// The Payments page's search (issue 36): how a fragment is read (pure), then over storage, on embedded storage
// and on PostgreSQL (DATABASE_URL): each kind of fragment finds its session, another merchant's sessions are
// never found, and a Test session is not found in Live.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { describe, it } from 'node:test';
import type { CreatedMerchant } from '../../src/accounts/service.ts';
import { checkCharacter } from '../../src/checkout/receipt-number.ts';
import {
  paymentsExportRows,
  paymentsFilter,
  paymentsPage,
  type PaymentsQuery,
} from '../../src/checkout/payments-list.ts';
import { NAME_INDEX_IDS_MAX, NAME_WALK_ROWS } from '../../src/checkout/session-search-store.ts';
import { interpretFragment } from '../../src/checkout/session-search.ts';
import { createSession, momoBody, simulate, startAttempt, TELECEL_PHONE } from '../support/checkout.ts';
import { storageKind } from '../support/helpers.ts';
import { useTestApp } from '../support/hooks.ts';

describe('the Payments search reads a fragment as every kind it can be', () => {
  it('an empty or blank search is no search', () => {
    assert.equal(interpretFragment(''), null);
    assert.equal(interpretFragment('   '), null);
    assert.equal(interpretFragment(undefined), null);
  });

  it('"4567" is a phone ending, an amount of GHS 4,567.00, an invoice prefix and a reference, not a name', () => {
    const terms = interpretFragment(' 4567 ')!;
    assert.equal(terms.phoneLast4, '4567');
    assert.equal(terms.amountMinor, 456_700);
    assert.equal(terms.invoiceRefPrefix, '4567');
    assert.equal(terms.reference, '4567');
    assert.equal(terms.nameWords, null);
    assert.equal(terms.phone, null);
  });

  it('"500" and "500.00" and "GHS 500" are 50000 pesewas; "0" and "1,22.00" are no amount', () => {
    for (const q of ['500', '500.00', 'GHS 500', '500.0']) assert.equal(interpretFragment(q)!.amountMinor, 50_000, q);
    assert.equal(interpretFragment('1,250.50')!.amountMinor, 125_050);
    assert.equal(interpretFragment('0')!.amountMinor, null);
    assert.equal(interpretFragment('1,22.00')!.amountMinor, null);
  });

  it('a Ghana phone in any spelling is the stored +233 number, and not a name or an amount', () => {
    for (const q of ['024 123 4567', '0241234567', '+233 24 123 4567', '233241234567', '024-123-4567']) {
      const terms = interpretFragment(q)!;
      assert.equal(terms.phone, '+233241234567', q);
      assert.equal(terms.nameWords, null, q);
    }
    assert.equal(interpretFragment('0241234567')!.amountMinor, null, 'ten whole digits are beyond any amount');
  });

  it('a receipt number read out with spaces, lower case and O for 0 is the stored number; a wrong check character is not one', () => {
    const body = 'K7M2QX0D';
    const number = body + checkCharacter(body);
    const readOut = `${number.slice(0, 3)} ${number.slice(3, 6)} ${number.slice(6)}`.toLowerCase().replace(/0/g, 'o');
    assert.equal(interpretFragment(readOut)!.receiptNumber, number);
    const wrong = body + (checkCharacter(body) === 'A' ? 'B' : 'A');
    assert.equal(interpretFragment(wrong)!.receiptNumber, null);
  });

  it('a session id is exact and lower case; names are lower-case word prefixes, at most four words', () => {
    const terms = interpretFragment('CS_01HZY3ABCDEFGHJKMNPQRSTVWX')!;
    assert.equal(terms.sessionId, 'cs_01hzy3abcdefghjkmnpqrstvwx');
    assert.equal(terms.nameWords, null);
    assert.deepEqual(interpretFragment('Ama  MEN')!.nameWords, ['ama', 'men']);
    assert.equal(interpretFragment('Ama MEN')!.reference, null, 'a reference has no spaces');
    assert.deepEqual(interpretFragment("O'Brien-Mensah")!.nameWords, ['o', 'brien', 'mensah']);
    assert.deepEqual(interpretFragment('a b c d e f')!.nameWords, ['a', 'b', 'c', 'd']);
    assert.equal(interpretFragment('INV-2026')!.nameWords, null, 'a digit makes it a reference, not a name');
    assert.equal(interpretFragment('k7m2qx9d4')!.nameWords, null);
    assert.equal(interpretFragment('x'.repeat(300))!.invoiceRefPrefix!.length, 100);
  });
});

describe(`the Payments search over storage (${storageKind})`, () => {
  const t = useTestApp();

  async function paid(m: CreatedMerchant, customer: string, amountMinor: number, phone: string, network: string) {
    const invoiceRef = `SRCH-${randomUUID().slice(0, 8)}`;
    const session = await createSession(t, m, {
      amount_minor: amountMinor,
      invoice_ref: invoiceRef,
      customer: { name: customer, email: 'payer@example.com' },
    });
    const attempt = await startAttempt(t, session.id, momoBody(amountMinor, phone, network));
    await simulate(t, m, attempt.attempt_reference, 'paid');
    const [row] = await t.db.query<{
      receipt_number: string;
      provider_reference: string;
      amount_charged_minor: string;
    }>(
      `SELECT s.receipt_number, a.provider_reference, a.amount_charged_minor::text
         FROM checkout_sessions s JOIN payment_attempts a ON a.session_id = s.id WHERE s.id = $1`,
      [session.id],
    );
    return { id: session.id, invoiceRef, attempt: attempt.attempt_reference, ...row! };
  }

  const found = async (m: CreatedMerchant, query: PaymentsQuery, environment = 'test') => {
    const { rows } = await paymentsPage(t.db, paymentsFilter({ merchantId: m.merchant_id, environment }, query), null);
    return rows.map((row) => row.session.id);
  };

  it('each kind of fragment finds the session; another merchant with the same data is never found', async () => {
    const [m, other] = [await t.merchant(), await t.merchant()];
    const unique = `Zq${randomUUID()
      .replace(/[^a-f]/g, '')
      .slice(0, 8)}`;
    const mine = await paid(m, `Abena ${unique} Owusu`, 123_456, TELECEL_PHONE, 'telecel');
    const decoy = await paid(m, 'Kwesi Appiah', 5_000, '0551234999', 'mtn');
    const theirs = await paid(other, `Abena ${unique} Owusu`, 123_456, TELECEL_PHONE, 'telecel');

    const kinds: [string, string][] = [
      ['session id', mine.id.toUpperCase()],
      ['receipt number', mine.receipt_number.toLowerCase()],
      ['invoice reference, exact', mine.invoiceRef],
      ['invoice reference, prefix', mine.invoiceRef.slice(0, 9)],
      ['customer name, word prefix', unique.slice(0, 5).toLowerCase()],
      ['customer name, two words', `abena ${unique}`],
      ['phone, local', '020 123 4567'],
      ['phone, international', '+233201234567'],
      ['phone, last four', '4567'],
      ['amount', '1,234.56'],
      ['provider reference', mine.provider_reference],
      ['attempt reference', mine.attempt],
    ];
    for (const [kind, q] of kinds) {
      const ids = await found(m, { q });
      assert.ok(ids.includes(mine.id), `${kind} (${q}) finds the session`);
      assert.ok(!ids.includes(theirs.id), `${kind} (${q}) never finds another merchant's`);
      assert.ok(!ids.includes(decoy.id), `${kind} (${q}) does not find an unrelated session`);
    }
    // The other merchant finds its own by the same fragments, never mine.
    const theirIds = await found(other, { q: '4567' });
    assert.deepEqual(theirIds, [theirs.id]);
    assert.deepEqual(await found(m, { q: 'nobody-by-this-name' }), []);
  });

  it('a Test session is not found in Live, whatever the fragment', async () => {
    const m = await t.merchant();
    const mine = await paid(m, 'Efua Live-Test', 7_700, TELECEL_PHONE, 'telecel');
    assert.deepEqual(await found(m, { q: mine.invoiceRef }), [mine.id]);
    for (const q of [mine.id, mine.invoiceRef, '4567', '77.00', 'efua', mine.provider_reference])
      assert.deepEqual(await found(m, { q }, 'live'), [], q);
  });

  it('filters combine with the search: status, method, network, dates; the export reads every page of the same rows', async () => {
    const m = await t.merchant();
    const a = await paid(m, 'Yaw Filter', 1_000, TELECEL_PHONE, 'telecel');
    const b = await paid(m, 'Yaw Filter', 1_000, '0241239999', 'mtn');
    const open = await createSession(t, m, { amount_minor: 1_000, customer: { name: 'Yaw Filter' } });
    assert.deepEqual(await found(m, { q: 'yaw' }), [open.id, b.id, a.id], 'newest first');
    assert.deepEqual(await found(m, { q: 'yaw', status: 'success' }), [b.id, a.id]);
    assert.deepEqual(await found(m, { q: 'yaw', status: 'open' }), [open.id]);
    assert.deepEqual(await found(m, { q: 'yaw', rail: 'momo', network: 'mtn' }), [b.id]);
    assert.deepEqual(await found(m, { q: 'yaw', rail: 'card' }), []);
    const today = new Date().toISOString().slice(0, 10);
    assert.deepEqual(await found(m, { q: 'yaw', from: today, to: today }), [open.id, b.id, a.id]);
    assert.deepEqual(await found(m, { q: 'yaw', to: '2020-01-01' }), []);
    assert.deepEqual(await found(m, { q: 'yaw', from: '2099-01-01' }), []);

    // Keyset pages: 30 sessions of one invoice prefix, 25 then 5, none skipped or repeated; the export is all 30.
    const prefix = `PG-${randomUUID().slice(0, 6)}`;
    const made: string[] = [];
    for (let i = 0; i < 30; i++)
      made.push((await createSession(t, m, { amount_minor: 100 + i, invoice_ref: `${prefix}-${i}` })).id);
    const filter = paymentsFilter({ merchantId: m.merchant_id, environment: 'test' }, { q: prefix });
    const first = await paymentsPage(t.db, filter, null);
    assert.equal(first.rows.length, 25);
    assert.ok(first.next);
    const second = await paymentsPage(t.db, filter, first.next);
    assert.equal(second.rows.length, 5);
    assert.equal(second.next, null);
    const paged = [...first.rows, ...second.rows].map((row) => row.session.id);
    assert.deepEqual([...paged].sort(), [...made].sort());
    // A name on more sessions than a page: found by reading the newest sessions (no index), paged the same way.
    const name = `Kukua ${randomUUID()
      .replace(/[^a-f]/g, '')
      .slice(0, 8)}`;
    const named: string[] = [];
    for (let i = 0; i < 27; i++) named.push((await createSession(t, m, { amount_minor: 300, customer: { name } })).id);
    const byName = paymentsFilter({ merchantId: m.merchant_id, environment: 'test' }, { q: name.toUpperCase() });
    const one = await paymentsPage(t.db, byName, null);
    const two = await paymentsPage(t.db, byName, one.next);
    assert.equal(one.rows.length, 25);
    // Every one exactly once (sessions made in one millisecond are ordered by id, not by when they were made).
    assert.deepEqual([...one.rows, ...two.rows].map((row) => row.session.id).sort(), [...named].sort());
    assert.equal(two.next, null);
    const exported: string[] = [];
    for await (const row of paymentsExportRows(t.db, filter)) exported.push(row.session.id);
    assert.deepEqual(exported, paged);
  });

  it('a name the newest sessions do not hold is found: a rare one through the index, a common one by walking on', async () => {
    const [m, other] = [await t.merchant(), await t.merchant()];
    const tag = randomUUID()
      .replace(/[^a-f]/g, '')
      .slice(0, 6);
    const template = await createSession(t, m, { amount_minor: 100, customer: { name: 'Template' } });
    const theirs = await createSession(t, other, { amount_minor: 100, customer: { name: 'Template' } });
    // Sessions copied from one by SQL, `count` of them named `name`, made `daysAgo` days back a millisecond apart.
    const copies = async (from: string, prefix: string, name: string, count: number, daysAgo: number) => {
      const columns =
        'merchant_id, environment, api_key_id, status, amount_minor, currency, description, customer_email, expires_at, version, updated_at, refunded_minor';
      const rows = await t.db.query<{ id: string }>(
        `INSERT INTO checkout_sessions (id, invoice_ref, customer_name, created_at, ${columns})
         SELECT $2 || lpad(g::text, 5, '0'), $2 || g, $3, now() - make_interval(days => $5) + g * interval '1 millisecond', ${columns}
           FROM checkout_sessions, generate_series(1, $4::int) g WHERE id = $1
         RETURNING id`,
        [from, `cs_${prefix}${tag}`, name, count, daysAgo],
      );
      return rows
        .map((row) => row.id)
        .sort()
        .reverse(); // newest first: the ids grow with the time
    };
    const rare = await copies(template.id, 'rare', `Yaaba ${tag}rare`, 3, 4);
    const common = await copies(template.id, 'comm', `Kukua ${tag}comm`, NAME_INDEX_IDS_MAX + 5, 3);
    await copies(theirs.id, 'thrs', `Kukua ${tag}comm`, 30, 1); // another merchant's, newer still
    await copies(template.id, 'newe', 'Ama Mensah', NAME_WALK_ROWS + 10, 2);

    const page = async (q: string, status?: string, after: string | null = null) =>
      paymentsPage(t.db, paymentsFilter({ merchantId: m.merchant_id, environment: 'test' }, { q, status }), after);
    assert.deepEqual(
      (await page(`${tag}rar`)).rows.map((row) => row.session.id),
      rare,
      'a rare name: every match, newest first',
    );
    const first = await page(`kukua ${tag}co`);
    assert.deepEqual(
      first.rows.map((row) => row.session.id),
      common.slice(0, 25),
      'a common name: the newest 25',
    );
    const second = await page(`kukua ${tag}co`, undefined, first.next);
    assert.deepEqual(
      second.rows.map((row) => row.session.id),
      common.slice(25, 50),
    );
    assert.deepEqual((await page(`${tag}rar`, 'success')).rows, [], 'the filter applies to the index step');
    assert.deepEqual((await page(`kukua ${tag}co`, 'success')).rows, [], 'and to the walk');
    assert.deepEqual((await page(`${tag}none`)).rows, []);
  });
});
