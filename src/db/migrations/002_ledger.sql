-- Double-entry ledger: accounts per merchant and environment, immutable balanced journal entries.
-- Sign convention: debit positive, credit negative; the lines of an entry sum to zero.
CREATE TABLE ledger_accounts (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  merchant_id uuid NOT NULL REFERENCES merchants(id),
  environment text NOT NULL CHECK (environment IN ('test', 'live')),
  kind text NOT NULL CHECK (kind IN ('merchant_available', 'merchant_held', 'provider_clearing', 'fee_revenue', 'payout_clearing')),
  -- Cached sum of the account's lines (debit positive), written in the statement that writes the lines.
  -- The merchant's own accounts are liabilities (credit-normal): the merchant's balance is the negated
  -- sum, and it may never be negative, so the stored sum may never be positive.
  balance_minor bigint NOT NULL DEFAULT 0,
  created_at timestamptz NOT NULL DEFAULT now(),
  UNIQUE (merchant_id, environment, kind),
  CONSTRAINT ledger_merchant_balance_not_negative CHECK (kind NOT IN ('merchant_available', 'merchant_held') OR balance_minor <= 0)
);

CREATE TABLE journal_entries (
  id uuid PRIMARY KEY,
  merchant_id uuid NOT NULL REFERENCES merchants(id),
  environment text NOT NULL CHECK (environment IN ('test', 'live')),
  kind text NOT NULL CHECK (kind IN ('payment_credit', 'payment_reversal', 'payout_hold', 'payout_post', 'payout_void', 'payout_return')),
  reference_type text NOT NULL CHECK (length(reference_type) BETWEEN 1 AND 40),
  reference_id text NOT NULL CHECK (length(reference_id) BETWEEN 1 AND 200),
  -- A reversal points at the entry it undoes; a payout resolution at its hold; a return at its post.
  reverses_entry_id uuid REFERENCES journal_entries(id),
  created_at timestamptz NOT NULL DEFAULT now(),
  -- The same business event never posts twice (exactly-once credits, reversals and payout resolutions).
  CONSTRAINT journal_entries_once UNIQUE (reference_type, reference_id, kind)
);
CREATE INDEX journal_entries_merchant_idx ON journal_entries (merchant_id, environment, created_at);

-- A payout hold is resolved exactly once: posted (paid) or voided (failed, cancelled), never both.
CREATE UNIQUE INDEX journal_entries_one_payout_resolution ON journal_entries (reference_type, reference_id) WHERE kind IN ('payout_post', 'payout_void');

CREATE TABLE journal_lines (
  entry_id uuid NOT NULL REFERENCES journal_entries(id),
  account_id uuid NOT NULL REFERENCES ledger_accounts(id),
  amount_minor bigint NOT NULL CHECK (amount_minor <> 0),
  PRIMARY KEY (entry_id, account_id)
);
CREATE INDEX journal_lines_account_idx ON journal_lines (account_id);

-- Entries are immutable: no UPDATE, DELETE or TRUNCATE, ever. A correction is a new entry.
CREATE FUNCTION ledger_refuse_change() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION 'journal rows are immutable (% on %)', TG_OP, TG_TABLE_NAME USING ERRCODE = 'P0001';
END;
$$;
CREATE TRIGGER journal_entries_immutable BEFORE UPDATE OR DELETE ON journal_entries FOR EACH ROW EXECUTE FUNCTION ledger_refuse_change();
CREATE TRIGGER journal_lines_immutable BEFORE UPDATE OR DELETE ON journal_lines FOR EACH ROW EXECUTE FUNCTION ledger_refuse_change();
CREATE TRIGGER journal_entries_no_truncate BEFORE TRUNCATE ON journal_entries FOR EACH STATEMENT EXECUTE FUNCTION ledger_refuse_change();
CREATE TRIGGER journal_lines_no_truncate BEFORE TRUNCATE ON journal_lines FOR EACH STATEMENT EXECUTE FUNCTION ledger_refuse_change();

-- Backstop for the assertion in code: at commit, every entry touched has at least two lines summing to zero.
-- Deferred, so the lines of an entry may be written by several statements of one transaction.
CREATE FUNCTION ledger_check_entry_balanced() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  checked_entry_id uuid;
  lines_sum numeric;
  lines_count bigint;
BEGIN
  -- Separate statements: PL/pgSQL resolves NEW's fields per statement, and each table has only one of them.
  IF TG_TABLE_NAME = 'journal_entries' THEN
    checked_entry_id := NEW.id;
  ELSE
    checked_entry_id := NEW.entry_id;
  END IF;
  SELECT coalesce(sum(amount_minor), 0), count(*) INTO lines_sum, lines_count FROM journal_lines WHERE entry_id = checked_entry_id;
  IF lines_sum <> 0 OR lines_count < 2 THEN
    RAISE EXCEPTION 'unbalanced ledger entry %: % lines summing to %', checked_entry_id, lines_count, lines_sum
      USING ERRCODE = 'check_violation', CONSTRAINT = 'journal_entry_balanced';
  END IF;
  RETURN NULL;
END;
$$;
CREATE CONSTRAINT TRIGGER journal_entry_balanced AFTER INSERT ON journal_entries DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION ledger_check_entry_balanced();
CREATE CONSTRAINT TRIGGER journal_lines_balanced AFTER INSERT ON journal_lines DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION ledger_check_entry_balanced();
