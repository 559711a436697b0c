-- DESIGN (provider status checks): an attempt still pending 5 minutes after it started is checked with
-- its provider, then on a backoff until it is final or expired. Each claim of a check counts it and
-- sets the next one, so a crash between the claim and the provider's answer never repeats it at once.
ALTER TABLE payment_attempts
  ADD COLUMN status_checks integer NOT NULL DEFAULT 0,
  ADD COLUMN next_status_check_at timestamptz;
