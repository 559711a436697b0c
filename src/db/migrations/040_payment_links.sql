-- Issue 35: payment links, payer receipts and the SMS outbox.

-- A payment link: a page (/l/{slug}) any payer opens to start an ordinary checkout session of the merchant.
-- amount_minor is the fixed amount, or NULL when the payer chooses between amount_min_minor and amount_max_minor.
-- payments_count counts the link's sessions that succeeded; the link is used up when it reaches max_payments
-- (1 for a single-use link), counted under the link row's lock by the payment that succeeds.
CREATE TABLE payment_links (
  id text PRIMARY KEY,
  merchant_id uuid NOT NULL REFERENCES merchants(id),
  environment text NOT NULL CHECK (environment IN ('test', 'live')),
  slug text NOT NULL UNIQUE CHECK (slug ~ '^[A-Za-z0-9]{6,32}$'),
  api_key_id uuid,
  created_by_user_id uuid,
  name text NOT NULL CHECK (char_length(name) BETWEEN 1 AND 120),
  description text CHECK (description IS NULL OR char_length(description) <= 240),
  amount_minor bigint CHECK (amount_minor IS NULL OR amount_minor >= 1),
  amount_min_minor bigint NOT NULL CHECK (amount_min_minor >= 1),
  amount_max_minor bigint NOT NULL,
  currency text NOT NULL DEFAULT 'GHS',
  custom_fields jsonb NOT NULL DEFAULT '[]'::jsonb,
  single_use boolean NOT NULL DEFAULT false,
  max_payments integer CHECK (max_payments IS NULL OR max_payments >= 1),
  payments_count integer NOT NULL DEFAULT 0 CHECK (payments_count >= 0),
  active boolean NOT NULL DEFAULT true,
  expires_at timestamptz,
  redirect_url text,
  metadata jsonb NOT NULL DEFAULT '{}'::jsonb,
  version integer NOT NULL DEFAULT 1,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  CHECK (amount_min_minor <= amount_max_minor),
  CHECK (NOT single_use OR max_payments IS NULL OR max_payments = 1)
);
CREATE INDEX payment_links_merchant_idx ON payment_links (merchant_id, environment, created_at DESC, id DESC);

-- A link's sessions: made by a payer, not by an API key (their events go to every endpoint of the merchant).
ALTER TABLE checkout_sessions ALTER COLUMN api_key_id DROP NOT NULL;
ALTER TABLE checkout_sessions ADD COLUMN payment_link_id text REFERENCES payment_links(id);
-- What the payer entered in the link's custom fields: an object, key to value (NULL for a session not made by a link).
ALTER TABLE checkout_sessions ADD COLUMN custom_fields jsonb;
-- The payer's receipt number, given when the session succeeds (src/checkout/receipt-number.ts).
ALTER TABLE checkout_sessions ADD COLUMN receipt_number text;
CREATE UNIQUE INDEX checkout_sessions_receipt_number_idx ON checkout_sessions (receipt_number) WHERE receipt_number IS NOT NULL;
CREATE INDEX checkout_sessions_link_idx ON checkout_sessions (payment_link_id, created_at DESC, id DESC)
  WHERE payment_link_id IS NOT NULL;

-- A receipt sent to a payer on their request, once per session, channel and address (the page may be asked again).
CREATE TABLE receipt_deliveries (
  session_id text NOT NULL REFERENCES checkout_sessions(id),
  channel text NOT NULL CHECK (channel IN ('email', 'sms')),
  recipient text NOT NULL CHECK (length(recipient) BETWEEN 3 AND 254),
  outbox_id text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (session_id, channel, recipient)
);

-- Every SMS Sika sends, as mail_outbox: a row written in the transaction that causes it, sent by the send-sms
-- worker outside any transaction through the configured provider (Hubtel or mNotify).
CREATE TABLE sms_outbox (
  id text PRIMARY KEY,
  kind text NOT NULL CHECK (length(kind) BETWEEN 1 AND 64),
  merchant_id uuid REFERENCES merchants(id),
  to_phone text NOT NULL CHECK (to_phone ~ '^233[0-9]{9}$'),
  body text NOT NULL CHECK (length(body) BETWEEN 1 AND 480),
  status text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'sent', 'logged', 'failed')),
  attempts integer NOT NULL DEFAULT 0,
  next_attempt_at timestamptz NOT NULL DEFAULT now(),
  lease_token text,
  lease_expires_at timestamptz,
  last_error text,
  provider text,
  provider_message_id text,
  sent_at timestamptz,
  created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX sms_outbox_due_idx ON sms_outbox (next_attempt_at) WHERE status = 'pending';
CREATE INDEX sms_outbox_created_idx ON sms_outbox (created_at DESC, id DESC);
