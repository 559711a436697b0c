// The one name of a card that paid (the receipt, both consoles) and the one e-mail address rule (accounts,
// payment links, receipts).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { cardLabel } from '../../src/lib/card-label.ts';
import { EMAIL_PATTERN } from '../../src/lib/email-address.ts';

describe('cardLabel', () => {
  it('names the brand as the provider does, trimmed and capitalised, with the last four digits', () => {
    assert.equal(cardLabel('visa', '4081'), 'Visa ending 4081');
    assert.equal(cardLabel(' mastercard ', '1234'), 'Mastercard ending 1234');
  });
  it('says "Card" without a brand, and nothing without the last four digits', () => {
    assert.equal(cardLabel(null, '4081'), 'Card ending 4081');
    assert.equal(cardLabel('  ', '4081'), 'Card ending 4081');
    assert.equal(cardLabel('visa', null), null);
    assert.equal(cardLabel(null, null), null);
  });
});

describe('EMAIL_PATTERN', () => {
  it('takes one @, a dot in the domain and no spaces', () => {
    for (const good of ['ama@example.com', 'a.b+c@mail.example.com.gh']) assert.ok(EMAIL_PATTERN.test(good), good);
    for (const bad of ['ama', 'ama@example', 'a b@example.com', 'a@b@example.com', '@example.com'])
      assert.ok(!EMAIL_PATTERN.test(bad), bad);
  });
});
