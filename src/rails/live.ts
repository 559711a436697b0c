// Live routing: which configured provider serves a rail, a Mobile Money network or a payout recipient.
// Providers are tried in LIVE_PROVIDER_ORDER; the next one only when the first refused before accepting
// (the attempt flow decides that, src/checkout/attempts.ts). An existing attempt or payout always goes back
// to the provider it was recorded with (`byName`), whatever the order says today.
import type { MomoNetwork } from '../lib/ghana.ts';
import type { PayoutRail } from './payouts.ts';
import type { RefundRail } from './refunds.ts';
import type { ProviderReports } from './reports.ts';
import type { Rail } from './registry.ts';
import type { CollectionRail } from './types.ts';

export interface LiveProviderEntry {
  /** The provider's id in LIVE_PROVIDER_ORDER (mtn_momo, paystack) or its own name for providers outside the order. */
  id: string;
  collection?: CollectionRail | null;
  payouts?: PayoutRail | null;
  /** Refunds of the payments this provider took. */
  refunds?: RefundRail | null;
}

/** Paystack's webhook plumbing (src/rails/paystack/): signature check and event parsing. */
export interface PaystackWebhooks {
  verifyWebhook(rawBody: Buffer | string, signatureHeader: string | undefined): boolean;
  parseWebhook(body: unknown): {
    kind: 'charge' | 'transfer' | 'refund' | 'other';
    event: string;
    reference: string | null;
    eventKey: string;
  };
}

/** MTN MoMo's callback plumbing (src/rails/mtn-momo/): which transaction an unsigned callback names. */
export interface MtnCallbacks {
  parseCallback(
    body: unknown,
    query: Record<string, string | undefined>,
  ): { referenceId: string | null; externalId: string | null };
}

export interface ProviderPlumbing {
  paystack?: PaystackWebhooks | null;
  mtnMomo?: MtnCallbacks | null;
  /** Providers' own reports of their transactions, by provider id (only those with a list API). */
  reports?: Partial<Record<string, ProviderReports | null>>;
}

export type PayoutTarget = { accountType: 'bank' | 'momo'; network: string | null };

const servesCollection = (adapter: CollectionRail, rail: Rail, network: MomoNetwork | null): boolean => {
  if (!adapter.serves) return true;
  if (!adapter.serves.rails.includes(rail)) return false;
  if (network === null || !adapter.serves.networks) return true;
  return adapter.serves.networks.includes(network);
};

const servesPayout = (adapter: PayoutRail, target: PayoutTarget): boolean => {
  if (!adapter.serves) return true;
  if (target.accountType === 'bank') return adapter.serves.bank;
  return target.network !== null && (adapter.serves.networks as readonly string[]).includes(target.network);
};

export class LiveProviders {
  private readonly entries: LiveProviderEntry[];

  /** Entries in the order they are tried (LIVE_PROVIDER_ORDER first, then providers outside the order). */
  constructor(
    entries: LiveProviderEntry[],
    readonly plumbing: ProviderPlumbing = {},
  ) {
    this.entries = entries;
  }

  static none(): LiveProviders {
    return new LiveProviders([]);
  }

  /** These providers with a payout provider tried first for every recipient (the rehearsal simulator). */
  withPayoutsFirst(payouts: PayoutRail): LiveProviders {
    return new LiveProviders([{ id: payouts.provider, payouts }, ...this.entries], this.plumbing);
  }

  /** The enabled providers' ids, in the order they are tried. */
  ids(): string[] {
    return this.entries.map((entry) => entry.id);
  }

  /** The entry of a provider id (its webhook and callback plumbing live on it). */
  entry(id: string): LiveProviderEntry | undefined {
    return this.entries.find((entry) => entry.id === id);
  }

  /** The collection adapters able to take this rail (and network), in the order they are tried. */
  collectionFor(rail: Rail, network: MomoNetwork | null = null): CollectionRail[] {
    return this.entries.flatMap((entry) =>
      entry.collection && servesCollection(entry.collection, rail, network) ? [entry.collection] : [],
    );
  }

  /** The adapter an attempt was recorded with. */
  collectionByName(provider: string): CollectionRail | null {
    return this.entries.find((entry) => entry.collection?.provider === provider)?.collection ?? null;
  }

  /** Whether any provider collects this rail (any network). */
  offersRail(rail: Rail): boolean {
    return this.collectionFor(rail).length > 0;
  }

  /** The Mobile Money networks some provider collects from, in the order payers see them. */
  networksFor(rail: Rail, all: readonly MomoNetwork[]): MomoNetwork[] {
    return all.filter((network) => this.collectionFor(rail, network).length > 0);
  }

  payoutsFor(target: PayoutTarget): PayoutRail[] {
    return this.entries.flatMap((entry) =>
      entry.payouts && servesPayout(entry.payouts, target) ? [entry.payouts] : [],
    );
  }

  payoutByName(provider: string): PayoutRail | null {
    return this.entries.find((entry) => entry.payouts?.provider === provider)?.payouts ?? null;
  }

  /** The refund adapter of the provider a payment was taken by (a refund always goes back through it). */
  refundsByName(provider: string): RefundRail | null {
    return this.entries.find((entry) => entry.refunds?.provider === provider)?.refunds ?? null;
  }

  /** Whether Live payouts can go anywhere at all. */
  get paysOut(): boolean {
    return this.entries.some((entry) => entry.payouts);
  }

  /** Whether the payout networks and banks some provider pays. */
  paysTo(target: PayoutTarget): boolean {
    return this.payoutsFor(target).length > 0;
  }
}
