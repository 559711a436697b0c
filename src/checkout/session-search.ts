// The Payments page's one search box (issue 36): what a fragment a customer reads out over the phone can be.
// A fragment is rarely one thing for sure ("4567" is the last four digits of a phone and also GHS 4,567.00),
// so it is read as every kind it can be and the store ORs them. Pure: payments-list.ts hands the terms with the
// filters to the SQL in session-search-store.ts.
import { normaliseGhanaPhone, parseCedis } from '../lib/ghana.ts';
import { isValidReceiptNumber, normaliseReceiptNumber } from './receipt-number.ts';

/** The longest search text read; a longer one is cut (no reference, name or phone is longer). */
export const SESSION_SEARCH_LENGTH_MAX = 100;
/** Words of a customer name searched (each a word prefix, all required); the rest are ignored. */
export const NAME_SEARCH_WORDS_MAX = 4;

/** Every kind a search fragment can be; null where it cannot be that kind. */
export interface SessionSearchTerms {
  /** A session id (cs_…), exact. */
  sessionId: string | null;
  /** A receipt number as stored (upper case, check character valid), exact. */
  receiptNumber: string | null;
  /** The invoice reference's beginning (or all of it), as typed. */
  invoiceRefPrefix: string | null;
  /** The customer name's words, lower case: each must begin a word of the name. */
  nameWords: string[] | null;
  /** The payer's phone as stored (+233…), exact. */
  phone: string | null;
  /** The last four digits of the payer's phone. */
  phoneLast4: string | null;
  /** The session's amount in pesewas (what the merchant asked; a payer-borne fee is not in it). */
  amountMinor: number | null;
  /** What the provider calls the payment (provider_reference or provider_transaction_id) or our attempt id, exact. */
  reference: string | null;
}

const NO_TERMS: SessionSearchTerms = {
  sessionId: null,
  receiptNumber: null,
  invoiceRefPrefix: null,
  nameWords: null,
  phone: null,
  phoneLast4: null,
  amountMinor: null,
  reference: null,
};

/** The fragment as read: trimmed, inner spaces collapsed, at most SESSION_SEARCH_LENGTH_MAX characters. */
export const cleanFragment = (q: string | null | undefined): string =>
  (q ?? '').replace(/\s+/g, ' ').trim().slice(0, SESSION_SEARCH_LENGTH_MAX).trim();

/**
 * The name words of a fragment, lower case, split where to_tsvector splits them; null unless it is letters with
 * spaces, apostrophes, dots or hyphens (a fragment with a digit is a reference, an amount or a phone, not a name).
 */
function nameWordsOf(text: string): string[] | null {
  if (!/^[\p{L}\s'’.-]+$/u.test(text) || !/\p{L}/u.test(text)) return null;
  const words = text
    .toLowerCase()
    .split(/[^\p{L}\p{N}]+/u)
    .filter((word) => word !== '')
    .slice(0, NAME_SEARCH_WORDS_MAX);
  return words.length > 0 ? words : null;
}

/** An amount as a person types it ("500", "500.00", "GHS 1,250.50", "₵20"), in pesewas; null when not one. */
function amountOf(text: string): number | null {
  const amount = parseCedis(text.replace(/^(?:GHS|GH₵|₵|GHC)\s*/i, ''));
  return amount !== null && amount > 0 ? amount : null;
}

/** Every kind of thing `q` can be, or null for an empty search. */
export function interpretFragment(q: string | null | undefined): SessionSearchTerms | null {
  const text = cleanFragment(q);
  if (text === '') return null;
  const terms: SessionSearchTerms = { ...NO_TERMS };
  // An invoice reference is whatever the merchant chose: any fragment may begin one.
  terms.invoiceRefPrefix = text;
  const single = !text.includes(' ');
  if (/^cs_[0-9a-z]{10,40}$/i.test(text)) terms.sessionId = text.toLowerCase();
  // References have no spaces; the provider's own spelling is kept (they are compared exactly).
  if (single) terms.reference = text;
  const receipt = normaliseReceiptNumber(text);
  if (isValidReceiptNumber(receipt)) terms.receiptNumber = receipt;
  terms.phone = normaliseGhanaPhone(text);
  if (/^\d{4}$/.test(text)) terms.phoneLast4 = text;
  terms.amountMinor = amountOf(text);
  if (!terms.sessionId && !terms.phone) terms.nameWords = nameWordsOf(text);
  return terms;
}

/** The kinds a fragment is searched as, in words (the page says what it looked for). */
export function searchedKinds(terms: SessionSearchTerms): string[] {
  const kinds: string[] = [];
  if (terms.sessionId) kinds.push('session id');
  if (terms.receiptNumber) kinds.push('receipt number');
  if (terms.invoiceRefPrefix) kinds.push('invoice reference');
  if (terms.nameWords) kinds.push('customer name');
  if (terms.phone) kinds.push('phone');
  if (terms.phoneLast4) kinds.push('phone ending');
  if (terms.amountMinor !== null) kinds.push('amount');
  if (terms.reference) kinds.push('provider reference');
  return kinds;
}
