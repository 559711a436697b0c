-- Webhook delivery: one delivery per (event, endpoint), every try logged. Secrets rotate with an overlap.
ALTER TABLE webhook_endpoints ADD COLUMN previous_secret text;
ALTER TABLE webhook_endpoints ADD COLUMN previous_secret_expires_at timestamptz;
ALTER TABLE webhook_endpoints ADD COLUMN disabled_reason text;

CREATE TABLE webhook_deliveries (
  id uuid PRIMARY KEY,
  event_id text NOT NULL REFERENCES events(id),
  endpoint_id uuid NOT NULL REFERENCES webhook_endpoints(id),
  merchant_id uuid NOT NULL REFERENCES merchants(id),
  environment text NOT NULL CHECK (environment IN ('test', 'live')),
  status text NOT NULL CHECK (status IN ('pending', 'delivered', 'failed', 'skipped')),
  tries integer NOT NULL DEFAULT 0,
  next_attempt_at timestamptz NOT NULL DEFAULT now(),
  -- a claim: while locked_until is in the future one worker owns the delivery; a crash lets it lapse
  locked_until timestamptz,
  last_http_status integer,
  last_error text,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  delivered_at timestamptz,
  UNIQUE (event_id, endpoint_id)
);
CREATE INDEX webhook_deliveries_due_idx ON webhook_deliveries (next_attempt_at) WHERE status = 'pending';
CREATE INDEX webhook_deliveries_endpoint_idx ON webhook_deliveries (endpoint_id, created_at DESC);
CREATE INDEX webhook_deliveries_failed_idx ON webhook_deliveries (merchant_id, updated_at) WHERE status = 'failed';

CREATE TABLE webhook_delivery_attempts (
  id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  delivery_id uuid NOT NULL REFERENCES webhook_deliveries(id),
  try_number integer NOT NULL,
  attempted_at timestamptz NOT NULL DEFAULT now(),
  http_status integer,
  latency_ms integer NOT NULL,
  error text,
  response_excerpt text CHECK (length(response_excerpt) <= 1024),
  worker_id text NOT NULL
);
CREATE INDEX webhook_delivery_attempts_delivery_idx ON webhook_delivery_attempts (delivery_id, attempted_at);
