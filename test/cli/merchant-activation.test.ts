// The operators' CLI for Live access (issue 33): `sika merchant create` still vouches (approved, Live key
// printed); --pending-activation makes a merchant as sign-up would (live_api_key null); `sika merchant
// activate|suspend|reinstate` change its standing, audited with the CLI's actor, announced and mailed, and the
// API follows at once. On embedded storage and PostgreSQL.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { CLI_USER_AT_HOST, runCliHere } from '../support/cli-io.ts';
import { bearer, startTestApp, storageKind, type TestContext } from '../support/helpers.ts';
import { waitFor } from '../support/webhooks.ts';

describe(`sika merchant create --pending-activation, activate, suspend, reinstate (${storageKind})`, () => {
  let t: TestContext;
  before(async () => {
    t = await startTestApp();
  });
  after(async () => t?.close());

  const sika = async (...argv: string[]) => {
    const result = await runCliHere(t, argv);
    assert.equal(result.code, 0, `${argv.join(' ')}: ${result.stderr}`);
    return result.stdout;
  };
  const account = (key: string) =>
    t.app.inject({ method: 'GET', url: '/api/v1/account', headers: bearer(key) }).then((r) => r.json());
  const auditOf = (merchantId: string) =>
    t.db.query<{ action: string; actor_type: string; actor_id: string }>(
      'SELECT action, actor_type, actor_id FROM audit_log WHERE merchant_id = $1 ORDER BY id',
      [merchantId],
    );
  const mailsOf = (merchantId: string) =>
    t.db.query<{ kind: string; subject: string }>(
      'SELECT kind, subject FROM mail_outbox WHERE merchant_id = $1 ORDER BY created_at, id',
      [merchantId],
    );
  const sessionsWith = (key: string) => t.app.inject({ method: 'GET', url: '/api/v1/sessions', headers: bearer(key) });
  const newEmail = () => `cli-${randomUUID()}@example.com`;

  it('merchant create without the flag is approved and prints a Live key', async () => {
    const out = JSON.parse(await sika('merchant', 'create', '--name', 'Vouched', '--email', newEmail(), '--json'));
    assert.match(out.live_api_key, /^ak_live_/);
    const live = await account(out.live_api_key);
    assert.equal(live.activation.status, 'approved');
    assert.equal(live.live_enabled, true);
  });

  it('--pending-activation: no Live key, not activated; activate, suspend and reinstate move it, audited and mailed', async () => {
    const out = JSON.parse(
      await sika('merchant', 'create', '--name', 'Signed Up', '--email', newEmail(), '--pending-activation', '--json'),
    );
    assert.equal(out.live_api_key, null);
    const id: string = out.merchant_id;
    const before = (await account(out.test_api_key)).activation;
    assert.equal(before.status, 'not_submitted');
    assert.ok(before.requirements.length > 0, 'a merchant that has applied for nothing has requirements');

    const activated = JSON.parse(await sika('merchant', 'activate', '--merchant', id, '--reason', 'known', '--json'));
    assert.equal(activated.activation.status, 'approved');
    assert.equal(activated.live_enabled, true);
    assert.deepEqual(activated.activation.requirements, []);
    // Activating again changes nothing (no second audit row).
    await sika('merchant', 'activate', '--merchant', id);

    const key = JSON.parse(await sika('keys', 'create', '--merchant', id, '--environment', 'live', '--json')).api_key;
    assert.equal(
      (await t.app.inject({ method: 'GET', url: '/api/v1/sessions', headers: bearer(key) })).statusCode,
      200,
    );

    const suspended = JSON.parse(
      await sika('merchant', 'suspend', '--merchant', id, '--reason', 'fraud checks', '--json'),
    );
    assert.equal(suspended.suspended, true);
    assert.equal(suspended.live_enabled, false);
    // Every process hears of it within 1 s (this one too: its cache is dropped by the announcement).
    await waitFor(
      'the suspension to be heard',
      async () => (await sessionsWith(key)).json().error?.code === 'ACCOUNT_SUSPENDED',
      1_000,
      10,
    );

    const text = await sika('merchant', 'reinstate', '--merchant', id);
    assert.match(text, /reinstated/);
    await waitFor('the reinstatement to be heard', async () => (await sessionsWith(key)).statusCode === 200, 1_000, 10);

    const rows = await auditOf(id);
    const actions = rows.map((r) => r.action).filter((a) => a.startsWith('merchant.') && a !== 'merchant.create');
    assert.deepEqual(actions, ['merchant.activation.approved', 'merchant.suspended', 'merchant.reinstated']);
    for (const row of rows.filter((r) => actions.includes(r.action))) {
      assert.equal(row.actor_type, 'cli');
      assert.equal(row.actor_id, CLI_USER_AT_HOST);
    }
    assert.deepEqual(
      (await mailsOf(id)).map((m) => m.kind),
      ['activation.approved', 'account.suspended', 'account.reinstated'],
    );
  });

  it('refuses suspend without a reason, and an unknown merchant', async () => {
    const id = JSON.parse(await sika('merchant', 'create', '--name', 'X', '--email', newEmail(), '--json')).merchant_id;
    const noReason = await runCliHere(t, ['merchant', 'suspend', '--merchant', id]);
    assert.equal(noReason.code, 2);
    assert.match(noReason.stderr, /--reason/);
    const unknown = await runCliHere(t, ['merchant', 'activate', '--merchant', randomUUID()]);
    assert.notEqual(unknown.code, 0);
    assert.match(unknown.stderr, /not found/);
  });
});
