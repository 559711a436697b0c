// The CLI leaves a trace (issue 30 finding 5): every `sika` command that changes something writes its audit
// row in the change's transaction, with a cli actor naming the OS user and host (user@host); commands that
// only read write none. A command forwarded into the running server (src/cli/forward.ts) is audited as the
// CLI side's user and host, which it sends with argv. On embedded storage and PostgreSQL.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { hostname, tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { confirmTotpEnrolment, pendingTotpSecret } from '../../src/accounts/console-accounts.ts';
import { totpCode } from '../../src/accounts/totp.ts';
import { forwardCommand, serveCli } from '../../src/cli/forward.ts';
import { localIo, run } from '../../src/cli/main.ts';
import { BANK_ENV, gcbStatement } from '../support/bank-statements.ts';
import { backdate, createSession, runExpiry } from '../support/checkout.ts';
import { bufferIo, CLI_USER_AT_HOST, runCliHere } from '../support/cli-io.ts';
import { startTestApp, storageKind, type TestContext } from '../support/helpers.ts';

interface AuditRow {
  id: string;
  actor_type: string;
  actor_id: string;
  action: string;
  object_type: string;
  object_id: string;
  merchant_id: string | null;
  after: Record<string, unknown> | null;
}

const PASSWORD = 'a cli passphrase';

describe(`the CLI's audit trail (${storageKind})`, () => {
  let t: TestContext;
  let since = '0';
  before(async () => {
    t = await startTestApp(BANK_ENV);
  });
  after(async () => {
    await t?.close();
  });

  // This run's commands come from a host of their own, so rows other test files write meanwhile (on a shared
  // PostgreSQL database) are told apart; `sika` itself names this OS user and host (checked below).
  const as = { user: userInfo().username, host: `cli-audit-${randomUUID().slice(0, 8)}.${hostname()}` };
  const actorId = `${as.user}@${as.host}`;

  /** Runs a command (it must succeed) and returns the audit rows written since the last call: every row this run's CLI wrote, and any other row about the objects named. */
  async function audited(argv: string[], stdin = ''): Promise<{ stdout: string; rows: AuditRow[] }> {
    const result = await runCliHere(t, argv, stdin, as);
    assert.equal(result.code, 0, `sika ${argv.join(' ')}: ${result.stderr}`);
    const rows = await t.db.query<AuditRow>(
      'SELECT id::text AS id, actor_type, actor_id, action, object_type, object_id, merchant_id, after FROM audit_log WHERE id > $1::bigint AND (actor_id = $2 OR object_id = ANY($3::text[])) ORDER BY id',
      [since, actorId, argv],
    );
    since = (await t.db.query<{ id: string }>('SELECT coalesce(max(id), 0)::text AS id FROM audit_log'))[0]!.id;
    return { stdout: result.stdout, rows };
  }

  const onlyRow = (rows: AuditRow[], action: string, objectType: string) => {
    assert.deepEqual(
      rows.map((r) => r.action),
      [action],
    );
    assert.equal(rows[0]!.actor_type, 'cli');
    assert.equal(rows[0]!.actor_id, actorId, 'names the OS user and host');
    assert.equal(rows[0]!.object_type, objectType);
    return rows[0]!;
  };

  it('sika names the OS user and host it runs as: a cli actor user@host', () => {
    assert.deepEqual(localIo().actor, { type: 'cli', id: CLI_USER_AT_HOST, email: null });
    assert.equal(CLI_USER_AT_HOST, `${userInfo().username}@${hostname()}`);
  });

  it('each command that changes something writes one row naming user@host; reads write none', async () => {
    await audited(['events', 'list']); // moves `since` past the rows the setup wrote
    const email = `cli-owner-${randomUUID()}@example.com`;

    const created = await audited(['merchant', 'create', '--name', 'CLI Audit Ltd', '--email', email, '--json']);
    const merchantId = (JSON.parse(created.stdout) as { merchant_id: string }).merchant_id;
    const merchantRow = onlyRow(created.rows, 'merchant.create', 'merchant');
    assert.equal(merchantRow.object_id, merchantId);
    assert.equal(merchantRow.merchant_id, merchantId);
    assert.doesNotMatch(JSON.stringify(merchantRow.after), /sk_(test|live)_/, 'no key in the audit log');

    const access = await audited([
      'payouts',
      'settings',
      '--merchant',
      merchantId,
      '--environment',
      'live',
      '--access',
      'on',
    ]);
    const settingsRow = onlyRow(access.rows, 'payout_settings.update', 'payout_settings');
    assert.equal(settingsRow.object_id, `${merchantId}:live`);
    assert.equal(settingsRow.after!.payout_access, true);
    assert.deepEqual(
      (await audited(['payouts', 'settings', '--merchant', merchantId, '--environment', 'live'])).rows,
      [],
      'showing the settings changes nothing',
    );

    onlyRow(
      (await audited(['user', 'set-password', '--email', email, '--password-stdin'], `${PASSWORD}\n`)).rows,
      'user.password_set',
      'user',
    );
    onlyRow((await audited(['user', 'sign-in-link', '--email', email])).rows, 'user.sign_in_link_create', 'user');

    const [owner] = await t.db.query<{ id: string }>('SELECT id FROM users WHERE merchant_id = $1', [merchantId]);
    const secret = await pendingTotpSecret(t.db, owner!.id);
    assert.ok(
      (
        await confirmTotpEnrolment(
          t.db,
          { kind: 'merchant', accountId: owner!.id, email, merchantId, tokenHash: 'none', address: '2001:db8::30' },
          totpCode(secret),
        )
      ).ok,
    );
    since = (await t.db.query<{ id: string }>('SELECT max(id)::text AS id FROM audit_log'))[0]!.id;
    onlyRow((await audited(['user', 'reset-2fa', '--email', email])).rows, 'user.2fa_disable', 'user');

    const key = await audited(['keys', 'create', '--merchant', merchantId, '--environment', 'test', '--json']);
    const keyId = (JSON.parse(key.stdout) as { id: string }).id;
    assert.equal(onlyRow(key.rows, 'api_key.created', 'api_key').object_id, keyId);
    assert.deepEqual((await audited(['keys', 'list', '--merchant', merchantId])).rows, []);
    onlyRow((await audited(['keys', 'revoke', keyId, '--merchant', merchantId])).rows, 'api_key.revoked', 'api_key');

    const webhook = await t.merchant({ webhookUrl: 'https://example.com/sika/hook' });
    const [endpoint] = await t.db.query<{ id: string }>(
      "SELECT id FROM webhook_endpoints WHERE merchant_id = $1 AND environment = 'test'",
      [webhook.merchant_id],
    );
    since = (await t.db.query<{ id: string }>('SELECT max(id)::text AS id FROM audit_log'))[0]!.id;
    const rotated = await audited(['webhooks', 'rotate-secret', endpoint!.id, '--overlap-hours', '1']);
    const rotateRow = onlyRow(rotated.rows, 'webhook_endpoint.secret_rotate', 'webhook_endpoint');
    assert.doesNotMatch(JSON.stringify(rotateRow.after), /whsec_/, 'no secret in the audit log');

    // An event to replay: a checkout session of the webhook merchant, expired.
    const session = await createSession(t, webhook);
    await backdate(t, session.id);
    await runExpiry(t);
    const [event] = await t.db.query<{ id: string }>(
      "SELECT id FROM events WHERE merchant_id = $1 AND type = 'checkout.session.expired'",
      [webhook.merchant_id],
    );
    assert.ok(event, 'the expiry made an event');
    since = (await t.db.query<{ id: string }>('SELECT max(id)::text AS id FROM audit_log'))[0]!.id;
    onlyRow((await audited(['events', 'replay', event.id])).rows, 'event.replay', 'event');

    const operatorEmail = `cli-operator-${randomUUID()}@example.com`;
    onlyRow(
      (await audited(['operator', 'create', '--email', operatorEmail, '--password', PASSWORD, '--role', 'teller']))
        .rows,
      'operator.create',
      'operator',
    );
    onlyRow(
      (
        await audited(
          ['user', 'set-password', '--operator', '--email', operatorEmail, '--password-stdin'],
          `${PASSWORD} again\n`,
        )
      ).rows,
      'operator.password_set',
      'operator',
    );
    onlyRow((await audited(['operator', 'reset', '--email', operatorEmail])).rows, 'operator.reset', 'operator');

    const dir = mkdtempSync(join(tmpdir(), 'sika-cli-audit-'));
    try {
      const file = join(dir, 'march.csv');
      writeFileSync(file, gcbStatement([{ narration: `TRF FROM KOFI ${randomUUID().slice(0, 8)}`, credit: '12.00' }]));
      const imported = await audited(['statements', 'import', file, '--bank', BANK_ENV.BANK_TRANSFER_BANK_CODE]);
      onlyRow(
        imported.rows.filter((r) => r.action === 'statement.import'),
        'statement.import',
        imported.rows.find((r) => r.action === 'statement.import')?.object_type ?? 'statement_import',
      );
      for (const row of imported.rows) assert.equal(row.actor_id, actorId, `${row.action} names the CLI user`);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("a command forwarded into the running server is audited as the CLI side's user and host, which it sends with argv", async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sika-cli-forward-'));
    const served = await serveCli({ db: t.db, config: t.config, dataDir: dir, runCommand: run });
    try {
      // The server side's io: what it would name is not what the audit log must say.
      const { io, err } = bufferIo(t, '', { user: 'server-side-must-not-show', host: 'nowhere' });
      const email = `forwarded-${randomUUID()}@example.com`;
      const code = await forwardCommand(
        served.path,
        {
          argv: ['operator', 'create', '--email', email, '--password', PASSWORD],
          stdin: '',
          cwd: process.cwd(),
          user: 'akosua',
          host: 'ops-laptop.accra',
        },
        io,
      );
      assert.equal(code, 0, err.join('\n'));
      const rows = await t.db.query<{ actor_type: string; actor_id: string }>(
        "SELECT a.actor_type, a.actor_id FROM audit_log a JOIN operators o ON o.id::text = a.object_id WHERE lower(o.email) = lower($1) AND a.action = 'operator.create'",
        [email],
      );
      assert.deepEqual(rows, [{ actor_type: 'cli', actor_id: 'akosua@ops-laptop.accra' }]);

      // A request that does not say who sends it runs nothing.
      const anonymous = await forwardCommand(
        served.path,
        {
          argv: ['operator', 'create', '--email', `x-${email}`, '--password', PASSWORD],
          stdin: '',
          cwd: process.cwd(),
        } as never,
        io,
      );
      assert.equal(anonymous, 1);
      assert.match(err.join('\n'), /could not read the command/);
      assert.deepEqual(await t.db.query('SELECT id FROM operators WHERE lower(email) = lower($1)', [`x-${email}`]), []);
    } finally {
      await served.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
