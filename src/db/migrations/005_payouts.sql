-- Payouts: per merchant and environment settings, recipients, payouts, evidence files.
CREATE TABLE payout_settings (
  merchant_id uuid NOT NULL REFERENCES merchants(id),
  environment text NOT NULL CHECK (environment IN ('test', 'live')),
  payout_access boolean NOT NULL,
  paused boolean NOT NULL DEFAULT false,
  payout_limit_minor bigint NOT NULL CHECK (payout_limit_minor >= 1),
  daily_limit_minor bigint NOT NULL CHECK (daily_limit_minor >= 1),
  updated_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (merchant_id, environment)
);

CREATE TABLE recipients (
  id text PRIMARY KEY,
  merchant_id uuid NOT NULL REFERENCES merchants(id),
  environment text NOT NULL CHECK (environment IN ('test', 'live')),
  account_type text NOT NULL CHECK (account_type IN ('bank', 'momo')),
  bank_id uuid REFERENCES banks(id),
  account_number text,
  network text CHECK (network IN ('mtn', 'telecel', 'at')),
  phone text,
  account_name text NOT NULL,
  verification_status text NOT NULL CHECK (verification_status IN ('pending_verification', 'verified', 'rejected')),
  rejection_reason text,
  active boolean NOT NULL DEFAULT true,
  previous_version_id text REFERENCES recipients(id),
  created_by_api_key_id uuid REFERENCES api_keys(id),
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  verified_at timestamptz,
  CHECK ((account_type = 'bank' AND bank_id IS NOT NULL AND account_number IS NOT NULL AND network IS NULL AND phone IS NULL)
      OR (account_type = 'momo' AND network IS NOT NULL AND phone IS NOT NULL AND bank_id IS NULL AND account_number IS NULL))
);
CREATE INDEX recipients_merchant_idx ON recipients (merchant_id, environment, created_at);
CREATE INDEX recipients_pending_idx ON recipients (created_at) WHERE verification_status = 'pending_verification';
-- A recipient is replaced at most once.
CREATE UNIQUE INDEX recipients_previous_version_key ON recipients (previous_version_id) WHERE previous_version_id IS NOT NULL;

CREATE TABLE payouts (
  id text PRIMARY KEY,
  reference text NOT NULL UNIQUE,
  merchant_id uuid NOT NULL REFERENCES merchants(id),
  environment text NOT NULL CHECK (environment IN ('test', 'live')),
  api_key_id uuid REFERENCES api_keys(id),
  requested_by_user_id uuid REFERENCES users(id),
  client_reference text NOT NULL,
  request_hash text NOT NULL,
  recipient_id text NOT NULL REFERENCES recipients(id),
  status text NOT NULL CHECK (status IN ('requested', 'processing', 'paid', 'failed', 'cancelled', 'returned')),
  processing_step text CHECK (processing_step IN ('recipient_check', 'transfer', 'awaiting_result')),
  amount_minor bigint NOT NULL CHECK (amount_minor >= 1),
  fee_minor bigint NOT NULL CHECK (fee_minor >= 0),
  total_debit_minor bigint NOT NULL CHECK (total_debit_minor = amount_minor + fee_minor),
  currency text NOT NULL,
  notes text CHECK (length(notes) <= 500),
  bank_reference text NOT NULL DEFAULT '',
  return_reference text NOT NULL DEFAULT '',
  reconciliation_status text NOT NULL CHECK (reconciliation_status IN ('not_required', 'unreconciled', 'matched', 'exception')),
  failure_reason text,
  cancel_reason text,
  decided_by_user_id uuid REFERENCES users(id),
  decided_at timestamptz,
  next_step_at timestamptz,
  version integer NOT NULL DEFAULT 1,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  paid_at timestamptz,
  UNIQUE (merchant_id, environment, client_reference)
);
CREATE INDEX payouts_list_idx ON payouts (merchant_id, environment, created_at DESC);
CREATE INDEX payouts_recipient_open_idx ON payouts (recipient_id) WHERE status IN ('requested', 'processing');
CREATE INDEX payouts_processing_idx ON payouts (next_step_at) WHERE status = 'processing';

CREATE TABLE payout_evidence (
  id text PRIMARY KEY,
  payout_id text NOT NULL REFERENCES payouts(id),
  merchant_id uuid NOT NULL REFERENCES merchants(id),
  environment text NOT NULL,
  content_type text NOT NULL CHECK (content_type IN ('application/pdf', 'image/png', 'image/jpeg')),
  size_bytes integer NOT NULL CHECK (size_bytes BETWEEN 1 AND 5242880),
  sha256 text NOT NULL,
  filename text,
  data bytea NOT NULL,
  uploaded_by text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX payout_evidence_payout_idx ON payout_evidence (payout_id);
