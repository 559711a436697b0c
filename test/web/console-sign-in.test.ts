// Console sign-in (issue 14, findings 3): the password is checked only after the attempt was counted in
// storage every process shares, so concurrent guesses cannot outrun the count; failures back off the
// (account, address) pair fast, the account from all addresses later and only up to a minute, and one
// address across accounts; a throttled sign-in is a 429 with Retry-After that says nothing about
// whether the email exists. Runs on embedded storage and on PostgreSQL (DATABASE_URL).
import assert from 'node:assert/strict';
import { createHash, randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { purgeExpiredWebSessions } from '../../src/accounts/console-accounts.ts';
import { createMerchant, hashPassword } from '../../src/accounts/service.ts';
import {
  ACCOUNT_BACKOFF,
  accountKey,
  ADDRESS_BACKOFF,
  addressKey,
  backoffDelayS,
  FAILURES_FORGOTTEN_AFTER_S,
  PAIR_BACKOFF,
  purgeIdleThrottles,
} from '../../src/accounts/sign-in-throttle.ts';
import { loadConfig } from '../../src/config/index.ts';
import { openDb, type Db } from '../../src/db/index.ts';
import { buildApp } from '../../src/app.ts';
import { createOperator } from '../../src/ops/service.ts';
import { assertWaits, ConsoleClient, cookieOf, flashOf } from '../support/console-client.ts';
import { startTestApp, storageKind, type TestContext } from '../support/helpers.ts';

const PASSWORD = 'correct horse battery';

async function owner(t: TestContext): Promise<{ email: string; merchantId: string }> {
  const email = `owner-${randomUUID()}@example.com`;
  const created = await createMerchant(t.db, {
    name: `Ama Foods ${randomUUID().slice(0, 6)}`,
    email,
    password: PASSWORD,
  });
  return { email, merchantId: created.merchant_id };
}

/** Lets every backoff of this account's rows (and an address's) lapse now, as if the wait had passed. */
const lapse = (db: Db, email: string) =>
  db.query(
    "UPDATE sign_in_throttles SET next_allowed_at = now() - interval '1 second' WHERE account_key = $1 OR (account_key IS NULL AND next_allowed_at > now())",
    [accountKey('merchant', email)],
  );

/** A fresh client address (documentation range), so runs on a kept PostgreSQL database never share an address's count. */
const address = () => `2001:db8:${randomUUID().slice(0, 4)}::${randomUUID().slice(0, 4)}`;

describe(`console sign-in backoff (${storageKind})`, () => {
  let t: TestContext;
  before(async () => {
    t = await startTestApp();
  });
  after(async () => {
    await t?.close();
  });

  it('the delays grow exponentially past the free failures and stop at their caps', () => {
    assert.deepEqual(
      [1, 4, 5, 6, 7, 8].map((n) => backoffDelayS(PAIR_BACKOFF, n)),
      [0, 0, 15, 30, 60, 120],
    );
    assert.equal(backoffDelayS(PAIR_BACKOFF, 100), 15 * 60);
    assert.equal(backoffDelayS(PAIR_BACKOFF, Number.MAX_SAFE_INTEGER), 15 * 60);
    assert.deepEqual(
      [19, 20, 21, 22, 23, 24].map((n) => backoffDelayS(ACCOUNT_BACKOFF, n)),
      [0, 5, 10, 20, 40, 60],
    );
    assert.equal(
      backoffDelayS(ACCOUNT_BACKOFF, 1_000),
      60,
      'the account-wide delay, which strangers can push, is capped at a minute',
    );
    assert.deepEqual(
      [49, 50, 51].map((n) => backoffDelayS(ADDRESS_BACKOFF, n)),
      [0, 5, 10],
    );
  });

  it('five wrong passwords from one address back that address off with a 429 and Retry-After (even for the right password), while the owner signs in from another address', async () => {
    const o = await owner(t);
    const stranger = new ConsoleClient(t, '/dashboard', address());
    let lastFailure = 0;
    for (let i = 1; i <= PAIR_BACKOFF.failuresFree; i++) {
      lastFailure = Date.now();
      const res = await stranger.signIn(o.email, `wrong password ${i}`);
      assert.equal(res.statusCode, 401, `attempt ${i}`);
      assert.equal(flashOf(res.body), 'Wrong email or password.');
    }
    const refused = await stranger.signIn(o.email, PASSWORD);
    assert.equal(refused.statusCode, 429, 'the right password from the guessing address waits too');
    assertWaits(refused, PAIR_BACKOFF.delayFirstS, lastFailure, { flash: true });
    assert.equal(cookieOf(refused, 'sika_dashboard'), undefined);

    // The owner, elsewhere, is not locked out.
    const home = new ConsoleClient(t, '/dashboard', address());
    await home.signedIn(o.email, PASSWORD);
    assert.equal((await home.get('/dashboard')).statusCode, 200);
  });

  it('each further failure after a wait doubles the delay', async () => {
    const o = await owner(t);
    const stranger = new ConsoleClient(t, '/dashboard', address());
    for (let i = 0; i < PAIR_BACKOFF.failuresFree; i++) await stranger.signIn(o.email, 'wrong password');
    for (let round = 0; round < 3; round++) {
      await lapse(t.db, o.email);
      const lastFailure = Date.now();
      assert.equal(
        (await stranger.signIn(o.email, 'wrong password')).statusCode,
        401,
        'one more guess once the wait is over',
      );
      // 30, 60, 120 seconds: the delay doubles with each failure past the free ones.
      assertWaits(
        await stranger.signIn(o.email, 'wrong password'),
        PAIR_BACKOFF.delayFirstS * 2 ** (round + 1),
        lastFailure,
      );
    }
  });

  it('an unknown email is answered exactly like a known one: the same statuses, the same Retry-After, the same page', async () => {
    const o = await owner(t);
    const unknown = `nobody-${randomUUID()}@example.com`;
    const answers: { status: number; retryAfter: unknown; flash: string }[][] = [];
    for (const email of [o.email, unknown]) {
      const client = new ConsoleClient(t, '/dashboard', address());
      const seen: { status: number; retryAfter: unknown; flash: string }[] = [];
      let sent = 0;
      for (let i = 0; i <= PAIR_BACKOFF.failuresFree; i++) {
        const previous = sent;
        sent = Date.now();
        const res = await client.signIn(email, 'wrong password');
        // The wait is checked against the delay here, so a slow second between two requests cannot tell the emails apart.
        const retryAfter =
          res.statusCode === 429
            ? assertWaits(res, PAIR_BACKOFF.delayFirstS, previous, { flash: true }) && 'the first delay'
            : res.headers['retry-after'];
        seen.push({ status: res.statusCode, retryAfter, flash: flashOf(res.body).replace(/\d+ seconds/, 'N seconds') });
      }
      answers.push(seen);
    }
    assert.deepEqual(answers[0], answers[1]);
    assert.equal(answers[0]!.at(-1)!.status, 429);
  });

  it('failures from many addresses back the account off after twenty, for at most a minute, and the right password then gets in', async () => {
    const o = await owner(t);
    let lastFailure = 0;
    for (let i = 0; i < ACCOUNT_BACKOFF.failuresFree; i++) {
      lastFailure = Date.now();
      const res = await new ConsoleClient(t, '/dashboard', address()).signIn(o.email, 'wrong password');
      assert.equal(res.statusCode, 401, `address ${i}`);
    }
    const fresh = new ConsoleClient(t, '/dashboard', address());
    const refused = await fresh.signIn(o.email, PASSWORD);
    assert.equal(refused.statusCode, 429, 'distributed guessing backs off the account');
    assertWaits(refused, ACCOUNT_BACKOFF.delayFirstS, lastFailure);
    // Push the account to its cap: the owner still waits at most a minute, not 15.
    await t.db.query('UPDATE sign_in_throttles SET failures = 1000 WHERE key LIKE $1 AND account_key = $2', [
      'merchant:account:%',
      accountKey('merchant', o.email),
    ]);
    await lapse(t.db, o.email);
    lastFailure = Date.now();
    assert.equal(
      (await new ConsoleClient(t, '/dashboard', address()).signIn(o.email, 'wrong password')).statusCode,
      401,
    );
    assertWaits(await fresh.signIn(o.email, PASSWORD), ACCOUNT_BACKOFF.delayMaxS, lastFailure);
    await lapse(t.db, o.email);
    await fresh.signedIn(o.email, PASSWORD);
  });

  it('one address guessing across many accounts backs off after fifty failures, for every account', async () => {
    // The owner exists before the spray, so nothing slow runs between the last failure and the refusal.
    const o = await owner(t);
    const sprayer = new ConsoleClient(t, '/dashboard', address());
    let lastFailure = 0;
    for (let i = 0; i < ADDRESS_BACKOFF.failuresFree; i++) {
      lastFailure = Date.now();
      const res = await sprayer.signIn(`target-${i}-${randomUUID()}@example.com`, 'Password123!');
      assert.equal(res.statusCode, 401, `account ${i}`);
    }
    const refused = await sprayer.signIn(o.email, PASSWORD);
    assert.equal(refused.statusCode, 429, 'a new account from the same address waits too');
    assertWaits(refused, ADDRESS_BACKOFF.delayFirstS, lastFailure);
    await new ConsoleClient(t, '/dashboard', address()).signedIn(o.email, PASSWORD);
  });

  it('a right password forgives the failures before it: typos then a sign-in start the count again', async () => {
    const o = await owner(t);
    const client = new ConsoleClient(t, '/dashboard', address());
    for (let round = 0; round < 3; round++) {
      client.device = null; // a browser that keeps no cookies: the (account, address) pair counts, not a trusted device
      for (let i = 0; i < PAIR_BACKOFF.failuresFree - 1; i++)
        assert.equal((await client.signIn(o.email, 'typo typo')).statusCode, 401);
      await client.signedIn(o.email, PASSWORD);
    }
    const rows = await t.db.query<{ failures: number }>(
      "SELECT failures FROM sign_in_throttles WHERE account_key = $1 AND key LIKE 'merchant:pair:%'",
      [accountKey('merchant', o.email)],
    );
    assert.deepEqual(rows, [{ failures: 0 }]);
  });

  it('operators back off the same way, separately from dashboard users with the same email', async () => {
    const email = `ops-${randomUUID()}@example.com`;
    await createOperator(t.db, { email, password: PASSWORD });
    await createMerchant(t.db, { name: 'Same Email Ltd', email, password: PASSWORD });
    const client = new ConsoleClient(t, '/ops', address());
    for (let i = 0; i < PAIR_BACKOFF.failuresFree; i++)
      assert.equal((await client.signIn(email, 'wrong password')).statusCode, 401);
    assert.equal((await client.signIn(email, PASSWORD)).statusCode, 429);
    const dashboard = new ConsoleClient(t, '/dashboard', client.address);
    await dashboard.signedIn(email, PASSWORD);
  });

  it('the background purge drops rows idle past the forgetting time and keeps recent ones and running delays', async () => {
    const [idle, recent, waiting] = [
      `test:idle:${randomUUID()}`,
      `test:recent:${randomUUID()}`,
      `test:waiting:${randomUUID()}`,
    ];
    await t.db.query(
      `INSERT INTO sign_in_throttles (key, failures, updated_at, next_allowed_at) VALUES
         ($1, 3, now() - make_interval(secs => $4 + 60), NULL), ($2, 3, now(), NULL), ($3, 9, now() - make_interval(secs => $4 + 60), now() + interval '1 minute')`,
      [idle, recent, waiting, FAILURES_FORGOTTEN_AFTER_S],
    );
    await purgeIdleThrottles(t.db);
    const left = await t.db.query<{ key: string }>(
      'SELECT key FROM sign_in_throttles WHERE key = ANY($1) ORDER BY key',
      [[idle, recent, waiting]],
    );
    assert.deepEqual(
      left.map((row) => row.key),
      [recent, waiting].sort(),
    );
  });

  it('the background purge drops expired console sessions (which open nothing) and keeps live ones', async () => {
    const o = await owner(t);
    const live = await new ConsoleClient(t, '/dashboard', address()).signedIn(o.email, PASSWORD);
    const stale = await new ConsoleClient(t, '/dashboard', address()).signedIn(o.email, PASSWORD);
    const sessionsOf = async () =>
      (
        await t.db.query<{ n: number }>(
          'SELECT count(*)::int AS n FROM web_sessions s JOIN users u ON u.id = s.user_id WHERE lower(u.email) = lower($1)',
          [o.email],
        )
      )[0]!.n;
    assert.equal(await sessionsOf(), 2);
    // Sessions are stored by the SHA-256 (hex) of their cookie's token.
    const staleHash = createHash('sha256').update(stale.session!).digest('hex');
    await t.db.query("UPDATE web_sessions SET expires_at = now() - interval '1 second' WHERE token_hash = $1", [
      staleHash,
    ]);
    assert.equal((await stale.get('/dashboard')).statusCode, 303, 'an expired session opens nothing');
    await purgeExpiredWebSessions(t.db);
    assert.equal(await sessionsOf(), 1);
    assert.equal((await live.get('/dashboard')).statusCode, 200, 'the live session is kept');
  });

  it('no email or address is stored in the backoff rows, only hashes', async () => {
    const o = await owner(t);
    const where = address();
    await new ConsoleClient(t, '/dashboard', where).signIn(o.email, 'wrong password');
    const rows = await t.db.query<{ text: string }>(
      "SELECT key || coalesce(account_key, '') AS text FROM sign_in_throttles",
    );
    assert.ok(rows.length >= 3);
    assert.ok(!rows.some((row) => row.text.includes(o.email) || row.text.includes(where)));
  });
});

describe(`concurrent guesses and shared state (${storageKind})`, () => {
  let t: TestContext;
  before(async () => {
    t = await startTestApp();
  });
  after(async () => {
    await t?.close();
  });

  /** The passwords sent at once to the dashboard's sign-in over HTTP, from one address; each answer's status. */
  async function concurrentSignIns(passwords: string[], right: string) {
    const o = await owner(t);
    const baseUrl = await t.listen();
    // Over HTTP every request comes from 127.0.0.1: start this address's count afresh (a kept database remembers earlier runs).
    await t.db.query('DELETE FROM sign_in_throttles WHERE key = $1', [addressKey('merchant', '127.0.0.1')]);
    const form = await fetch(`${baseUrl}/dashboard/login`);
    const loginCsrf = /sika_login_csrf=([^;]+)/.exec(form.headers.get('set-cookie') ?? '')?.[1];
    assert.ok(loginCsrf);
    const answers = await Promise.all(
      passwords.map(async (password) => {
        const res = await fetch(`${baseUrl}/dashboard/login`, {
          method: 'POST',
          redirect: 'manual',
          headers: { cookie: `sika_login_csrf=${loginCsrf}`, 'content-type': 'application/x-www-form-urlencoded' },
          body: new URLSearchParams({ _csrf: loginCsrf, email: o.email, password }).toString(),
        });
        await res.arrayBuffer();
        return { right: password === right, status: res.status, retryAfter: res.headers.get('retry-after') };
      }),
    );
    return { o, answers, count: (status: number) => answers.filter((a) => a.status === status).length };
  }

  it('32 concurrent wrong passwords over HTTP: five are checked, the others refused with Retry-After', async () => {
    const { answers, count } = await concurrentSignIns(
      Array.from({ length: 32 }, (_, i) => `wrong password ${i}`),
      PASSWORD,
    );
    assert.equal(count(401), PAIR_BACKOFF.failuresFree, JSON.stringify(answers));
    assert.equal(count(429), 32 - PAIR_BACKOFF.failuresFree);
    assert.ok(answers.filter((a) => a.status === 429).every((a) => Number(a.retryAfter) > 0));
  });

  it('32 concurrent sign-ins over HTTP (31 wrong, 1 right): no more passwords are checked than one after another, and the right one gets in only among them', async () => {
    const rightAt = Math.floor(Math.random() * 32);
    const attempts = Array.from({ length: 32 }, (_, i) => (i === rightAt ? PASSWORD : `wrong password ${i}`));
    const { o, answers, count } = await concurrentSignIns(attempts, PASSWORD);
    const right = answers.find((a) => a.right)!;
    const checked = count(401) + count(303);
    assert.equal(count(401) + count(303) + count(429), 32, JSON.stringify(answers));
    assert.ok(
      answers.filter((a) => a.status === 429).every((a) => Number(a.retryAfter) > 0),
      'every refusal says when to retry',
    );
    if (right.status === 303) {
      assert.equal(count(303), 1);
      // As one after another: the right password clears the count only when no attempt came after it, so at most
      // the free failures before it (less one) and again after it. Slower hashing made every request reserve before
      // any finished, which gave five; a burst without the right password never gets more than five (below).
      assert.ok(checked <= 2 * PAIR_BACKOFF.failuresFree, `${checked} passwords were checked`);
    } else {
      assert.ok(checked <= PAIR_BACKOFF.failuresFree, `${checked} passwords were checked`);
      assert.equal(right.status, 429, 'the right password after the limit is refused like the others');
      assert.equal(count(401), PAIR_BACKOFF.failuresFree, 'the limit was reached by five wrong ones');
    }
    const sessions = await t.db.query(
      'SELECT 1 FROM web_sessions s JOIN users u ON u.id = s.user_id WHERE lower(u.email) = lower($1)',
      [o.email],
    );
    assert.equal(sessions.length, right.status === 303 ? 1 : 0);
  });

  it('two app instances on one database share the count: failures on one back off the other', async () => {
    // On PostgreSQL a second pool, as a second process would have; embedded storage is one process's.
    const db2 = storageKind === 'postgres' ? await openDb({ databaseUrl: t.config.databaseUrl, dataDir: null }) : t.db;
    const config = loadConfig({
      ...process.env,
      LOG_LEVEL: 'silent',
      WORKERS: 'off',
      BASE_URL: 'http://sika.test',
      REDIS_URL: '',
    });
    const app2 = await buildApp({ config, db: db2, logger: false });
    await app2.ready();
    try {
      const o = await owner(t);
      const where = address();
      const first = new ConsoleClient(t, '/dashboard', where);
      const second = new ConsoleClient({ ...t, app: app2, db: db2 }, '/dashboard', where);
      for (let i = 0; i < PAIR_BACKOFF.failuresFree; i++) {
        assert.equal((await (i % 2 === 0 ? first : second).signIn(o.email, 'wrong password')).statusCode, 401);
      }
      assert.equal((await first.signIn(o.email, PASSWORD)).statusCode, 429);
      assert.equal((await second.signIn(o.email, PASSWORD)).statusCode, 429);
      // And a success on one clears the count for both.
      await lapse(t.db, o.email);
      await second.signedIn(o.email, PASSWORD);
      assert.equal((await first.signIn(o.email, 'wrong password')).statusCode, 401);
    } finally {
      await app2.close();
      if (db2 !== t.db) await db2.close();
    }
  });

  it('a user made inactive, or with no password, gets the same answer as a wrong password', async () => {
    const o = await owner(t);
    const id = randomUUID();
    await t.db.query(
      'INSERT INTO users (id, merchant_id, email, password_hash, role, active) VALUES ($1, $2, $3, $4, $5, false)',
      [id, o.merchantId, `gone-${id}@example.com`, await hashPassword(PASSWORD), 'viewer'],
    );
    const res = await new ConsoleClient(t, '/dashboard', address()).signIn(`gone-${id}@example.com`, PASSWORD);
    assert.equal(res.statusCode, 401);
    assert.equal(flashOf(res.body), 'Wrong email or password.');
  });
});
