// Paystack webhooks through the adapter (src/rails/paystack/) from the Paystack stand-in over real loopback HTTP:
// signatures (hex HMAC-SHA512 of the raw body), a webhook sent twice, and parseWebhook's kind, reference and key.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  SECRET_KEY,
  deliveredFor,
  momoAttempt,
  paystack,
  standIn,
  usePaystackStandIn,
} from '../support/paystack-adapter.ts';

usePaystackStandIn();

describe('Paystack webhooks', () => {
  const body = JSON.stringify({
    event: 'charge.success',
    data: { id: 7, reference: 'sika-att-x', amount: 100, currency: 'GHS', status: 'success' },
  });

  it('verifyWebhook takes the hex HMAC-SHA512 of the raw body and nothing else', async () => {
    const { createHmac } = await import('node:crypto');
    const good = createHmac('sha512', SECRET_KEY).update(body).digest('hex');
    assert.equal(paystack.verifyWebhook(body, good), true);
    assert.equal(paystack.verifyWebhook(Buffer.from(body), good.toUpperCase()), true);
    assert.equal(paystack.verifyWebhook(body, undefined), false);
    assert.equal(paystack.verifyWebhook(body, ''), false);
    assert.equal(paystack.verifyWebhook(body, good.slice(2)), false);
    assert.equal(paystack.verifyWebhook(`${body} `, good), false);
    assert.equal(paystack.verifyWebhook(body, createHmac('sha512', 'sk_test_other').update(body).digest('hex')), false);
    assert.equal(paystack.verifyWebhook(body, 'z'.repeat(128)), false);
  });

  it('a webhook sent twice is two deliveries with one event key', async () => {
    const attempt = momoAttempt({ phone: '+233551230020' });
    standIn.next({ phone: '0551230020' }, { kind: 'charge', status: 'success', webhook: 'twice' });
    await paystack.collection.initiate(attempt);
    const deliveries = await deliveredFor(attempt.providerReference!, 'charge.success');
    assert.equal(deliveries.length, 2);
    const keys = deliveries.map(
      (delivery) => paystack.parseWebhook(JSON.parse(delivery.raw.toString('utf8'))).eventKey,
    );
    assert.equal(keys[0], keys[1]);
    assert.ok(deliveries.every((delivery) => paystack.verifyWebhook(delivery.raw, delivery.signature)));
  });

  it('a webhook with a bad signature or none fails verification; a webhook never sent never arrives', async () => {
    const bad = momoAttempt({ phone: '+233551230021' });
    await paystack.collection.initiate(bad);
    standIn.settleCharge(bad.providerReference!, 'success', { webhook: 'bad_signature' });
    const [badDelivery] = await deliveredFor(bad.providerReference!);
    assert.ok(badDelivery?.signature);
    assert.equal(paystack.verifyWebhook(badDelivery.raw, badDelivery.signature), false);

    const unsigned = momoAttempt({ phone: '+233551230022' });
    await paystack.collection.initiate(unsigned);
    standIn.settleCharge(unsigned.providerReference!, 'success', { webhook: 'unsigned' });
    const [unsignedDelivery] = await deliveredFor(unsigned.providerReference!);
    assert.equal(unsignedDelivery?.signature, undefined);
    assert.equal(paystack.verifyWebhook(unsignedDelivery!.raw, unsignedDelivery!.signature), false);

    const silent = momoAttempt({ phone: '+233551230023' });
    await paystack.collection.initiate(silent);
    standIn.settleCharge(silent.providerReference!, 'success', { webhook: 'none' });
    assert.deepEqual(await deliveredFor(silent.providerReference!), []);
    assert.equal((await paystack.collection.status(silent)).outcome, 'paid', 'status() still finds it');
  });

  it('parseWebhook names the kind, the reference and a key per event', () => {
    assert.deepEqual(
      paystack.parseWebhook({
        event: 'transfer.failed',
        data: { id: 9, reference: 'sika-po-x', transfer_code: 'TRF_1' },
      }),
      {
        kind: 'transfer',
        event: 'transfer.failed',
        reference: 'sika-po-x',
        eventKey: 'paystack:transfer.failed:sika-po-x:9:',
      },
    );
    const refund = paystack.parseWebhook({
      event: 'refund.pending',
      data: { transaction_reference: 'sika-att-y', refund_reference: null, amount: '5000' },
    });
    assert.deepEqual(refund, {
      kind: 'refund',
      event: 'refund.pending',
      reference: 'sika-att-y',
      eventKey: 'paystack:refund.pending:sika-att-y::5000',
    });
    assert.equal(paystack.parseWebhook({ event: 'charge.dispute.create', data: { reference: 'r' } }).kind, 'other');
    assert.equal(paystack.parseWebhook({ event: 'subscription.create', data: {} }).kind, 'other');
    assert.deepEqual(paystack.parseWebhook('not an object'), {
      kind: 'other',
      event: '',
      reference: null,
      eventKey: 'paystack::::',
    });
  });
});
