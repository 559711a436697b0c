-- Accounts: merchants, their users, integrations, API keys and webhook endpoints.
CREATE TABLE merchants (
  id uuid PRIMARY KEY,
  name text NOT NULL CHECK (length(name) BETWEEN 1 AND 200),
  email text NOT NULL,
  payout_approval_required boolean NOT NULL DEFAULT false,
  created_at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE users (
  id uuid PRIMARY KEY,
  merchant_id uuid NOT NULL REFERENCES merchants(id),
  email text NOT NULL,
  password_hash text,
  role text NOT NULL CHECK (role IN ('owner', 'admin', 'developer', 'approver', 'viewer')),
  created_at timestamptz NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX users_email_key ON users (lower(email));
CREATE INDEX users_merchant_idx ON users (merchant_id);

CREATE TABLE integrations (
  id uuid PRIMARY KEY,
  merchant_id uuid NOT NULL REFERENCES merchants(id),
  environment text NOT NULL CHECK (environment IN ('test', 'live')),
  name text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX integrations_merchant_idx ON integrations (merchant_id, environment);

CREATE TABLE api_keys (
  id uuid PRIMARY KEY,
  merchant_id uuid NOT NULL REFERENCES merchants(id),
  integration_id uuid NOT NULL REFERENCES integrations(id),
  environment text NOT NULL CHECK (environment IN ('test', 'live')),
  -- the visible part (ak_test_ + 8 characters), unique, used to find the key before the hash compare
  prefix text NOT NULL UNIQUE,
  key_hash bytea NOT NULL,
  created_by_user_id uuid REFERENCES users(id),
  created_at timestamptz NOT NULL DEFAULT now(),
  revoked_at timestamptz,
  last_used_at timestamptz
);
CREATE INDEX api_keys_merchant_idx ON api_keys (merchant_id, environment);

CREATE TABLE webhook_endpoints (
  id uuid PRIMARY KEY,
  merchant_id uuid NOT NULL REFERENCES merchants(id),
  environment text NOT NULL CHECK (environment IN ('test', 'live')),
  api_key_id uuid NOT NULL REFERENCES api_keys(id),
  url text NOT NULL CHECK (length(url) <= 2000),
  secret text NOT NULL,
  status text NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'disabled')),
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX webhook_endpoints_key_idx ON webhook_endpoints (api_key_id);
CREATE INDEX webhook_endpoints_merchant_idx ON webhook_endpoints (merchant_id, environment);

-- Idempotency records (sessions, invoice lines, simulate): scope is merchant + environment + key.
CREATE TABLE idempotency_keys (
  merchant_id uuid NOT NULL,
  environment text NOT NULL,
  key text NOT NULL,
  request_hash text NOT NULL,
  state text NOT NULL CHECK (state IN ('in_flight', 'completed')),
  response_status integer,
  response_body text, -- kept as text: a replay is byte-identical (jsonb would reorder keys)
  created_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (merchant_id, environment, key)
);
CREATE INDEX idempotency_keys_created_idx ON idempotency_keys (created_at);

-- Checkout sessions (merchant view in SPEC 2.1).
CREATE TABLE checkout_sessions (
  id text PRIMARY KEY,
  merchant_id uuid NOT NULL REFERENCES merchants(id),
  environment text NOT NULL CHECK (environment IN ('test', 'live')),
  api_key_id uuid NOT NULL REFERENCES api_keys(id),
  status text NOT NULL CHECK (status IN ('open', 'pending', 'success', 'failed', 'expired')),
  amount_minor bigint NOT NULL CHECK (amount_minor >= 1),
  currency text NOT NULL,
  invoice_ref text NOT NULL,
  description text,
  customer_name text,
  customer_email text,
  callback_url text,
  metadata jsonb NOT NULL DEFAULT '{}'::jsonb,
  expires_at timestamptz NOT NULL,
  finalized_at timestamptz,
  version integer NOT NULL DEFAULT 1,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX checkout_sessions_merchant_idx ON checkout_sessions (merchant_id, environment, created_at DESC);
CREATE INDEX checkout_sessions_invoice_idx ON checkout_sessions (merchant_id, environment, invoice_ref);
CREATE INDEX checkout_sessions_open_expiry_idx ON checkout_sessions (expires_at) WHERE status IN ('open', 'pending');

-- Revenue lines (service codes) and invoice lines, per merchant and environment.
CREATE TABLE revenue_lines (
  id uuid PRIMARY KEY,
  merchant_id uuid NOT NULL REFERENCES merchants(id),
  environment text NOT NULL CHECK (environment IN ('test', 'live')),
  code text NOT NULL,
  name text NOT NULL,
  active boolean NOT NULL DEFAULT true,
  source text NOT NULL DEFAULT 'sync',
  last_synced_at timestamptz NOT NULL DEFAULT now(),
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  UNIQUE (merchant_id, environment, code)
);

CREATE TABLE invoice_lines (
  merchant_id uuid NOT NULL REFERENCES merchants(id),
  environment text NOT NULL CHECK (environment IN ('test', 'live')),
  invoice_ref text NOT NULL,
  code text NOT NULL,
  name text NOT NULL,
  amount_minor bigint NOT NULL CHECK (amount_minor >= 1),
  currency text NOT NULL,
  remitted boolean NOT NULL DEFAULT false,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (merchant_id, environment, invoice_ref, code)
);
