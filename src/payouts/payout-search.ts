// The Payouts page's one search box (issue 36, item 3): what a fragment a merchant types can be. As on the Payments
// page (checkout/session-search.ts) a fragment is rarely one thing for sure ("4567" is the last four digits of an
// account or wallet and also GHS 4,567.00), so it is read as every kind it can be and the store ORs them. Pure:
// payout-search-store.ts turns the terms with the filters into SQL.
import { normaliseGhanaPhone, parseCedis } from '../lib/ghana.ts';
import { ACCOUNT_NUMBER_PATTERN } from './model.ts';

/** The longest search text read; a longer one is cut (no reference, name or account number is longer). */
export const PAYOUT_SEARCH_LENGTH_MAX = 100;

/** Every kind a search fragment can be; null where it cannot be that kind. */
export interface PayoutSearchTerms {
  /** A payout id (po_…), exact, lower case. */
  payoutId: string | null;
  /** The payout's reference or client_reference, exact, as typed. */
  reference: string | null;
  /** The beginning of the client_reference, as typed. */
  clientReferencePrefix: string | null;
  /** Text inside the recipient's account name (case ignored). */
  recipientName: string | null;
  /** A bank account number, all its digits. */
  accountNumber: string | null;
  /** A wallet phone as stored (+233…), exact. */
  phone: string | null;
  /** The last four digits of an account number or a wallet phone. */
  last4: string | null;
  /** The payout's amount in pesewas (not its fee). */
  amountMinor: number | null;
}

const NO_TERMS: PayoutSearchTerms = {
  payoutId: null,
  reference: null,
  clientReferencePrefix: null,
  recipientName: null,
  accountNumber: null,
  phone: null,
  last4: null,
  amountMinor: null,
};

/** The fragment as read: trimmed, inner spaces collapsed, at most PAYOUT_SEARCH_LENGTH_MAX characters. */
export const cleanPayoutFragment = (q: string | null | undefined): string =>
  (q ?? '').replace(/\s+/g, ' ').trim().slice(0, PAYOUT_SEARCH_LENGTH_MAX).trim();

/** An amount as a person types it ("500", "500.00", "GHS 1,250.50", "₵20"), in pesewas; null when not one. */
function amountOf(text: string): number | null {
  const amount = parseCedis(text.replace(/^(?:GHS|GH₵|₵|GHC)\s*/i, ''));
  return amount !== null && amount > 0 ? amount : null;
}

/** Every kind of thing `q` can be, or null for an empty search. */
export function interpretPayoutFragment(q: string | null | undefined): PayoutSearchTerms | null {
  const text = cleanPayoutFragment(q);
  if (text === '') return null;
  const terms: PayoutSearchTerms = { ...NO_TERMS };
  if (/^po_[0-9a-z]{6,60}$/i.test(text)) terms.payoutId = text.toLowerCase();
  if (!text.includes(' ')) {
    // A client_reference is whatever the merchant chose: any single-word fragment may be one or begin one.
    terms.reference = text;
    terms.clientReferencePrefix = text;
  }
  const digits = text.replace(/[\s-]/g, '');
  // Four digits are the last four (an account of four digits is found by them too).
  if (/^\d{4}$/.test(digits)) terms.last4 = digits;
  else if (ACCOUNT_NUMBER_PATTERN.test(digits)) terms.accountNumber = digits;
  terms.phone = normaliseGhanaPhone(text);
  terms.amountMinor = amountOf(text);
  // A name has a letter; an id is not a name.
  if (!terms.payoutId && /\p{L}/u.test(text)) terms.recipientName = text;
  return terms;
}

/** The kinds a fragment is searched as, in words (the page says what it looked for). */
export function payoutSearchedKinds(terms: PayoutSearchTerms): string[] {
  const kinds: string[] = [];
  if (terms.payoutId) kinds.push('payout id');
  if (terms.reference) kinds.push('reference');
  if (terms.recipientName) kinds.push('recipient name');
  if (terms.accountNumber) kinds.push('account number');
  if (terms.phone) kinds.push('wallet phone');
  if (terms.last4) kinds.push('account ending');
  if (terms.amountMinor !== null) kinds.push('amount');
  return kinds;
}
