-- Banks and branches (seed data from GHANA.md; operators manage them later).
CREATE TABLE banks (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  name text NOT NULL,
  code text NOT NULL UNIQUE,
  active boolean NOT NULL DEFAULT true,
  created_at timestamptz NOT NULL DEFAULT now()
);
CREATE TABLE bank_branches (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  bank_id uuid NOT NULL REFERENCES banks(id),
  name text NOT NULL,
  code text NOT NULL UNIQUE,
  active boolean NOT NULL DEFAULT true,
  created_at timestamptz NOT NULL DEFAULT now()
);
INSERT INTO banks (name, code) VALUES
  ('GCB Bank', 'GCB'), ('Ecobank Ghana', 'ECO'), ('Stanbic Bank Ghana', 'STB'), ('Absa Bank Ghana', 'ABS'),
  ('Standard Chartered Bank Ghana', 'SCB'), ('Fidelity Bank Ghana', 'FBL'), ('CalBank', 'CAL'), ('Zenith Bank Ghana', 'ZEN'),
  ('United Bank for Africa Ghana', 'UBA'), ('Access Bank Ghana', 'ACC'), ('Republic Bank Ghana', 'RBG'),
  ('Agricultural Development Bank', 'ADB'), ('Prudential Bank', 'PBL'), ('Consolidated Bank Ghana', 'CBG'),
  ('Guaranty Trust Bank Ghana', 'GTB');
INSERT INTO bank_branches (bank_id, name, code)
SELECT b.id, t.name, b.code || '-' || t.suffix
  FROM banks b
 CROSS JOIN (VALUES ('Accra Central', 'ACC', 1), ('Osu', 'OSU', 2), ('Kumasi Adum', 'KUM', 3), ('Takoradi', 'TKD', 4),
                    ('Tamale', 'TML', 5), ('Cape Coast', 'CPC', 6), ('Ho', 'HO', 7), ('Koforidua', 'KOF', 8), ('Sunyani', 'SUN', 9))
       AS t(name, suffix, n)
 -- a few per bank, varying with the bank so not every bank is everywhere
 WHERE t.n <= 3 OR (t.n + length(b.code) + ascii(b.code)) % 3 = 0;

-- Per-rail fee schedule overrides per merchant and environment (defaults live in code: checkout/fees.ts).
CREATE TABLE fee_schedules (
  merchant_id uuid NOT NULL REFERENCES merchants(id),
  environment text NOT NULL CHECK (environment IN ('test', 'live')),
  rail text NOT NULL CHECK (rail IN ('momo', 'card', 'bank_transfer', 'cash')),
  bearer text NOT NULL CHECK (bearer IN ('payer', 'merchant')),
  percent_bps integer NOT NULL CHECK (percent_bps BETWEEN 0 AND 10000),
  flat_minor bigint NOT NULL DEFAULT 0 CHECK (flat_minor >= 0),
  cap_minor bigint CHECK (cap_minor >= 0),
  updated_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (merchant_id, environment, rail)
);

-- Payment attempts: one try of one rail for one session.
CREATE TABLE payment_attempts (
  id text PRIMARY KEY,
  session_id text NOT NULL REFERENCES checkout_sessions(id),
  merchant_id uuid NOT NULL REFERENCES merchants(id),
  environment text NOT NULL CHECK (environment IN ('test', 'live')),
  rail text NOT NULL CHECK (rail IN ('momo', 'card', 'bank_transfer', 'cash')),
  provider text NOT NULL,
  provider_reference text NOT NULL DEFAULT '',
  operator text CHECK (operator IN ('mtn', 'telecel', 'at')),
  phone text,
  account_name text,
  status text NOT NULL CHECK (status IN ('pending', 'paid', 'failed', 'expired', 'cancelled', 'reversed', 'manual_review', 'amount_mismatch')),
  raw_status text NOT NULL,
  base_minor bigint NOT NULL CHECK (base_minor >= 1),
  fee_minor bigint NOT NULL CHECK (fee_minor >= 0),
  bearer text NOT NULL CHECK (bearer IN ('payer', 'merchant')),
  amount_charged_minor bigint NOT NULL CHECK (amount_charged_minor >= 1),
  currency text NOT NULL,
  verification_required boolean NOT NULL DEFAULT false,
  resend_count integer NOT NULL DEFAULT 0,
  instructions jsonb NOT NULL DEFAULT '{}'::jsonb,
  version integer NOT NULL DEFAULT 1,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  finalized_at timestamptz
);
CREATE INDEX payment_attempts_session_idx ON payment_attempts (session_id, created_at);
-- At most one attempt in progress per session: the backstop behind the session row lock.
CREATE UNIQUE INDEX payment_attempts_one_open_idx ON payment_attempts (session_id) WHERE status = 'pending';
CREATE INDEX payment_attempts_pending_idx ON payment_attempts (created_at) WHERE status = 'pending';

-- Cash deposit slips: one active slip per session, recorded by a bank teller.
CREATE TABLE cash_slips (
  id text PRIMARY KEY,
  slip_token text NOT NULL UNIQUE,
  reference text NOT NULL UNIQUE,
  session_id text NOT NULL REFERENCES checkout_sessions(id),
  attempt_id text NOT NULL REFERENCES payment_attempts(id),
  merchant_id uuid NOT NULL REFERENCES merchants(id),
  environment text NOT NULL CHECK (environment IN ('test', 'live')),
  amount_minor bigint NOT NULL CHECK (amount_minor >= 1),
  currency text NOT NULL,
  status text NOT NULL CHECK (status IN ('active', 'used', 'expired', 'cancelled')),
  expires_at timestamptz NOT NULL,
  recorded_at timestamptz,
  recorded_branch_id uuid REFERENCES bank_branches(id),
  created_at timestamptz NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX cash_slips_one_active_idx ON cash_slips (session_id) WHERE status = 'active';

-- The transactional outbox: every event is written in the transaction of the change it announces.
CREATE TABLE events (
  id text PRIMARY KEY,
  merchant_id uuid NOT NULL REFERENCES merchants(id),
  environment text NOT NULL CHECK (environment IN ('test', 'live')),
  api_key_id uuid REFERENCES api_keys(id),
  type text NOT NULL,
  object_type text NOT NULL,
  object_id text NOT NULL,
  object_version integer NOT NULL,
  payload text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX events_merchant_idx ON events (merchant_id, environment, created_at DESC);
CREATE INDEX events_object_idx ON events (object_id, created_at);
