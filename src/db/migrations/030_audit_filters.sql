-- Issue 30: the audit page's filters and keyset paging. Newest first on the id (the primary key); the filters narrow
-- by actor (id, or email case-insensitively), action, object (type and id); the merchant filter keeps
-- audit_log_merchant_idx. The action and object type indexes also serve the filters' choices (a loose index
-- scan per value, src/audit/store.ts distinctValues).
CREATE INDEX audit_log_actor_idx ON audit_log (actor_id, id DESC);
CREATE INDEX audit_log_actor_email_idx ON audit_log (lower(actor_email), id DESC);
CREATE INDEX audit_log_action_idx ON audit_log (action, id DESC);
CREATE INDEX audit_log_object_idx ON audit_log (object_type, object_id, id DESC);
-- The merchants list: newest first on (created_at, id).
CREATE INDEX merchants_created_idx ON merchants (created_at DESC, id DESC);
