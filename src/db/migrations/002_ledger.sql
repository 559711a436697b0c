-- Double-entry ledger: accounts per merchant and environment, immutable balanced journal entries.
CREATE TABLE ledger_accounts (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  merchant_id uuid NOT NULL REFERENCES merchants(id),
  environment text NOT NULL CHECK (environment IN ('test', 'live')),
  kind text NOT NULL CHECK (kind IN ('merchant_available', 'merchant_held', 'provider_clearing', 'fee_revenue', 'payout_clearing')),
  -- Cached sum of the account's lines (debit positive). The merchant's own accounts are liabilities:
  -- their balance is the negated sum, and it may never be negative.
  balance_minor bigint NOT NULL DEFAULT 0,
  created_at timestamptz NOT NULL DEFAULT now(),
  UNIQUE (merchant_id, environment, kind),
  CONSTRAINT ledger_merchant_balance_not_negative CHECK (kind NOT IN ('merchant_available', 'merchant_held') OR balance_minor <= 0)
);

CREATE TABLE journal_entries (
  id uuid PRIMARY KEY,
  merchant_id uuid NOT NULL REFERENCES merchants(id),
  environment text NOT NULL CHECK (environment IN ('test', 'live')),
  kind text NOT NULL,
  reference_type text NOT NULL,
  reference_id text NOT NULL,
  reverses_entry_id uuid REFERENCES journal_entries(id),
  created_at timestamptz NOT NULL DEFAULT now(),
  -- The same business event never posts twice (exactly-once credits, reversals and payout resolutions).
  UNIQUE (reference_type, reference_id, kind)
);
CREATE INDEX journal_entries_merchant_idx ON journal_entries (merchant_id, environment, created_at);

CREATE TABLE journal_lines (
  entry_id uuid NOT NULL REFERENCES journal_entries(id),
  account_id uuid NOT NULL REFERENCES ledger_accounts(id),
  amount_minor bigint NOT NULL CHECK (amount_minor <> 0),
  PRIMARY KEY (entry_id, account_id)
);
CREATE INDEX journal_lines_account_idx ON journal_lines (account_id);

-- Entries are immutable: no UPDATE or DELETE, ever.
CREATE FUNCTION ledger_refuse_change() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION 'journal rows are immutable (% on %)', TG_OP, TG_TABLE_NAME USING ERRCODE = 'P0001';
END;
$$;
CREATE TRIGGER journal_entries_immutable BEFORE UPDATE OR DELETE ON journal_entries FOR EACH ROW EXECUTE FUNCTION ledger_refuse_change();
CREATE TRIGGER journal_lines_immutable BEFORE UPDATE OR DELETE ON journal_lines FOR EACH ROW EXECUTE FUNCTION ledger_refuse_change();

-- A payout hold is resolved exactly once: posted (paid) or voided (failed, cancelled), never both.
CREATE UNIQUE INDEX journal_entries_one_payout_resolution ON journal_entries (reference_type, reference_id) WHERE kind IN ('payout_post', 'payout_void');
