// Trusted devices (issue 14 finding 3, OWASP's device cookies): a browser that completed a sign-in keeps a
// device cookie; its later attempts back off on that device's own key, so strangers who keep the account-wide
// key backing off from many addresses never keep the owner out of a browser they used before. The device's
// own failures hold up only that device; another account's, a revoked or an expired cookie gives no trust.
// Runs on embedded storage and on PostgreSQL (DATABASE_URL); the concurrency test over real HTTP, with
// TRUST_PROXY on loopback so X-Forwarded-For gives each stranger an address of its own.
import assert from 'node:assert/strict';
import { createHash, randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { setPassword } from '../../src/accounts/console-accounts.ts';
import { createMerchant } from '../../src/accounts/service.ts';
import {
  ACCOUNT_BACKOFF,
  accountKey,
  addressKey,
  DEVICE_BACKOFF,
  reserveAttempt,
  type ConsoleKind,
} from '../../src/accounts/sign-in-throttle.ts';
import {
  purgeExpiredDevices,
  TRUSTED_DEVICE_LIFETIME_S,
  TRUSTED_DEVICES_PER_ACCOUNT_MAX,
} from '../../src/accounts/trusted-devices.ts';
import { loadConfig } from '../../src/config/index.ts';
import { buildApp } from '../../src/app.ts';
import { createOperator } from '../../src/ops/service.ts';
import { assertWaits, ConsoleClient, cookieOf, flashOf } from '../support/console-client.ts';
import { startTestApp, storageKind, type TestContext } from '../support/helpers.ts';

const PASSWORD = 'correct horse battery';
const NEW_PASSWORD = 'a much longer new passphrase';

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');
/** A fresh client address (documentation range), so runs on a kept PostgreSQL database never share an address's count. */
const address = () => `2001:db8:${randomUUID().slice(0, 4)}::${randomUUID().slice(0, 4)}`;

async function owner(t: TestContext): Promise<{ email: string; merchantId: string; userId: string }> {
  const email = `owner-${randomUUID()}@example.com`;
  const created = await createMerchant(t.db, {
    name: `Esi Crafts ${randomUUID().slice(0, 6)}`,
    email,
    password: PASSWORD,
  });
  return { email, merchantId: created.merchant_id, userId: created.owner_user_id };
}

/**
 * Strangers' wrong guesses from as many addresses as the account-wide key lets through free (each reserved
 * and never proven right, as a wrong password is), then its delay at the cap, as one guess a minute keeps it.
 */
async function backOffAccount(t: TestContext, email: string, kind: ConsoleKind = 'merchant'): Promise<void> {
  for (let i = 0; i < ACCOUNT_BACKOFF.failuresFree; i++)
    assert.ok((await reserveAttempt(t.db, { kind, email, address: address() })).allowed, `stranger ${i}`);
  await t.db.query(
    'UPDATE sign_in_throttles SET next_allowed_at = now() + make_interval(secs => $3) WHERE account_key = $1 AND key LIKE $2',
    [accountKey(kind, email), `${kind}:account:%`, ACCOUNT_BACKOFF.delayMaxS],
  );
  const untrusted = await new ConsoleClient(t, kind === 'merchant' ? '/dashboard' : '/ops', address()).signIn(
    email,
    'any password at all',
  );
  assert.equal(untrusted.statusCode, 429, 'the account-wide key backs off');
}

/** A Retry-After of the account-wide key held at its cap (a second or so may have passed since it was set). */
function assertWaitsForAccount(retryAfter: unknown): void {
  const seconds = Number(retryAfter);
  assert.ok(
    seconds > ACCOUNT_BACKOFF.delayMaxS - 10 && seconds <= ACCOUNT_BACKOFF.delayMaxS,
    `Retry-After ${String(retryAfter)}`,
  );
}

/** Lets every delay of this account's rows lapse now, as if the wait had passed. */
const lapse = (t: TestContext, email: string) =>
  t.db.query("UPDATE sign_in_throttles SET next_allowed_at = now() - interval '1 second' WHERE account_key = $1", [
    accountKey('merchant', email),
  ]);

const devicesOf = async (t: TestContext, email: string, kind: ConsoleKind = 'merchant') =>
  (
    await t.db.query<{ token_hash: string }>(
      'SELECT token_hash FROM trusted_devices WHERE account_key = $1 ORDER BY token_hash',
      [accountKey(kind, email)],
    )
  ).map((row) => row.token_hash);

describe(`trusted devices (${storageKind})`, () => {
  let t: TestContext;
  before(async () => {
    t = await startTestApp({ TRUST_PROXY: 'loopback' });
  });
  after(async () => {
    await t?.close();
  });

  it("over HTTP, while strangers guess from many addresses at once and keep the account-wide key backing off, an untrusted browser is refused with 429 but the owner's browser with its device cookie signs in at once", async () => {
    const o = await owner(t);
    const baseUrl = await t.listen();
    const form = await fetch(`${baseUrl}/dashboard/login`);
    const loginCsrf = /sika_login_csrf=([^;]+)/.exec(form.headers.get('set-cookie') ?? '')?.[1];
    assert.ok(loginCsrf);
    await form.arrayBuffer();
    const post = async (password: string, from: string, device?: string) => {
      const res = await fetch(`${baseUrl}/dashboard/login`, {
        method: 'POST',
        redirect: 'manual',
        headers: {
          cookie: [`sika_login_csrf=${loginCsrf}`, ...(device ? [`sika_dashboard_device=${device}`] : [])].join('; '),
          'x-forwarded-for': from,
          'content-type': 'application/x-www-form-urlencoded',
        },
        body: new URLSearchParams({ _csrf: loginCsrf, email: o.email, password }).toString(),
      });
      await res.arrayBuffer();
      const setDevice = res.headers
        .getSetCookie()
        .map((cookie) => /^sika_dashboard_device=([^;]+)/.exec(cookie)?.[1])
        .find(Boolean);
      return { status: res.status, retryAfter: Number(res.headers.get('retry-after')), device: setDevice, from };
    };

    const home = address();
    const first = await post(PASSWORD, home);
    assert.equal(first.status, 303);
    assert.ok(first.device, 'a complete sign-in leaves a device cookie');

    // Strangers, each from an address of its own, all at once: the account-wide key lets twenty through, then backs off.
    const wave = await Promise.all(
      Array.from({ length: ACCOUNT_BACKOFF.failuresFree + 10 }, (_, i) => post(`wrong password ${i}`, address())),
    );
    assert.equal(
      wave.filter((a) => a.status === 401).length,
      ACCOUNT_BACKOFF.failuresFree,
      JSON.stringify(wave.map((a) => a.status)),
    );
    assert.ok(wave.filter((a) => a.status === 429).every((a) => a.retryAfter > 0));
    // They guess again each time the delay is over, until it stands at its cap.
    for (let round = 1; round <= 4; round++) {
      await lapse(t, o.email);
      assert.equal((await post('wrong password again', address())).status, 401, `round ${round}`);
    }

    // Now, at once: more strangers, the right password from a browser without the cookie, and the owner's browser at home and elsewhere.
    const [untrusted, atHome, travelling, ...strangers] = await Promise.all([
      post(PASSWORD, address()),
      post(PASSWORD, home, first.device),
      post(PASSWORD, address(), first.device),
      ...Array.from({ length: 10 }, (_, i) => post(`wrong password late ${i}`, address())),
    ]);
    assert.equal(untrusted.status, 429, 'an untrusted browser waits, even with the right password');
    assert.ok(
      untrusted.retryAfter > 0 && untrusted.retryAfter <= ACCOUNT_BACKOFF.delayMaxS,
      `Retry-After ${untrusted.retryAfter}`,
    );
    assert.ok(
      strangers.every((a) => a.status === 429),
      JSON.stringify(strangers.map((a) => a.status)),
    );
    assert.equal(atHome.status, 303, "the owner's browser signs in at once");
    assert.equal(travelling.status, 303, 'from another address too: the device is trusted, not the address');
    assert.equal(atHome.device, first.device, 'the same device cookie, its time started again');
    // The owner's success forgives nothing of the strangers': untrusted browsers still wait.
    assert.equal((await post(PASSWORD, address())).status, 429);
  });

  it("a wrong password with the device cookie backs off that device only: the device waits even for the right password, while the same address without the cookie still signs in and the account's and address's keys counted nothing", async () => {
    const o = await owner(t);
    const where = address();
    const browser = await new ConsoleClient(t, '/dashboard', where).signedIn(o.email, PASSWORD);
    assert.ok(browser.device);
    let lastFailure = 0;
    for (let i = 1; i <= DEVICE_BACKOFF.failuresFree; i++) {
      lastFailure = Date.now();
      const res = await browser.signIn(o.email, `wrong password ${i}`);
      assert.equal(res.statusCode, 401, `attempt ${i}`);
      assert.equal(flashOf(res.body), 'Wrong email or password.');
    }
    const refused = await browser.signIn(o.email, PASSWORD);
    assert.equal(
      refused.statusCode,
      429,
      'a device that backs off is locked out on its own; it does not fall back to the untrusted keys',
    );
    assertWaits(refused, DEVICE_BACKOFF.delayFirstS, lastFailure, { flash: true });
    assert.equal(cookieOf(refused, 'sika_dashboard'), undefined);

    const counts = await t.db.query<{ key: string; failures: number }>(
      'SELECT key, failures FROM sign_in_throttles WHERE account_key = $1 OR key = $2',
      [accountKey('merchant', o.email), addressKey('merchant', where)],
    );
    const failuresOf = (prefix: string) =>
      counts.filter((row) => row.key.startsWith(prefix)).map((row) => row.failures);
    assert.deepEqual(failuresOf('merchant:device:'), [DEVICE_BACKOFF.failuresFree]);
    assert.deepEqual(failuresOf('merchant:pair:'), [0]);
    assert.deepEqual(failuresOf('merchant:account:'), [0]);
    assert.deepEqual(failuresOf('merchant:address:'), [0]);
    await new ConsoleClient(t, '/dashboard', where).signedIn(o.email, PASSWORD);

    // When its delay is over the device signs in, and its count starts again.
    await lapse(t, o.email);
    await browser.signedIn(o.email, PASSWORD);
    const device = await t.db.query<{ failures: number }>('SELECT failures FROM sign_in_throttles WHERE key = $1', [
      `merchant:device:${sha256(browser.device!)}`,
    ]);
    assert.deepEqual(device, [{ failures: 0 }]);
  });

  it('a device cookie of another account gives no trust, and an unknown email is answered the same with a cookie or without', async () => {
    const [a, b] = [await owner(t), await owner(t)];
    const browser = await new ConsoleClient(t, '/dashboard', address()).signedIn(a.email, PASSWORD);
    await backOffAccount(t, a.email);
    await backOffAccount(t, b.email);
    const toB = await browser.signIn(b.email, PASSWORD);
    assert.equal(toB.statusCode, 429, "A's device is nobody else's");
    assertWaitsForAccount(toB.headers['retry-after']);
    await browser.signedIn(a.email, PASSWORD);

    const answers: { status: number; retryAfter: unknown; flash: string }[][] = [];
    for (const device of [browser.device, null]) {
      const unknown = `nobody-${randomUUID()}@example.com`;
      const client = new ConsoleClient(t, '/dashboard', address());
      client.device = device;
      const seen: { status: number; retryAfter: unknown; flash: string }[] = [];
      let sent = 0;
      for (let i = 0; i <= DEVICE_BACKOFF.failuresFree; i++) {
        const previous = sent;
        sent = Date.now();
        const res = await client.signIn(unknown, 'wrong password');
        // The wait is checked against the delay here, so a slow second between two requests cannot tell the two apart.
        const retryAfter =
          res.statusCode === 429
            ? assertWaits(res, DEVICE_BACKOFF.delayFirstS, previous, { flash: true }) && 'the first delay'
            : res.headers['retry-after'];
        seen.push({ status: res.statusCode, retryAfter, flash: flashOf(res.body).replace(/\d+ seconds/, 'N seconds') });
      }
      answers.push(seen);
    }
    assert.deepEqual(answers[0], answers[1]);
    assert.equal(answers[0]!.at(-1)!.status, 429);
  });

  it("changing the password keeps this browser's device and revokes the others; setting it from the command line revokes them all", async () => {
    const o = await owner(t);
    const here = await new ConsoleClient(t, '/dashboard', address()).signedIn(o.email, PASSWORD);
    const there = await new ConsoleClient(t, '/dashboard', address()).signedIn(o.email, PASSWORD);
    assert.equal((await devicesOf(t, o.email)).length, 2);
    const changed = await here.post('/dashboard/account/password', {
      current_password: PASSWORD,
      new_password: NEW_PASSWORD,
      new_password_confirm: NEW_PASSWORD,
    });
    assert.equal(changed.statusCode, 200, changed.body.slice(0, 300));
    assert.deepEqual(await devicesOf(t, o.email), [sha256(here.device!)]);

    await backOffAccount(t, o.email);
    await here.signedIn(o.email, NEW_PASSWORD);
    const revoked = await there.signIn(o.email, NEW_PASSWORD);
    assert.equal(revoked.statusCode, 429, 'the other browser lost its trust with the old password');
    assertWaitsForAccount(revoked.headers['retry-after']);

    const third = 'set by an operator at the command line';
    await setPassword(t.db, {
      kind: 'merchant',
      email: o.email,
      password: third,
      actor: { type: 'cli', id: 'test@localhost', email: null },
    });
    assert.deepEqual(await devicesOf(t, o.email), [], 'set-password revokes every device');
    await backOffAccount(t, o.email); // set-password cleared the backoff: strangers start again
    assert.equal(
      (await here.signIn(o.email, third)).statusCode,
      429,
      'even the browser that changed the password is untrusted now',
    );
  });

  it("the device cookie comes only with a complete sign-in: HttpOnly, SameSite=Lax, the console's path, 180 days, Secure on https; an opaque token stored only as its hash, kept by the next sign-in", async () => {
    const o = await owner(t);
    const client = new ConsoleClient(t, '/dashboard', address());
    const wrong = await client.signIn(o.email, 'wrong password');
    assert.equal(wrong.statusCode, 401);
    assert.equal(cookieOf(wrong, 'sika_dashboard_device'), undefined, 'no device for a wrong password');
    const res = await client.signIn(o.email, PASSWORD);
    assert.equal(res.statusCode, 303);
    const cookie = res.cookies.find((c) => c.name === 'sika_dashboard_device');
    assert.ok(cookie);
    assert.equal(cookie.httpOnly, true);
    assert.equal(cookie.sameSite, 'Lax');
    assert.equal(cookie.path, '/dashboard');
    assert.equal(cookie.maxAge, TRUSTED_DEVICE_LIFETIME_S);
    assert.equal(TRUSTED_DEVICE_LIFETIME_S, 180 * 24 * 3_600);
    assert.ok(!cookie.secure, 'not Secure on plain http (a developer machine)');
    assert.match(cookie.value, /^[A-Za-z0-9_-]{43}$/, '256 random bits');
    for (const secret of [o.email, o.userId, o.merchantId, accountKey('merchant', o.email)])
      assert.ok(!cookie.value.includes(secret), 'the token names no account');

    const rows = await t.db.query<Record<string, unknown>>('SELECT * FROM trusted_devices WHERE account_key = $1', [
      accountKey('merchant', o.email),
    ]);
    assert.equal(rows.length, 1);
    const row = rows[0]!;
    assert.equal(row.token_hash, sha256(cookie.value), 'only the SHA-256 of the token is stored');
    assert.ok(!JSON.stringify(rows).includes(cookie.value) && !JSON.stringify(rows).includes(o.email));
    const lifetimeS = ((row.expires_at as Date).getTime() - (row.created_at as Date).getTime()) / 1_000;
    assert.ok(Math.abs(lifetimeS - TRUSTED_DEVICE_LIFETIME_S) < 60, `expires after ${lifetimeS} s`);

    await t.db.query("UPDATE trusted_devices SET last_used_at = now() - interval '1 day' WHERE token_hash = $1", [
      sha256(cookie.value),
    ]);
    const again = await client.signIn(o.email, PASSWORD);
    assert.equal(
      cookieOf(again, 'sika_dashboard_device'),
      cookie.value,
      'the next sign-in keeps the device and starts its time again',
    );
    const renewed = await t.db.query<{ recent: boolean }>(
      "SELECT last_used_at > now() - interval '1 minute' AS recent FROM trusted_devices WHERE account_key = $1",
      [accountKey('merchant', o.email)],
    );
    assert.deepEqual(renewed, [{ recent: true }]);

    // On https the cookie is Secure too (a second app on the same storage, as a hosted instance).
    const https = await buildApp({
      config: loadConfig({
        ...process.env,
        LOG_LEVEL: 'silent',
        WORKERS: 'off',
        BASE_URL: 'https://sika.test',
        REDIS_URL: '',
      }),
      db: t.db,
      logger: false,
    });
    await https.ready();
    try {
      const secure = await new ConsoleClient({ ...t, app: https }, '/dashboard', address()).signIn(o.email, PASSWORD);
      assert.equal(secure.statusCode, 303);
      assert.equal(secure.cookies.find((c) => c.name === 'sika_dashboard_device')?.secure, true);
    } finally {
      await https.close();
    }

    // Operators get their own, on the operator console's path.
    const operatorEmail = `ops-${randomUUID()}@example.com`;
    await createOperator(t.db, { email: operatorEmail, password: PASSWORD });
    const ops = await new ConsoleClient(t, '/ops', address()).signIn(operatorEmail, PASSWORD);
    assert.equal(ops.statusCode, 303);
    const opsCookie = ops.cookies.find((c) => c.name === 'sika_ops_device');
    assert.equal(opsCookie?.path, '/ops');
    assert.equal(opsCookie?.httpOnly, true);
    assert.deepEqual(await devicesOf(t, operatorEmail, 'operator'), [sha256(opsCookie!.value)]);
  });

  it("an operator's trusted browser signs in while strangers keep the operator account backing off", async () => {
    const email = `ops-${randomUUID()}@example.com`;
    await createOperator(t.db, { email, password: PASSWORD });
    const browser = await new ConsoleClient(t, '/ops', address()).signedIn(email, PASSWORD);
    await backOffAccount(t, email, 'operator');
    await browser.signedIn(email, PASSWORD);
  });

  it(`an account keeps its ${TRUSTED_DEVICES_PER_ACCOUNT_MAX} most recently used devices: a new one drops the oldest, whose cookie then gives no trust`, async () => {
    const o = await owner(t);
    const oldest = await new ConsoleClient(t, '/dashboard', address()).signedIn(o.email, PASSWORD);
    await t.db.query("UPDATE trusted_devices SET last_used_at = now() - interval '30 days' WHERE token_hash = $1", [
      sha256(oldest.device!),
    ]);
    // Other browsers used since (stored as the sign-in stores them).
    await t.db.query(
      `INSERT INTO trusted_devices (token_hash, account_key, created_at, last_used_at, expires_at)
       SELECT md5(random()::text) || i, $1, now() - make_interval(days => i), now() - make_interval(days => i), now() + interval '90 days' FROM generate_series(1, $2::int) AS i`,
      [accountKey('merchant', o.email), TRUSTED_DEVICES_PER_ACCOUNT_MAX - 1],
    );
    assert.equal((await devicesOf(t, o.email)).length, TRUSTED_DEVICES_PER_ACCOUNT_MAX);
    const newest = await new ConsoleClient(t, '/dashboard', address()).signedIn(o.email, PASSWORD);
    const kept = await devicesOf(t, o.email);
    assert.equal(kept.length, TRUSTED_DEVICES_PER_ACCOUNT_MAX);
    assert.ok(kept.includes(sha256(newest.device!)));
    assert.ok(!kept.includes(sha256(oldest.device!)), 'the least recently used device is dropped');

    await backOffAccount(t, o.email);
    assert.equal((await oldest.signIn(o.email, PASSWORD)).statusCode, 429);
    await newest.signedIn(o.email, PASSWORD);
  });

  it('an expired device gives no trust, and the background purge drops expired devices and keeps live ones', async () => {
    const o = await owner(t);
    const browser = await new ConsoleClient(t, '/dashboard', address()).signedIn(o.email, PASSWORD);
    await t.db.query("UPDATE trusted_devices SET expires_at = now() - interval '1 second' WHERE token_hash = $1", [
      sha256(browser.device!),
    ]);
    await backOffAccount(t, o.email);
    assert.equal(
      (await browser.signIn(o.email, PASSWORD)).statusCode,
      429,
      'past its 180 days the cookie is a stranger',
    );

    const liveHash = sha256(`live-${randomUUID()}`);
    await t.db.query(
      "INSERT INTO trusted_devices (token_hash, account_key, expires_at) VALUES ($1, $2, now() + interval '1 day')",
      [liveHash, accountKey('merchant', o.email)],
    );
    await purgeExpiredDevices(t.db);
    assert.deepEqual(await devicesOf(t, o.email), [liveHash]);
  });
});
