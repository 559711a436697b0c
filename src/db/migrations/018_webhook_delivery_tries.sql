-- One name per concept (issue 15): a webhook delivery is sent in tries (try_number, the delivery's
-- tries count); "attempt" is a payment attempt only.
ALTER TABLE webhook_delivery_attempts RENAME TO webhook_delivery_tries;
ALTER TABLE webhook_delivery_tries RENAME COLUMN attempted_at TO tried_at;
ALTER INDEX webhook_delivery_attempts_delivery_idx RENAME TO webhook_delivery_tries_delivery_idx;
ALTER TABLE webhook_deliveries RENAME COLUMN next_attempt_at TO next_try_at;
