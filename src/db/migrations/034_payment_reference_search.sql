-- The operator console's search finds a payment by our reference with its provider (issue 31), as it does by
-- the provider's transaction id (migration 033): an index, so a search never reads the whole attempts table.
CREATE INDEX payment_attempts_provider_reference_search_idx ON payment_attempts (provider_reference) WHERE provider_reference <> '';
