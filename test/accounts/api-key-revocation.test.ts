// Revocation reaches every process (issue 14, finding 4): a key revoked through one app is refused by
// another app on the same database within REVOCATION_EFFECTIVE_MS, while it is being used; revocations
// are announced at commit (migration 015); a listener that lost its connection stops trusting its cache
// and comes back; `sika keys list|create|revoke` work against the storage.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { rmSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { after, before, describe, it } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { API_KEY_REVOKED_CHANNEL, REVOCATION_EFFECTIVE_MS } from '../../src/accounts/api-keys.ts';
import { API_KEY_PREFIX_LENGTH } from '../../src/accounts/model.ts';
import { createMerchant } from '../../src/accounts/service.ts';
import * as accounts from '../../src/accounts/store.ts';
import { openDb, type Db } from '../../src/db/index.ts';
import { buildApp } from '../../src/app.ts';
import { startTestApp, storageKind, type TestContext } from '../support/helpers.ts';
import { sleep } from '../support/webhooks.ts';
import { seededDataDir } from '../support/embedded-template.ts';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const POLL_INTERVAL_MS = 10;

describe(`API key revocation across processes (${storageKind})`, () => {
  let t: TestContext;
  /** A second app, as a second server process would be: on PostgreSQL with its own connections. */
  let other: FastifyInstance;
  let otherDb: Db;

  before(async () => {
    t = await startTestApp();
    otherDb = t.config.databaseUrl
      ? await openDb({ databaseUrl: t.config.databaseUrl, dataDir: null }, { migrate: false })
      : t.db;
    other = await buildApp({ config: t.config, db: otherDb, logger: false });
    await other.ready();
  });
  after(async () => {
    await other?.close();
    if (otherDb && otherDb !== t.db) await otherDb.close();
    await t?.close();
  });

  const revenueLines = (app: FastifyInstance, key: string) =>
    app.inject({ method: 'GET', url: '/api/v1/revenue-lines', headers: { authorization: `Bearer ${key}` } });
  const keyRow = async (key: string) =>
    (
      await t.db.query<{ id: string; prefix: string; merchant_id: string }>(
        'SELECT id, prefix, merchant_id FROM api_keys WHERE prefix = $1',
        [key.slice(0, API_KEY_PREFIX_LENGTH)],
      )
    )[0]!;

  it('a key revoked through one app is refused by the other within 1 s while requests keep arriving, and never accepted again', async () => {
    const m = await t.merchant();
    const key = m.test_api_key;
    // The other app has the key cached (a burst of use), as a busy process would.
    for (let i = 0; i < 5; i++) assert.equal((await revenueLines(other, key)).statusCode, 200);

    const row = await keyRow(key);
    let revokedAtMs = 0;
    const answers: { atMs: number; status: number }[] = [];
    let stop = false;
    const load = (async () => {
      while (!stop) {
        const res = await revenueLines(other, key);
        answers.push({ atMs: Date.now(), status: res.statusCode });
        await sleep(POLL_INTERVAL_MS);
      }
    })();
    await sleep(100);
    // As the dashboard does on the first app: revoke, and drop its own cache entry.
    const revoked = await accounts.revokeApiKey(t.db, row.id, m.merchant_id, 'test');
    revokedAtMs = Date.now();
    t.app.deps.authenticator.forget(revoked[0]!.prefix);
    assert.equal((await revenueLines(t.app, key)).statusCode, 401, 'the revoking app refuses the key at once');
    await sleep(REVOCATION_EFFECTIVE_MS + 300);
    stop = true;
    await load;

    const before = answers.filter((a) => a.atMs < revokedAtMs);
    assert.ok(before.length > 0 && before.every((a) => a.status === 200), 'the key worked until it was revoked');
    const firstRefusal = answers.find((a) => a.atMs >= revokedAtMs && a.status === 401);
    assert.ok(firstRefusal, 'the other app never refused the revoked key');
    const latencyMs = firstRefusal.atMs - revokedAtMs;
    assert.ok(
      latencyMs <= REVOCATION_EFFECTIVE_MS,
      `the other app refused the key ${latencyMs} ms after the revocation`,
    );
    const acceptedAfter = answers.filter((a) => a.atMs >= firstRefusal.atMs && a.status !== 401);
    assert.deepEqual(acceptedAfter, [], 'a refused key was accepted again');
  });

  it('a revocation is announced on its channel when it commits, with the key prefix, and not for one that rolls back', async () => {
    const m = await t.merchant();
    const row = await keyRow(m.live_api_key);
    const heard: string[] = [];
    // Only this key's announcements: test files running at the same time on the database revoke keys too.
    const subscription = await otherDb.listen(API_KEY_REVOKED_CHANNEL, {
      message: (prefix) => void (prefix === row.prefix && heard.push(prefix)),
      reset: () => {},
    });
    try {
      await assert.rejects(
        t.db.transaction(async (tx) => {
          await accounts.revokeApiKey(tx, row.id, m.merchant_id, 'live');
          throw new Error('changed my mind');
        }),
        /changed my mind/,
      );
      await sleep(200);
      assert.deepEqual(heard, [], 'a revocation that rolled back was announced');
      assert.equal(
        (await revenueLines(other, m.live_api_key)).statusCode,
        200,
        'the key still works after the rollback',
      );

      await accounts.revokeApiKey(t.db, row.id, m.merchant_id, 'live');
      const deadline = Date.now() + 2_000;
      while (heard.length === 0 && Date.now() < deadline) await sleep(10);
      assert.deepEqual(heard, [row.prefix]);
      // Revoking an already revoked key announces nothing more.
      await t.db.query('UPDATE api_keys SET revoked_at = now() WHERE id = $1', [row.id]);
      await sleep(200);
      assert.deepEqual(heard, [row.prefix]);
    } finally {
      await subscription.close();
    }
  });

  it('while the revocation listener has lost its connection nothing is served from the cache, and it reconnects by itself', {
    skip: storageKind !== 'postgres' && 'embedded storage is one process: its listener cannot be cut',
  }, async () => {
    const authenticator = other.deps.authenticator;
    assert.equal(authenticator.listening, true);
    const m = await t.merchant();
    const key = m.test_api_key;
    assert.equal((await revenueLines(other, key)).statusCode, 200);
    const row = await keyRow(key);

    // Cut the listening connections (PostgreSQL ends their backends), then revoke while they are gone.
    await t.db.query(
      "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database() AND query ILIKE 'LISTEN %'",
    );
    const deadline = Date.now() + 2_000;
    while (authenticator.listening && Date.now() < deadline) await sleep(5);
    assert.equal(authenticator.listening, false, 'the listener did not notice its connection was cut');
    await t.db.query('UPDATE api_keys SET revoked_at = now() WHERE id = $1', [row.id]);
    assert.equal(
      (await revenueLines(other, key)).statusCode,
      401,
      'a key revoked while the listener was away was served from the cache',
    );

    const back = Date.now() + 5_000;
    while (!authenticator.listening && Date.now() < back) await sleep(20);
    assert.equal(authenticator.listening, true, 'the listener did not reconnect');
    // And it hears revocations again.
    const m2 = await t.merchant();
    assert.equal((await revenueLines(other, m2.test_api_key)).statusCode, 200);
    const row2 = await keyRow(m2.test_api_key);
    await accounts.revokeApiKey(t.db, row2.id, m2.merchant_id, 'test');
    const heardBy = Date.now() + REVOCATION_EFFECTIVE_MS;
    let status = 200;
    while (status !== 401 && Date.now() < heardBy) {
      status = (await revenueLines(other, m2.test_api_key)).statusCode;
      if (status !== 401) await sleep(POLL_INTERVAL_MS);
    }
    assert.equal(status, 401);
  });
});

function runCli(args: string[], env: NodeJS.ProcessEnv): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      ['bin/sika.mjs', ...args],
      { cwd: ROOT, env, timeout: 90_000 },
      (error, stdout, stderr) => {
        resolve({ code: error ? (typeof error.code === 'number' ? error.code : 1) : 0, stdout, stderr });
      },
    );
  });
}

describe(`sika keys list|create|revoke (${storageKind})`, () => {
  let dataDir: string | null = null;
  let env: NodeJS.ProcessEnv;
  let merchantId: string;
  let testKey: string;

  before(async () => {
    dataDir = process.env.DATABASE_URL ? null : await seededDataDir('sika-keys-cli-');
    env = { ...process.env, LOG_LEVEL: 'silent', ...(dataDir ? { DATA_DIR: dataDir, DATABASE_URL: '' } : {}) };
    const db = await openDb({ databaseUrl: process.env.DATABASE_URL || null, dataDir });
    try {
      const created = await createMerchant(db, {
        name: 'Keys CLI',
        email: `keys-cli-${Date.now()}-${Math.random().toString(36).slice(2)}@example.com`,
      });
      merchantId = created.merchant_id;
      testKey = created.test_api_key;
    } finally {
      await db.close();
    }
  });
  after(() => {
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  });

  const withStorage = async <T>(fn: (db: Db) => Promise<T>) => {
    const db = await openDb({ databaseUrl: process.env.DATABASE_URL || null, dataDir }, { migrate: false });
    try {
      return await fn(db);
    } finally {
      await db.close();
    }
  };

  it('creates a key shown once (stored only as a hash), lists keys without secrets, and revokes by prefix; each is audited', async () => {
    const created = await runCli(['keys', 'create', '--merchant', merchantId, '--environment', 'live', '--json'], env);
    assert.equal(created.code, 0, created.stderr);
    const key = JSON.parse(created.stdout) as { id: string; prefix: string; environment: string; api_key: string };
    assert.equal(key.environment, 'live');
    assert.match(key.api_key, /^ak_live_/);
    assert.ok(key.api_key.startsWith(key.prefix));

    const stored = await withStorage((db) =>
      db.query<{ key_hash: Buffer; created_by_user_id: string | null }>(
        'SELECT key_hash, created_by_user_id FROM api_keys WHERE id = $1',
        [key.id],
      ),
    );
    assert.equal(stored.length, 1);
    assert.ok(!stored[0]!.key_hash.toString('utf8').includes(key.api_key), 'the key is stored only as a hash');
    assert.ok(stored[0]!.created_by_user_id, 'the key has a creator (the owner), so API payouts have a requester');

    const listed = await runCli(['keys', 'list', '--merchant', merchantId, '--json'], env);
    assert.equal(listed.code, 0, listed.stderr);
    const keys = JSON.parse(listed.stdout) as {
      id: string;
      prefix: string;
      environment: string;
      revoked_at: string | null;
    }[];
    assert.equal(keys.length, 3, 'the Test key, the Live key and the new one');
    assert.ok(!listed.stdout.includes(key.api_key) && !listed.stdout.includes(testKey), 'no secret is listed');

    const revoked = await runCli(['keys', 'revoke', key.prefix, '--merchant', merchantId], env);
    assert.equal(revoked.code, 0, revoked.stderr);
    assert.match(revoked.stdout, /revoked: every server process refuses it within 1 second/);
    const again = await runCli(['keys', 'revoke', key.id, '--merchant', merchantId], env);
    assert.equal(again.code, 0, again.stderr);
    assert.match(again.stdout, /already revoked/);

    await withStorage(async (db) => {
      const rows = await db.query<{ revoked_at: Date | null }>('SELECT revoked_at FROM api_keys WHERE id = $1', [
        key.id,
      ]);
      assert.ok(rows[0]!.revoked_at);
      const audit = await db.query<{ action: string }>(
        'SELECT action FROM audit_log WHERE object_id = $1 ORDER BY id',
        [key.id],
      );
      assert.deepEqual(
        audit.map((a) => a.action),
        ['api_key.created', 'api_key.revoked'],
      );
    });
  });

  it("refuses another merchant's key, an unknown merchant and a missing --merchant with a message naming the fix", async () => {
    const other = await withStorage((db) =>
      createMerchant(db, { name: 'Other', email: `keys-other-${Date.now()}@example.com` }),
    );
    const foreign = await runCli(
      ['keys', 'revoke', other.test_api_key.slice(0, API_KEY_PREFIX_LENGTH), '--merchant', merchantId],
      env,
    );
    assert.equal(foreign.code, 1);
    assert.match(foreign.stderr, /has no API key/);
    const unknown = await runCli(['keys', 'list', '--merchant', '00000000-0000-4000-8000-000000000000'], env);
    assert.equal(unknown.code, 1);
    assert.match(unknown.stderr, /not found/);
    const missing = await runCli(['keys', 'create', '--environment', 'test'], env);
    assert.equal(missing.code, 2);
    assert.match(missing.stderr, /needs --merchant/);
    const badEnvironment = await runCli(['keys', 'create', '--merchant', merchantId, '--environment', 'prod'], env);
    assert.equal(badEnvironment.code, 2);
    assert.match(badEnvironment.stderr, /--environment takes test or live/);
  });
});
