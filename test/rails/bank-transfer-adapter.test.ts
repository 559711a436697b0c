// The bank transfer adapter (issue 16, docs/bank-statements.md): the bank_statement provider, a payment reference
// per attempt, and initiate() answering pending with the collection account (no code, no prompt).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createBankTransfer, isPaymentReference, newPaymentReference } from '../../src/rails/bank-transfer/index.ts';
import { RailUnavailableError, type AttemptForRail } from '../../src/rails/types.ts';

describe('the bank transfer adapter', () => {
  const settings = {
    bankCode: 'GCB',
    bankName: 'GCB Bank',
    branch: 'Accra Central',
    accountNumber: '1011130012345',
    accountName: 'Sika Collections Ltd',
  };
  const rail = createBankTransfer(settings);
  const attempt = (providerReference: string | null): AttemptForRail => ({
    reference: 'att_x',
    sessionId: 'cs_x',
    environment: 'live',
    rail: 'bank_transfer',
    amountMinor: 123_450,
    currency: 'GHS',
    network: null,
    phone: null,
    providerReference,
    payerEmail: null,
    returnUrl: 'http://sika.test/pay/cs_x',
  });

  it('is the bank_statement provider of bank transfers and draws a payment reference for each attempt', () => {
    assert.equal(rail.provider, 'bank_statement');
    assert.deepEqual(rail.serves, { rails: ['bank_transfer'] });
    const first = rail.reference!({ reference: 'att_1', rail: 'bank_transfer' });
    const second = rail.reference!({ reference: 'att_1', rail: 'bank_transfer' });
    assert.ok(isPaymentReference(first) && isPaymentReference(second));
    assert.notEqual(first, second);
  });

  it('initiate() answers pending with the collection account and the reference, status() stays pending, and there is no code or prompt', async () => {
    const reference = newPaymentReference();
    const initiated = await rail.initiate(attempt(reference));
    assert.equal(initiated.outcome, undefined);
    assert.equal(initiated.verificationRequired, false);
    assert.equal(initiated.rawStatus, 'AWAITING_TRANSFER');
    assert.equal(initiated.providerReference, undefined, 'ours was stored beforehand');
    const { note, ...rest } = initiated.instructions as Record<string, string>;
    assert.deepEqual(rest, {
      bank_name: 'GCB Bank',
      bank_code: 'GCB',
      branch: 'Accra Central',
      account_number: '1011130012345',
      account_name: 'Sika Collections Ltd',
      reference,
    });
    assert.match(note!, new RegExp(`GHS 1,234\\.50.*${reference}`));
    assert.deepEqual(await rail.status(attempt(reference)), { rawStatus: 'AWAITING_TRANSFER', outcome: 'pending' });
    await assert.rejects(rail.authorize(attempt(reference), '123456'), RailUnavailableError);
    await assert.rejects(rail.resend(attempt(reference)), RailUnavailableError);
    await assert.rejects(rail.initiate(attempt(null)), /no stored payment reference/);
  });
});
