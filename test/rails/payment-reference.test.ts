// The payment reference of a Live bank transfer (issue 16, docs/bank-statements.md): its format and check
// character, and the lenient finder that reads it from a narration however it was typed.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  findPaymentReference,
  findPaymentReferences,
  isPaymentReference,
  newPaymentReference,
  PAYMENT_REFERENCE_ALPHABET,
  PAYMENT_REFERENCE_PATTERN,
} from '../../src/rails/bank-transfer/index.ts';

describe('the payment reference', () => {
  it('is SK and 8 characters from an alphabet without 0, O, 1, I or L, with a check character; 2,000 drawn are all different', () => {
    assert.equal(PAYMENT_REFERENCE_ALPHABET.length, 31);
    for (const confusable of '01OIL') assert.ok(!PAYMENT_REFERENCE_ALPHABET.includes(confusable), confusable);
    const drawn = new Set<string>();
    for (let i = 0; i < 2_000; i++) {
      const reference = newPaymentReference();
      assert.match(reference, /^SK[23456789ABCDEFGHJKMNPQRSTUVWXYZ]{8}$/);
      assert.match(reference, PAYMENT_REFERENCE_PATTERN);
      assert.ok(isPaymentReference(reference), reference);
      drawn.add(reference);
    }
    assert.equal(drawn.size, 2_000);
  });

  it('fails its check after any one character is mistyped or any two characters are swapped', () => {
    for (let n = 0; n < 20; n++) {
      const reference = newPaymentReference();
      const body = reference.slice(2);
      for (let i = 0; i < body.length; i++) {
        for (const other of PAYMENT_REFERENCE_ALPHABET) {
          if (other === body[i]) continue;
          const typo = `SK${body.slice(0, i)}${other}${body.slice(i + 1)}`;
          assert.equal(isPaymentReference(typo), false, `${reference} -> ${typo}`);
          assert.deepEqual(findPaymentReferences(`TRF ${typo}`), [], `${typo} is not found in a narration`);
        }
        for (let j = i + 1; j < body.length; j++) {
          if (body[i] === body[j]) continue;
          const chars = [...body];
          [chars[i], chars[j]] = [chars[j]!, chars[i]!];
          assert.equal(
            isPaymentReference(`SK${chars.join('')}`),
            false,
            `${reference}: positions ${i} and ${j} swapped`,
          );
        }
      }
    }
  });

  it('is found in a narration typed in lower case, with spaces or dashes, run into other words, or without its SK', () => {
    const reference = newPaymentReference();
    const body = reference.slice(2);
    for (const narration of [
      `TRF FROM KOFI MENSAH ${reference} SCHOOL FEES`,
      `mobile transfer ${reference.toLowerCase()}`,
      `sk ${body.slice(0, 4).toLowerCase()}-${body.slice(4).toLowerCase()} fees`,
      `S.K. ${body.split('').join(' ')}`,
      `FEES${reference}KOFI`,
      `IB TRF/${reference}/ACCRA`,
      `school fees ${body}`,
      // Words around a split reference are chosen so that no other word, or pair of adjacent words, is 8
      // characters long: such a pair passes the check character 1 time in 31 and would be a second candidate
      // (as it would be on a real statement; the importer keeps only stored references).
      `school fee ${body.slice(0, 4)} ${body.slice(4)} terms 2`,
    ]) {
      assert.deepEqual(findPaymentReferences(narration), [reference], narration);
      assert.equal(findPaymentReference(narration), reference, narration);
    }
    const second = newPaymentReference();
    assert.deepEqual(findPaymentReferences(`${reference} AND ${second}`), [reference, second]);
    assert.deepEqual(findPaymentReferences(`${reference} ${reference.toLowerCase()}`), [reference], 'each once');
    for (const narration of [
      '',
      'SALARY MARCH 2026',
      'TRF FROM KOFI',
      'SK',
      'SK12345678',
      'ASKED FOR REFUND 0244123456',
    ])
      assert.deepEqual(findPaymentReferences(narration), [], narration);
  });
});
