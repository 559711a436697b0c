// Suspending and reinstating from the operators' console (issue 33): the merchant page shows the merchant's Live
// standing and, to operators and compliance, a suspend form (a reason, required) or a reinstate button; each
// posts with the console's CSRF token, is audited with the operator, mails the owner and closes or opens Live
// for the merchant's keys. On embedded storage and PostgreSQL.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { createOperator } from '../../src/ops/service.ts';
import { ConsoleClient } from '../support/console-client.ts';
import { bearer, startTestApp, storageKind, type TestContext } from '../support/helpers.ts';
import { waitFor } from '../support/webhooks.ts';

const PASSWORD = 'ops-live-access-password';

describe(`suspend and reinstate in /ops (${storageKind})`, () => {
  let t: TestContext;
  let ops: ConsoleClient;
  let operatorEmail: string;
  before(async () => {
    t = await startTestApp();
    operatorEmail = `operator-${randomUUID()}@example.com`;
    await createOperator(t.db, { email: operatorEmail, password: PASSWORD });
    ops = await new ConsoleClient(t, '/ops').signedIn(operatorEmail, PASSWORD);
  });
  after(async () => t?.close());

  const liveStatus = async (key: string) =>
    (await t.app.inject({ method: 'GET', url: '/api/v1/sessions', headers: bearer(key) })).statusCode;

  it('suspends with a reason and reinstates, audited, mailed, and the Live key follows', async () => {
    const m = await t.merchant();
    const page = await ops.get(`/ops/merchants/${m.merchant_id}`);
    assert.equal(page.statusCode, 200);
    assert.match(page.body, /<h2 id="standing">Live access<\/h2>/);
    assert.match(page.body, /<label for="suspend-reason">/);
    assert.match(page.body, /action="\/ops\/merchants\/[^"]+\/suspend"/);

    // A reason is required.
    const empty = await ops.post(`/ops/merchants/${m.merchant_id}/suspend`, { reason: '' });
    assert.equal(empty.statusCode, 400);
    assert.equal(await liveStatus(m.live_api_key), 200);

    const suspended = await ops.post(`/ops/merchants/${m.merchant_id}/suspend`, { reason: 'Chargeback spike' });
    assert.equal(suspended.statusCode, 200, suspended.body.slice(0, 300));
    assert.match(suspended.body, /Merchant suspended/);
    assert.match(suspended.body, /Reinstate merchant/);
    await waitFor('Live refused', async () => (await liveStatus(m.live_api_key)) === 403, 1_000, 10);
    assert.equal(await liveStatus(m.test_api_key), 200, 'Test keeps working');

    const reinstated = await ops.post(`/ops/merchants/${m.merchant_id}/reinstate`);
    assert.equal(reinstated.statusCode, 200);
    assert.match(reinstated.body, /Merchant reinstated/);
    await waitFor('Live open again', async () => (await liveStatus(m.live_api_key)) === 200, 1_000, 10);

    const audit = await t.db.query<{
      action: string;
      actor_type: string;
      actor_email: string;
      after: { reason?: string };
    }>(
      `SELECT action, actor_type, actor_email, after FROM audit_log
        WHERE merchant_id = $1 AND action IN ('merchant.suspended', 'merchant.reinstated') ORDER BY id`,
      [m.merchant_id],
    );
    assert.deepEqual(
      audit.map((a) => [a.action, a.actor_type, a.actor_email]),
      [
        ['merchant.suspended', 'operator', operatorEmail],
        ['merchant.reinstated', 'operator', operatorEmail],
      ],
    );
    assert.equal(audit[0]!.after.reason, 'Chargeback spike');
    const mails = await t.db.query<{ kind: string; text_body: string }>(
      'SELECT kind, text_body FROM mail_outbox WHERE merchant_id = $1 ORDER BY created_at, id',
      [m.merchant_id],
    );
    assert.deepEqual(
      mails.map((x) => x.kind),
      ['account.suspended', 'account.reinstated'],
    );
    assert.match(mails[0]!.text_body, /Chargeback spike/);
  });

  it('refuses a post without the CSRF token', async () => {
    const m = await t.merchant();
    const res = await t.app.inject({
      method: 'POST',
      url: `/ops/merchants/${m.merchant_id}/suspend`,
      headers: { cookie: `sika_ops=${ops.session}`, 'content-type': 'application/x-www-form-urlencoded' },
      payload: 'reason=no+token',
    });
    assert.ok(res.statusCode === 403 || res.statusCode === 400, `${res.statusCode}`);
    assert.equal(await liveStatus(m.live_api_key), 200);
  });
});
