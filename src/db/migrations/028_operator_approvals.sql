-- Issue 30: Sika never credits more than it received, and two operators for money.
--
-- What a payment actually brought in, when an operator decided a held attempt on it (null: the amount
-- charged was received, as quoted). The merchant's credit and the fee are computed on it
-- (ledger invariant: a payment's credit never exceeds what was received).
ALTER TABLE payment_attempts ADD COLUMN amount_received_minor bigint CHECK (amount_received_minor >= 1);
-- The fee taken on what was received (null: fee_minor, the quoted fee).
ALTER TABLE payment_attempts ADD COLUMN fee_received_minor bigint CHECK (fee_received_minor >= 0);

-- An operator's request for a money decision that a second operator approves or rejects (src/ops/approvals.ts):
-- a held attempt's decision, a payout return, a change of Live payout access or limits. The approval runs
-- the action in the decision's transaction; a request whose object changed since is refused.
CREATE TABLE operator_approvals (
  id uuid PRIMARY KEY,
  kind text NOT NULL CHECK (kind IN ('held_attempt', 'payout_return', 'payout_settings')),
  -- The object it acts on (payment_attempt, payout, payout_settings) and what it will do, with the state
  -- of the object when it was requested (compared at approval).
  object_type text NOT NULL,
  object_id text NOT NULL,
  payload jsonb NOT NULL,
  reason text NOT NULL CHECK (length(reason) BETWEEN 1 AND 500),
  merchant_id uuid NOT NULL REFERENCES merchants(id),
  environment text NOT NULL CHECK (environment IN ('test', 'live')),
  status text NOT NULL CHECK (status IN ('pending', 'approved', 'rejected')),
  requested_by uuid NOT NULL REFERENCES operators(id),
  requested_by_email text NOT NULL,
  decided_by uuid REFERENCES operators(id),
  decided_by_email text,
  decision_note text CHECK (length(decision_note) <= 500),
  created_at timestamptz NOT NULL DEFAULT now(),
  decided_at timestamptz
);
-- One request waiting per object.
CREATE UNIQUE INDEX operator_approvals_one_pending_idx ON operator_approvals (object_type, object_id) WHERE status = 'pending';
CREATE INDEX operator_approvals_status_idx ON operator_approvals (status, created_at, id);
