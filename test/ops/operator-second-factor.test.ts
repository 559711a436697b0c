// Operators' second factor (issue 30 finding 4): the merchant users' TOTP, required for every operator role
// (operators approve payments and record refunds and returns, tellers record cash). An operator without one
// who signs in reaches only the enrolment (secret, otpauth URI, QR code, a code and the password confirm it,
// ten recovery codes shown once and stored hashed); later sign-ins ask for the code after the password (a
// replayed or wrong code refused), a recovery code works once, and the browser is trusted only after the
// code. Through inject, on embedded storage and PostgreSQL.
import assert from 'node:assert/strict';
import { createHash, randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { ACCOUNT_BACKOFF, accountKey, reserveAttempt } from '../../src/accounts/sign-in-throttle.ts';
import { recoveryCodeHash, totpCode, totpStep, TOTP_PERIOD_S } from '../../src/accounts/totp.ts';
import { createOperator } from '../../src/ops/service.ts';
import {
  ConsoleClient,
  cookieOf,
  flashOf,
  freshTotpCode,
  operatorSecondFactors,
  recoveryCodesIn,
  secretIn,
} from '../support/console-client.ts';
import { startTestApp, storageKind, type TestContext } from '../support/helpers.ts';

const PASSWORD = 'operator passphrase 30';
const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');
const address = () => `2001:db8:${randomUUID().slice(0, 4)}::${randomUUID().slice(0, 4)}`;

async function operatorOf(
  t: TestContext,
  role: 'operator' | 'teller' = 'operator',
): Promise<{ id: string; email: string }> {
  const email = `${role}-${randomUUID()}@example.com`;
  const { operator_id: id } = await createOperator(t.db, { email, password: PASSWORD, role });
  return { id, email };
}

const auditActions = async (t: TestContext, id: string) =>
  (
    await t.db.query<{ action: string; actor_type: string }>(
      'SELECT action, actor_type FROM audit_log WHERE object_id = $1 ORDER BY id',
      [id],
    )
  ).map((r) => `${r.actor_type}:${r.action}`);

describe(`operators' second factor (${storageKind})`, () => {
  let t: TestContext;
  before(async () => {
    t = await startTestApp();
  });
  after(async () => {
    await t?.close();
  });

  it('an operator without a second factor who signs in reaches only the enrolment; enrolling shows the secret, its URI and QR code, and ten recovery codes once, stored hashed (audited)', async () => {
    const o = await operatorOf(t);
    const client = new ConsoleClient(t, '/ops', address());
    const signIn = await client.signIn(o.email, PASSWORD);
    assert.equal(signIn.statusCode, 303);
    assert.equal(signIn.headers.location, '/ops', 'no code to ask for yet');
    for (const path of [
      '/ops',
      '/ops/review',
      '/ops/payouts',
      '/ops/refunds',
      '/ops/audit',
      '/ops/operators',
      '/ops/teller',
    ]) {
      const res = await client.get(path);
      assert.equal(res.statusCode, 303, path);
      assert.equal(res.headers.location, '/ops/account/2fa', `${path} sends to the enrolment`);
    }
    const page = await client.get('/ops/account/2fa');
    assert.equal(page.statusCode, 200);
    assert.match(page.body, /Operators must use two-factor authentication: every operator role moves money\./);
    const secret = secretIn(page.body)!;
    assert.match(secret, /^[A-Z2-7]{32}$/, 'a 160-bit base32 secret');
    assert.match(
      page.body,
      new RegExp(`otpauth://totp/Sika:${encodeURIComponent(o.email).replace(/[.]/g, '\\.')}\\?[^"<]*secret=${secret}`),
    );
    assert.match(page.body, /<svg[^>]*>[\s\S]*<\/svg>/, 'a QR code');
    assert.match(page.body, /QR code of the two-factor secret/);
    assert.equal(secretIn((await client.get('/ops/account/2fa')).body), secret, 'a reload shows the same secret');
    // A form post elsewhere is refused too.
    const refused = await client.post('/ops/banks', { name: 'Not Yet Bank', code: 'NYB' });
    assert.equal(refused.statusCode, 403);
    assert.match(flashOf(refused.body), /Set up two-factor authentication first/);

    const wrongCode = await client.post('/ops/account/2fa', { code: '000000', current_password: PASSWORD });
    assert.equal(wrongCode.statusCode, 400);
    const step = totpStep(Date.now());
    const wrongPassword = await client.post('/ops/account/2fa', {
      code: totpCode(secret),
      current_password: 'not the password',
    });
    assert.equal(wrongPassword.statusCode, 400);
    assert.equal(flashOf(wrongPassword.body), 'Your password is not right.');
    const done = await client.post('/ops/account/2fa', {
      code: totpCode(secret, step * TOTP_PERIOD_S * 1000),
      current_password: PASSWORD,
    });
    assert.equal(done.statusCode, 200);
    const codes = recoveryCodesIn(done.body);
    assert.equal(codes.length, 10);
    const stored = await t.db.query<{ code_hash: string }>(
      'SELECT code_hash FROM operator_recovery_codes WHERE operator_id = $1 ORDER BY code_hash',
      [o.id],
    );
    assert.deepEqual(
      stored.map((r) => r.code_hash),
      codes.map(recoveryCodeHash).sort(),
      'only the hashes are kept',
    );
    const account = await client.get('/ops/account');
    assert.equal(account.statusCode, 200);
    assert.match(account.body, /Recovery codes left: <strong>10<\/strong>/);
    assert.doesNotMatch(account.body, /Turn off/, 'an operator cannot turn it off');
    assert.doesNotMatch(account.body, new RegExp(codes[0]!), 'the codes are shown once');
    assert.equal((await client.get('/ops')).statusCode, 200, 'the console opens once enrolled');
    assert.deepEqual(await auditActions(t, o.id), ['system:operator.create', 'operator:operator.2fa_enrol']);
  });

  it('sign-in asks for the code after the password: the half-open session opens nothing else, a wrong or replayed code is refused, a fresh one opens the console and records the sign-in', async () => {
    const o = await operatorOf(t);
    await new ConsoleClient(t, '/ops', address()).signedIn(o.email, PASSWORD); // enrols
    const known = operatorSecondFactors.get(o.email.toLowerCase())!;
    const client = new ConsoleClient(t, '/ops', address());
    const password = await client.signIn(o.email, PASSWORD);
    assert.equal(password.statusCode, 303);
    assert.equal(password.headers.location, '/ops/login/code');
    assert.equal(cookieOf(password, 'sika_ops_device'), undefined, 'no trusted device before the code');
    const blocked = await client.get('/ops');
    assert.equal(blocked.headers.location, '/ops/login/code');
    const page = await client.get('/ops/login/code');
    assert.equal(page.statusCode, 200);
    assert.match(page.body, /Enter your code/);
    assert.equal((await client.post('/ops/login/code', { code: '123456' })).statusCode, 401);
    const replay = await client.post('/ops/login/code', {
      code: totpCode(known.secret, known.lastStep * TOTP_PERIOD_S * 1000),
    });
    assert.equal(replay.statusCode, 401, 'a code of a step already used is refused');
    const before = await t.db.query<{ at: Date | null }>('SELECT last_sign_in_at AS at FROM operators WHERE id = $1', [
      o.id,
    ]);
    const ok = await client.post('/ops/login/code', { code: await freshTotpCode(o.email) });
    assert.equal(ok.statusCode, 303);
    assert.equal(ok.headers.location, '/ops');
    assert.equal((await client.get('/ops')).statusCode, 200);
    const afterRows = await t.db.query<{ at: Date | null }>(
      'SELECT last_sign_in_at AS at FROM operators WHERE id = $1',
      [o.id],
    );
    assert.ok(afterRows[0]!.at && (!before[0]!.at || afterRows[0]!.at > before[0]!.at), 'the sign-in is recorded');
  });

  it('a recovery code signs in once (audited) and the account page says how many are left', async () => {
    const o = await operatorOf(t);
    await new ConsoleClient(t, '/ops', address()).signedIn(o.email, PASSWORD);
    const [code] = operatorSecondFactors.get(o.email.toLowerCase())!.recoveryCodes;
    const client = new ConsoleClient(t, '/ops', address());
    await client.signIn(o.email, PASSWORD);
    await client.get('/ops/login/code');
    const used = await client.post('/ops/login/code', { code: code!.toUpperCase() });
    assert.equal(used.statusCode, 303);
    assert.equal(used.headers.location, '/ops/account?recovery_code_used=1');
    const page = await client.get('/ops/account?recovery_code_used=1');
    assert.equal(flashOf(page.body), 'You signed in with a recovery code; 9 left. Each works once.');
    const again = new ConsoleClient(t, '/ops', address());
    await again.signIn(o.email, PASSWORD);
    await again.get('/ops/login/code');
    assert.equal((await again.post('/ops/login/code', { code: code! })).statusCode, 401, 'used up');
    assert.ok((await auditActions(t, o.id)).includes('operator:operator.2fa_recovery_code_use'));
  });

  it('the browser is trusted after the code: its device signs in while strangers keep the operator account backing off', async () => {
    const o = await operatorOf(t);
    const browser = await new ConsoleClient(t, '/ops', address()).signedIn(o.email, PASSWORD);
    const devices = await t.db.query<{ token_hash: string }>(
      'SELECT token_hash FROM trusted_devices WHERE account_key = $1',
      [accountKey('operator', o.email)],
    );
    assert.deepEqual(
      devices.map((d) => d.token_hash),
      [sha256(browser.device!)],
    );
    const secondSignIn = new ConsoleClient(t, '/ops', address());
    secondSignIn.device = browser.device;
    await secondSignIn.signedIn(o.email, PASSWORD);
    assert.equal(secondSignIn.device, browser.device, 'the same device is kept (renewed)');
    // Strangers' guesses hold up the account-wide key...
    for (let i = 0; i < ACCOUNT_BACKOFF.failuresFree; i++)
      assert.ok((await reserveAttempt(t.db, { kind: 'operator', email: o.email, address: address() })).allowed);
    await t.db.query(
      "UPDATE sign_in_throttles SET next_allowed_at = now() + interval '1 minute' WHERE account_key = $1 AND key LIKE $2",
      [accountKey('operator', o.email), 'operator:account:%'],
    );
    assert.equal((await new ConsoleClient(t, '/ops', address()).signIn(o.email, PASSWORD)).statusCode, 429);
    // ...but not the trusted browser, password and code.
    await browser.signedIn(o.email, PASSWORD);
    assert.equal((await browser.get('/ops')).statusCode, 200);
  });

  it('a teller too: sent to enrol, then the teller desk; the next sign-in asks for the code', async () => {
    const teller = await operatorOf(t, 'teller');
    const client = new ConsoleClient(t, '/ops', address());
    await client.signIn(teller.email, PASSWORD);
    assert.equal((await client.get('/ops/teller')).headers.location, '/ops/account/2fa');
    await client.enrolOperator(teller.email, PASSWORD);
    const desk = await client.get('/ops');
    assert.equal(desk.headers.location, '/ops/teller', 'a teller sees only the teller desk');
    assert.equal((await client.get('/ops/teller')).statusCode, 200);
    const nextBrowser = new ConsoleClient(t, '/ops', address());
    const next = await nextBrowser.signIn(teller.email, PASSWORD);
    assert.equal(next.headers.location, '/ops/login/code');
    assert.equal(
      (await nextBrowser.get('/ops/teller')).headers.location,
      '/ops/login/code',
      'the code first, for a teller too',
    );
    assert.equal((await nextBrowser.get('/ops/login/code')).statusCode, 200, 'the code page opens for a teller');
    const answered = await nextBrowser.post('/ops/login/code', { code: await freshTotpCode(teller.email) });
    assert.equal(answered.headers.location, '/ops');
    assert.equal((await nextBrowser.get('/ops/teller')).statusCode, 200);
    assert.deepEqual(await auditActions(t, teller.id), ['system:operator.create', 'operator:operator.2fa_enrol']);
  });
});
