// Receipt numbers (issue 35): their shape, and that the check character catches what a person gets wrong when
// reading one out or typing it: one wrong character, or two neighbouring characters swapped (fast-check).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import {
  checkCharacter,
  isValidReceiptNumber,
  newReceiptNumber,
  normaliseReceiptNumber,
  RECEIPT_ALPHABET,
  RECEIPT_NUMBER_LENGTH,
  RECEIPT_RANDOM_LENGTH,
  spacedReceiptNumber,
} from '../../src/checkout/receipt-number.ts';

const base32Char = fc.constantFrom(...RECEIPT_ALPHABET);
const body = fc
  .array(base32Char, { minLength: RECEIPT_RANDOM_LENGTH, maxLength: RECEIPT_RANDOM_LENGTH })
  .map((c) => c.join(''));
const receiptNumber = body.map((b) => b + checkCharacter(b));

describe('receipt numbers', () => {
  it('a new number has 9 characters of Crockford base32 (no I, L, O, U) and passes its check', () => {
    for (let i = 0; i < 2000; i++) {
      const number = newReceiptNumber();
      assert.equal(number.length, RECEIPT_NUMBER_LENGTH);
      assert.ok(number.length <= 10);
      assert.match(number, /^[0-9A-HJKMNP-TV-Z]+$/);
      assert.ok(isValidReceiptNumber(number), number);
    }
  });

  it('new numbers do not repeat over many draws', () => {
    const seen = new Set(Array.from({ length: 20_000 }, newReceiptNumber));
    assert.equal(seen.size, 20_000);
  });

  it('any one wrong character is caught', () => {
    fc.assert(
      fc.property(receiptNumber, fc.nat(RECEIPT_NUMBER_LENGTH - 1), base32Char, (number, at, char) => {
        fc.pre(number[at] !== char);
        const wrong = number.slice(0, at) + char + number.slice(at + 1);
        return !isValidReceiptNumber(wrong);
      }),
      { numRuns: 5000 },
    );
  });

  it('any two neighbouring characters swapped are caught, the check character included', () => {
    fc.assert(
      fc.property(receiptNumber, fc.nat(RECEIPT_NUMBER_LENGTH - 2), (number, at) => {
        fc.pre(number[at] !== number[at + 1]);
        const swapped = number.slice(0, at) + number[at + 1] + number[at] + number.slice(at + 2);
        return !isValidReceiptNumber(swapped);
      }),
      { numRuns: 5000 },
    );
  });

  it('every single-character error of one number is caught (exhaustively)', () => {
    const number = newReceiptNumber();
    for (let at = 0; at < number.length; at++)
      for (const char of RECEIPT_ALPHABET)
        if (char !== number[at])
          assert.ok(!isValidReceiptNumber(number.slice(0, at) + char + number.slice(at + 1)), `${number} at ${at}`);
  });

  it('a number read out or typed loosely normalises back to itself', () => {
    fc.assert(
      fc.property(receiptNumber, (number) => {
        const loose = spacedReceiptNumber(number)
          .toLowerCase()
          .replace(/0/g, 'o')
          .replace(/1/g, 'l')
          .replace(/ /g, '-');
        return normaliseReceiptNumber(loose) === number && isValidReceiptNumber(normaliseReceiptNumber(loose));
      }),
    );
    assert.equal(normaliseReceiptNumber(' k7m 2qx-9d4 '), 'K7M2QX9D4');
    assert.equal(normaliseReceiptNumber('OIL'), '011');
  });

  it('text of another length or outside the alphabet is not a receipt number', () => {
    const number = newReceiptNumber();
    assert.ok(!isValidReceiptNumber(number.slice(1)));
    assert.ok(!isValidReceiptNumber(`${number}0`));
    assert.ok(!isValidReceiptNumber(number.toLowerCase().replace(/[0-9]/g, 'a')));
    assert.ok(!isValidReceiptNumber(`U${number.slice(1)}`));
    assert.ok(!isValidReceiptNumber(''));
  });

  it('is spaced in groups of three for reading out', () => {
    assert.equal(spacedReceiptNumber('K7M2QX9D4'), 'K7M 2QX 9D4');
  });
});
