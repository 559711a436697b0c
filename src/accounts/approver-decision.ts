// A merchant approver's decision on a payout or a refund their merchant requires a second person for (four
// eyes, src/lib/four-eyes.ts), in one transaction: the request locked and the approver read, the rule
// checked, the request moved by its own domain (with its money and event), and the audit row naming the
// approver. src/payouts/lifecycle.ts and src/refunds/lifecycle.ts say what each decision moves.
import { audit } from '../audit/log.ts';
import type { Db, Queryable } from '../db/index.ts';
import { errors } from '../lib/errors.ts';
import { checkDecision, type FourEyesRule } from '../lib/four-eyes.ts';
import { findActiveUser } from './service.ts';

/** An approver's decision as the dashboard sends it. */
export interface ApproverDecision {
  userId: string;
  decision: 'approve' | 'reject';
  reason?: string;
}

/** A payout or refund waiting for its approver, as its store reads it. */
interface DecidedRequest<Status extends string> {
  id: string;
  merchant_id: string;
  status: Status;
  requested_by_user_id: string | null;
}

/** What a decision writes on the request it moves: who decided (the store stamps when). */
export interface DecidedBy {
  decided_by_user_id: string;
  decided: true;
}

/** What is decided: the kind of request, its four-eyes rule, how to read it locked and where each decision moves it. */
export interface ApproverDecisionTarget<Status extends string, Row extends DecidedRequest<Status>> {
  what: 'payout' | 'refund';
  rule: FourEyesRule<Status>;
  /** The request, locked; null when there is none. */
  findLocked: (tx: Queryable) => Promise<Row | null>;
  /** The request moved on as approved, through its domain's transition table. */
  approve: (tx: Queryable, request: Row, decidedBy: DecidedBy) => Promise<Row>;
  /** The request moved on as rejected, through its domain's transition table. */
  reject: (tx: Queryable, request: Row, decidedBy: DecidedBy) => Promise<Row>;
}

/**
 * Decides a request for an approver of its merchant who did not request it; returns the request as moved.
 * Another merchant's request, or an inactive user, is not found.
 */
export function decideAsApprover<Status extends string, Row extends DecidedRequest<Status>>(
  db: Db,
  target: ApproverDecisionTarget<Status, Row>,
  decided: ApproverDecision,
): Promise<Row> {
  const { what } = target;
  return db.transaction(async (tx) => {
    const request = await target.findLocked(tx);
    const user = await findActiveUser(tx, decided.userId);
    if (!request || !user || user.merchant_id !== request.merchant_id)
      throw errors.notFound(what === 'payout' ? 'Payout' : 'Refund');
    checkDecision(
      target.rule,
      { status: request.status, requestedBy: request.requested_by_user_id },
      { id: decided.userId, role: user.role },
    );
    const decidedBy: DecidedBy = { decided_by_user_id: decided.userId, decided: true };
    const after = await target[decided.decision](tx, request, decidedBy);
    await audit(tx, {
      actor: { type: 'user', id: decided.userId, email: user.email },
      merchantId: request.merchant_id,
      action: `${what}.${decided.decision}`,
      objectType: what,
      objectId: request.id,
      before: { status: request.status },
      after: { status: after.status, reason: decided.reason ?? null },
    });
    return after;
  });
}
