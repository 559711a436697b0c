// Provider status checks (DESIGN): an attempt still pending 5 minutes after it started is checked with its
// provider, then on a backoff until final; what the provider says is applied like any other outcome.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { checkPendingAttempts, STATUS_CHECK_FIRST_AFTER_S } from '../../src/checkout/status-checks.ts';
import { balance, checkInvariants } from '../../src/ledger/service.ts';
import type { CollectionRail, ProviderOutcome } from '../../src/rails/index.ts';
import { testSimulator } from '../../src/rails/test-simulator.ts';
import { startTestApp, storageKind, type TestContext } from '../support/helpers.ts';
import {
  attemptRows,
  creditOf,
  createSession,
  eventTypes,
  momoBody,
  sessionRow,
  startAttempt,
} from '../support/checkout.ts';

describe(`provider status checks (${storageKind})`, () => {
  let t: TestContext;
  before(async () => {
    t = await startTestApp();
  });
  after(() => t.close());

  /** A provider that answers `answer` for the attempts it is given, counting its calls; other files' attempts get no adapter. */
  function provider(answer: () => ProviderOutcome) {
    const mine = new Set<string>();
    const rail: CollectionRail = {
      ...testSimulator,
      async status() {
        calls++;
        return { rawStatus: 'PROVIDER', outcome: answer() };
      },
    };
    let calls = 0;
    return {
      mine,
      calls: () => calls,
      pass: () =>
        checkPendingAttempts({
          db: t.db,
          checkoutUrlHost: t.config.checkoutUrlHost,
          railOf: (attempt) => (mine.has(attempt.id) ? rail : null),
        }),
    };
  }

  async function pendingAttempt(base = 10_000) {
    const m = await t.merchant();
    const session = await createSession(t, m, { amount_minor: base });
    const started = await startAttempt(t, session.id, momoBody(base));
    return { m, session, attemptId: started.attempt_reference };
  }

  const age = (attemptId: string, seconds: number) =>
    t.db.query(`UPDATE payment_attempts SET created_at = now() - make_interval(secs => $2) WHERE id = $1`, [
      attemptId,
      seconds,
    ]);
  const schedule = async (attemptId: string) =>
    (
      await t.db.query<{ status_checks: number; due_in_s: number | null }>(
        `SELECT status_checks, round(extract(epoch FROM next_status_check_at - now()))::int AS due_in_s FROM payment_attempts WHERE id = $1`,
        [attemptId],
      )
    )[0]!;

  it('an attempt pending for less than 5 minutes is not checked', async () => {
    const p = provider(() => 'paid');
    const { attemptId } = await pendingAttempt();
    p.mine.add(attemptId);
    await age(attemptId, STATUS_CHECK_FIRST_AFTER_S - 30);
    await p.pass();
    assert.equal(p.calls(), 0);
    assert.deepEqual(await schedule(attemptId), { status_checks: 0, due_in_s: null });
  });

  it('a provider still saying pending is asked again after 5, 10, 20, 40 and then every 60 minutes', async () => {
    const p = provider(() => 'pending');
    const { session, attemptId } = await pendingAttempt();
    p.mine.add(attemptId);
    await age(attemptId, STATUS_CHECK_FIRST_AFTER_S + 1);
    const waits: number[] = [];
    for (let check = 1; check <= 6; check++) {
      await p.pass();
      await p.pass(); // not due again yet: no second call
      assert.equal(p.calls(), check);
      const next = await schedule(attemptId);
      assert.equal(next.status_checks, check);
      waits.push(Math.round(next.due_in_s! / 60));
      await t.db.query(`UPDATE payment_attempts SET next_status_check_at = now() - interval '1 second' WHERE id = $1`, [
        attemptId,
      ]);
    }
    assert.deepEqual(waits, [5, 10, 20, 40, 60, 60]);
    assert.equal((await attemptRows(t, session.id))[0]!.status, 'pending');
  });

  it('a success found by the check is applied like any other: the session succeeds, the merchant is credited once, the webhook event is written', async () => {
    const p = provider(() => 'paid');
    const base = 10_000;
    const { m, session, attemptId } = await pendingAttempt(base);
    p.mine.add(attemptId);
    await age(attemptId, STATUS_CHECK_FIRST_AFTER_S + 1);
    assert.equal(await p.pass(), 1);
    assert.equal((await attemptRows(t, session.id))[0]!.status, 'paid');
    assert.equal((await sessionRow(t, session.id)).status, 'success');
    assert.ok((await eventTypes(t, session.id)).includes('checkout.session.completed'));
    assert.equal((await balance(t.db, m.merchant_id, 'test')).available_minor, creditOf('momo', base));
    await t.db.query(`UPDATE payment_attempts SET next_status_check_at = now() - interval '1 second' WHERE id = $1`, [
      attemptId,
    ]);
    assert.equal(await p.pass(), 0, 'a final attempt is never checked again');
    assert.equal(p.calls(), 1);
    assert.deepEqual(await checkInvariants(t.db, m.merchant_id), []);
  });

  it('a failure found by the check leaves the session open for another try', async () => {
    const p = provider(() => 'failed');
    const { session, attemptId } = await pendingAttempt();
    p.mine.add(attemptId);
    await age(attemptId, STATUS_CHECK_FIRST_AFTER_S + 1);
    assert.equal(await p.pass(), 1);
    assert.equal((await attemptRows(t, session.id))[0]!.status, 'failed');
    assert.equal((await sessionRow(t, session.id)).status, 'open');
  });

  it('a provider that does not answer changes nothing now and is asked again at the next turn', async () => {
    let fail = true;
    const p = provider(() => {
      if (fail) throw new Error('provider timed out');
      return 'paid';
    });
    const { session, attemptId } = await pendingAttempt();
    p.mine.add(attemptId);
    await age(attemptId, STATUS_CHECK_FIRST_AFTER_S + 1);
    assert.equal(await p.pass(), 0);
    assert.equal((await attemptRows(t, session.id))[0]!.status, 'pending');
    assert.equal((await schedule(attemptId)).status_checks, 1);
    fail = false;
    await t.db.query(`UPDATE payment_attempts SET next_status_check_at = now() - interval '1 second' WHERE id = $1`, [
      attemptId,
    ]);
    assert.equal(await p.pass(), 1);
    assert.equal((await sessionRow(t, session.id)).status, 'success');
  });
});
