-- The Payments page's search (issue 36): each kind a fragment can be is one indexed lookup within a merchant and
-- environment (src/checkout/session-search-store.ts UNIONs them), so a search stays fast at a million sessions
-- per merchant. Plain btree and GIN indexes on built-in expressions: no extension (pg_trgm would need one on
-- both storages and a privilege hosted PostgreSQL may refuse), so names match by word prefix, not anywhere.

-- An invoice reference by its beginning (LIKE 'INV-2026%'): text_pattern_ops, so the prefix is a range scan
-- whatever the database's collation.
CREATE INDEX checkout_sessions_invoice_prefix_idx
  ON checkout_sessions (merchant_id, environment, invoice_ref text_pattern_ops);

-- The customer name by word prefixes ("ama men" finds "Ama Mensah"): the expression the query spells the same way.
-- fastupdate off: new sessions go straight into the index, not a pending list every search would read until the
-- next vacuum (measured: 12 ms for a name found nowhere after a bulk insert, 0.1 ms once flushed).
CREATE INDEX checkout_sessions_customer_name_idx
  ON checkout_sessions USING gin (to_tsvector('simple'::regconfig, coalesce(customer_name, '')))
  WITH (fastupdate = off);

-- An amount as typed (500 -> 50000 pesewas), newest first: a school's one fee may be a third of its sessions, and
-- this reads only the page's rows of it.
CREATE INDEX checkout_sessions_amount_idx
  ON checkout_sessions (merchant_id, environment, amount_minor, created_at DESC, id DESC);

-- The payer's phone, in full (stored +233XXXXXXXXX) or by its last four digits.
CREATE INDEX payment_attempts_phone_idx ON payment_attempts (merchant_id, environment, phone) WHERE phone IS NOT NULL;
CREATE INDEX payment_attempts_phone_last4_idx
  ON payment_attempts (merchant_id, environment, right(phone, 4)) WHERE phone IS NOT NULL;

-- The status filter, newest first: a rare status (pending, or failed at a merchant whose payers rarely fail) is
-- read from its own rows, not by walking every session of the merchant for a page of them.
CREATE INDEX checkout_sessions_status_idx ON checkout_sessions (merchant_id, environment, status, created_at DESC, id DESC);

-- The dashboard home's figures (src/books/analytics-store.ts): a merchant's attempts in a range of days, read
-- through this index instead of a scan of every merchant's attempts.
CREATE INDEX payment_attempts_merchant_created_idx ON payment_attempts (merchant_id, environment, created_at);
