-- Issue 17, the merchant's books. Every movement of a merchant's available balance, in the order the
-- balance moved, with the balance after it: the rows of GET /api/v1/balance/transactions and its exports.
-- Written in the statement that writes the journal lines (src/ledger/store.ts entriesCtes), after the
-- account's UPDATE has locked it: seq is drawn under the account lock, so per account seq follows the order
-- the balance moved (and the order of commits), and a newer row never gets a smaller seq than a committed
-- one. created_at is the clock at that moment (not the transaction's start), so it follows seq too.
CREATE TABLE balance_transactions (
  seq bigserial PRIMARY KEY,
  entry_id uuid NOT NULL UNIQUE REFERENCES journal_entries(id),
  merchant_id uuid NOT NULL,
  environment text NOT NULL CHECK (environment IN ('test', 'live')),
  -- The change of the available balance, merchant-positive (a credit is positive).
  net_minor bigint NOT NULL CHECK (net_minor <> 0),
  balance_after_minor bigint NOT NULL CHECK (balance_after_minor >= 0),
  created_at timestamptz NOT NULL DEFAULT clock_timestamp()
);
CREATE INDEX balance_transactions_merchant_idx ON balance_transactions (merchant_id, environment, seq);
CREATE INDEX balance_transactions_merchant_time_idx ON balance_transactions (merchant_id, environment, created_at);
CREATE TRIGGER balance_transactions_immutable BEFORE UPDATE OR DELETE ON balance_transactions FOR EACH ROW EXECUTE FUNCTION ledger_refuse_change();
CREATE TRIGGER balance_transactions_no_truncate BEFORE TRUNCATE ON balance_transactions FOR EACH STATEMENT EXECUTE FUNCTION ledger_refuse_change();

-- The history written before this migration, in the order it was written (entries' created_at, then id).
INSERT INTO balance_transactions (entry_id, merchant_id, environment, net_minor, balance_after_minor, created_at)
SELECT e.id, e.merchant_id, e.environment, -l.amount_minor,
       -sum(l.amount_minor) OVER (PARTITION BY a.id ORDER BY e.created_at, e.id ROWS UNBOUNDED PRECEDING),
       e.created_at
  FROM journal_entries e
  JOIN journal_lines l ON l.entry_id = e.id
  JOIN ledger_accounts a ON a.id = l.account_id AND a.kind = 'merchant_available'
 ORDER BY e.created_at, e.id;

-- Refunds (src/refunds/): held from the available balance while pending (refund_hold), then paid to the
-- payer through the provider's clearing (refund_post) or released (refund_void), exactly once.
ALTER TABLE journal_entries DROP CONSTRAINT journal_entries_kind_check;
ALTER TABLE journal_entries ADD CONSTRAINT journal_entries_kind_check
  CHECK (kind IN ('payment_credit', 'payment_reversal', 'payout_hold', 'payout_post', 'payout_void', 'payout_return', 'payout_paid',
                  'refund_hold', 'refund_post', 'refund_void'));
CREATE UNIQUE INDEX journal_entries_one_refund_resolution ON journal_entries (reference_type, reference_id)
  WHERE kind IN ('refund_post', 'refund_void');
