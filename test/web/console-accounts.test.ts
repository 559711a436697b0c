// Console accounts (issue 14 finding 5): changing a password in the dashboard (other sessions signed out),
// the forced change of an invitation's temporary password, and the TOTP second factor (RFC 6238): enrolment
// with recovery codes shown once, the code step of sign-in, a fresh code to approve a payout, replay refused,
// and the owner's rule for approvers and key managers. Through inject, on embedded storage and PostgreSQL.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { confirmTotpEnrolment, pendingTotpSecret } from '../../src/accounts/console-accounts.ts';
import type { Role } from '../../src/accounts/model.ts';
import { createMerchant, hashPassword, verifyPassword } from '../../src/accounts/service.ts';
import {
  ACCOUNT_BACKOFF,
  accountKey,
  DEVICE_BACKOFF,
  PAIR_BACKOFF,
  reserveAttempt,
} from '../../src/accounts/sign-in-throttle.ts';
import { RECOVERY_CODES_COUNT, recoveryCodeHash, totpCode, totpStep } from '../../src/accounts/totp.ts';
import { createOperator } from '../../src/ops/service.ts';
import { LivePayoutSimulator } from '../../src/rails/payouts.ts';
import { assertWaits, ConsoleClient, cookieOf, flashOf } from '../support/console-client.ts';
import { startTestApp, storageKind, type TestContext } from '../support/helpers.ts';
import { bankRecipient, createPayout, liveMerchant, payoutStatus } from '../support/payouts-fixtures.ts';

const PASSWORD = 'correct horse battery';
const NEW_PASSWORD = 'a much longer new passphrase';

const address = () => `2001:db8:${randomUUID().slice(0, 4)}::${randomUUID().slice(0, 4)}`;

interface User {
  id: string;
  email: string;
  merchantId: string;
}

async function owner(t: TestContext, options: { payoutApproval?: boolean } = {}): Promise<User & { liveKey: string }> {
  const email = `owner-${randomUUID()}@example.com`;
  const created = options.payoutApproval
    ? await liveMerchant(t, { payoutApproval: true, fundMinor: 1_000_000 })
    : await createMerchant(t.db, { name: `Kwesi Books ${randomUUID().slice(0, 6)}`, email, password: PASSWORD });
  const rows = await t.db.query<{ email: string }>('SELECT email FROM users WHERE id = $1', [created.owner_user_id]);
  if (options.payoutApproval)
    await t.db.query('UPDATE users SET password_hash = $2 WHERE id = $1', [
      created.owner_user_id,
      await hashPassword(PASSWORD),
    ]);
  return {
    id: created.owner_user_id,
    email: rows[0]!.email,
    merchantId: created.merchant_id,
    liveKey: created.live_api_key,
  };
}

async function userOf(t: TestContext, merchantId: string, role: Role): Promise<User> {
  const id = randomUUID();
  const email = `${role}-${id}@example.com`;
  await t.db.query('INSERT INTO users (id, merchant_id, email, password_hash, role) VALUES ($1, $2, $3, $4, $5)', [
    id,
    merchantId,
    email,
    await hashPassword(PASSWORD),
    role,
  ]);
  return { id, email, merchantId };
}

/** Turns on a user's second factor through the service (as the enrolment page does); the secret and recovery codes. */
async function enrol(t: TestContext, user: User): Promise<{ secret: string; recoveryCodes: string[] }> {
  const secret = await pendingTotpSecret(t.db, user.id);
  const who = {
    kind: 'merchant' as const,
    accountId: user.id,
    email: user.email,
    merchantId: user.merchantId,
    tokenHash: 'none',
    address: address(),
  };
  const confirmed = await confirmTotpEnrolment(t.db, who, totpCode(secret));
  assert.ok(confirmed.ok);
  return { secret, recoveryCodes: confirmed.recoveryCodes };
}

/** A code of a later time step than any used so far, as after half a minute: the last accepted step is moved back. */
async function freshCode(t: TestContext, user: User, secret: string): Promise<string> {
  await t.db.query('UPDATE users SET totp_last_step = $2 WHERE id = $1', [user.id, totpStep(Date.now()) - 2]);
  return totpCode(secret);
}

/** Signs in with the password, then the code; the client holds the full session. */
async function signInWithCode(client: ConsoleClient, user: User, code: () => Promise<string>): Promise<void> {
  const first = await client.signIn(user.email, PASSWORD);
  assert.equal(first.statusCode, 303);
  assert.equal(first.headers.location, '/dashboard/login/code');
  assert.equal((await client.get('/dashboard/login/code')).statusCode, 200);
  const second = await client.post('/dashboard/login/code', { code: await code() });
  assert.equal(second.statusCode, 303, second.body.slice(0, 500));
  assert.equal(second.headers.location, '/dashboard');
}

const auditActions = async (t: TestContext, userId: string) =>
  (await t.db.query<{ action: string }>('SELECT action FROM audit_log WHERE object_id = $1 ORDER BY id', [userId])).map(
    (row) => row.action,
  );

describe(`console passwords (${storageKind})`, () => {
  let t: TestContext;
  before(async () => {
    t = await startTestApp();
  });
  after(async () => {
    await t?.close();
  });

  it('changing the password needs the current one; the other sessions are signed out, this one stays, and the old password stops working (audited)', async () => {
    const o = await owner(t);
    const here = await new ConsoleClient(t, '/dashboard', address()).signedIn(o.email, PASSWORD);
    const elsewhere = await new ConsoleClient(t, '/dashboard', address()).signedIn(o.email, PASSWORD);
    assert.equal((await here.get('/dashboard/account')).statusCode, 200);
    const changed = await here.post('/dashboard/account/password', {
      current_password: PASSWORD,
      new_password: NEW_PASSWORD,
      new_password_confirm: NEW_PASSWORD,
    });
    assert.equal(changed.statusCode, 200, changed.body.slice(0, 300));
    assert.equal(flashOf(changed.body), 'Password changed. Your other sessions are signed out.');
    assert.equal((await here.get('/dashboard')).statusCode, 200, 'this session stays');
    const other = await elsewhere.get('/dashboard');
    assert.equal(other.statusCode, 303, 'the other session is signed out');
    assert.equal(other.headers.location, '/dashboard/login');
    assert.equal((await new ConsoleClient(t, '/dashboard', address()).signIn(o.email, PASSWORD)).statusCode, 401);
    await new ConsoleClient(t, '/dashboard', address()).signedIn(o.email, NEW_PASSWORD);
    assert.deepEqual(await auditActions(t, o.id), ['user.password_change']);
  });

  it('a new password that is too short, differs from its repetition or equals the current one, or a wrong current one, is refused with a 400 page and nothing changes', async () => {
    const o = await owner(t);
    const client = await new ConsoleClient(t, '/dashboard', address()).signedIn(o.email, PASSWORD);
    const cases: [Record<string, string>, RegExp][] = [
      [{ current_password: PASSWORD, new_password: 'short', new_password_confirm: 'short' }, /at least 10 characters/],
      [{ current_password: PASSWORD, new_password: NEW_PASSWORD, new_password_confirm: `${NEW_PASSWORD}!` }, /differ/],
      [
        { current_password: PASSWORD, new_password: PASSWORD, new_password_confirm: PASSWORD },
        /differs from the current one/,
      ],
      [
        { current_password: 'not my password', new_password: NEW_PASSWORD, new_password_confirm: NEW_PASSWORD },
        /current password is not right/,
      ],
    ];
    for (const [fields, message] of cases) {
      const res = await client.post('/dashboard/account/password', fields);
      assert.equal(res.statusCode, 400, JSON.stringify(fields));
      assert.match(flashOf(res.body), message);
    }
    const repeated = await client.post('/dashboard/account/password', [
      ['current_password', PASSWORD],
      ['current_password', PASSWORD],
      ['new_password', NEW_PASSWORD],
      ['new_password_confirm', NEW_PASSWORD],
    ]);
    assert.equal(repeated.statusCode, 400, 'a repeated field is a 400 page');
    assert.match(String(repeated.headers['content-type']), /^text\/html/);
    const [row] = await t.db.query<{ password_hash: string }>('SELECT password_hash FROM users WHERE id = $1', [o.id]);
    assert.ok(await verifyPassword(row!.password_hash, PASSWORD), 'the password is unchanged');
  });

  it('wrong current passwords count in the sign-in backoff: a stolen session cannot guess the password', async () => {
    const o = await owner(t);
    const client = await new ConsoleClient(t, '/dashboard', address()).signedIn(o.email, PASSWORD);
    let lastFailure = 0;
    for (let i = 0; i < PAIR_BACKOFF.failuresFree; i++) {
      lastFailure = Date.now();
      assert.equal(
        (
          await client.post('/dashboard/account/password', {
            current_password: `guess ${i}`,
            new_password: NEW_PASSWORD,
            new_password_confirm: NEW_PASSWORD,
          })
        ).statusCode,
        400,
      );
    }
    const refused = await client.post('/dashboard/account/password', {
      current_password: PASSWORD,
      new_password: NEW_PASSWORD,
      new_password_confirm: NEW_PASSWORD,
    });
    assertWaits(refused, PAIR_BACKOFF.delayFirstS, lastFailure);
  });

  it('an invited user signs in with the temporary password and reaches nothing but the password page until choosing their own', async () => {
    const o = await owner(t);
    const ownerClient = await new ConsoleClient(t, '/dashboard', address()).signedIn(o.email, PASSWORD);
    await ownerClient.get('/dashboard/settings');
    const inviteeEmail = `developer-${randomUUID()}@example.com`;
    const invited = await ownerClient.post('/dashboard/users', { email: inviteeEmail, role: 'developer' });
    assert.equal(invited.statusCode, 200);
    const temporary = /id="temporary-password">([^<]+)</.exec(invited.body)?.[1];
    assert.ok(temporary, 'the temporary password is shown once');

    const invitee = await new ConsoleClient(t, '/dashboard', address()).signedIn(inviteeEmail, temporary);
    for (const path of [
      '/dashboard',
      '/dashboard/developers',
      '/dashboard/payouts',
      '/dashboard/settings',
      '/dashboard/account/2fa',
    ]) {
      const res = await invitee.get(path);
      assert.equal(res.statusCode, 303, path);
      assert.equal(res.headers.location, '/dashboard/account', `${path} sends to the password page`);
    }
    const page = await invitee.get('/dashboard/account');
    assert.equal(page.statusCode, 200);
    assert.match(page.body, /Choose your password/);
    assert.doesNotMatch(page.body, /Two-factor authentication/, 'nothing else is offered meanwhile');
    const integration = (
      await t.db.query<{ id: string }>("SELECT id FROM integrations WHERE merchant_id = $1 AND environment = 'test'", [
        o.merchantId,
      ])
    )[0]!.id;
    const keysBefore = (await t.db.query('SELECT 1 FROM api_keys WHERE merchant_id = $1', [o.merchantId])).length;
    const post = await invitee.post('/dashboard/keys', { integration_id: integration });
    assert.equal(post.statusCode, 403);
    assert.match(flashOf(post.body), /Choose a new password first/);
    assert.equal(
      (await t.db.query('SELECT 1 FROM api_keys WHERE merchant_id = $1', [o.merchantId])).length,
      keysBefore,
      'no key was created',
    );

    const changed = await invitee.post('/dashboard/account/password', {
      current_password: temporary,
      new_password: NEW_PASSWORD,
      new_password_confirm: NEW_PASSWORD,
    });
    assert.equal(changed.statusCode, 200, changed.body.slice(0, 300));
    assert.equal(
      (await invitee.get('/dashboard/developers')).statusCode,
      200,
      'the dashboard opens once the password is changed',
    );
    const [row] = await t.db.query<{ must_change_password: boolean }>(
      'SELECT must_change_password FROM users WHERE lower(email) = lower($1)',
      [inviteeEmail],
    );
    assert.equal(row!.must_change_password, false);
  });
});

describe(`operator passwords (${storageKind})`, () => {
  let t: TestContext;
  before(async () => {
    t = await startTestApp();
  });
  after(async () => {
    await t?.close();
  });

  it('an operator, a teller too, changes their password at /ops/account: the other sessions are signed out, this one stays (audited)', async () => {
    const email = `teller-${randomUUID()}@example.com`;
    const { operator_id: id } = await createOperator(t.db, { email, password: PASSWORD, role: 'teller' });
    const here = await new ConsoleClient(t, '/ops', address()).signedIn(email, PASSWORD);
    const elsewhere = await new ConsoleClient(t, '/ops', address()).signedIn(email, PASSWORD);
    const page = await here.get('/ops/account');
    assert.equal(page.statusCode, 200, 'a teller reaches the account page');
    assert.match(page.body, /Change password/);
    const wrong = await here.post('/ops/account/password', {
      current_password: 'not it at all',
      new_password: NEW_PASSWORD,
      new_password_confirm: NEW_PASSWORD,
    });
    assert.equal(wrong.statusCode, 400);
    assert.equal(flashOf(wrong.body), 'Your current password is not right.');
    const changed = await here.post('/ops/account/password', {
      current_password: PASSWORD,
      new_password: NEW_PASSWORD,
      new_password_confirm: NEW_PASSWORD,
    });
    assert.equal(changed.statusCode, 200);
    assert.equal(flashOf(changed.body), 'Password changed. Your other sessions are signed out.');
    assert.equal((await here.get('/ops/teller')).statusCode, 200);
    assert.equal((await elsewhere.get('/ops/teller')).headers.location, '/ops/login');
    await new ConsoleClient(t, '/ops', address()).signedIn(email, NEW_PASSWORD);
    assert.deepEqual(await auditActions(t, id), ['operator.create', 'operator.2fa_enrol', 'operator.password_change']);
  });
});

describe(`two-factor authentication (${storageKind})`, () => {
  let t: TestContext;
  before(async () => {
    t = await startTestApp({}, { payoutRail: new LivePayoutSimulator() });
  });
  after(async () => {
    await t?.close();
  });

  it('enrolment shows a secret, its otpauth URI and a QR code; a wrong code leaves it off; the right code turns it on and shows ten recovery codes once, stored hashed (audited)', async () => {
    const o = await owner(t);
    const client = await new ConsoleClient(t, '/dashboard', address()).signedIn(o.email, PASSWORD);
    const page = await client.get('/dashboard/account/2fa');
    assert.equal(page.statusCode, 200);
    const secret = /id="totp-secret">([^<]+)</.exec(page.body)?.[1]?.replace(/\s+/g, '');
    assert.ok(secret && /^[A-Z2-7]{32}$/.test(secret), `a base32 secret of 160 bits: ${secret}`);
    const uri = /id="totp-uri">([^<]+)</.exec(page.body)?.[1]?.replace(/&amp;/g, '&');
    assert.ok(uri);
    const parsed = new URL(uri);
    assert.equal(parsed.protocol, 'otpauth:');
    assert.equal(parsed.host, 'totp');
    assert.equal(parsed.searchParams.get('secret'), secret);
    assert.equal(parsed.searchParams.get('issuer'), 'Sika');
    assert.equal(parsed.searchParams.get('digits'), '6');
    assert.equal(parsed.searchParams.get('period'), '30');
    assert.match(page.body, /<svg class="qr"[^>]*aria-label="QR code of the two-factor secret"/);
    assert.equal(
      /id="totp-secret">([^<]+)</.exec((await client.get('/dashboard/account/2fa')).body)?.[1]?.replace(/\s+/g, ''),
      secret,
      'a reload shows the same secret',
    );

    const wrongCode = String((Number(totpCode(secret)) + 1) % 1_000_000).padStart(6, '0');
    const wrong = await client.post('/dashboard/account/2fa', { code: wrongCode, current_password: PASSWORD });
    assert.equal(wrong.statusCode, 400);
    assert.match(flashOf(wrong.body), /That code is not right/);
    const noPassword = await client.post('/dashboard/account/2fa', {
      code: totpCode(secret),
      current_password: 'someone else at my desk',
    });
    assert.equal(noPassword.statusCode, 400, 'an open session alone cannot tie the account to a phone');
    assert.equal(flashOf(noPassword.body), 'Your password is not right.');
    assert.equal(
      (await t.db.query<{ on: boolean }>('SELECT totp_secret IS NOT NULL AS on FROM users WHERE id = $1', [o.id]))[0]!
        .on,
      false,
    );

    const confirmed = await client.post('/dashboard/account/2fa', {
      code: totpCode(secret),
      current_password: PASSWORD,
    });
    assert.equal(confirmed.statusCode, 200, confirmed.body.slice(0, 300));
    const codes = [...confirmed.body.matchAll(/<li>([0-9a-z]{4}-[0-9a-z]{4}-[0-9a-z]{4}-[0-9a-z]{4})<\/li>/g)].map(
      (m) => m[1]!,
    );
    assert.equal(codes.length, RECOVERY_CODES_COUNT);
    assert.equal(new Set(codes).size, RECOVERY_CODES_COUNT);
    const stored = await t.db.query<{ code_hash: string }>(
      'SELECT code_hash FROM user_recovery_codes WHERE user_id = $1 ORDER BY code_hash',
      [o.id],
    );
    assert.deepEqual(
      stored.map((r) => r.code_hash),
      codes.map(recoveryCodeHash).sort(),
      'only hashes are stored',
    );
    const account = await client.get('/dashboard/account');
    assert.match(account.body, /Recovery codes left: <strong>10<\/strong>/);
    assert.ok(!codes.some((code) => account.body.includes(code)), 'the codes are not shown again');
    assert.equal(
      (await client.get('/dashboard/account/2fa')).headers.location,
      '/dashboard/account',
      'no second enrolment while on',
    );
    assert.deepEqual(await auditActions(t, o.id), ['user.2fa_enrol']);
  });

  it('with a second factor, sign-in asks for the code after the password; nothing else opens meanwhile; a wrong code is refused, the right one opens a new session, and a used code is not accepted again', async () => {
    const o = await owner(t);
    const { secret } = await enrol(t, o);
    const client = new ConsoleClient(t, '/dashboard', address());
    const first = await client.signIn(o.email, PASSWORD);
    assert.equal(first.statusCode, 303);
    assert.equal(first.headers.location, '/dashboard/login/code');
    const halfOpen = client.session;
    for (const path of ['/dashboard', '/dashboard/developers', '/dashboard/account']) {
      const res = await client.get(path);
      assert.equal(res.statusCode, 303, path);
      assert.equal(res.headers.location, '/dashboard/login/code');
    }
    assert.equal((await client.get('/dashboard/login/code')).statusCode, 200);
    const settings = await client.post('/dashboard/settings/approval', { required: 'on' });
    assert.equal(settings.statusCode, 401, 'forms are refused before the code');
    const wrong = await client.post('/dashboard/login/code', {
      code: '000000' === totpCode(secret) ? '111111' : '000000',
    });
    assert.equal(wrong.statusCode, 401);
    assert.match(flashOf(wrong.body), /not right/);

    const code = await freshCode(t, o, secret);
    const opened = await client.post('/dashboard/login/code', { code });
    assert.equal(opened.statusCode, 303);
    assert.equal(opened.headers.location, '/dashboard');
    assert.notEqual(client.session, halfOpen, 'the session token is new after the code');
    assert.equal((await client.get('/dashboard')).statusCode, 200);
    const stale = await t.app.inject({
      method: 'GET',
      url: '/dashboard',
      headers: { cookie: `sika_dashboard=${halfOpen}` },
    });
    assert.equal(stale.statusCode, 303, 'the half-open session is gone');

    // The same code again, on another sign-in: refused (its time step is used up).
    const again = new ConsoleClient(t, '/dashboard', address());
    await again.signIn(o.email, PASSWORD);
    await again.get('/dashboard/login/code');
    const replay = await again.post('/dashboard/login/code', { code });
    assert.equal(replay.statusCode, 401, 'a code is accepted once');
  });

  it('with a second factor the browser becomes a trusted device only with the code; then its password and code steps get in while strangers keep the account backing off, and its wrong codes back off that device alone', async () => {
    const o = await owner(t);
    const { secret } = await enrol(t, o);
    const client = new ConsoleClient(t, '/dashboard', address());
    const password = await client.signIn(o.email, PASSWORD);
    assert.equal(password.headers.location, '/dashboard/login/code');
    assert.equal(cookieOf(password, 'sika_dashboard_device'), undefined, 'the password alone makes no trusted device');
    await client.get('/dashboard/login/code');
    const opened = await client.post('/dashboard/login/code', { code: await freshCode(t, o, secret) });
    assert.equal(opened.statusCode, 303);
    assert.ok(cookieOf(opened, 'sika_dashboard_device'), 'the code completes the sign-in and trusts the browser');

    // Strangers from many addresses keep the account-wide key backing off.
    for (let i = 0; i < ACCOUNT_BACKOFF.failuresFree; i++)
      assert.ok((await reserveAttempt(t.db, { kind: 'merchant', email: o.email, address: address() })).allowed);
    await t.db.query(
      "UPDATE sign_in_throttles SET next_allowed_at = now() + interval '1 minute' WHERE account_key = $1 AND key LIKE 'merchant:account:%'",
      [accountKey('merchant', o.email)],
    );
    assert.equal(
      (await new ConsoleClient(t, '/dashboard', address()).signIn(o.email, PASSWORD)).statusCode,
      429,
      'an untrusted browser waits',
    );
    await signInWithCode(client, o, () => freshCode(t, o, secret));

    // Wrong codes from the trusted browser count on its device key only.
    await client.signIn(o.email, PASSWORD);
    await client.get('/dashboard/login/code');
    const wrong = totpCode(secret) === '123456' ? '654321' : '123456';
    for (let i = 1; i < DEVICE_BACKOFF.failuresFree; i++)
      assert.equal((await client.post('/dashboard/login/code', { code: wrong })).statusCode, 401, `guess ${i}`);
    assert.equal(
      (await client.post('/dashboard/login/code', { code: await freshCode(t, o, secret) })).statusCode,
      429,
      'the device waits, even for the right code',
    );
    const keys = await t.db.query<{ key: string; failures: number }>(
      "SELECT key, failures FROM sign_in_throttles WHERE account_key = $1 AND key LIKE 'merchant:device:%'",
      [accountKey('merchant', o.email)],
    );
    assert.deepEqual(
      keys.map((row) => row.failures),
      [DEVICE_BACKOFF.failuresFree],
    );
  });

  it('a recovery code signs in once and is then used up (audited)', async () => {
    const o = await owner(t);
    const { recoveryCodes } = await enrol(t, o);
    const client = new ConsoleClient(t, '/dashboard', address());
    await client.signIn(o.email, PASSWORD);
    await client.get('/dashboard/login/code');
    const used = await client.post('/dashboard/login/code', { code: recoveryCodes[3]!.toUpperCase() });
    assert.equal(used.statusCode, 303);
    assert.equal(used.headers.location, '/dashboard/account?recovery_code_used=1');
    const page = await client.get(used.headers.location);
    assert.match(flashOf(page.body), /recovery code; 9 left/);

    const again = new ConsoleClient(t, '/dashboard', address());
    await again.signIn(o.email, PASSWORD);
    await again.get('/dashboard/login/code');
    assert.equal(
      (await again.post('/dashboard/login/code', { code: recoveryCodes[3]! })).statusCode,
      401,
      'a recovery code works once',
    );
    assert.deepEqual(await auditActions(t, o.id), ['user.2fa_enrol', 'user.2fa_recovery_code_use']);
  });

  it('code guesses count in the backoff with the password step: at most five checks, then 429 with Retry-After', async () => {
    const o = await owner(t);
    const { secret } = await enrol(t, o);
    const client = new ConsoleClient(t, '/dashboard', address());
    assert.equal((await client.signIn(o.email, PASSWORD)).statusCode, 303);
    await client.get('/dashboard/login/code');
    const wrong = totpCode(secret) === '123456' ? '654321' : '123456';
    let lastFailure = 0;
    for (let i = 1; i < PAIR_BACKOFF.failuresFree; i++) {
      lastFailure = Date.now();
      assert.equal((await client.post('/dashboard/login/code', { code: wrong })).statusCode, 401, `guess ${i}`);
    }
    const refused = await client.post('/dashboard/login/code', { code: await freshCode(t, o, secret) });
    assert.equal(refused.statusCode, 429, 'even the right code waits now');
    assertWaits(refused, PAIR_BACKOFF.delayFirstS, lastFailure);
    // Signing in again with the password does not reset the count between guesses.
    assert.equal((await client.signIn(o.email, PASSWORD)).statusCode, 429);
  });

  it('approving a payout with a second factor needs a fresh code in the approval form; no code, a wrong one or a used one is refused; rejecting needs none', async () => {
    const o = await owner(t, { payoutApproval: true });
    const approver = await userOf(t, o.merchantId, 'approver');
    const { secret, recoveryCodes } = await enrol(t, approver);
    const recipient = await bankRecipient(t, o.liveKey, '5555555555');
    const [first, second, third] = [
      await createPayout(t, o.liveKey, recipient.id, 10_000),
      await createPayout(t, o.liveKey, recipient.id, 11_000),
      await createPayout(t, o.liveKey, recipient.id, 12_000),
    ];
    assert.equal(first.status, 'requested');

    const client = new ConsoleClient(t, '/dashboard', address());
    await signInWithCode(client, approver, () => freshCode(t, approver, secret));
    assert.equal((await client.post('/dashboard/environment', { environment: 'live' })).statusCode, 303);
    const detail = await client.get(`/dashboard/payouts/${first.id}`);
    assert.match(detail.body, /<input id="approval-code" name="code"/, 'the approval form asks for a code');

    const none = await client.post(`/dashboard/payouts/${first.id}/decision`, { decision: 'approve' });
    assert.equal(none.statusCode, 403);
    assert.match(flashOf(none.body), /current code from your authenticator app/);
    assert.equal(
      (
        await client.post(`/dashboard/payouts/${first.id}/decision`, {
          decision: 'approve',
          code: '999999' === totpCode(secret) ? '888888' : '999999',
        })
      ).statusCode,
      403,
    );
    assert.equal((await payoutStatus(t, first.id)).status, 'requested');

    const code = await freshCode(t, approver, secret);
    const approved = await client.post(`/dashboard/payouts/${first.id}/decision`, { decision: 'approve', code });
    assert.equal(approved.statusCode, 200, approved.body.slice(0, 300));
    assert.match(flashOf(approved.body), /Payout approved: it is processing/);
    assert.equal((await payoutStatus(t, first.id)).status, 'processing');

    const replay = await client.post(`/dashboard/payouts/${second.id}/decision`, { decision: 'approve', code });
    assert.equal(replay.statusCode, 403, 'the same code cannot approve a second payout');
    assert.equal((await payoutStatus(t, second.id)).status, 'requested');
    const byRecoveryCode = await client.post(`/dashboard/payouts/${second.id}/decision`, {
      decision: 'approve',
      code: recoveryCodes[0]!,
    });
    assert.equal(byRecoveryCode.statusCode, 403, 'a recovery code signs in, but does not approve');
    assert.equal((await payoutStatus(t, second.id)).status, 'requested');

    const rejected = await client.post(`/dashboard/payouts/${third.id}/decision`, { decision: 'reject' });
    assert.equal(rejected.statusCode, 200);
    assert.equal((await payoutStatus(t, third.id)).status, 'cancelled');
  });

  it('the owner can require a second factor for approvers and key managers: they are sent to enrol before anything works, viewers are not; the owner needs one first', async () => {
    const o = await owner(t);
    const developer = await userOf(t, o.merchantId, 'developer');
    const approver = await userOf(t, o.merchantId, 'approver');
    const viewer = await userOf(t, o.merchantId, 'viewer');
    const ownerClient = await new ConsoleClient(t, '/dashboard', address()).signedIn(o.email, PASSWORD);
    await ownerClient.get('/dashboard/settings');
    const tooEarly = await ownerClient.post('/dashboard/settings/second-factor', { required: 'on' });
    assert.equal(tooEarly.statusCode, 409);
    assert.match(flashOf(tooEarly.body), /for yourself first/);

    await enrol(t, o);
    const required = await ownerClient.post('/dashboard/settings/second-factor', { required: 'on' });
    assert.equal(required.statusCode, 200);
    assert.match(flashOf(required.body), /now need two-factor/);
    assert.deepEqual(
      (await auditActions(t, o.merchantId)).filter((a) => a.startsWith('second_factor')),
      ['second_factor_requirement.update'],
    );

    for (const user of [developer, approver]) {
      const client = await new ConsoleClient(t, '/dashboard', address()).signedIn(user.email, PASSWORD);
      for (const path of ['/dashboard', '/dashboard/developers', '/dashboard/payouts']) {
        const res = await client.get(path);
        assert.equal(res.statusCode, 303, `${user.email} ${path}`);
        assert.equal(res.headers.location, '/dashboard/account/2fa');
      }
      const enrolPage = await client.get('/dashboard/account/2fa');
      assert.match(enrolPage.body, /requires two-factor authentication for your role/);
      if (user === developer) {
        const integration = (
          await t.db.query<{ id: string }>(
            "SELECT id FROM integrations WHERE merchant_id = $1 AND environment = 'test'",
            [o.merchantId],
          )
        )[0]!.id;
        const refused = await client.post('/dashboard/keys', { integration_id: integration });
        assert.equal(refused.statusCode, 403, 'no key is created before enrolment');
        const secret = /id="totp-secret">([^<]+)</.exec(enrolPage.body)![1]!.replace(/\s+/g, '');
        assert.equal(
          (await client.post('/dashboard/account/2fa', { code: totpCode(secret), current_password: PASSWORD }))
            .statusCode,
          200,
        );
        assert.equal((await client.get('/dashboard/developers')).statusCode, 200, 'enrolled, the key screens work');
        const disable = await client.post('/dashboard/account/2fa/disable', {
          code: await freshCode(t, developer, secret),
        });
        assert.equal(disable.statusCode, 409, 'it cannot be turned off while required');
      }
    }
    const viewerClient = await new ConsoleClient(t, '/dashboard', address()).signedIn(viewer.email, PASSWORD);
    assert.equal((await viewerClient.get('/dashboard')).statusCode, 200, 'viewers neither approve nor manage keys');
  });

  it('turning the second factor off needs a current code and is audited; sign-in then asks for no code', async () => {
    const o = await owner(t);
    const { secret } = await enrol(t, o);
    const client = new ConsoleClient(t, '/dashboard', address());
    await signInWithCode(client, o, () => freshCode(t, o, secret));
    await client.get('/dashboard/account');
    const before = (
      await t.db.query<{ failures: number }>(
        'SELECT max(failures) AS failures FROM sign_in_throttles WHERE account_key = $1',
        [accountKey('merchant', o.email)],
      )
    )[0]!.failures;
    assert.equal((await client.post('/dashboard/account/2fa/disable', { code: 'abc' })).statusCode, 400);
    const after = (
      await t.db.query<{ failures: number }>(
        'SELECT max(failures) AS failures FROM sign_in_throttles WHERE account_key = $1',
        [accountKey('merchant', o.email)],
      )
    )[0]!.failures;
    assert.equal(after, before, 'what cannot be a code costs no attempt');
    const off = await client.post('/dashboard/account/2fa/disable', { code: await freshCode(t, o, secret) });
    assert.equal(off.statusCode, 200);
    assert.equal(flashOf(off.body), 'Two-factor authentication is off.');
    assert.equal((await t.db.query('SELECT 1 FROM user_recovery_codes WHERE user_id = $1', [o.id])).length, 0);
    assert.deepEqual(await auditActions(t, o.id), ['user.2fa_enrol', 'user.2fa_disable']);
    await new ConsoleClient(t, '/dashboard', address()).signedIn(o.email, PASSWORD);
  });
});
