// What the API, the dashboard and webhook events show of recipients and payouts: shapes only, from rows the
// caller has read (queries.ts reads a payout's recipient and evidence; lifecycle.ts emits the events).
import type { EventInput } from '../events/outbox.ts';
import type { EvidenceRow } from './evidence-store.ts';
import { STATUS_LABELS, canCancel } from './model.ts';
import type { PayoutRow } from './payout-store.ts';
import type { RecipientRow } from './recipient-store.ts';

/** What made a payout (the CHECK on payouts.type, migration 039): the merchant, or its settlement schedule. */
export const PAYOUT_TYPES = ['manual', 'settlement'] as const satisfies readonly NonNullable<PayoutRow['type']>[];
export type PayoutType = (typeof PAYOUT_TYPES)[number];

export function toRecipientResponse(r: RecipientRow) {
  return {
    id: r.id,
    object: 'recipient' as const,
    account_type: r.account_type,
    bank_id: r.bank_id,
    bank_name: r.bank_name,
    account_number: r.account_number,
    network: r.network,
    phone: r.phone,
    account_name: r.account_name,
    verified: r.verification_status === 'verified',
    verification_status: r.verification_status,
    ...(r.rejection_reason ? { rejection_reason: r.rejection_reason } : {}),
    active: r.active,
    previous_version_id: r.previous_version_id,
    created_at: r.created_at.toISOString(),
  };
}

export function toPayoutPayload(
  p: Pick<
    PayoutRow,
    | 'id'
    | 'reference'
    | 'status'
    | 'amount_minor'
    | 'fee_minor'
    | 'currency'
    | 'bank_reference'
    | 'return_reference'
    | 'reconciliation_status'
  >,
) {
  return {
    id: p.id,
    reference: p.reference,
    status: p.status,
    amount_minor: p.amount_minor,
    fee_minor: p.fee_minor,
    currency: p.currency,
    bank_reference: p.bank_reference,
    return_reference: p.return_reference,
    reconciliation_status: p.reconciliation_status,
  };
}

/**
 * A settlement's period (issue 34): from the end of the previous settlement (null for the first) to its end;
 * null for a manual payout. Its balance transactions: GET /api/v1/balance/transactions?payout_id=.
 */
export function settlementOf(p: Pick<PayoutRow, 'type' | 'settlement_period_start' | 'settlement_period_end'>) {
  if (p.type !== 'settlement' || !p.settlement_period_end) return null;
  return {
    period_start: p.settlement_period_start ? p.settlement_period_start.toISOString() : null,
    period_end: p.settlement_period_end.toISOString(),
  };
}

/** A payout as the API and the dashboard show it, with its recipient (null when gone) and evidence files. */
export function toPayoutResponse(p: PayoutRow, recipient: RecipientRow | null, evidence: readonly EvidenceRow[]) {
  return {
    ...toPayoutPayload(p),
    object: 'payout' as const,
    // Issue 34: what made it, and a settlement's period (not in events: SPEC 6.2 lists their keys exactly).
    type: p.type ?? 'manual',
    settlement: settlementOf(p),
    client_reference: p.client_reference,
    recipient: recipient
      ? {
          id: recipient.id,
          account_type: recipient.account_type,
          account_name: recipient.account_name,
          bank_id: recipient.bank_id,
          bank_name: recipient.bank_name,
          account_number: recipient.account_number,
          network: recipient.network,
          phone: recipient.phone,
        }
      : null,
    status_label: STATUS_LABELS[p.status],
    total_debit_minor: p.total_debit_minor,
    notes: p.notes ?? '',
    can_cancel: canCancel(p.status, p.processing_step),
    failure_reason: p.failure_reason,
    livemode: p.environment === 'live',
    evidence: evidence.map((e) => ({
      id: e.id,
      content_type: e.content_type,
      size_bytes: e.size_bytes,
      filename: e.filename,
      created_at: e.created_at.toISOString(),
    })),
    created_at: p.created_at.toISOString(),
    updated_at: p.updated_at.toISOString(),
    paid_at: p.paid_at ? p.paid_at.toISOString() : null,
  };
}

type PayoutEventFields = Parameters<typeof toPayoutPayload>[0] &
  Pick<PayoutRow, 'merchant_id' | 'environment' | 'api_key_id' | 'version'>;

/** A payout event's input: the payout as it is after the change that causes the event. */
export const payoutEventInput = (p: PayoutEventFields, type: string): EventInput => ({
  merchantId: p.merchant_id,
  environment: p.environment,
  apiKeyId: p.api_key_id,
  type,
  objectType: 'payout',
  objectId: p.id,
  objectVersion: p.version,
  data: { payout: toPayoutPayload(p) },
});
