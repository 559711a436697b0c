// A payer's receipt number (issue 35): short enough to read out on the phone, in Crockford's base32 (no I, L,
// O or U, so nothing is mistaken for another character), 8 random characters and a check character. Pure.
import { randomBytes } from 'node:crypto';

/** Crockford's base32 alphabet: a character's value is its index. */
export const RECEIPT_ALPHABET = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';
/** Random characters of a receipt number: 32^8 (about 10^12) numbers, so a collision is rare and retried. */
export const RECEIPT_RANDOM_LENGTH = 8;
/** The random characters and the check character. */
export const RECEIPT_NUMBER_LENGTH = RECEIPT_RANDOM_LENGTH + 1;

/**
 * The check is Damm's: the quasigroup x∘y = 2x + y over GF(32) (x^5 + x^2 + 1), which is totally
 * anti-symmetric since (c∘x)∘y = (c∘y)∘x gives 3(x + y) = 0, so x = y. Hence every single wrong character
 * and every swap of two neighbouring characters (the check character included) changes the result. In GF(2^5)
 * addition is XOR and doubling a shift that folds the 6th bit back.
 */
const double = (x: number) => (x & 0x10 ? ((x << 1) ^ 0x25) & 0x1f : x << 1);
const fold = (values: readonly number[]) => values.reduce((interim, value) => double(interim) ^ value, 0);

const valuesOf = (text: string): number[] | null => {
  const values = [...text].map((char) => RECEIPT_ALPHABET.indexOf(char));
  return values.includes(-1) ? null : values;
};

/** The check character of `body` (characters of the alphabet): what brings the fold back to 0. */
export function checkCharacter(body: string): string {
  const values = valuesOf(body);
  if (!values) throw new Error(`assertion failed: a receipt number's body is base32 (got ${body})`);
  return RECEIPT_ALPHABET[double(fold(values))]!;
}

/** A fresh receipt number, e.g. "K7M2QX9D4": 8 random characters and the check character. */
export function newReceiptNumber(): string {
  // 256 is a multiple of 32: each byte's low 5 bits are uniform.
  const body = [...randomBytes(RECEIPT_RANDOM_LENGTH)].map((byte) => RECEIPT_ALPHABET[byte & 0x1f]).join('');
  return body + checkCharacter(body);
}

/** True for a receipt number as stored: upper case, the right length, from the alphabet, with its check. */
export function isValidReceiptNumber(text: string): boolean {
  if (text.length !== RECEIPT_NUMBER_LENGTH) return false;
  const values = valuesOf(text);
  return values !== null && fold(values) === 0;
}

/**
 * A number as a person typed or read it, as stored: upper case, without spaces and dashes, O read as 0 and I
 * or L as 1 (Crockford's rule). Not checked: see isValidReceiptNumber.
 */
export const normaliseReceiptNumber = (input: string): string =>
  input.toUpperCase().replace(/[\s-]/g, '').replace(/O/g, '0').replace(/[IL]/g, '1');

/** The number the way a person reads it out: in groups of three ("K7M 2QX 9D4"). */
export const spacedReceiptNumber = (number: string): string => number.replace(/(.{3})(?=.)/g, '$1 ');
