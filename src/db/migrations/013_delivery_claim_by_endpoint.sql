-- Claiming due webhook deliveries (events/store.ts claimDueDeliveries) finds the endpoints with pending
-- deliveries by skipping through this index, then reads each endpoint's earliest due ones from it: the
-- cost of a claim follows the number of endpoints, not the size of the backlog (a window over every due
-- delivery cost 4 ms per claim at 1,000 pending and 10 ms at 5,000, and claims come one freed slot at a time).
CREATE INDEX webhook_deliveries_endpoint_due_idx ON webhook_deliveries (endpoint_id, next_attempt_at) WHERE status = 'pending';
