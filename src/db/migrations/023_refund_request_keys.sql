-- A refund form's one-time key (the dashboard renders one per form): a double click or a re-sent form
-- finds the refund the first submission made instead of making a second one. Unique per merchant and
-- environment; the API uses Idempotency-Key instead and leaves it null.
ALTER TABLE refunds ADD COLUMN request_key text CHECK (length(request_key) BETWEEN 1 AND 100);
CREATE UNIQUE INDEX refunds_request_key_idx ON refunds (merchant_id, environment, request_key) WHERE request_key IS NOT NULL;
