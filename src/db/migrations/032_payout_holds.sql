-- Operator holds on Live payouts (issue 30): an operator may hold a payout that has not been sent to the
-- provider yet, and release it later. A hold is a flag with who, when and why, not a payout status: the
-- merchant-facing API shape and SPEC's payout statuses are unchanged. The Live payout worker never claims
-- a held payout (src/payouts/payout-store.ts duePayoutIds, advanceProcessingStep).
ALTER TABLE payouts ADD COLUMN held_at timestamptz;
ALTER TABLE payouts ADD COLUMN held_by text;
ALTER TABLE payouts ADD COLUMN hold_reason text CHECK (length(hold_reason) <= 500);
ALTER TABLE payouts ADD CONSTRAINT payouts_hold_complete
  CHECK ((held_at IS NULL AND held_by IS NULL AND hold_reason IS NULL) OR (held_at IS NOT NULL AND held_by IS NOT NULL AND hold_reason IS NOT NULL));
