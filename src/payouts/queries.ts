// Reads of payouts, recipients and evidence for the dashboard pages and the API routes, each scoped to a
// merchant and environment (a foreign id reads as missing: null). Pages and routes call these, not the store.
import type { Environment } from '../accounts/model.ts';
import type { Queryable } from '../db/index.ts';
import { listActiveBanks } from '../ops/store.ts';
import * as evidenceStore from './evidence-store.ts';
import * as payoutStore from './payout-store.ts';
import * as recipientStore from './recipient-store.ts';

export type { EvidenceRow } from './evidence-store.ts';
export type { PayoutRow } from './payout-store.ts';
export type { RecipientRow } from './recipient-store.ts';

export const findPayout = (db: Queryable, merchantId: string, environment: Environment, id: string) => payoutStore.findPayout(db, merchantId, environment, id);

/** One page (from 1) of the merchant's payouts, newest first, and how many there are. */
export const listPayoutsPage = (db: Queryable, merchantId: string, environment: Environment, page: number, pageSize: number) =>
  payoutStore.listPayouts(db, merchantId, environment, page, pageSize, null);

export const recentPayouts = (db: Queryable, merchantId: string, environment: Environment, limit: number) => payoutStore.listRecentPayouts(db, merchantId, environment, limit);

export const findRecipient = (db: Queryable, merchantId: string, environment: Environment, id: string) => recipientStore.findRecipient(db, merchantId, environment, id);

export const listRecipients = (db: Queryable, merchantId: string, environment: Environment) => recipientStore.listRecipients(db, merchantId, environment);

/** A file attached to a payout the caller already holds (the payout's owner was checked when it was found). */
export const findEvidence = (db: Queryable, payoutId: string, evidenceId: string) => evidenceStore.findEvidence(db, payoutId, evidenceId);

/** The banks a recipient's account may be at. */
export const activeBanks = (db: Queryable) => listActiveBanks(db);
