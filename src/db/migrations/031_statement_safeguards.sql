-- Statement safeguards (issue 30, docs/bank-statements.md): a file already imported (same sha256) is refused
-- unless an operator forces it with a reason; an import whose lines are all unmatched can be voided (its
-- lines leave the unmatched queue and the reconciliation's totals, and their fingerprints are free again so
-- the file can be imported for the right collection account).

ALTER TABLE statement_imports ADD COLUMN forced_reason text CHECK (length(forced_reason) <= 500);
ALTER TABLE statement_imports ADD COLUMN voided_at timestamptz;
ALTER TABLE statement_imports ADD COLUMN voided_by text;
ALTER TABLE statement_imports ADD COLUMN void_reason text CHECK (length(void_reason) <= 500);
-- The content hash is looked up on every import.
CREATE INDEX statement_imports_sha256_idx ON statement_imports (file_sha256);

ALTER TABLE statement_lines DROP CONSTRAINT statement_lines_status_check;
ALTER TABLE statement_lines ADD CONSTRAINT statement_lines_status_check CHECK (status IN ('unmatched', 'matched', 'amount_mismatch', 'resolved', 'voided'));

-- A voided line keeps its fingerprint but no longer holds it: only lines that stand are unique by it.
ALTER TABLE statement_lines DROP CONSTRAINT statement_lines_fingerprint_key;
CREATE UNIQUE INDEX statement_lines_fingerprint_idx ON statement_lines (fingerprint) WHERE status <> 'voided';
