-- DESIGN: an endpoint whose deliveries have all failed for 5 days is disabled (its events stay
-- replayable). failing_since marks a failed try with no success known after it; only failures write
-- it, and rarely (events/store.ts noteEndpointFailure). Enabling the endpoint clears it.
ALTER TABLE webhook_endpoints ADD COLUMN failing_since timestamptz;
