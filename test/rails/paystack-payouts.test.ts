// The Paystack adapter's payouts (src/rails/payouts.ts, src/rails/paystack/) against the Paystack stand-in over
// real loopback HTTP: bank codes, checkRecipient, bank and wallet transfers and their outcomes, and the failures
// that matter for money (refused, no answer, lost answer, 5xx, a low balance).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { newId } from '../../src/lib/ids.ts';
import { PaystackBanks, PAYSTACK_BANK_NAMES } from '../../src/rails/paystack/banks.ts';
import { PaystackClient } from '../../src/rails/paystack/client.ts';
import { createPaystack } from '../../src/rails/paystack/index.ts';
import { ProviderNoAnswerError, ProviderRefusedError } from '../../src/rails/types.ts';
import {
  SECRET_KEY,
  TIMEOUT_MS,
  deliveredFor,
  lastBody,
  payout,
  paystack,
  requestsTo,
  standIn,
  standInCode,
  usePaystackStandIn,
} from '../support/paystack-adapter.ts';
import { startPaystackStandIn } from '../support/standins/paystack.ts';

usePaystackStandIn();

describe('Paystack payouts', () => {
  it('every one of our bank codes maps to exactly one bank in the list', async () => {
    const banks = new PaystackBanks(
      new PaystackClient({ secretKey: SECRET_KEY, baseUrl: standIn.baseUrl, timeoutMs: TIMEOUT_MS }),
    );
    const codes = await Promise.all(Object.keys(PAYSTACK_BANK_NAMES).map((ours) => banks.codeFor(ours)));
    assert.equal(codes.length, 15);
    assert.ok(codes.every((code) => code !== null));
    assert.equal(new Set(codes).size, 15);
    assert.equal(await banks.codeFor('GCB'), standInCode('GCB Bank Limited'));
    assert.equal(await banks.codeFor('ABS'), standInCode('Absa Bank Ghana Limited'));
    assert.equal(await banks.codeFor('XYZ'), null);
  });

  it('checkRecipient resolves a bank account by Paystack code, reads the bank list once, and reports the name without judging it', async () => {
    standIn.setAccount(standInCode('GCB Bank Limited'), '1020304050', 'KOFI BOATENG');
    const listsBefore = standIn.count('bank.list');
    const check = await paystack.payouts.checkRecipient(payout({}));
    assert.deepEqual(check, { ok: true, resolvedName: 'KOFI BOATENG' });
    const query = new URL(requestsTo('bank.resolve').at(-1)!.path, 'http://x').searchParams;
    assert.equal(query.get('bank_code'), standInCode('GCB Bank Limited'));
    assert.equal(query.get('account_number'), '1020304050');

    standIn.next(
      { endpoint: 'bank.resolve', accountNumber: '1020304050' },
      { kind: 'resolve', accountName: 'SOMEONE ELSE' },
    );
    assert.deepEqual(await paystack.payouts.checkRecipient(payout({})), { ok: true, resolvedName: 'SOMEONE ELSE' });
    assert.ok(standIn.count('bank.list') - listsBefore <= 1, 'the bank list is cached');
  });

  it('checkRecipient: an account the bank does not know is account_not_found; a bank Paystack does not list is bank_not_supported', async () => {
    assert.deepEqual(await paystack.payouts.checkRecipient(payout({ accountNumber: '9999999999' })), {
      ok: false,
      reason: 'account_not_found',
    });
    assert.deepEqual(await paystack.payouts.checkRecipient(payout({ bankCode: 'XYZ' })), {
      ok: false,
      reason: 'bank_not_supported',
    });
  });

  it('checkRecipient of a wallet: the name when Paystack resolves it, no name (still ok) when it cannot', async () => {
    standIn.setAccount('MTN', '0241234567', 'AMA MENSAH');
    const known = payout({
      accountType: 'momo',
      bankCode: null,
      accountNumber: null,
      network: 'mtn',
      phone: '+233241234567',
    });
    assert.deepEqual(await paystack.payouts.checkRecipient(known), { ok: true, resolvedName: 'AMA MENSAH' });
    const query = new URL(requestsTo('bank.resolve').at(-1)!.path, 'http://x').searchParams;
    assert.equal(query.get('bank_code'), 'MTN');
    const unknown = payout({
      accountType: 'momo',
      bankCode: null,
      accountNumber: null,
      network: 'telecel',
      phone: '+233209999999',
    });
    assert.deepEqual(await paystack.payouts.checkRecipient(unknown), { ok: true, resolvedName: null });
  });

  it('checkRecipient: a 5xx is thrown for the worker to try again', async () => {
    standIn.next({ endpoint: 'bank.resolve' }, { kind: 'http_error', status: 503 });
    await assert.rejects(paystack.payouts.checkRecipient(payout({})), ProviderRefusedError);
  });

  it('a bank transfer: a ghipss recipient, then the transfer under our reference in GHS; success is paid, with the transfer.success webhook', async () => {
    const p = payout({ accountNumber: '1020304051' });
    standIn.next(
      { endpoint: 'transfer.initiate', accountNumber: '1020304051' },
      { kind: 'transfer', status: 'success' },
    );
    const outcome = await paystack.payouts.transfer(p);
    assert.equal(outcome.outcome, 'paid');
    assert.match((outcome as { bankReference: string }).bankReference, /^TRF_/);
    const recipient = lastBody('transferrecipient.create');
    assert.deepEqual(recipient, {
      type: 'ghipss',
      name: 'Kofi Boateng',
      account_number: '1020304051',
      bank_code: standInCode('GCB Bank Limited'),
      currency: 'GHS',
    });
    const transfer = lastBody('transfer.initiate');
    assert.equal(transfer.source, 'balance');
    assert.equal(transfer.amount, 120_000);
    assert.equal(transfer.currency, 'GHS');
    assert.equal(transfer.reference, p.providerReference);
    assert.match(transfer.recipient as string, /^RCP_/);
    const [delivery] = await deliveredFor(p.providerReference!, 'transfer.success');
    assert.ok(delivery);
    assert.equal(paystack.verifyWebhook(delivery.raw, delivery.signature), true);
    assert.equal(paystack.parseWebhook(JSON.parse(delivery.raw.toString('utf8'))).kind, 'transfer');
    assert.deepEqual(await paystack.payouts.status(p), outcome);
  });

  it('a wallet transfer: a mobile_money recipient with the telco code and the local number', async () => {
    const p = payout({
      accountType: 'momo',
      bankCode: null,
      accountNumber: null,
      network: 'telecel',
      phone: '+233201112233',
    });
    const outcome = await paystack.payouts.transfer(p);
    assert.equal(outcome.outcome, 'pending');
    const recipient = lastBody('transferrecipient.create');
    assert.equal(recipient.type, 'mobile_money');
    assert.equal(recipient.bank_code, 'VOD');
    assert.equal(recipient.account_number, '0201112233');
  });

  it('pending, then failed: status() reads failed with the reason; the transfer.failed webhook arrives', async () => {
    const p = payout({ accountNumber: '1020304052' });
    const sent = await paystack.payouts.transfer(p);
    assert.equal(sent.outcome, 'pending');
    standIn.settleTransfer(p.providerReference!, 'failed', { reason: 'Account is dormant' });
    assert.deepEqual(await paystack.payouts.status(p), {
      outcome: 'failed',
      reason: 'paystack transfer failed: Account is dormant',
    });
    assert.equal((await deliveredFor(p.providerReference!, 'transfer.failed')).length, 1);
  });

  it('a transfer Paystack answers failed at once is failed', async () => {
    const p = payout({ accountNumber: '1020304057' });
    standIn.next(
      { endpoint: 'transfer.initiate', accountNumber: '1020304057' },
      { kind: 'transfer', status: 'failed', reason: 'Processor down' },
    );
    // The initiate answer carries no gateway_response [SNIP api/transfers/initiate/response.json]; verify does.
    assert.deepEqual(await paystack.payouts.transfer(p), { outcome: 'failed', reason: 'paystack transfer failed' });
    assert.deepEqual(await paystack.payouts.status(p), {
      outcome: 'failed',
      reason: 'paystack transfer failed: Processor down',
    });
  });

  it('paid, then reversed: status() reads returned', async () => {
    const p = payout({ accountNumber: '1020304053' });
    await paystack.payouts.transfer(p);
    standIn.settleTransfer(p.providerReference!, 'success');
    assert.equal((await paystack.payouts.status(p)).outcome, 'paid');
    standIn.settleTransfer(p.providerReference!, 'reversed');
    const returned = await paystack.payouts.status(p);
    assert.equal(returned.outcome, 'returned');
    assert.equal((await deliveredFor(p.providerReference!, 'transfer.reversed')).length, 1);
  });

  it('transfer() again with the same payout is the same transfer: one recipient, one transfer sent', async () => {
    const p = payout({ accountNumber: '1020304054' });
    const sentBefore = standIn.transfersSent;
    const recipientsBefore = standIn.recipients.length;
    const first = await paystack.payouts.transfer(p);
    const second = await paystack.payouts.transfer(p);
    assert.deepEqual(second, first);
    assert.equal(standIn.transfersSent, sentBefore + 1);
    assert.equal(standIn.recipients.length, recipientsBefore + 1);
  });

  it('a lost answer after accepting is ProviderNoAnswerError; status() finds the one transfer; sending again does not pay twice', async () => {
    const p = payout({ accountNumber: '1020304055' });
    standIn.next({ endpoint: 'transfer.initiate', accountNumber: '1020304055' }, { kind: 'lose_answer' });
    const sentBefore = standIn.transfersSent;
    await assert.rejects(paystack.payouts.transfer(p), ProviderNoAnswerError);
    assert.equal((await paystack.payouts.status(p)).outcome, 'pending');
    await paystack.payouts.transfer(p);
    assert.equal(standIn.transfersSent, sentBefore + 1);
  });

  it('a timeout on the transfer is ProviderNoAnswerError, and status() finds it', async () => {
    const p = payout({ accountNumber: '1020304058' });
    standIn.next({ endpoint: 'transfer.initiate', accountNumber: '1020304058' }, { kind: 'hold' });
    await assert.rejects(paystack.payouts.transfer(p), ProviderNoAnswerError);
    assert.equal((await paystack.payouts.status(p)).outcome, 'pending');
  });

  it('a 5xx on the transfer is ProviderRefusedError and nothing was sent: status() says unknown', async () => {
    const p = payout({ accountNumber: '1020304056' });
    standIn.next({ endpoint: 'transfer.initiate', accountNumber: '1020304056' }, { kind: 'http_error', status: 500 });
    await assert.rejects(paystack.payouts.transfer(p), ProviderRefusedError);
    assert.deepEqual(await paystack.payouts.status(p), { outcome: 'unknown' });
  });

  it('a low balance is thrown (the payout waits), not failed', async () => {
    const poor = await startPaystackStandIn({ secretKey: SECRET_KEY, balanceMinor: 1_000 });
    try {
      const adapter = createPaystack({ secretKey: SECRET_KEY, baseUrl: poor.baseUrl, timeoutMs: TIMEOUT_MS });
      const p = {
        ...payout({ accountNumber: '1020304060' }),
        providerReference: adapter.payouts.reference!({ payoutId: newId('po'), reference: '' }),
      };
      await assert.rejects(adapter.payouts.transfer(p), ProviderRefusedError);
      assert.equal(poor.transfersSent, 0);
    } finally {
      await poor.close();
    }
  });

  it('a transfer in another currency than GHS fails without calling Paystack', async () => {
    const transfersBefore = standIn.count('transfer.initiate');
    const outcome = await paystack.payouts.transfer(payout({}, { currency: 'USD' }));
    assert.equal(outcome.outcome, 'failed');
    assert.equal(standIn.count('transfer.initiate'), transfersBefore);
  });
});
