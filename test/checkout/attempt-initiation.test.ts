// The provider call of a new Live attempt (src/checkout/attempt-initiation.ts), with scripted providers in
// place of real ones: failover only before acceptance, a decline fails the attempt, an error answer from
// a provider that holds the payment anyway keeps it there, a lost answer is asked about, and a recording
// that fails after the provider accepted is retried rather than turned into a failure.
import { randomUUID } from 'node:crypto';
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { CreatedMerchant } from '../../src/accounts/service.ts';
import { LiveProviders } from '../../src/rails/live.ts';
import {
  ProviderNoAnswerError,
  ProviderRefusedError,
  type CollectionRail,
  type Initiated,
  type StatusCheck,
} from '../../src/rails/types.ts';
import { createSession, getQuote, postAttempt } from '../support/checkout.ts';
import { startTestApp, storageKind, type TestContext } from '../support/helpers.ts';

type Script = { initiate: () => Promise<Initiated>; status?: () => Promise<StatusCheck> };

/** A provider whose next answers are scripted; it records every call. */
function scripted(provider: string) {
  const calls: string[] = [];
  const queue: Script[] = [];
  const rail: CollectionRail & {
    calls: string[];
    queue: Script[];
    reference: NonNullable<CollectionRail['reference']>;
  } = {
    provider,
    serves: { rails: ['momo'], networks: ['mtn', 'telecel', 'at'] },
    calls,
    queue,
    reference: (attempt) => `${provider}-${attempt.reference}`,
    async initiate(attempt) {
      calls.push(`initiate ${attempt.providerReference}`);
      const next = queue[0];
      if (!next) return { rawStatus: 'PENDING', verificationRequired: false, instructions: {} };
      return next.initiate();
    },
    async status(attempt) {
      calls.push(`status ${attempt.providerReference}`);
      const next = queue.shift();
      return next?.status ? next.status() : { rawStatus: 'PENDING', outcome: 'pending' };
    },
    async authorize() {
      return { rawStatus: 'PENDING' };
    },
    async resend() {
      return { rawStatus: 'PENDING' };
    },
  };
  return rail;
}

describe(`Live attempt initiation with scripted providers (${storageKind})`, () => {
  let t: TestContext;
  let m: CreatedMerchant;
  const first = scripted('first_provider');
  const second = scripted('second_provider');

  before(async () => {
    t = await startTestApp(
      {},
      {
        providers: new LiveProviders([
          { id: 'first_provider', collection: first },
          { id: 'second_provider', collection: second },
        ]),
      },
    );
    m = await t.merchant();
  });
  after(async () => t?.close());

  async function attempt() {
    const session = await createSession(t, m, { amount_minor: 10_000 }, { live: true });
    const total = (await getQuote(t, session.id)).json().surcharges.momo.total_minor;
    const res = await postAttempt(t, session.id, {
      rail: 'momo',
      amount_minor: total,
      operator: 'mtn',
      phone: '0241234567',
    });
    return { session, res };
  }
  const attemptRow = async (sessionId: string) =>
    (
      await t.db.query<{ status: string; provider: string; provider_reference: string; raw_status: string }>(
        'SELECT status, provider, provider_reference, raw_status FROM payment_attempts WHERE session_id = $1',
        [sessionId],
      )
    )[0]!;
  const reset = () => {
    for (const rail of [first, second]) {
      rail.calls.length = 0;
      rail.queue.length = 0;
    }
  };

  it('refused before accepting (connection refused): the next provider takes it under a fresh intent', async () => {
    reset();
    first.queue.push({
      initiate: async () => Promise.reject(new ProviderRefusedError('provider unreachable (ECONNREFUSED)')),
    });
    const { session, res } = await attempt();
    assert.equal(res.statusCode, 201, res.body);
    assert.equal(res.json().provider, 'second_provider');
    const row = await attemptRow(session.id);
    assert.equal(row.provider, 'second_provider');
    assert.match(row.provider_reference, /^second_provider-att_/);
    assert.equal(first.calls.length, 1);
    assert.equal(second.calls.filter((c) => c.startsWith('initiate')).length, 1);
  });

  it('a 5xx from a provider that holds the payment anyway: no failover, the payment stays with it', async () => {
    reset();
    first.queue.push({
      initiate: async () => Promise.reject(new ProviderRefusedError('502 on create', 502)),
      status: async () => ({ rawStatus: 'PENDING', outcome: 'pending' }),
    });
    const { session, res } = await attempt();
    assert.equal(res.statusCode, 201, res.body);
    assert.equal((await attemptRow(session.id)).provider, 'first_provider');
    assert.equal(second.calls.length, 0, 'the second provider is never asked');
  });

  it('a decline fails the attempt (400 PROVIDER_PAYMENT_REJECTED) and is not failed over', async () => {
    reset();
    first.queue.push({
      initiate: async () => Promise.reject(new ProviderRefusedError('the wallet does not exist', 400, true)),
    });
    const { session, res } = await attempt();
    assert.equal(res.statusCode, 400, res.body);
    assert.equal(res.json().error.code, 'PROVIDER_PAYMENT_REJECTED');
    assert.equal((await attemptRow(session.id)).status, 'failed');
    assert.equal(second.calls.length, 0);
  });

  it('no answer and no record yet: pending and unconfirmed under its stored reference, nothing re-sent', async () => {
    reset();
    first.queue.push({
      initiate: async () => Promise.reject(new ProviderNoAnswerError('timeout')),
      status: async () => ({ rawStatus: 'NOT_FOUND', outcome: 'unknown' }),
    });
    const { session, res } = await attempt();
    assert.equal(res.statusCode, 201, res.body);
    const row = await attemptRow(session.id);
    assert.equal(row.status, 'pending');
    assert.equal(row.raw_status, 'INITIATION_UNCONFIRMED');
    assert.deepEqual(
      first.calls.map((c) => c.split(' ')[0]),
      ['initiate', 'status'],
    );
    assert.equal(second.calls.length, 0);
  });

  it('recording fails once after the provider accepted: retried and recorded, never marked failed', async () => {
    reset();
    const original = t.db.transaction.bind(t.db);
    let failNext = false;
    t.db.transaction = (async (fn: never) => {
      if (failNext) {
        failNext = false;
        throw new Error('connection lost while recording');
      }
      return original(fn);
    }) as typeof t.db.transaction;
    first.queue.push({
      initiate: async () => {
        failNext = true;
        return {
          rawStatus: 'PAY_OFFLINE',
          verificationRequired: false,
          instructions: { display_text: 'Approve on your phone' },
        };
      },
    });
    try {
      const { session, res } = await attempt();
      assert.equal(res.statusCode, 201, res.body);
      const row = await attemptRow(session.id);
      assert.equal(row.status, 'pending');
      assert.equal(row.raw_status, 'PAY_OFFLINE');
      assert.equal(res.json().instructions.display_text, 'Approve on your phone');
    } finally {
      t.db.transaction = original;
    }
  });

  it('the attempt row is gone when the answer is recorded (a failover lost its commit): 503, never a 500', async () => {
    reset();
    first.queue.push({
      initiate: async () => {
        // What an asynchronous replica promoted after a crash looks like: the committed intent is not there.
        await t.db.query(
          "DELETE FROM payment_attempts WHERE provider = 'first_provider' AND status = 'pending' AND raw_status = 'CREATED'",
        );
        return { rawStatus: 'PAY_OFFLINE', verificationRequired: false, instructions: {} };
      },
    });
    const { res } = await attempt();
    assert.equal(res.statusCode, 503, res.body);
    assert.equal(res.json().error.code, 'SERVICE_UNAVAILABLE');
  });

  it('a random reference an earlier attempt holds is drawn again, never a unique-index error', async () => {
    reset();
    const original = first.reference;
    // References of this run only: a database reused by an earlier run holds that run's.
    const run = randomUUID().slice(0, 8);
    const draws = [`REPEATED-${run}`, `REPEATED-${run}`, `FRESH-${run}`];
    try {
      first.reference = () => draws.shift() ?? `SPARE-${run}`;
      const one = await attempt();
      assert.equal(one.res.statusCode, 201, one.res.body);
      assert.equal((await attemptRow(one.session.id)).provider_reference, `REPEATED-${run}`);
      const two = await attempt();
      assert.equal(two.res.statusCode, 201, two.res.body);
      assert.equal((await attemptRow(two.session.id)).provider_reference, `FRESH-${run}`);
    } finally {
      first.reference = original;
    }
  });

  it('every provider refuses: 503 PROVIDER_RAIL_UNAVAILABLE with Retry-After; the attempt is cancelled, not a failed try', async () => {
    reset();
    first.queue.push({
      initiate: async () => Promise.reject(new ProviderRefusedError('provider unreachable (ECONNREFUSED)')),
    });
    second.queue.push({
      initiate: async () => Promise.reject(new ProviderRefusedError('provider unreachable (ECONNREFUSED)')),
    });
    const { session, res } = await attempt();
    assert.equal(res.statusCode, 503, res.body);
    assert.equal(res.json().error.code, 'PROVIDER_RAIL_UNAVAILABLE');
    assert.ok(Number(res.headers['retry-after']) >= 1);
    assert.equal((await attemptRow(session.id)).status, 'cancelled');
  });
});
