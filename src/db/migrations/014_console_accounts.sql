-- Console accounts: sign-in backoff shared by every process, password changes, TOTP second factor.

-- One row per throttled key: an (account, address) pair, an account, or an address (web/auth.ts and
-- accounts/sign-in-throttle.ts). Keys are SHA-256 hashes, so no email or address is kept here; the
-- account_key (a hash of the console and the email) finds an account's rows when its password is set.
-- version grows with every attempt the key allows or refuses: a success resets the count and the
-- delay only where no attempt came after it.
CREATE TABLE sign_in_throttles (
  key text PRIMARY KEY,
  account_key text,
  failures integer NOT NULL DEFAULT 0 CHECK (failures >= 0),
  version bigint NOT NULL DEFAULT 0,
  next_allowed_at timestamptz,
  updated_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX sign_in_throttles_account_idx ON sign_in_throttles (account_key) WHERE account_key IS NOT NULL;
CREATE INDEX sign_in_throttles_updated_idx ON sign_in_throttles (updated_at);

-- The hard lock (5 failures, 15 minutes) is gone: anyone could trigger it against an owner.
ALTER TABLE users DROP COLUMN failed_logins, DROP COLUMN locked_until;
ALTER TABLE operators DROP COLUMN failed_logins, DROP COLUMN locked_until;

-- A temporary password (an invitation) must be changed at the first sign-in.
ALTER TABLE users ADD COLUMN must_change_password boolean NOT NULL DEFAULT false;

-- TOTP (RFC 6238): the confirmed secret, a secret shown for enrolment but not yet confirmed, and the
-- last time step accepted (a code is never accepted twice, nor an older one after it).
ALTER TABLE users ADD COLUMN totp_secret text;
ALTER TABLE users ADD COLUMN totp_pending_secret text;
ALTER TABLE users ADD COLUMN totp_enabled_at timestamptz;
ALTER TABLE users ADD COLUMN totp_last_step bigint;
-- The owner's rule: users who can approve payouts or manage API keys must use a second factor.
ALTER TABLE merchants ADD COLUMN second_factor_required boolean NOT NULL DEFAULT false;

-- Recovery codes: shown once, stored as SHA-256 (80 random bits each), each usable once.
CREATE TABLE user_recovery_codes (
  user_id uuid NOT NULL REFERENCES users(id),
  code_hash text NOT NULL,
  used_at timestamptz,
  created_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (user_id, code_hash)
);

-- A session whose password was right but whose second factor is still to come opens nothing else.
ALTER TABLE web_sessions ADD COLUMN stage text NOT NULL DEFAULT 'active' CHECK (stage IN ('active', 'second_factor'));
-- Signing out a user's other sessions (password change or set).
CREATE INDEX web_sessions_user_idx ON web_sessions (user_id) WHERE user_id IS NOT NULL;
CREATE INDEX web_sessions_operator_idx ON web_sessions (operator_id) WHERE operator_id IS NOT NULL;
