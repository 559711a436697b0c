-- DESIGN: an endpoint whose deliveries have all failed for 5 days is disabled (its events stay
-- replayable). failing_since is the first failed try after the endpoint's last success (null while the
-- last try succeeded, and again when the endpoint is enabled).
ALTER TABLE webhook_endpoints ADD COLUMN failing_since timestamptz;
