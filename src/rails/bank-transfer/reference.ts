// The payment reference of a Live bank transfer: what the payer types into the transfer's narration so
// that the credit on our bank statement can be matched to their checkout (docs/bank-statements.md).
//
// Format: "SK" and 8 characters from a 31-character alphabet, e.g. SK4F7K9QXM: 7 random characters and a
// check character.
// - The alphabet has the digits 2-9 and the letters without I, L and O, so nothing read out over the phone
//   or copied from a screen can be taken for another character (0/O, 1/I/L), and case does not matter.
// - 7 random characters give 31^7 (about 27.5 billion) references: the unique index on stored references
//   refuses a repeat, and that stays rare enough for the life of the service (after a million bank
//   transfers, about one new reference in 27,000 would have to be drawn again).
// - The check character makes every reference's weighted sum of character values (weights 1 to 8) a
//   multiple of 31. 31 is prime and the weights differ, so any one mistyped character and any two swapped
//   characters give a reference that fails the check: a typo cannot land on another payer's checkout.
//   The importer then leaves the credit for an operator instead of paying the wrong checkout.
// - "SK" marks it in a narration full of other words and numbers; 10 characters fit every Ghanaian bank
//   app's narration field we know of.
import { randomInt } from 'node:crypto';

export const PAYMENT_REFERENCE_PREFIX = 'SK';
export const PAYMENT_REFERENCE_ALPHABET = '23456789ABCDEFGHJKMNPQRSTUVWXYZ';
/** Random characters after the prefix, before the check character. */
export const PAYMENT_REFERENCE_RANDOM_CHARS = 7;
/** Characters after the prefix: the random ones and the check character. */
export const PAYMENT_REFERENCE_BODY_CHARS = PAYMENT_REFERENCE_RANDOM_CHARS + 1;
export const PAYMENT_REFERENCE_LENGTH = PAYMENT_REFERENCE_PREFIX.length + PAYMENT_REFERENCE_BODY_CHARS;

const BASE = PAYMENT_REFERENCE_ALPHABET.length; // 31, a prime: see the check character above
/** The inverse of the check character's weight (8) modulo 31: 8 * 4 = 32 = 1 (mod 31). */
const CHECK_WEIGHT_INVERSE = 4;

/** A stored reference exactly: upper case, no separators, the check character right. */
export const PAYMENT_REFERENCE_PATTERN = new RegExp(
  `^${PAYMENT_REFERENCE_PREFIX}[${PAYMENT_REFERENCE_ALPHABET}]{${PAYMENT_REFERENCE_BODY_CHARS}}$`,
);

const alphabetIndex = (char: string): number => PAYMENT_REFERENCE_ALPHABET.indexOf(char);

/** The weighted sum of the body's characters (weight = position from 1), modulo 31. */
function weightedSum(body: string): number {
  let sum = 0;
  for (let i = 0; i < body.length; i++) sum += (i + 1) * alphabetIndex(body[i]!);
  return sum % BASE;
}

/** The check character that makes the weighted sum of the 7 random characters and itself a multiple of 31. */
function checkCharacter(random: string): string {
  const value = (((BASE - weightedSum(random)) % BASE) * CHECK_WEIGHT_INVERSE) % BASE;
  return PAYMENT_REFERENCE_ALPHABET[value]!;
}

/** Whether the 8 characters after the prefix are all from the alphabet and pass the check. */
function bodyIsValid(body: string): boolean {
  if (body.length !== PAYMENT_REFERENCE_BODY_CHARS) return false;
  for (const char of body) if (alphabetIndex(char) < 0) return false;
  return weightedSum(body) === 0;
}

/** A new random payment reference (unbiased: crypto.randomInt per character). */
export function newPaymentReference(): string {
  let random = '';
  for (let i = 0; i < PAYMENT_REFERENCE_RANDOM_CHARS; i++) random += PAYMENT_REFERENCE_ALPHABET[randomInt(BASE)];
  return `${PAYMENT_REFERENCE_PREFIX}${random}${checkCharacter(random)}`;
}

/** Whether the text is a payment reference exactly as stored (format and check character). */
export function isPaymentReference(text: string): boolean {
  return PAYMENT_REFERENCE_PATTERN.test(text) && bodyIsValid(text.slice(PAYMENT_REFERENCE_PREFIX.length));
}

/**
 * Every payment reference in a bank narration (or any text a payer or operator typed), in the order they
 * appear, each once. Payers type it in lower case, with spaces or dashes inside ("sk 4f7k-9qxm"), run it
 * into other words ("FEESSK4F7K9QXMKOFI"), or leave out the SK; bank narrations add their own words and
 * numbers around it. So: upper-case the text, look for SK followed by 8 characters with separators
 * (anything not a letter or digit) ignored; failing that, for a word, or two adjacent words, that is
 * exactly the 8 characters. Only references whose check character is right are returned, which keeps
 * chance strings out (1 in 31 of them would pass, and those still have to be a stored reference).
 */
export function findPaymentReferences(text: string): string[] {
  const upper = text.toUpperCase();
  const found: string[] = [];
  const add = (body: string) => {
    const reference = `${PAYMENT_REFERENCE_PREFIX}${body}`;
    if (bodyIsValid(body) && !found.includes(reference)) found.push(reference);
  };
  const compact = upper.replace(/[^A-Z0-9]+/g, '');
  for (
    let at = compact.indexOf(PAYMENT_REFERENCE_PREFIX);
    at >= 0;
    at = compact.indexOf(PAYMENT_REFERENCE_PREFIX, at + 1)
  ) {
    add(compact.slice(at + PAYMENT_REFERENCE_PREFIX.length, at + PAYMENT_REFERENCE_LENGTH));
  }
  if (found.length > 0) return found;
  // Without the prefix: whole words only (a window inside a longer word would be a guess).
  const words = upper.split(/[^A-Z0-9]+/).filter((word) => word !== '');
  for (let i = 0; i < words.length; i++) {
    if (words[i]!.length === PAYMENT_REFERENCE_BODY_CHARS) add(words[i]!);
    const pair = words[i]! + (words[i + 1] ?? '');
    if (i + 1 < words.length && pair.length === PAYMENT_REFERENCE_BODY_CHARS) add(pair);
  }
  return found;
}

/** The first payment reference in the text, or null (see findPaymentReferences). */
export const findPaymentReference = (text: string): string | null => findPaymentReferences(text)[0] ?? null;

/**
 * The references one edit away from a mistyped one in the text (one character changed, two neighbours
 * swapped, one left out or one added) whose check character is right: what the payer most likely meant.
 * The check character refuses every single change and swap, so a typo never passes for a reference; a
 * reference that does pass is never among its own neighbours. Only candidates written with the SK prefix
 * are widened (a bare 8-character word is too likely to be something else). Each once, in text order.
 */
export function nearPaymentReferences(text: string): string[] {
  const compact = text.toUpperCase().replace(/[^A-Z0-9]+/g, '');
  const near: string[] = [];
  const add = (body: string) => {
    const reference = `${PAYMENT_REFERENCE_PREFIX}${body}`;
    if (bodyIsValid(body) && !near.includes(reference)) near.push(reference);
  };
  const edits = (body: string) => {
    const n = PAYMENT_REFERENCE_BODY_CHARS;
    if (body.length === n) {
      for (let i = 0; i < n; i++)
        for (const char of PAYMENT_REFERENCE_ALPHABET)
          if (char !== body[i]) add(body.slice(0, i) + char + body.slice(i + 1));
      for (let i = 0; i + 1 < n; i++)
        if (body[i] !== body[i + 1]) add(body.slice(0, i) + body[i + 1] + body[i] + body.slice(i + 2));
    } else if (body.length === n + 1) {
      for (let i = 0; i <= n; i++) add(body.slice(0, i) + body.slice(i + 1));
    } else if (body.length === n - 1) {
      for (let i = 0; i <= body.length; i++)
        for (const char of PAYMENT_REFERENCE_ALPHABET) add(body.slice(0, i) + char + body.slice(i));
    }
  };
  for (
    let at = compact.indexOf(PAYMENT_REFERENCE_PREFIX);
    at >= 0;
    at = compact.indexOf(PAYMENT_REFERENCE_PREFIX, at + 1)
  ) {
    const after = compact.slice(at + PAYMENT_REFERENCE_PREFIX.length);
    // A character outside the alphabet (0, 1, I, L, O) is one edit like any other.
    const read = after.slice(0, PAYMENT_REFERENCE_BODY_CHARS + 1);
    if (bodyIsValid(read.slice(0, PAYMENT_REFERENCE_BODY_CHARS))) continue; // a right reference: nothing to suggest for it
    for (const length of [
      PAYMENT_REFERENCE_BODY_CHARS,
      PAYMENT_REFERENCE_BODY_CHARS + 1,
      PAYMENT_REFERENCE_BODY_CHARS - 1,
    ])
      if (read.length >= length) edits(read.slice(0, length));
  }
  return near;
}
