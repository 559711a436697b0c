// Storage failures reach clients as 503 SERVICE_UNAVAILABLE with the envelope, never as a 500: a stuck
// statement cancelled by the statement timeout (SQLSTATE 57014) included. (A stopped PostgreSQL is
// covered by test/reliability/db-loss.test.ts.)
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { DbError, type Queryable } from '../../src/db/index.ts';
import { toSikaError } from '../../src/http/error-handler.ts';
import { statusOf } from '../../src/http/errors.ts';
import { startTestApp, storageKind, type TestContext } from '../support/helpers.ts';

describe(`storage errors (${storageKind})`, () => {
  let t: TestContext;
  before(async () => {
    t = await startTestApp();
  });
  after(() => t.close());

  // PGlite runs each statement to the end inside this process: it has no statement timeout to test.
  const noTimeout = storageKind === 'embedded' ? 'embedded PGlite has no statement timeout' : false;

  /** Runs work in a transaction that must fail with a DbError of this SQLSTATE, answered as a retryable 503. */
  async function assertRetryable503(work: (tx: Queryable) => Promise<unknown>, sqlState: string): Promise<void> {
    const error = await t.db.transaction(work).then(
      () => null,
      (e: unknown) => e,
    );
    assert.ok(error instanceof DbError, `expected a DbError, got ${String(error)}`);
    assert.equal(error.sqlState, sqlState);
    assert.equal(error.isUnavailable, true);
    const answer = toSikaError(error);
    assert.equal(statusOf(answer), 503);
    assert.equal(answer.code, 'SERVICE_UNAVAILABLE');
  }

  it(
    'a statement cancelled by the statement timeout is a DbError answered as a retryable 503',
    { skip: noTimeout },
    () =>
      assertRetryable503(async (tx) => {
        await tx.exec("SET LOCAL statement_timeout = '50ms'");
        await tx.query('SELECT pg_sleep(2)');
      }, '57014'),
  );

  it('a write refused by a read-only server (25006, a standby not yet promoted in a failover) is a retryable 503', () =>
    assertRetryable503(async (tx) => {
      await tx.exec('SET TRANSACTION READ ONLY');
      await tx.query('CREATE TEMP TABLE read_only_probe (x int)');
    }, '25006'));

  it('a constraint violation is not mistaken for an outage', () => {
    assert.equal(new DbError('duplicate key', '23505', 'x').isUnavailable, false);
    assert.equal(new DbError('check', '23514', 'x').isUnavailable, false);
  });
});
