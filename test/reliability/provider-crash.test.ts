// A SIGKILL between the provider accepting a payment and Sika recording its answer: the real server as a
// child process, MTN MoMo's stand-in holding the answer to a request to pay it has already recorded, the
// server killed while it waits. After a restart the payer retries; the attempt (its X-Reference-Id was
// stored before the call) is replayed, not sent again, and the status query finds the payment: exactly
// one charge at MTN, one credit, one completed event.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { CreatedMerchant } from '../../src/accounts/service.ts';
import { STANDIN_COLLECTION, startMtnMomoStandIn, type MtnMomoStandIn } from '../support/standins/mtn-momo.ts';
import { waitFor } from '../support/webhooks.ts';
import {
  call,
  killAllServers,
  newMerchant,
  NoAnswer,
  reliabilityStorage,
  startServer,
  type Storage,
} from './process-support.ts';

describe(`SIGKILL between a provider accepting and Sika recording (${process.env.DATABASE_URL ? 'postgres' : 'embedded'})`, () => {
  let storage: Storage;
  let mtn: MtnMomoStandIn;
  let merchant: CreatedMerchant;

  before(async () => {
    storage = await reliabilityStorage('provider-crash');
    mtn = await startMtnMomoStandIn();
    merchant = await storage.with((db) => newMerchant(db, 'Provider Crash Shop', null));
  });
  after(async () => {
    killAllServers();
    await mtn?.close();
    await storage?.drop();
  });

  it('exactly one charge and the right outcome after the restart', { timeout: 120_000 }, async () => {
    const env = {
      MTN_MOMO_BASE_URL: mtn.baseUrl,
      MTN_MOMO_COLLECTION_SUBSCRIPTION_KEY: STANDIN_COLLECTION.subscriptionKey,
      MTN_MOMO_COLLECTION_USER_ID: STANDIN_COLLECTION.userId,
      MTN_MOMO_COLLECTION_API_KEY: STANDIN_COLLECTION.apiKey,
      // Long enough that the server is still waiting for MTN's answer when it is killed.
      PROVIDER_TIMEOUT_MS: '60000',
    };
    const first = await startServer(storage.env(), env);
    const session = await call(first.base, 'POST', '/api/v1/sessions', {
      key: merchant.live_api_key,
      body: { amount_minor: 25_000, invoice_ref: 'INV-CRASH-1' },
    });
    assert.equal(session.status, 201, session.text);
    const sessionId = session.body.id as string;
    const quote = await call(first.base, 'GET', `/api/v1/checkout/sessions/${sessionId}/quote`);
    const body = {
      rail: 'momo',
      operator: 'mtn',
      phone: '0241234567',
      amount_minor: quote.body.surcharges.momo.total_minor,
    };

    mtn.next('requesttopay', { answer: 'timeout' }); // MTN records the request to pay, then never answers
    const pending = call(first.base, 'POST', `/api/v1/checkout/sessions/${sessionId}/provider-attempts`, { body }).then(
      () => assert.fail('the server answered before it was killed'),
      (error: unknown) => error,
    );
    await waitFor('MTN to record the request to pay', async () => mtn.transactions.size === 1 || undefined, 10_000, 20);
    await first.kill();
    assert.ok((await pending) instanceof NoAnswer, 'the payer got no answer');
    const [referenceId, transaction] = [...mtn.transactions.entries()][0]!;
    assert.equal(transaction.status, 'PENDING');

    const second = await startServer(storage.env(), env);
    try {
      // The payer tries again with the same details: the attempt recorded before the call is returned.
      const retry = await call(second.base, 'POST', `/api/v1/checkout/sessions/${sessionId}/provider-attempts`, {
        body,
      });
      assert.equal(retry.status, 200, retry.text);
      assert.equal(retry.body.replayed, true);
      assert.equal(retry.body.provider, 'mtn_momo');
      assert.equal(retry.body.provider_reference, referenceId, 'the X-Reference-Id stored before the call');
      assert.equal(mtn.counts.requesttopay, 1, 'no second request to pay');

      mtn.settle(referenceId, 'SUCCESSFUL');
      const status = await call(
        second.base,
        'GET',
        `/api/v1/checkout/sessions/${sessionId}/provider-attempts/${retry.body.attempt_reference}?refresh=true`,
      );
      assert.equal(status.status, 200, status.text);
      assert.equal(status.body.status, 'paid');
      assert.equal(status.body.session_status, 'success');
      const merchantView = await call(second.base, 'GET', `/api/v1/sessions/${sessionId}`, {
        key: merchant.live_api_key,
      });
      assert.equal(merchantView.body.status, 'success');
      assert.equal(mtn.counts.requesttopay, 1);
      assert.equal(mtn.transactions.size, 1);
    } finally {
      await second.stop();
    }
    const credits = await storage.with((db) =>
      db.query<{ n: number; completed: number }>(
        `SELECT (SELECT count(*)::int FROM journal_entries WHERE kind = 'payment_credit' AND reference_id = $1) AS n,
                (SELECT count(*)::int FROM events WHERE object_id = $2 AND type = 'checkout.session.completed') AS completed`,
        [transaction.externalId, sessionId],
      ),
    );
    assert.equal(credits[0]!.n, 1, 'credited exactly once');
    assert.equal(credits[0]!.completed, 1);
  });
});
