-- Creating a checkout session is the hottest write. Its merchant_id and api_key_id always come from the
-- authenticated key, and merchants and API keys are never deleted (keys are revoked), so the two foreign
-- keys guarded nothing the code does not already guarantee; what they did cost was a FOR KEY SHARE lock
-- on the merchant row and the key row inside every insert. Under concurrency all of one merchant's
-- inserts shared those rows (multixacts): about a quarter of PostgreSQL's time per session create
-- (pgbench of the insert statement, 20 clients: ~5,500 -> ~7,200 statements/s without them).
ALTER TABLE checkout_sessions
  DROP CONSTRAINT checkout_sessions_merchant_id_fkey,
  DROP CONSTRAINT checkout_sessions_api_key_id_fkey;
