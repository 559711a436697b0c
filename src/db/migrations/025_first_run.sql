-- Issue 19: the first run of a developer's own instance. On an empty database with a loopback BASE_URL the
-- server creates a demo merchant once and prints its Test key and a one-time dashboard sign-in link.
--
-- first_run: one row, written by the process that decided the first run (whether it created a merchant or
-- found the database already had merchants). Its primary key is the claim: of two processes starting at once
-- on one PostgreSQL database only one inserts it, so only one creates and prints a demo merchant.
CREATE TABLE first_run (
  singleton boolean PRIMARY KEY DEFAULT true CHECK (singleton),
  demo_merchant_id uuid,
  decided_at timestamptz NOT NULL DEFAULT now()
);

-- A one-time dashboard sign-in link: only the SHA-256 of its token is kept. Redeeming it sets used_at in the
-- same statement that checks it is unused and unexpired, so it signs in once however many try at once.
CREATE TABLE sign_in_links (
  token_hash text PRIMARY KEY,
  user_id uuid NOT NULL REFERENCES users(id),
  created_at timestamptz NOT NULL DEFAULT now(),
  expires_at timestamptz NOT NULL,
  used_at timestamptz
);
CREATE INDEX sign_in_links_user_idx ON sign_in_links (user_id);
