// Issue 30: two operators for payout returns and Live payout settings, through the operator console as a
// browser sends it. A return takes the bank's return reference (a real format), a reason and a confirmation,
// waits for a second operator and then gives the amount and fee back to the balance; Matched and Exception are
// not offered on a returned payout and refused if posted. Payout settings: per payout at most the daily limit,
// amounts read as GHS with human messages; opening Live payouts or raising a Live limit waits for a second
// operator, closing, pausing, lowering and Test changes apply at once. Each step is audited.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import type { CreatedMerchant } from '../../src/accounts/service.ts';
import { checkInvariants } from '../../src/ledger/service.ts';
import { reconcilePayout } from '../../src/payouts/lifecycle.ts';
import { createOperator } from '../../src/ops/service.ts';
import { LivePayoutSimulator } from '../../src/rails/payouts.ts';
import { ConsoleClient, flashOf } from '../support/console-client.ts';
import { startTestApp, storageKind, type TestContext } from '../support/helpers.ts';
import { balanceOf, bankRecipient, createPayout, drive, getPayout, liveMerchant } from '../support/payouts-fixtures.ts';

const PASSWORD = 'ops-approvals-password';
const text = (body: string) =>
  flashOf(body)
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/&amp;/g, '&');

describe(`payout returns and payout settings through a second operator (${storageKind})`, () => {
  let t: TestContext;
  const rail = new LivePayoutSimulator();
  let first: ConsoleClient;
  let second: ConsoleClient;

  before(async () => {
    t = await startTestApp({}, { payoutRail: rail });
    const emails = [`approvals-a-${randomUUID()}@example.com`, `approvals-b-${randomUUID()}@example.com`];
    for (const email of emails) await createOperator(t.db, { email, password: PASSWORD });
    first = await new ConsoleClient(t, '/ops').signedIn(emails[0]!, PASSWORD);
    second = await new ConsoleClient(t, '/ops', '203.0.113.12').signedIn(emails[1]!, PASSWORD);
  });
  after(() => t?.close());

  const requestFor = async (objectId: string, status = 'pending') =>
    (
      await t.db.query<{ id: string; payload: Record<string, unknown> }>(
        'SELECT id, payload FROM operator_approvals WHERE object_id = $1 AND status = $2',
        [objectId, status],
      )
    )[0];
  const healthy = async (m: CreatedMerchant) => assert.deepEqual(await checkInvariants(t.db, m.merchant_id), []);

  async function paidPayout() {
    const m = await liveMerchant(t, { fundMinor: 100_000 });
    const recipient = await bankRecipient(t, m.live_api_key, '5656565656');
    const payout = await createPayout(t, m.live_api_key, recipient.id, 30_000);
    assert.equal(await drive(t, rail, payout.id), 'paid');
    return { m, payout };
  }

  it('a return needs the bank reference in its format, a reason and a confirmation, then a second operator; the money comes back only on approval', async () => {
    const { m, payout } = await paidPayout();
    const before = (await balanceOf(t, m.merchant_id, 'live')).available_minor;
    const list = await first.get(`/ops/payouts?q=${payout.reference}`);
    assert.ok(
      list.body.includes(payout.reference) && list.body.includes('Record return') && list.body.includes('live'),
      'the paid payout is listed with its environment',
    );

    const refused = [
      [
        { return_reference: 'any text at all', reason: 'Bank says returned', confirm: 'yes' },
        /return reference is the bank's/,
      ],
      [{ return_reference: 'R1', reason: 'Bank says returned', confirm: 'yes' }, /4 to 40 letters/],
      [{ return_reference: 'GCB/RET/2026.0117', reason: ' ', confirm: 'yes' }, /Give a reason/],
      [{ return_reference: 'GCB/RET/2026.0117', reason: 'Bank says returned' }, /Confirm that the bank statement/],
    ] as const;
    for (const [fields, message] of refused) {
      const res = await first.post(`/ops/payouts/${payout.id}/return`, fields);
      assert.equal(res.statusCode, 400, JSON.stringify(fields));
      assert.match(text(res.body), message);
    }
    assert.equal(await requestFor(payout.id), undefined);

    const filed = await first.post(`/ops/payouts/${payout.id}/return`, {
      return_reference: 'GCB/RET/2026.0117',
      reason: 'Account closed (bank notice)',
      confirm: 'yes',
    });
    assert.equal(filed.statusCode, 200, filed.body.slice(0, 300));
    assert.match(text(filed.body), /filed for a second operator/);
    assert.ok(filed.body.includes('Return waiting for a second operator'));
    const request = await requestFor(payout.id);
    assert.ok(request);
    assert.equal((await getPayout(t, m.live_api_key, payout.id)).status, 'paid', 'nothing moves before the approval');
    assert.equal((await balanceOf(t, m.merchant_id, 'live')).available_minor, before);

    const own = await first.post(`/ops/approvals/${request.id}`, { decision: 'approve' });
    assert.equal(own.statusCode, 403);
    const approvals = await second.get('/ops/approvals');
    assert.ok(
      approvals.body.includes('GCB/RET/2026.0117') && approvals.body.includes(payout.reference),
      'the second operator sees the payout and its return reference',
    );
    const approved = await second.post(`/ops/approvals/${request.id}`, { decision: 'approve' });
    assert.equal(approved.statusCode, 200);
    const read = await getPayout(t, m.live_api_key, payout.id);
    assert.deepEqual([read.status, read.return_reference], ['returned', 'GCB/RET/2026.0117']);
    assert.equal((await balanceOf(t, m.merchant_id, 'live')).available_minor, before + 30_000 + read.fee_minor);
    const audited = await t.db.query<{ action: string; actor_email: string }>(
      'SELECT action, actor_email FROM audit_log WHERE object_id IN ($1, $2)',
      [request.id, payout.id],
    );
    assert.deepEqual(audited.map((a) => a.action).sort(), [
      'approval.approve.payout_return',
      'approval.request.payout_return',
      'payout.returned',
    ]);
    await healthy(m);

    // A returned payout offers neither Matched nor Exception, and the service refuses them if posted.
    const after = await first.get(`/ops/payouts?q=${payout.reference}`);
    assert.ok(!after.body.includes(`/ops/payouts/${payout.id}/reconcile`));
    const posted = await first.post(`/ops/payouts/${payout.id}/reconcile`, { result: 'matched' });
    assert.equal(posted.statusCode, 409);
    await assert.rejects(
      reconcilePayout(t.db, payout.id, 'exception'),
      (e: { code?: string; message?: string }) =>
        e.code === 'PAYOUT_NOT_RECONCILABLE' && /returned/.test(e.message ?? ''),
    );
  });

  it('a rejected return leaves the payout paid; a second request for the same payout is refused while one waits', async () => {
    const { m, payout } = await paidPayout();
    const fields = { return_reference: 'FT26011700123', reason: 'Bank notice', confirm: 'yes' };
    assert.equal((await first.post(`/ops/payouts/${payout.id}/return`, fields)).statusCode, 200);
    const twice = await second.post(`/ops/payouts/${payout.id}/return`, fields);
    assert.equal(twice.statusCode, 409);
    assert.match(text(twice.body), /already waits/);
    const request = await requestFor(payout.id);
    assert.equal(
      (await second.post(`/ops/approvals/${request!.id}`, { decision: 'reject', note: 'Wrong payout' })).statusCode,
      200,
    );
    assert.equal((await getPayout(t, m.live_api_key, payout.id)).status, 'paid');
    await healthy(m);
  });

  const settingsOf = async (m: CreatedMerchant, environment: string) =>
    (
      await t.db.query<{
        payout_access: boolean;
        paused: boolean;
        payout_limit_minor: number;
        daily_limit_minor: number;
      }>(
        'SELECT payout_access, paused, payout_limit_minor::int, daily_limit_minor::int FROM payout_settings WHERE merchant_id = $1 AND environment = $2',
        [m.merchant_id, environment],
      )
    )[0]!;
  const settingsForm = (environment: string, values: Partial<Record<string, string>> = {}) => ({
    environment,
    access: 'on',
    paused: 'off',
    limit: '5,000.00',
    daily_limit: '20,000.00',
    ...values,
  });

  it('payout limits: per payout at most the daily limit, amounts read as GHS with human messages', async () => {
    const m = await liveMerchant(t, { fundMinor: 0 });
    const url = `/ops/merchants/${m.merchant_id}/payouts`;
    const above = await first.post(url, settingsForm('test', { limit: '30,000.00', daily_limit: '20,000.00' }));
    assert.equal(above.statusCode, 400);
    assert.equal(
      text(above.body),
      'The limit per payout (GHS 30,000.00) cannot be above the daily limit (GHS 20,000.00).',
    );
    const huge = await first.post(
      url,
      settingsForm('test', { limit: '999,999,999.99', daily_limit: '999,999,999.99' }),
    );
    assert.equal(huge.statusCode, 400);
    assert.match(text(huge.body), /at most GHS 10,000,000.00/);
    const plain = await first.post(url, settingsForm('test', { limit: '1220', daily_limit: '1,220.00' }));
    assert.equal(plain.statusCode, 200, text(plain.body));
    assert.deepEqual(
      await settingsOf(m, 'test'),
      { payout_access: true, paused: false, payout_limit_minor: 122_000, daily_limit_minor: 122_000 },
      'Test settings apply at once',
    );
  });

  it('Live: opening access or raising a limit waits for a second operator; closing, pausing and lowering apply at once', async () => {
    const m = await liveMerchant(t, { fundMinor: 0 });
    const url = `/ops/merchants/${m.merchant_id}/payouts`;
    const start = await settingsOf(m, 'live');
    assert.equal(start.payout_access, true);

    // Lowering and pausing apply at once.
    const lower = await first.post(
      url,
      settingsForm('live', { paused: 'on', limit: '1,000.00', daily_limit: '2,000.00' }),
    );
    assert.equal(lower.statusCode, 200);
    assert.equal(text(lower.body), 'Live payout settings saved.');
    assert.deepEqual(await settingsOf(m, 'live'), {
      payout_access: true,
      paused: true,
      payout_limit_minor: 100_000,
      daily_limit_minor: 200_000,
    });
    // Closing access applies at once.
    assert.equal(
      (
        await first.post(
          url,
          settingsForm('live', { access: 'off', paused: 'on', limit: '1,000.00', daily_limit: '2,000.00' }),
        )
      ).statusCode,
      200,
    );
    assert.equal((await settingsOf(m, 'live')).payout_access, false);

    // Opening access and raising a limit need a reason and the confirmation, then a second operator.
    const opening = settingsForm('live', { access: 'on', paused: 'off', limit: '3,000.00', daily_limit: '2,000.00' });
    const inconsistent = await first.post(url, { ...opening, reason: 'KYC done', confirm: 'yes' });
    assert.equal(inconsistent.statusCode, 400, 'per payout above daily is refused before anything is filed');
    const noReason = await first.post(
      url,
      settingsForm('live', { access: 'on', limit: '1,500.00', daily_limit: '2,000.00' }),
    );
    assert.equal(noReason.statusCode, 400);
    assert.match(text(noReason.body), /Give a reason/);
    const filed = await first.post(url, {
      ...settingsForm('live', { access: 'on', limit: '1,500.00', daily_limit: '2,000.00' }),
      reason: 'KYC reviewed, bank letter on file',
      confirm: 'yes',
    });
    assert.equal(filed.statusCode, 200);
    assert.match(text(filed.body), /needs a second operator/);
    assert.equal((await settingsOf(m, 'live')).payout_access, false, 'not open until approved');
    const request = await requestFor(`${m.merchant_id}:live`);
    assert.ok(request);
    assert.deepEqual(request.payload, {
      before: { payout_access: false, paused: true, payout_limit_minor: 100_000, daily_limit_minor: 200_000 },
      after: { payout_access: true, paused: false, payout_limit_minor: 150_000, daily_limit_minor: 200_000 },
    });
    const page = await second.get('/ops/approvals');
    assert.ok(page.body.includes('Before: access off, paused, GHS 1,000.00 per payout, GHS 2,000.00 a day'));
    assert.ok(page.body.includes('After: access on, running, GHS 1,500.00 per payout, GHS 2,000.00 a day'));
    assert.equal(
      (await first.post(`/ops/approvals/${request.id}`, { decision: 'approve' })).statusCode,
      403,
      'not by the requester',
    );
    assert.equal((await second.post(`/ops/approvals/${request.id}`, { decision: 'approve' })).statusCode, 200);
    assert.deepEqual(await settingsOf(m, 'live'), {
      payout_access: true,
      paused: false,
      payout_limit_minor: 150_000,
      daily_limit_minor: 200_000,
    });

    // A request made stale by a change since is withdrawn, not applied over it.
    assert.equal(
      (
        await first.post(url, {
          ...settingsForm('live', { limit: '2,000.00', daily_limit: '5,000.00' }),
          reason: 'Volume grew',
          confirm: 'yes',
        })
      ).statusCode,
      200,
    );
    const raise = await requestFor(`${m.merchant_id}:live`);
    assert.equal(
      (await first.post(url, settingsForm('live', { paused: 'on', limit: '1,500.00', daily_limit: '2,000.00' })))
        .statusCode,
      200,
      'a pause applies at once',
    );
    const stale = await second.post(`/ops/approvals/${raise!.id}`, { decision: 'approve' });
    assert.equal(stale.statusCode, 409);
    assert.match(text(stale.body), /changed since the request/);
    assert.deepEqual(await settingsOf(m, 'live'), {
      payout_access: true,
      paused: true,
      payout_limit_minor: 150_000,
      daily_limit_minor: 200_000,
    });
    const actions = await t.db.query<{ action: string }>(
      "SELECT action FROM audit_log WHERE merchant_id = $1 AND (action LIKE 'approval.%' OR action = 'payout_settings.update')",
      [m.merchant_id],
    );
    assert.deepEqual(actions.map((a) => a.action).sort(), [
      'approval.approve.payout_settings',
      'approval.request.payout_settings',
      'approval.request.payout_settings',
      'approval.stale.payout_settings',
      'payout_settings.update',
      'payout_settings.update',
      'payout_settings.update',
      'payout_settings.update',
    ]);
  });
});
