// A merchant's activation: whether its business is verified and may take Live money (issue 33).
// The status is the Go-Live application's: drafted (not_submitted), submitted (under_review), sent back
// (changes_requested), decided (approved or rejected). An operator who vouches for a merchant (the CLI's
// `sika merchant activate`) approves it from any undecided status. Suspension is not a status: it is a
// flag over an approved (or any) merchant, set and lifted by an operator, that stops new Live work.
import { defineStateMachine } from '../lib/state-machine.ts';

export const ACTIVATION_STATUSES = [
  'not_submitted',
  'under_review',
  'changes_requested',
  'approved',
  'rejected',
] as const;
export type ActivationStatus = (typeof ACTIVATION_STATUSES)[number];

export const activationMachine = defineStateMachine<ActivationStatus>({
  name: 'activation',
  statuses: ACTIVATION_STATUSES,
  initial: ['not_submitted', 'approved'],
  transitions: {
    not_submitted: ['under_review', 'approved'],
    under_review: ['approved', 'rejected', 'changes_requested'],
    changes_requested: ['under_review', 'approved'],
    // A rejected business may be vouched for by an operator later; it does not apply again on its own.
    rejected: ['approved'],
    approved: [],
  },
});
