// The merchant's books, first part (issue 17): sessions searched from a server (GET /api/v1/sessions) and
// each session's payment, so the attempt that paid is findable without the payer page.
import type { ApiPrincipal } from '../lib/environment.ts';
import type { Queryable } from '../db/index.ts';
import { keysetPages } from '../db/keyset-pages.ts';
import { errors } from '../lib/errors.ts';
import { listPage, listWindow, type CursorListQuery } from '../lib/list-paging.ts';
import type { Rail } from '../rails/registry.ts';
import { toSessionResponse, type SessionRow, type SessionStatus } from './model.ts';
import { ownsPaymentLink } from './payment-links.ts';
import { findSessionPayment, searchSessions, type SessionPayment } from './session-list-store.ts';
import * as store from './store.ts';

export const SESSION_LIST_LIMIT_DEFAULT = 20;
export const SESSION_LIST_LIMIT_MAX = 100;

export interface SessionListQuery extends CursorListQuery {
  status?: SessionStatus;
  invoice_ref?: string;
  rail?: Rail;
  /** Issue 35: sessions payers made from this payment link (the key's, else 404). */
  payment_link_id?: string;
}

/** The card that paid, when the provider named both its brand and last four digits (else null: never half a card). */
export const cardOf = (
  attempt: Pick<SessionPayment, 'card_brand' | 'card_last4'>,
): { brand: string; last4: string } | null =>
  attempt.card_brand && attempt.card_last4 ? { brand: attempt.card_brand, last4: attempt.card_last4 } : null;

/** The payment of a session: what was charged, the fee, what the merchant was credited (net), and when. */
export function toPayment(payment: SessionPayment) {
  return {
    attempt_reference: payment.id,
    status: payment.status as 'paid' | 'reversed',
    rail: payment.rail,
    provider: payment.provider,
    provider_reference: payment.provider_reference,
    provider_transaction_id: payment.provider_transaction_id,
    card: cardOf(payment),
    amount_charged_minor: payment.amount_charged_minor,
    // What Sika received when an operator found it was not the amount charged (a short or over payment, issue 30).
    amount_received_minor: payment.amount_received_minor === null ? null : Number(payment.amount_received_minor),
    fee_minor: payment.fee_received_minor === null ? payment.fee_minor : Number(payment.fee_received_minor),
    // The merchant is credited the session amount less the fee it bears (a payer-borne fee was added on top);
    // when another amount was received, what was received less the fee taken on it.
    net_minor:
      payment.amount_received_minor === null
        ? payment.base_minor - (payment.bearer === 'merchant' ? payment.fee_minor : 0)
        : Number(payment.amount_received_minor) - Number(payment.fee_received_minor ?? 0),
    paid_at: payment.finalized_at ? payment.finalized_at.toISOString() : null,
  };
}

/** The payment object of a session (its first paid attempt), or null: for events that carry the session with its payment. */
export async function paymentOfSession(db: Queryable, sessionId: string) {
  const payment = await findSessionPayment(db, sessionId);
  return payment ? toPayment(payment) : null;
}

/** A session of the calling key's merchant and environment, with its payment. */
export async function getSessionWithPayment(
  db: Queryable,
  principal: ApiPrincipal,
  id: string,
  checkoutUrlHost: string,
) {
  const session = await store.findSession(db, principal.merchantId, principal.environment, id);
  if (!session) throw errors.notFound('Checkout session');
  const payment = session.status === 'success' ? await findSessionPayment(db, session.id) : null;
  return { ...toSessionResponse(session, checkoutUrlHost), payment: payment ? toPayment(payment) : null };
}

/** One page of the merchant's sessions, newest first; `has_more` says whether to ask again with starting_after. */
export async function listSessions(
  db: Queryable,
  principal: ApiPrincipal,
  query: SessionListQuery,
  checkoutUrlHost: string,
) {
  const { limit, search } = await listWindow(principal, query, {
    limitDefault: SESSION_LIST_LIMIT_DEFAULT,
    what: 'a session',
    find: (id) => store.findSession(db, principal.merchantId, principal.environment, id),
  });
  // Another merchant's link looks missing, as a settlement's payout_id does on the balance transactions.
  if (
    query.payment_link_id !== undefined &&
    !(await ownsPaymentLink(db, principal.merchantId, principal.environment, query.payment_link_id))
  )
    throw errors.notFound('Payment link');
  const rows = await searchSessions(
    db,
    {
      ...search,
      status: query.status,
      invoiceRef: query.invoice_ref,
      rail: query.rail,
      paymentLinkId: query.payment_link_id,
    },
    limit + 1,
  );
  return listPage(rows, limit, ({ session, payment }) => ({
    ...toSessionResponse(session, checkoutUrlHost),
    payment: payment ? toPayment(payment) : null,
  }));
}

/** Sessions created in [from, before), oldest first, each with its payment, read in keyset pages of pageRows (a CSV export's rows). */
export function sessionsCreatedBetween(
  db: Queryable,
  owner: { merchantId: string; environment: string },
  from: Date,
  before: Date,
  pageRows: number,
): AsyncIterable<{ session: SessionRow; payment: SessionPayment | null }> {
  return keysetPages(
    pageRows,
    (after) =>
      searchSessions(db, { ...owner, createdFrom: from, createdBefore: before, after, order: 'oldest' }, pageRows),
    ({ session }) => ({ createdAt: session.created_at, id: session.id }),
  );
}
