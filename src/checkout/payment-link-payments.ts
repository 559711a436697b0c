// A payment link never keeps more payments than it may (issue 35): single_use and max_payments are one rule
// (paymentsLimitOf). A link's session that succeeds counts itself on the link under the link row's lock, in
// applyOutcome's transaction (payments.ts settlePaid). A payment arriving once the link has taken every payment
// it may is not kept: payments.ts refunds it in full as it refunds a duplicate payment.
//
// Locks are taken in one order, session -> link -> the link's other sessions, and the last step never waits:
// applyOutcome already holds its session when it locks the link, and the other open sessions are locked with
// SKIP LOCKED. A session passed over is held by a transaction of its own (its payment being applied, an attempt
// starting) that reads the link after this one commits and finds it used up itself: a payment is refunded, an
// attempt that ends unpaid expires its session instead of reopening it, a new attempt is refused. Waiting for
// it instead could deadlock, as that transaction may be waiting for the link row this one holds.
import type { Queryable } from '../db/index.ts';
import { SikaError } from '../lib/errors.ts';
import type { SessionRow } from './model.ts';
import { linkAvailability, isUsedUp, paymentsLimitOf, type LinkAvailability } from './payment-link-model.ts';
import { addLinkPayment, findLink, lockLink, lockOpenLinkSessions } from './payment-link-store.ts';

/**
 * Open sessions of a link expired at once by the payment that uses it up. More are left open, to expire at their
 * time; every attempt on them is refused meanwhile (attempt-start.ts).
 */
export const LINK_SESSIONS_EXPIRED_AT_ONCE_MAX = 500;

/** What the link decided about a payment of one of its sessions. */
export type LinkPayment =
  /** Counted: `expire` are the link's other open sessions, locked, when this payment used the link up. */
  | { kept: true; expire: SessionRow[] }
  /** The link had already taken every payment it may: the payment is refunded in full. */
  | { kept: false };

/**
 * Counts a payment of `session` (locked by the caller, about to succeed) on its link. A session not made by a
 * link is always kept. A link's limit is counted as it stands (an inactive or expired link still honours a
 * payment its payer started while it was open: only the count refuses money).
 */
export async function countLinkPayment(tx: Queryable, session: SessionRow): Promise<LinkPayment> {
  if (!session.payment_link_id) return { kept: true, expire: [] };
  const link = await lockLink(tx, session.payment_link_id);
  if (!link) throw new Error(`session ${session.id} names payment link ${session.payment_link_id}, which is missing`);
  if (isUsedUp(link)) return { kept: false };
  const counted = await addLinkPayment(tx, link.id);
  if (!isUsedUp(counted)) return { kept: true, expire: [] };
  return {
    kept: true,
    expire: await lockOpenLinkSessions(tx, link.id, session.id, LINK_SESSIONS_EXPIRED_AT_ONCE_MAX),
  };
}

/**
 * Whether a payer may pay `session` now as far as its link goes: 'available' for a session not made by a link.
 * A link with a payment limit is read under its lock (session -> link, the order above), so a payment counting
 * itself at the same time is seen once it commits; a link without one is only read.
 */
export async function linkAvailabilityOf(tx: Queryable, session: SessionRow): Promise<LinkAvailability> {
  if (!session.payment_link_id) return 'available';
  const link = await findLink(tx, session.merchant_id, session.environment, session.payment_link_id);
  if (!link) return 'inactive';
  if (paymentsLimitOf(link) === null) return linkAvailability(link);
  return linkAvailability((await lockLink(tx, link.id)) ?? link);
}

/** Why a session of a link takes no new payment, in the payer's words. */
export const LINK_CLOSED_MESSAGES: Record<Exclude<LinkAvailability, 'available'>, string> = {
  used_up: 'This payment link has already taken all the payments it accepts, so this checkout can no longer be paid.',
  inactive: 'This payment link has been turned off by the merchant, so this checkout can no longer be paid.',
  expired: 'This payment link has expired, so this checkout can no longer be paid.',
};

/**
 * A new attempt refused because the session's link takes no payment (SESSION_NOT_PAYABLE, the payer page's
 * refusal). The refusal undoes the attempt's transaction, so its caller closes the session in one of its own
 * (payments.ts expireClosedLinkSession): the payer's page then shows it ended instead of offering to pay again.
 */
export class LinkClosedError extends SikaError {
  constructor(readonly reason: Exclude<LinkAvailability, 'available'>) {
    super('SESSION_NOT_PAYABLE', LINK_CLOSED_MESSAGES[reason]);
  }
}
