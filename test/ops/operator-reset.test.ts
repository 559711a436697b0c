// A locked-out operator (lost phone, forgotten password) is reset by another operator on the Operators page
// or by `sika operator reset` (issue 30 finding 4): a temporary password shown once, which must be changed
// at the next sign-in, the second factor cleared so they enrol again, their sessions signed out; audited.
// An operator cannot reset themselves and a teller cannot reset anyone. Through inject and the CLI's run(),
// on embedded storage and PostgreSQL.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { resetOperator } from '../../src/accounts/console-accounts.ts';
import { SikaError } from '../../src/lib/errors.ts';
import { createOperator } from '../../src/ops/service.ts';
import { CLI_USER_AT_HOST, runCliHere } from '../support/cli-io.ts';
import { ConsoleClient, flashOf } from '../support/console-client.ts';
import { startTestApp, storageKind, type TestContext } from '../support/helpers.ts';

const PASSWORD = 'operator passphrase 30';
const NEW_PASSWORD = 'my own new passphrase';
const address = () => `2001:db8:${randomUUID().slice(0, 4)}::${randomUUID().slice(0, 4)}`;

async function operatorOf(
  t: TestContext,
  role: 'operator' | 'teller' = 'operator',
): Promise<{ id: string; email: string }> {
  const email = `${role}-${randomUUID()}@example.com`;
  const { operator_id: id } = await createOperator(t.db, { email, password: PASSWORD, role });
  return { id, email };
}

const resetRows = (t: TestContext, id: string) =>
  t.db.query<{ actor_type: string; actor_id: string; before: unknown; after: unknown }>(
    "SELECT actor_type, actor_id, before, after FROM audit_log WHERE object_id = $1 AND action = 'operator.reset' ORDER BY id",
    [id],
  );

const factorOf = async (t: TestContext, id: string) =>
  (
    await t.db.query<{ secret: boolean; codes: number; must: boolean }>(
      'SELECT totp_secret IS NOT NULL AS secret, (SELECT count(*)::int FROM operator_recovery_codes WHERE operator_id = o.id) AS codes, must_change_password AS must FROM operators o WHERE id = $1',
      [id],
    )
  )[0]!;

/** The locked-out operator signs in with the temporary password: first a new password, then the second factor again, then the console. */
async function comesBack(t: TestContext, email: string, temporary: string): Promise<ConsoleClient> {
  assert.equal(
    (await new ConsoleClient(t, '/ops', address()).signIn(email, PASSWORD)).statusCode,
    401,
    'the old password no longer works',
  );
  const client = new ConsoleClient(t, '/ops', address());
  const signIn = await client.signIn(email, temporary);
  assert.equal(signIn.statusCode, 303);
  assert.equal(signIn.headers.location, '/ops', 'no code: the second factor was cleared');
  for (const path of ['/ops', '/ops/account/2fa', '/ops/review'])
    assert.equal((await client.get(path)).headers.location, '/ops/account', `${path}: the password first`);
  const page = await client.get('/ops/account');
  assert.match(page.body, /You signed in with a temporary password/);
  const same = await client.post('/ops/account/password', {
    current_password: temporary,
    new_password: temporary,
    new_password_confirm: temporary,
  });
  assert.equal(same.statusCode, 400, 'the temporary password cannot be kept');
  const changed = await client.post('/ops/account/password', {
    current_password: temporary,
    new_password: NEW_PASSWORD,
    new_password_confirm: NEW_PASSWORD,
  });
  assert.equal(changed.statusCode, 200);
  assert.equal((await client.get('/ops')).headers.location, '/ops/account/2fa', 'then the second factor again');
  await client.enrolOperator(email, NEW_PASSWORD);
  assert.equal((await client.get('/ops/review')).statusCode, 200);
  return client;
}

describe(`resetting a locked-out operator (${storageKind})`, () => {
  let t: TestContext;
  before(async () => {
    t = await startTestApp();
  });
  after(async () => {
    await t?.close();
  });

  it('another operator resets one on the Operators page: a temporary password shown once, the second factor cleared, sessions signed out, audited; it must be changed at the next sign-in', async () => {
    const admin = await operatorOf(t);
    const locked = await operatorOf(t);
    const adminBrowser = await new ConsoleClient(t, '/ops', address()).signedIn(admin.email, PASSWORD);
    const lockedBrowser = await new ConsoleClient(t, '/ops', address()).signedIn(locked.email, PASSWORD);
    assert.deepEqual(await factorOf(t, locked.id), { secret: true, codes: 10, must: false });

    const list = await adminBrowser.get('/ops/operators');
    assert.equal(list.statusCode, 200);
    const row = new RegExp(
      `<tr><td>${locked.email.replace(/[.]/g, '\\.')}</td><td>operator</td><td>On</td><td class="nowrap">(?!Never)[^<]+</td>`,
    );
    assert.match(list.body, row, 'role, second factor on, last sign-in');
    assert.match(list.body, new RegExp(`action="/ops/operators/${locked.id}/reset"`));
    assert.doesNotMatch(list.body, new RegExp(`action="/ops/operators/${admin.id}/reset"`), 'no Reset on your own row');

    const reset = await adminBrowser.post(`/ops/operators/${locked.id}/reset`);
    assert.equal(reset.statusCode, 200);
    assert.equal(
      flashOf(reset.body),
      `${locked.email} is reset: their sessions are signed out and their two-factor authentication is off.`,
    );
    const temporary = /id="temporary-password">([^<]+)</.exec(reset.body)?.[1];
    assert.ok(temporary && temporary.length >= 16);
    assert.doesNotMatch((await adminBrowser.get('/ops/operators')).body, new RegExp(temporary), 'shown once');
    assert.deepEqual(await factorOf(t, locked.id), { secret: false, codes: 0, must: true });
    assert.equal((await lockedBrowser.get('/ops')).headers.location, '/ops/login', 'their sessions are signed out');
    assert.deepEqual(await resetRows(t, locked.id), [
      {
        actor_type: 'operator',
        actor_id: admin.id,
        before: { second_factor: true, must_change_password: false },
        after: {
          second_factor: false,
          must_change_password: true,
          sessions_signed_out: true,
          trusted_devices_revoked: true,
        },
      },
    ]);
    await comesBack(t, locked.email, temporary);
    assert.deepEqual(await factorOf(t, locked.id), { secret: true, codes: 10, must: false });
  });

  it('an operator cannot reset themselves, a teller cannot reset anyone, and an id that names no operator is a 404', async () => {
    const self = await operatorOf(t);
    const teller = await operatorOf(t, 'teller');
    const other = await operatorOf(t);
    const browser = await new ConsoleClient(t, '/ops', address()).signedIn(self.email, PASSWORD);
    const own = await browser.post(`/ops/operators/${self.id}/reset`);
    assert.equal(own.statusCode, 403);
    assert.equal(
      flashOf(own.body),
      'You cannot reset yourself: ask another operator, or the administrator (sika operator reset).',
    );
    assert.equal((await browser.post(`/ops/operators/${randomUUID()}/reset`)).statusCode, 404);

    const tellerBrowser = await new ConsoleClient(t, '/ops', address()).signedIn(teller.email, PASSWORD);
    assert.equal(
      (await tellerBrowser.get('/ops/operators')).headers.location,
      '/ops/teller',
      'a teller never sees the page',
    );
    const byTeller = await tellerBrowser.post(`/ops/operators/${other.id}/reset`);
    assert.notEqual(byTeller.statusCode, 200);
    await assert.rejects(
      resetOperator(t.db, { type: 'operator', id: teller.id, email: teller.email }, { id: other.id }),
      (error: unknown) => error instanceof SikaError && error.code === 'FORBIDDEN',
    );
    for (const id of [self.id, other.id])
      assert.deepEqual(await resetRows(t, id), [], 'nothing reset, nothing audited');
    assert.equal((await factorOf(t, other.id)).must, false);
  });

  it('the administrator resets one with sika operator reset --email: the temporary password printed once, audited as the CLI user@host', async () => {
    const locked = await operatorOf(t);
    await new ConsoleClient(t, '/ops', address()).signedIn(locked.email, PASSWORD);
    const cli = await runCliHere(t, ['operator', 'reset', '--email', locked.email.toUpperCase()]);
    assert.equal(cli.code, 0, cli.stderr);
    const temporary = /temporary password: (\S+)/.exec(cli.stdout)?.[1];
    assert.ok(temporary, cli.stdout);
    const rows = await resetRows(t, locked.id);
    assert.equal(rows.length, 1);
    assert.equal(rows[0]!.actor_type, 'cli');
    assert.equal(rows[0]!.actor_id, CLI_USER_AT_HOST);
    await comesBack(t, locked.email, temporary);

    const unknown = await runCliHere(t, ['operator', 'reset', '--email', `nobody-${randomUUID()}@example.com`]);
    assert.equal(unknown.code, 1);
    assert.match(unknown.stderr, /no operator with email/);
    assert.equal((await runCliHere(t, ['operator', 'reset'])).code, 2);
  });
});
