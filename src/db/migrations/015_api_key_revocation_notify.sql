-- A revoked API key must be refused by every server process within a second (issue 14): each process
-- caches keys briefly, and listens on this channel to drop a key the moment its revocation commits.
-- A trigger, so every way of revoking (dashboard, CLI, SQL by an operator) announces it; NOTIFY is
-- delivered at commit, never for a revocation that rolled back.
CREATE FUNCTION api_key_revoked_notify() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify('sika_api_key_revoked', NEW.prefix);
  RETURN NEW;
END
$$;
CREATE TRIGGER api_keys_revoked AFTER UPDATE OF revoked_at ON api_keys
  FOR EACH ROW WHEN (OLD.revoked_at IS NULL AND NEW.revoked_at IS NOT NULL)
  EXECUTE FUNCTION api_key_revoked_notify();
