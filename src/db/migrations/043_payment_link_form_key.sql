-- The dashboard's New link form's one-time key (its hidden form_key, issue 36), kept on the link it made. The insert
-- claims the key itself (INSERT ... ON CONFLICT (merchant_id, environment, form_key) WHERE form_key IS NOT NULL DO
-- NOTHING, src/checkout/payment-link-store.ts): a second press of the same form makes nothing and is shown the link
-- the first made, read through this index. NULL for a link the API made (the API has its Idempotency-Key).
ALTER TABLE payment_links ADD COLUMN form_key text;
CREATE UNIQUE INDEX payment_links_form_key_idx ON payment_links (merchant_id, environment, form_key)
  WHERE form_key IS NOT NULL;
