-- Live providers (issue 16). Each attempt and payout remembers which provider it was sent to and our
-- reference with it, written before the provider is called; a provider's webhook or callback finds the
-- attempt or payout by that pair.
CREATE UNIQUE INDEX payment_attempts_provider_reference_idx ON payment_attempts (provider, provider_reference)
  WHERE provider IN ('paystack', 'mtn_momo') AND provider_reference <> '';

ALTER TABLE payouts ADD COLUMN provider text;
ALTER TABLE payouts ADD COLUMN provider_reference text;
-- How many times a pending transfer was asked about: the next question waits longer (bounded backoff).
ALTER TABLE payouts ADD COLUMN status_checks integer NOT NULL DEFAULT 0;
CREATE UNIQUE INDEX payouts_provider_reference_idx ON payouts (provider, provider_reference) WHERE provider_reference IS NOT NULL;

-- Provider webhooks already acted on (Paystack may send one more than once): the second is answered
-- without asking the provider again.
CREATE TABLE provider_events (
  provider text NOT NULL,
  event_key text NOT NULL,
  event_type text NOT NULL,
  reference text,
  received_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (provider, event_key)
);

-- Live attempts that expired may still be confirmed paid by their provider: status checks keep asking
-- for a while (the pending ones use payment_attempts_pending_idx).
CREATE INDEX payment_attempts_expired_live_idx ON payment_attempts (created_at) WHERE status = 'expired' AND environment = 'live';
