-- Refunds (issue 17; src/refunds/). A refund gives back part or all of what a paid session's payment
-- charged. Its amount is held from the available balance while it is pending (refund_hold), then leaves
-- through the provider that took the payment (refund_post) or goes back (refund_void): exactly once.
CREATE TABLE refunds (
  id text PRIMARY KEY,
  merchant_id uuid NOT NULL REFERENCES merchants(id),
  environment text NOT NULL CHECK (environment IN ('test', 'live')),
  api_key_id uuid REFERENCES api_keys(id),
  requested_by_user_id uuid REFERENCES users(id),
  session_id text NOT NULL REFERENCES checkout_sessions(id),
  -- The attempt whose payment is refunded (the session's paid attempt).
  attempt_id text NOT NULL REFERENCES payment_attempts(id),
  amount_minor bigint NOT NULL CHECK (amount_minor >= 1),
  currency text NOT NULL,
  reason text CHECK (length(reason) <= 500),
  metadata jsonb NOT NULL DEFAULT '{}'::jsonb,
  status text NOT NULL CHECK (status IN ('awaiting_approval', 'pending', 'succeeded', 'failed', 'cancelled')),
  -- How it is paid: at once (test), through the payment's provider (provider), or by an operator's
  -- transfer to the payer's account (operator: cash and bank transfer payments).
  route text NOT NULL CHECK (route IN ('test', 'provider', 'operator')),
  provider text,
  -- Our reference with the provider, stored before the provider is asked (a lost answer is asked about with it).
  provider_reference text,
  -- The provider's own id of the refund, once it named one.
  provider_refund_id text,
  -- Provider refunds: send (not yet asked), awaiting_result (asked: only status questions from here).
  processing_step text CHECK (processing_step IN ('send', 'awaiting_result')),
  next_step_at timestamptz,
  status_checks integer NOT NULL DEFAULT 0,
  failure_reason text,
  decided_by_user_id uuid REFERENCES users(id),
  decided_at timestamptz,
  -- Operator refunds: where the money went and the transfer's reference, recorded by the operator.
  payer_account text,
  transfer_reference text,
  completed_by text,
  version integer NOT NULL DEFAULT 1,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  succeeded_at timestamptz,
  failed_at timestamptz,
  CHECK (route <> 'provider' OR (provider IS NOT NULL AND provider_reference IS NOT NULL))
);
CREATE INDEX refunds_list_idx ON refunds (merchant_id, environment, created_at DESC, id DESC);
CREATE INDEX refunds_session_idx ON refunds (session_id);
CREATE INDEX refunds_due_idx ON refunds (next_step_at) WHERE status = 'pending' AND route = 'provider';
CREATE INDEX refunds_operator_queue_idx ON refunds (created_at) WHERE status = 'pending' AND route = 'operator';
CREATE UNIQUE INDEX refunds_provider_reference_idx ON refunds (provider, provider_reference) WHERE provider_reference IS NOT NULL;

-- What a session's refunds have given back (succeeded), shown on the session as refunded_minor.
ALTER TABLE checkout_sessions ADD COLUMN refunded_minor bigint NOT NULL DEFAULT 0 CHECK (refunded_minor >= 0);
