-- Issue 18: a payment credit no longer waits on the merchant's balance rows. Its journal entry and lines
-- are written as always (balanced, immutable, in the transaction of the payment), but its lines are not
-- added to the cached balances at once: they wait here, one row per line, and are applied in balance
-- order by the next statement that locks the account (a payout, refund or reversal: src/ledger/store.ts
-- entriesCtes), by the worker that applies them (apply-ledger-credits) or before the books are read.
-- The balance of an account is therefore ledger_accounts.balance_minor plus its unapplied lines; only
-- credits wait here, so a balance read without them can only be lower than the truth, never higher.
-- Every payment to one merchant used to update one row (its available balance) and hold that row's lock
-- until its transaction committed: measured, 99% of PostgreSQL's time in the payment journey was spent
-- waiting for that lock (bench/REPORT.md, "Where the journey's time goes").
-- No foreign keys: each row is a copy of a journal line written in the same statement (src/ledger/store.ts
-- writePendingEntry), whose own keys already check the entry and the account; a second check would take a
-- second KEY SHARE lock on the merchant's account rows per line, the rows every payment of the merchant
-- touches (checkInvariants compares these rows with the journal).
CREATE TABLE ledger_unapplied_lines (
  seq bigserial PRIMARY KEY,
  entry_id uuid NOT NULL,
  account_id uuid NOT NULL,
  amount_minor bigint NOT NULL,
  UNIQUE (entry_id, account_id)
);
CREATE INDEX ledger_unapplied_lines_account_idx ON ledger_unapplied_lines (account_id, seq);
