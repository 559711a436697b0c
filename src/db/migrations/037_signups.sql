-- Merchants sign up on their own (issue 33): a sign-up waits here until its owner opens the link mailed to
-- the address; only then are the merchant and its owner user made (accounts/signups.ts). The token is kept
-- only as its SHA-256. At most one unverified sign-up per address: a new one replaces it (new token, the
-- old link dead). Verified rows stay, without the password hash, as the record of who signed up from where;
-- unverified ones are purged a day after they expire.
CREATE TABLE signups (
  id uuid PRIMARY KEY,
  business_name text NOT NULL CHECK (length(business_name) BETWEEN 1 AND 200),
  owner_name text NOT NULL CHECK (length(owner_name) BETWEEN 1 AND 200),
  email text NOT NULL CHECK (length(email) BETWEEN 3 AND 254),
  password_hash text,
  token_hash text NOT NULL UNIQUE,
  requester_ip text NOT NULL CHECK (length(requester_ip) <= 64),
  expires_at timestamptz NOT NULL,
  verified_at timestamptz,
  merchant_id uuid REFERENCES merchants(id),
  created_at timestamptz NOT NULL DEFAULT now(),
  CHECK ((verified_at IS NULL AND password_hash IS NOT NULL) OR (verified_at IS NOT NULL AND merchant_id IS NOT NULL))
);
CREATE UNIQUE INDEX signups_pending_email_key ON signups (lower(email)) WHERE verified_at IS NULL;
CREATE INDEX signups_expiry_idx ON signups (expires_at) WHERE verified_at IS NULL;

-- Every accepted sign-up form, for the rate limits every process shares: per client address, and per
-- e-mail (kept as the SHA-256 of the lower-cased address) the mails sent. Rows older than a day are purged.
CREATE TABLE signup_requests (
  id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  requester_ip text NOT NULL CHECK (length(requester_ip) <= 64),
  email_hash text NOT NULL,
  mailed boolean NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX signup_requests_ip_idx ON signup_requests (requester_ip, created_at);
CREATE INDEX signup_requests_email_idx ON signup_requests (email_hash, created_at) WHERE mailed;
CREATE INDEX signup_requests_created_idx ON signup_requests (created_at);

-- The owner's own name, as the sign-up form asks it (users made before have none).
ALTER TABLE users ADD COLUMN name text CHECK (name IS NULL OR length(name) BETWEEN 1 AND 200);
