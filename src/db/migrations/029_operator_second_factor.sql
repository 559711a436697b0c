-- Operators' second factor (issue 30): the same TOTP as merchant users (014_console_accounts.sql), required
-- for every operator role; a reset by another operator or the CLI sets a temporary password that must be
-- changed at the next sign-in; the last sign-in is shown on the Operators page.
ALTER TABLE operators ADD COLUMN totp_secret text;
ALTER TABLE operators ADD COLUMN totp_pending_secret text;
ALTER TABLE operators ADD COLUMN totp_enabled_at timestamptz;
ALTER TABLE operators ADD COLUMN totp_last_step bigint;
ALTER TABLE operators ADD COLUMN must_change_password boolean NOT NULL DEFAULT false;
ALTER TABLE operators ADD COLUMN last_sign_in_at timestamptz;

-- Recovery codes of operators: shown once, stored as SHA-256, each usable once (as user_recovery_codes).
CREATE TABLE operator_recovery_codes (
  operator_id uuid NOT NULL REFERENCES operators(id),
  code_hash text NOT NULL,
  used_at timestamptz,
  created_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (operator_id, code_hash)
);

-- cli: a change made with the sika command; actor_id names the OS user and host (user@host).
ALTER TABLE audit_log DROP CONSTRAINT audit_log_actor_type_check;
ALTER TABLE audit_log ADD CONSTRAINT audit_log_actor_type_check CHECK (actor_type IN ('operator', 'user', 'system', 'api_key', 'cli'));
