// The Paystack provider: collection (Mobile Money and card), payouts (bank and wallet transfers), refunds
// and webhook checks, over one client. Protocol notes and their sources: docs/providers/paystack.md.
import type { PayoutRail } from '../payouts.ts';
import type { RefundRail } from '../refunds.ts';
import type { CollectionRail } from '../types.ts';
import { PaystackBanks } from './banks.ts';
import { PaystackClient, type PaystackSettings } from './client.ts';
import { createCollection } from './collection.ts';
import { createRefunds, refund, type RefundInput, type RefundResult } from './refunds.ts';
import { listAllTransactions } from './reports.ts';
import type { ProviderReports } from '../reports.ts';
import { createPayouts } from './transfers.ts';
import { parseWebhook, verifyWebhook, type PaystackWebhook } from './webhooks.ts';

export type { PaystackSettings } from './client.ts';
export type { PaystackWebhook } from './webhooks.ts';
export type { RefundInput, RefundResult } from './refunds.ts';
export { chargeReference, transferReference } from './references.ts';

export interface Paystack {
  collection: CollectionRail;
  payouts: PayoutRail;
  /** Refunds of its own charges (the Live refunds' rail). */
  refunds: RefundRail;
  /** Queues a refund of a paid charge; not idempotent at Paystack (see refunds.ts). */
  refund(input: RefundInput): Promise<RefundResult>;
  /** x-paystack-signature against the raw body, in constant time. */
  verifyWebhook(rawBody: Buffer | string, signatureHeader: string | undefined): boolean;
  parseWebhook(body: unknown): PaystackWebhook;
  /** Its transactions and transfers of a window, every page (the daily reconciliation). */
  reports: ProviderReports;
}

export function createPaystack(settings: PaystackSettings): Paystack {
  const client = new PaystackClient(settings);
  return {
    collection: createCollection(client),
    payouts: createPayouts(client, new PaystackBanks(client)),
    refunds: createRefunds(client),
    refund: (input) => refund(client, input),
    verifyWebhook: (rawBody, signatureHeader) => verifyWebhook(settings.secretKey, rawBody, signatureHeader),
    parseWebhook,
    reports: { transactions: (window) => listAllTransactions(client, window) },
  };
}
