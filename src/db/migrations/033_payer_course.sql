-- A payer can change course (issue 31). On the attempt: what the provider knows it by (MTN's
-- financialTransactionId, Paystack's transaction id), the card's brand and last four digits, a plain
-- failure reason mapped from the provider's code, and abandoned_at: the payer (or the provider's
-- "abandoned") ended the attempt while the provider had given no final answer, so it is still asked
-- about for the late-success window and a success that arrives is applied (cancelled -> paid).
ALTER TABLE payment_attempts ADD COLUMN provider_transaction_id text CHECK (length(provider_transaction_id) <= 100);
ALTER TABLE payment_attempts ADD COLUMN card_brand text CHECK (length(card_brand) <= 30);
ALTER TABLE payment_attempts ADD COLUMN card_last4 text CHECK (card_last4 ~ '^[0-9]{4}$');
ALTER TABLE payment_attempts ADD COLUMN failure_reason text CHECK (failure_reason IN (
  'insufficient_funds', 'wrong_pin', 'timed_out', 'declined_by_payer', 'declined', 'limit_reached', 'number_not_registered', 'changed_course'));
ALTER TABLE payment_attempts ADD COLUMN abandoned_at timestamptz;
CREATE INDEX payment_attempts_abandoned_idx ON payment_attempts (created_at) WHERE status = 'cancelled' AND abandoned_at IS NOT NULL;
CREATE INDEX payment_attempts_provider_txn_idx ON payment_attempts (provider_transaction_id) WHERE provider_transaction_id IS NOT NULL;
