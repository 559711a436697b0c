// Four eyes, a second person for money leaving: whoever filed a request never decides it, a decider may need a
// role, and only a request still waiting takes a decision. The rules only: the callers read the request and
// write the decision (a merchant approver's payouts and refunds, src/accounts/approver-decision.ts for
// src/payouts/lifecycle.ts and src/refunds/lifecycle.ts; the operators' requests, src/ops/approvals.ts).
import { errors, type SikaError } from './errors.ts';

export interface FourEyesRule<Status extends string> {
  /** The status a request waits for its decision in. */
  awaiting: Status;
  /** The error when the request is in another status (decided already, or never waiting). */
  notAwaiting: (status: Status) => SikaError;
  /** The refusal of the requester deciding their own request. */
  ownRequest: string;
  /** The role a decider must hold, and the refusal otherwise; none when the caller checked who may decide. */
  role?: { required: string; refusal: string };
  /** The status is checked before the decider (a second click on a decided request says who decided it). */
  statusFirst?: boolean;
}

/** A merchant approver's decision on a payout or a refund their merchant requires a second person for. */
export const approverRule = <Status extends string>(
  what: 'payout' | 'refund',
  awaiting: Status,
  notAwaiting: (status: Status) => SikaError,
): FourEyesRule<Status> => ({
  awaiting,
  notAwaiting,
  ownRequest: `The requester of a ${what} cannot approve or reject it; another approver must.`,
  role: { required: 'approver', refusal: `Only a user with the approver role can approve or reject ${what}s.` },
});

/** Throws the rule's error unless this decider may decide this request now. */
export function checkDecision<Status extends string>(
  rule: FourEyesRule<Status>,
  request: { status: Status; requestedBy: string | null },
  decider: { id: string; role?: string },
): void {
  if (rule.statusFirst && request.status !== rule.awaiting) throw rule.notAwaiting(request.status);
  if (rule.role && decider.role !== rule.role.required) throw errors.forbidden(rule.role.refusal);
  if (request.requestedBy === decider.id) throw errors.forbidden(rule.ownRequest);
  if (request.status !== rule.awaiting) throw rule.notAwaiting(request.status);
}
