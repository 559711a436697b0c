-- Trusted devices ("device cookies", accounts/trusted-devices.ts): a browser that completed a sign-in keeps
-- a long-lived random token; its sign-in attempts back off on their own key, not on the account-wide and
-- address keys that strangers can push. Only the token's SHA-256 is kept. account_key is the same hash of
-- the console and the email as sign_in_throttles.account_key (no email is stored here either).
CREATE TABLE trusted_devices (
  token_hash text PRIMARY KEY,
  account_key text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  last_used_at timestamptz NOT NULL DEFAULT now(),
  expires_at timestamptz NOT NULL
);
-- An account's devices, most recently used first (trust checks, the per-account bound, revocation).
CREATE INDEX trusted_devices_account_idx ON trusted_devices (account_key, last_used_at DESC);
-- The background purge of expired devices.
CREATE INDEX trusted_devices_expires_idx ON trusted_devices (expires_at);
