// Which Paystack code pays which account. Mobile Money networks have fixed, published codes; banks have
// Paystack's own codes, listed by GET /bank?currency=GHS, which no public source we could read writes down.
//
// So banks are matched by name, not by a table of codes: the table below says how Paystack's list names each
// of our banks (shared/GHANA.md's codes), and the code is read from the live list (cached for
// BANK_LIST_CACHE_MS). A copied code table would go stale silently and a wrong code sends money to another
// bank; a name that matches no entry, or more than one, is refused instead ('bank_not_supported'), so a
// renamed bank stops payouts to it until this table is corrected rather than guessing.
import type { MomoNetwork } from '../../lib/ghana.ts';
import { field, text } from '../provider-http.ts';
import { refusal, type PaystackClient } from './client.ts';

/** Network -> provider of a Mobile Money charge: mtn, vod (Vodafone, now Telecel), atl (AirtelTigo, now AT) [SNIP mobile.js; list-telcos.js]. */
export const CHARGE_PROVIDER: Record<MomoNetwork, string> = { mtn: 'mtn', telecel: 'vod', at: 'atl' };

/** Network -> bank_code of a mobile_money recipient and name enquiry: MTN, VOD, ATL [SNIP doc/transfers/single/list-telcos.js]. */
export const MOMO_BANK_CODE: Record<MomoNetwork, string> = { mtn: 'MTN', telecel: 'VOD', at: 'ATL' };

/**
 * Our bank code -> the start of its name in Paystack's list, after normalising (lower case, punctuation to
 * spaces). Former names are accepted (Absa was Barclays, Republic was HFC).
 */
export const PAYSTACK_BANK_NAMES: Readonly<Record<string, RegExp>> = {
  GCB: /^gcb\b/,
  ECO: /^ecobank\b/,
  STB: /^stanbic\b/,
  ABS: /^(absa|barclays)\b/,
  SCB: /^standard chartered\b/,
  FBL: /^fidelity\b/,
  CAL: /^cal ?bank\b/,
  ZEN: /^zenith\b/,
  UBA: /^(united bank (for|of) africa|uba)\b/,
  ACC: /^access\b/,
  RBG: /^(republic|hfc)\b/,
  ADB: /^(agricultural development|adb)\b/,
  PBL: /^prudential\b/,
  CBG: /^consolidated\b/,
  GTB: /^(guaranty trust|gt ?bank)\b/,
};

/** How long Paystack's bank list is trusted before it is read again. */
export const BANK_LIST_CACHE_MS = 6 * 60 * 60 * 1000;
/** Entries asked for per page of GET /bank (paging params perPage/page [OAS /bank]). */
const BANK_LIST_PER_PAGE = 100;
/** Pages read at most: Ghana has a few dozen banks, so more means the answer is not what we think. */
const BANK_LIST_PAGES_MAX = 5;

interface PaystackBank {
  name: string;
  code: string;
}

const normalise = (name: string) =>
  name
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, ' ')
    .trim();

export class PaystackBanks {
  private cached: { at: number; banks: PaystackBank[] } | null = null;
  private loading: Promise<PaystackBank[]> | null = null;

  constructor(
    private readonly client: PaystackClient,
    private readonly now: () => number = Date.now,
  ) {}

  /** Paystack's code for one of our bank codes; null when the list has no single bank of that name. */
  async codeFor(ourCode: string): Promise<string | null> {
    const pattern = PAYSTACK_BANK_NAMES[ourCode.toUpperCase()];
    if (!pattern) return null;
    const found = (await this.list()).filter((bank) => pattern.test(normalise(bank.name)));
    return found.length === 1 ? found[0]!.code : null;
  }

  private async list(): Promise<PaystackBank[]> {
    if (this.cached && this.now() - this.cached.at < BANK_LIST_CACHE_MS) return this.cached.banks;
    // One read at a time: concurrent payouts share it.
    this.loading ??= this.load().finally(() => (this.loading = null));
    return this.loading;
  }

  private async load(): Promise<PaystackBank[]> {
    const banks: PaystackBank[] = [];
    for (let page = 1; page <= BANK_LIST_PAGES_MAX; page++) {
      // No `type` filter: the spec spells it "ghipps" on /bank and "ghipss" on recipients [OAS], so the
      // mobile_money entries are dropped here instead.
      const answer = await this.client.call('GET', `/bank?currency=GHS&perPage=${BANK_LIST_PER_PAGE}&page=${page}`);
      if (answer.httpStatus !== 200 || !answer.ok || !Array.isArray(answer.data))
        throw refusal('the bank list', answer);
      for (const entry of answer.data as unknown[]) {
        const name = text(field(entry, 'name'));
        const code = text(field(entry, 'code'));
        const usable =
          field(entry, 'active') !== false &&
          field(entry, 'is_deleted') !== true &&
          field(entry, 'type') !== 'mobile_money';
        if (name && code && usable) banks.push({ name, code });
      }
      if (answer.data.length < BANK_LIST_PER_PAGE) break;
    }
    this.cached = { at: this.now(), banks };
    return banks;
  }
}

/** +233XXXXXXXXX -> 0XXXXXXXXX, the local form every Ghana sample uses ("0551234987" [SNIP mobile.js, transfer-recipient-momo.js]). */
export function localPhone(e164: string): string | null {
  const national = /^\+233(\d{9})$/.exec(e164)?.[1];
  return national ? `0${national}` : null;
}

export const isMomoNetwork = (value: string | null): value is MomoNetwork =>
  value !== null && Object.hasOwn(CHARGE_PROVIDER, value);
