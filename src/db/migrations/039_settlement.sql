-- Issue 34: money clears by rail, and every merchant is paid out on a schedule it chose.
--
-- Two more merchant accounts in the ledger. merchant_pending holds a payment's net until its rail's
-- clearing time passes (a payment_cleared entry then moves it to merchant_available); merchant_reserved
-- holds the rolling reserve an operator set (reserve_hold from available at clearing, reserve_release
-- back to available when its days have passed). Payouts and refunds take only merchant_available, so
-- the CHECK below keeps pending and reserved money out of them whatever a caller read.
ALTER TABLE ledger_accounts DROP CONSTRAINT ledger_accounts_kind_check;
ALTER TABLE ledger_accounts ADD CONSTRAINT ledger_accounts_kind_check
  CHECK (kind IN ('merchant_available', 'merchant_held', 'merchant_pending', 'merchant_reserved', 'provider_clearing', 'fee_revenue', 'payout_clearing'));
ALTER TABLE ledger_accounts DROP CONSTRAINT ledger_merchant_balance_not_negative;
ALTER TABLE ledger_accounts ADD CONSTRAINT ledger_merchant_balance_not_negative
  CHECK (kind NOT IN ('merchant_available', 'merchant_held', 'merchant_pending', 'merchant_reserved') OR balance_minor <= 0);
INSERT INTO ledger_accounts (merchant_id, environment, kind)
SELECT DISTINCT merchant_id, environment, new_kind.kind
  FROM ledger_accounts, (VALUES ('merchant_pending'), ('merchant_reserved')) AS new_kind (kind)
ON CONFLICT (merchant_id, environment, kind) DO NOTHING;

ALTER TABLE journal_entries DROP CONSTRAINT journal_entries_kind_check;
ALTER TABLE journal_entries ADD CONSTRAINT journal_entries_kind_check
  CHECK (kind IN ('payment_credit', 'payment_reversal', 'payment_cleared', 'reserve_hold', 'reserve_release',
                  'payout_hold', 'payout_post', 'payout_void', 'payout_return', 'payout_paid',
                  'refund_hold', 'refund_post', 'refund_void'));

-- A balance transaction is a movement of the merchant's balance: available + pending (reserved money has
-- left it until released). Moves between pending and available (a clearing) are no movement and have no
-- row; a reserve held or released is one. balance_after_minor is available + pending after the movement.
-- pending: the row moved merchant_pending (a credit still clearing, or the reversal of one).
ALTER TABLE balance_transactions ADD COLUMN pending boolean NOT NULL DEFAULT false;

-- A payment credit that waits to clear: when it becomes available, and the part of it the rolling reserve
-- keeps and until when. One row per credited payment that did not go straight to available; the
-- clear-payments job writes payment_cleared (and reserve_hold) for each one due, exactly once (the
-- journal's unique (reference, kind)), and marks it cleared_at; a reversal before that marks it
-- reversed_at and it never clears.
CREATE TABLE ledger_clearings (
  entry_id uuid PRIMARY KEY REFERENCES journal_entries(id),
  merchant_id uuid NOT NULL REFERENCES merchants(id),
  environment text NOT NULL CHECK (environment IN ('test', 'live')),
  payment_id text NOT NULL,
  rail text NOT NULL,
  amount_minor bigint NOT NULL CHECK (amount_minor >= 1),
  available_on timestamptz NOT NULL,
  reserve_minor bigint NOT NULL DEFAULT 0 CHECK (reserve_minor >= 0 AND reserve_minor <= amount_minor),
  reserve_release_on timestamptz,
  cleared_at timestamptz,
  reversed_at timestamptz,
  reserve_released_at timestamptz,
  CHECK (reserve_minor = 0 OR reserve_release_on IS NOT NULL)
);
CREATE INDEX ledger_clearings_due_idx ON ledger_clearings (merchant_id, environment, available_on)
  WHERE cleared_at IS NULL AND reversed_at IS NULL;
CREATE INDEX ledger_clearings_reserve_due_idx ON ledger_clearings (merchant_id, environment, reserve_release_on)
  WHERE cleared_at IS NOT NULL AND reserve_minor > 0 AND reserve_released_at IS NULL;
CREATE INDEX ledger_clearings_payment_idx ON ledger_clearings (payment_id);

-- Clearing times per merchant, environment and rail, in Africa/Accra business days (0 = at once), when an
-- operator overrides the deployment's defaults; test_clearing: a Test merchant rehearses Live clearing.
-- The rolling reserve: reserve_bp basis points of each credit, held reserve_days calendar days.
CREATE TABLE clearing_settings (
  merchant_id uuid NOT NULL REFERENCES merchants(id),
  environment text NOT NULL CHECK (environment IN ('test', 'live')),
  clearing_days jsonb NOT NULL DEFAULT '{}'::jsonb,
  test_clearing boolean NOT NULL DEFAULT false,
  reserve_bp integer NOT NULL DEFAULT 0 CHECK (reserve_bp BETWEEN 0 AND 10000),
  reserve_days integer NOT NULL DEFAULT 0 CHECK (reserve_days BETWEEN 0 AND 365),
  updated_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (merchant_id, environment),
  CHECK (reserve_bp = 0 OR reserve_days >= 1)
);

-- A merchant's settlement schedule per environment (GET/POST /api/v1/settlements/schedule).
-- next_run_at: the next scheduled instant (null when manual or paused); clock_at: the latest instant the
-- merchant's runs have seen (the Test control's as_of never moves it backwards). A new settlement account
-- receives nothing before recipient_active_at (24 hours after a change). paused_reason is set when a
-- settlement failed or was returned; the merchant resumes by saving the schedule again.
CREATE TABLE settlement_schedules (
  merchant_id uuid NOT NULL REFERENCES merchants(id),
  environment text NOT NULL CHECK (environment IN ('test', 'live')),
  interval text NOT NULL CHECK (interval IN ('manual', 'daily', 'weekly', 'monthly')),
  weekly_anchor text NOT NULL DEFAULT 'monday'
    CHECK (weekly_anchor IN ('monday', 'tuesday', 'wednesday', 'thursday', 'friday', 'saturday', 'sunday')),
  monthly_anchor integer NOT NULL DEFAULT 1 CHECK (monthly_anchor BETWEEN 1 AND 28),
  time_of_day text NOT NULL DEFAULT '10:00' CHECK (time_of_day ~ '^([01][0-9]|2[0-3]):[0-5][0-9]$'),
  minimum_minor bigint NOT NULL DEFAULT 0 CHECK (minimum_minor >= 0),
  recipient_id text REFERENCES recipients(id),
  recipient_active_at timestamptz,
  next_run_at timestamptz,
  clock_at timestamptz,
  last_period_end timestamptz,
  paused_at timestamptz,
  paused_reason text CHECK (paused_reason IS NULL OR length(paused_reason) <= 500),
  paused_payout_id text,
  version integer NOT NULL DEFAULT 1,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (merchant_id, environment)
);
CREATE INDEX settlement_schedules_due_idx ON settlement_schedules (next_run_at)
  WHERE next_run_at IS NOT NULL AND paused_at IS NULL;

-- A settlement is a payout of type 'settlement' for one period; exactly one per merchant, environment and
-- period end, whatever the number of processes or restarts.
ALTER TABLE payouts
  ADD COLUMN type text NOT NULL DEFAULT 'manual' CHECK (type IN ('manual', 'settlement')),
  ADD COLUMN settlement_period_start timestamptz,
  ADD COLUMN settlement_period_end timestamptz,
  ADD CONSTRAINT payouts_settlement_period CHECK
    ((type = 'manual' AND settlement_period_start IS NULL AND settlement_period_end IS NULL)
     OR (type = 'settlement' AND settlement_period_end IS NOT NULL));
CREATE UNIQUE INDEX payouts_one_settlement_per_period ON payouts (merchant_id, environment, settlement_period_end)
  WHERE type = 'settlement';

-- The balance transactions each settlement paid out: a row belongs to at most one settlement.
CREATE TABLE settlement_transactions (
  entry_id uuid PRIMARY KEY REFERENCES journal_entries(id),
  payout_id text NOT NULL REFERENCES payouts(id),
  merchant_id uuid NOT NULL,
  environment text NOT NULL
);
CREATE INDEX settlement_transactions_payout_idx ON settlement_transactions (payout_id);
