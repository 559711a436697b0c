-- Issue 37: fewer index writes per webhook delivery.
-- webhook_deliveries_due_idx (next_try_at, pending only) has served no query since 013: the claim reads
-- webhook_deliveries_endpoint_due_idx (endpoint, next_try_at), and every pending row and every non-HOT update
-- of one still wrote an entry here.
DROP INDEX IF EXISTS webhook_deliveries_due_idx;
-- A claim changes only locked_until and tries, no indexed column (src/events/store.ts claimDueDeliveries): with
-- room left on its page it is a HOT update and writes no index entry. New pages keep 20% free for it; pages
-- written before this migration gain it as they are rewritten (VACUUM FULL, or as rows are archived).
ALTER TABLE webhook_deliveries SET (fillfactor = 80);
