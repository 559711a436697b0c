// Reads of payouts, recipients and evidence for the dashboard pages and the API routes, each scoped to a
// merchant and environment (a foreign id reads as missing: null; the API's getPayout answers 404). Pages
// and routes call these, not the store.
import type { ApiPrincipal, Environment } from '../lib/environment.ts';
import type { Queryable } from '../db/index.ts';
import { errors } from '../lib/errors.ts';
import { listActiveBanks } from './bank-store.ts';
import * as evidenceStore from './evidence-store.ts';
import * as payoutStore from './payout-store.ts';
import * as recipientStore from './recipient-store.ts';
import { PAYOUT_LIST_LIMIT_DEFAULT, PAYOUT_LIST_LIMIT_MAX, PAYOUT_LIST_PAGE_MAX } from './model.ts';
import { toPayoutResponse } from './presenters.ts';
import type { PayoutRow } from './payout-store.ts';
import type { EvidenceRow } from './evidence-store.ts';
import type { RecipientRow } from './recipient-store.ts';

export type { EvidenceRow } from './evidence-store.ts';
export type { PayoutExportRow, PayoutRow } from './payout-store.ts';
export type { RecipientRow } from './recipient-store.ts';

export const findPayout = (db: Queryable, merchantId: string, environment: Environment, id: string) =>
  payoutStore.findPayout(db, merchantId, environment, id);

export const recentPayouts = (db: Queryable, merchantId: string, environment: Environment, limit: number) =>
  payoutStore.listRecentPayouts(db, merchantId, environment, limit);

export const findRecipient = (db: Queryable, merchantId: string, environment: Environment, id: string) =>
  recipientStore.findRecipient(db, merchantId, environment, id);

export const listRecipients = (db: Queryable, merchantId: string, environment: Environment) =>
  recipientStore.listRecipients(db, merchantId, environment);

/** A file attached to a payout the caller already holds (the payout's owner was checked when it was found). */
export const findEvidence = (db: Queryable, payoutId: string, evidenceId: string) =>
  evidenceStore.findEvidence(db, payoutId, evidenceId);

/** The banks a recipient's account may be at. */
export const activeBanks = (db: Queryable) => listActiveBanks(db);

/** Payouts created in [from, before), oldest first, read in keyset pages of pageRows (a CSV export's rows). */
export function payoutsCreatedBetween(
  db: Queryable,
  merchantId: string,
  environment: Environment,
  from: Date,
  before: Date,
  pageRows: number,
): AsyncIterable<payoutStore.PayoutExportRow> {
  return {
    async *[Symbol.asyncIterator]() {
      let after: { createdAt: Date; id: string } | null = null;
      for (;;) {
        const rows = await payoutStore.payoutsCreatedBetween(
          db,
          merchantId,
          environment,
          { from, before, after },
          pageRows,
        );
        yield* rows;
        if (rows.length < pageRows) return;
        const last = rows.at(-1)!;
        after = { createdAt: last.created_at, id: last.id };
      }
    },
  };
}

/** The API's payout: the caller's, else 404. */
export async function getPayout(db: Queryable, principal: ApiPrincipal, id: string) {
  const payout = await payoutStore.findPayout(db, principal.merchantId, principal.environment, id);
  if (!payout) throw errors.notFound('Payout');
  return payout;
}

/** The API list's page (from 1) and limit, brought into range. */
export function clampListParams(query: { page?: number; limit?: number }) {
  const page = Math.max(1, Math.min(PAYOUT_LIST_PAGE_MAX, Math.trunc(query.page ?? 1) || 1));
  const limit = Math.max(1, Math.min(PAYOUT_LIST_LIMIT_MAX, Math.trunc(query.limit ?? PAYOUT_LIST_LIMIT_DEFAULT)));
  return { page, limit };
}

/** One page of the API's payout list, newest first, optionally one client_reference. */
export async function listPayouts(
  db: Queryable,
  principal: ApiPrincipal,
  query: { page?: number; limit?: number; reference?: string },
) {
  const { page, limit } = clampListParams(query);
  const { rows, total } = await payoutStore.listPayouts(
    db,
    principal.merchantId,
    principal.environment,
    page,
    limit,
    query.reference ?? null,
  );
  return { payouts: await Promise.all(rows.map((row) => payoutResponse(db, row))), page, limit, total };
}

/**
 * A payout as the API and the dashboard show it: its recipient and evidence are read unless the caller
 * already has them (known: a payout just created has its recipient and no evidence yet).
 */
export async function payoutResponse(
  db: Queryable,
  p: PayoutRow,
  known: { recipient?: RecipientRow; evidence?: EvidenceRow[] } = {},
) {
  const recipient =
    known.recipient ?? (await recipientStore.findRecipient(db, p.merchant_id, p.environment, p.recipient_id));
  const evidence = known.evidence ?? (await evidenceStore.listEvidence(db, p.id));
  return toPayoutResponse(p, recipient, evidence);
}
