// Issue 34, items 1 and 5: an operator overrides one merchant's clearing time per rail and environment and sets
// its rolling reserve, through the operator console as a browser sends it (/ops/merchants/:id/clearing, linked
// from the merchant page). Each change is audited with its before and after; bad values are a 400 page naming
// the field, nothing written; only the operator role may change them (the payout settings' rule); another or
// unknown merchant is the page's 404.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { createMerchant, type CreatedMerchant } from '../../src/accounts/service.ts';
import { effectiveClearing } from '../../src/ledger/clearing.ts';
import { createOperator } from '../../src/ops/service.ts';
import { basisPointsOf } from '../../src/web/ops/clearing.ts';
import { ConsoleClient, flashOf } from '../support/console-client.ts';
import { startTestApp, storageKind, type TestContext } from '../support/helpers.ts';

const PASSWORD = 'ops-clearing-password-1';
const text = (body: string) =>
  flashOf(body)
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/&amp;/g, '&');

/** A full form as the page sends it: every rail's override empty (the default) unless given. */
const form = (environment: 'test' | 'live', fields: Record<string, string> = {}): Record<string, string> => ({
  environment,
  days_momo: '',
  days_card: '',
  days_bank_transfer: '',
  days_cash: '',
  reserve_percent: '0',
  reserve_days: '',
  ...fields,
});

describe(`operator clearing overrides and rolling reserve (${storageKind})`, () => {
  let t: TestContext;
  let operator: ConsoleClient;
  let operatorEmail: string;
  let merchant: CreatedMerchant;

  const newMerchant = () =>
    createMerchant(
      t.db,
      { name: 'Clearing shop', email: `clearing-shop-${randomUUID()}@example.com`, webhookUrl: null },
      t.webhookTargets,
    );
  const auditRows = (merchantId: string) =>
    t.db.query<{ action: string; object_id: string; actor_email: string; before: unknown; after: unknown }>(
      `SELECT action, object_id, actor_email, before, after FROM audit_log
        WHERE merchant_id = $1 AND action = 'clearing_settings.update' ORDER BY created_at, id`,
      [merchantId],
    );
  const settingsRow = async (merchantId: string, environment: string) =>
    (
      await t.db.query<{ clearing_days: Record<string, number>; reserve_bp: number; reserve_days: number }>(
        'SELECT clearing_days, reserve_bp, reserve_days FROM clearing_settings WHERE merchant_id = $1 AND environment = $2',
        [merchantId, environment],
      )
    )[0];

  before(async () => {
    // The deployment's Live defaults (the test helpers clear everything at once unless told).
    t = await startTestApp({ CLEARING_DAYS: 'momo=1,card=2,bank_transfer=0,cash=0' });
    merchant = await newMerchant();
    operatorEmail = `clearing-operator-${randomUUID()}@example.com`;
    await createOperator(t.db, { email: operatorEmail, password: PASSWORD });
    operator = await new ConsoleClient(t, '/ops').signedIn(operatorEmail, PASSWORD);
  });
  after(() => t?.close());

  it('the merchant page links to the clearing page, which shows the defaults per rail in Test and Live and no reserve', async () => {
    const page = await operator.get(`/ops/merchants/${merchant.merchant_id}`);
    assert.equal(page.statusCode, 200);
    assert.ok(page.body.includes(`href="/ops/merchants/${merchant.merchant_id}/clearing"`), 'linked');
    const clearing = await operator.get(`/ops/merchants/${merchant.merchant_id}/clearing`);
    assert.equal(clearing.statusCode, 200, clearing.body.slice(0, 300));
    assert.match(clearing.body, /Live clearing/);
    assert.match(clearing.body, /Test clearing is off/);
    // Live defaults: MoMo 1 business day, card 2, bank transfer and cash at once (when matched).
    assert.match(clearing.body, /<td>Mobile Money<\/td><td>1 business day<\/td>/);
    assert.match(clearing.body, /<td>Card<\/td><td>2 business days<\/td>/);
    assert.match(clearing.body, /<td>Bank transfer<\/td><td>at once<\/td>/);
    assert.match(clearing.body, /Rolling reserve: <strong>off<\/strong>/);
  });

  it('an operator overrides Live card clearing and sets a 12.5% reserve for 90 days: applied, shown, audited with before and after', async () => {
    const url = `/ops/merchants/${merchant.merchant_id}/clearing`;
    const res = await operator.post(
      url,
      form('live', { days_card: '5', days_momo: '0', reserve_percent: '12.5', reserve_days: '90' }),
    );
    assert.equal(res.statusCode, 200, res.body.slice(0, 300));
    assert.equal(text(res.body), 'Live clearing settings saved.');
    const live = await effectiveClearing(t.db, merchant.merchant_id, 'live');
    assert.deepEqual(live.overrides, { card: 5, momo: 0 });
    assert.deepEqual(live.days, { momo: 0, card: 5, bank_transfer: 0, cash: 0 });
    assert.equal(live.reserve_bp, 1250);
    assert.equal(live.reserve_days, 90);
    // Test is untouched.
    assert.equal(await settingsRow(merchant.merchant_id, 'test'), undefined);
    assert.match(res.body, /<td>Card<\/td><td>5 business days<\/td><td>operator override<\/td>/);
    assert.match(res.body, /12\.5% of each credit held for 90 days/);

    const rows = await auditRows(merchant.merchant_id);
    assert.equal(rows.length, 1);
    assert.equal(rows[0]!.object_id, `${merchant.merchant_id}:live`);
    assert.equal(rows[0]!.actor_email, operatorEmail);
    assert.deepEqual(rows[0]!.before, { clearing_days: {}, reserve_bp: 0, reserve_days: 0 });
    assert.deepEqual(rows[0]!.after, { clearing_days: { card: 5, momo: 0 }, reserve_bp: 1250, reserve_days: 90 });

    // The same form again changes nothing and writes no audit row.
    const again = await operator.post(
      url,
      form('live', { days_card: '5', days_momo: '0', reserve_percent: '12.50', reserve_days: '90' }),
    );
    assert.equal(again.statusCode, 200);
    assert.equal(text(again.body), 'Live clearing settings are unchanged.');
    assert.equal((await auditRows(merchant.merchant_id)).length, 1);

    // Emptying an override returns the rail to its default; 0% turns the reserve off (its days with it).
    const off = await operator.post(url, form('live', { days_momo: '0', reserve_percent: '0', reserve_days: '90' }));
    assert.equal(off.statusCode, 200);
    assert.deepEqual(await settingsRow(merchant.merchant_id, 'live'), {
      clearing_days: { momo: 0 },
      reserve_bp: 0,
      reserve_days: 0,
    });
    const last = (await auditRows(merchant.merchant_id)).at(-1)!;
    assert.deepEqual(last.before, { clearing_days: { card: 5, momo: 0 }, reserve_bp: 1250, reserve_days: 90 });
    assert.deepEqual(last.after, { clearing_days: { momo: 0 }, reserve_bp: 0, reserve_days: 0 });
    assert.match(off.body, /Rolling reserve: <strong>off<\/strong>/);
  });

  it('a Test override is kept apart from Live; Test still clears at once until the merchant turns Test clearing on', async () => {
    const m = await newMerchant();
    const res = await operator.post(`/ops/merchants/${m.merchant_id}/clearing`, form('test', { days_momo: '2' }));
    assert.equal(res.statusCode, 200);
    assert.equal(text(res.body), 'Test clearing settings saved.');
    const test = await effectiveClearing(t.db, m.merchant_id, 'test');
    assert.deepEqual(test.overrides, { momo: 2 });
    assert.equal(test.days.momo, 0, 'Test clearing is off');
    assert.deepEqual((await effectiveClearing(t.db, m.merchant_id, 'live')).overrides, {});
  });

  it('refuses bad values with a 400 page naming the field, and writes nothing', async () => {
    const m = await newMerchant();
    const url = `/ops/merchants/${m.merchant_id}/clearing`;
    const cases: [Record<string, string>, RegExp][] = [
      [form('live', { days_card: '31' }), /Clearing days for Card/],
      [form('live', { days_momo: '-1' }), /Clearing days for Mobile Money/],
      [form('live', { days_cash: 'two' }), /Clearing days for Cash at a branch/],
      [form('live', { reserve_percent: '100.5', reserve_days: '30' }), /Reserve percentage/],
      [form('live', { reserve_percent: '101', reserve_days: '30' }), /Reserve percentage/],
      [form('live', { reserve_percent: '2.555', reserve_days: '30' }), /Reserve percentage/],
      [form('live', { reserve_percent: '-5', reserve_days: '30' }), /Reserve percentage/],
      [form('live', { reserve_percent: '10', reserve_days: '366' }), /Reserve days/],
      [form('live', { reserve_percent: '10', reserve_days: '0' }), /Reserve days/],
      // A reserve without its days: the schema lets an empty field through, the service names it.
      [form('live', { reserve_percent: '10', reserve_days: '' }), /reserve days/],
      [form('live', { environment: 'staging' }), /Environment/],
    ];
    for (const [fields, message] of cases) {
      const res = await operator.post(url, fields);
      assert.equal(res.statusCode, 400, `${JSON.stringify(fields)}: ${res.body.slice(0, 300)}`);
      assert.match(res.headers['content-type'] as string, /^text\/html/);
      assert.match(text(res.body), message, JSON.stringify(fields));
    }
    assert.equal(await settingsRow(m.merchant_id, 'live'), undefined);
    assert.equal((await auditRows(m.merchant_id)).length, 0);
  });

  it('100% and two decimals are read to the basis point', () => {
    assert.equal(basisPointsOf('100'), 10_000);
    assert.equal(basisPointsOf('100.00'), 10_000);
    assert.equal(basisPointsOf('0.01'), 1);
    assert.equal(basisPointsOf('2.5'), 250);
    assert.equal(basisPointsOf('33.33'), 3333);
    assert.equal(basisPointsOf('0'), 0);
  });

  it('an unknown merchant is the 404 page, on the page and on the form, nothing written', async () => {
    const unknown = randomUUID();
    const page = await operator.get(`/ops/merchants/${unknown}/clearing`);
    assert.equal(page.statusCode, 404);
    const res = await operator.post(`/ops/merchants/${unknown}/clearing`, form('live', { days_card: '4' }));
    assert.equal(res.statusCode, 404);
    assert.equal(await settingsRow(unknown, 'live'), undefined);
  });

  it('compliance may look but not change (403); a teller is sent to the teller desk', async () => {
    const m = await newMerchant();
    const url = `/ops/merchants/${m.merchant_id}/clearing`;
    const complianceEmail = `clearing-compliance-${randomUUID()}@example.com`;
    await createOperator(t.db, { email: complianceEmail, password: PASSWORD, role: 'compliance' });
    const compliance = await new ConsoleClient(t, '/ops', '203.0.113.21').signedIn(complianceEmail, PASSWORD);
    assert.equal((await compliance.get(url)).statusCode, 200);
    const refused = await compliance.post(url, form('live', { days_card: '4' }));
    assert.equal(refused.statusCode, 403);
    assert.match(text(refused.body), /Only an operator/);

    const tellerEmail = `clearing-teller-${randomUUID()}@example.com`;
    await createOperator(t.db, { email: tellerEmail, password: PASSWORD, role: 'teller' });
    const teller = await new ConsoleClient(t, '/ops', '203.0.113.22').signedIn(tellerEmail, PASSWORD);
    const sent = await teller.post(url, form('live', { days_card: '4' }));
    assert.equal(sent.statusCode, 303);
    assert.equal(sent.headers.location, '/ops/teller');

    assert.equal(await settingsRow(m.merchant_id, 'live'), undefined);
    assert.equal((await auditRows(m.merchant_id)).length, 0);
  });
});
