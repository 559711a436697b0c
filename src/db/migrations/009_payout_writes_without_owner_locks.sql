-- The same reasoning as 007, for the rows a payout, a payment credit and their events write. Each of
-- these foreign keys pointed at the merchant or at the API key, both always taken from the
-- authenticated key, and merchants and keys are never deleted; each cost a FOR KEY SHARE lock on that
-- one hot row inside the insert, shared by all of a merchant's concurrent writes. A Test payout wrote
-- six of them: measured with auto_explain, the foreign-key triggers were over half the time of the
-- statement that creates it. The ledger's own references stay (lines to entries and accounts, a
-- follow-up to the entry it resolves), as do those to recipients, users, events and endpoints; the
-- ledger's invariant check still proves every line sits on an account of its entry's merchant.
ALTER TABLE payouts DROP CONSTRAINT payouts_merchant_id_fkey, DROP CONSTRAINT payouts_api_key_id_fkey;
ALTER TABLE journal_entries DROP CONSTRAINT journal_entries_merchant_id_fkey;
ALTER TABLE events DROP CONSTRAINT events_merchant_id_fkey, DROP CONSTRAINT events_api_key_id_fkey;
ALTER TABLE webhook_deliveries DROP CONSTRAINT webhook_deliveries_merchant_id_fkey;
