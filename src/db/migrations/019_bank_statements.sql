-- Live bank transfers matched from imported bank statements (issue 16, docs/bank-statements.md).

-- A payment reference names one bank transfer attempt for good: the statement importer finds the attempt
-- by the reference in a credit's narration. The empty reference of a row not yet given one is left out.
CREATE UNIQUE INDEX payment_attempts_bank_statement_reference_idx ON payment_attempts (provider_reference)
  WHERE provider = 'bank_statement' AND provider_reference <> '';

-- One import of one statement file: who, which bank, and what became of its lines.
CREATE TABLE statement_imports (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  bank_code text NOT NULL,
  file_name text NOT NULL,
  file_sha256 text NOT NULL,
  imported_by text NOT NULL,
  lines integer NOT NULL DEFAULT 0 CHECK (lines >= 0),
  credits integer NOT NULL DEFAULT 0 CHECK (credits >= 0),
  matched integer NOT NULL DEFAULT 0 CHECK (matched >= 0),
  amount_mismatch integer NOT NULL DEFAULT 0 CHECK (amount_mismatch >= 0),
  unmatched integer NOT NULL DEFAULT 0 CHECK (unmatched >= 0),
  duplicates integer NOT NULL DEFAULT 0 CHECK (duplicates >= 0),
  errors integer NOT NULL DEFAULT 0 CHECK (errors >= 0),
  -- The rows that could not be read, with their line numbers (the first few).
  problems jsonb NOT NULL DEFAULT '[]'::jsonb,
  finished_at timestamptz,
  created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX statement_imports_created_idx ON statement_imports (created_at DESC);

-- One credit line of a statement, once: its fingerprint (bank, value date, amount, narration, balance and
-- its occurrence among identical lines of its file) is unique, so importing a statement again adds nothing.
CREATE TABLE statement_lines (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  import_id uuid NOT NULL REFERENCES statement_imports(id),
  bank_code text NOT NULL,
  fingerprint text NOT NULL UNIQUE,
  line_number integer NOT NULL CHECK (line_number >= 1),
  value_date date NOT NULL,
  amount_minor bigint NOT NULL CHECK (amount_minor >= 1),
  narration text NOT NULL,
  bank_reference text NOT NULL DEFAULT '',
  balance_minor bigint,
  status text NOT NULL CHECK (status IN ('unmatched', 'matched', 'amount_mismatch', 'resolved')),
  -- The payment reference found (or assigned) and the attempt the credit was applied to.
  payment_reference text,
  attempt_id text REFERENCES payment_attempts(id),
  -- Why it is unmatched or mismatched, in words for the operator.
  reason text NOT NULL DEFAULT '',
  resolution_note text,
  resolved_by text,
  resolved_at timestamptz,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX statement_lines_import_idx ON statement_lines (import_id, line_number);
-- The operators' queue.
CREATE INDEX statement_lines_unmatched_idx ON statement_lines (created_at) WHERE status = 'unmatched';
CREATE INDEX statement_lines_attempt_idx ON statement_lines (attempt_id) WHERE attempt_id IS NOT NULL;
