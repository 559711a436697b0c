-- A merchant takes Live money only once its business is verified (issue 33). Merchants that existed
-- before were made by an operator who vouched for them: approved. activated_at is when Live opened.
-- A suspension stops new Live work; every server process hears of a change within a second through
-- the notification below (a trigger, so the CLI, the console and SQL by hand all announce it).
ALTER TABLE merchants
  ADD COLUMN activation_status text NOT NULL DEFAULT 'not_submitted'
    CHECK (activation_status IN ('not_submitted', 'under_review', 'changes_requested', 'approved', 'rejected')),
  ADD COLUMN activated_at timestamptz,
  ADD COLUMN suspended_at timestamptz,
  ADD COLUMN suspension_reason text CHECK (suspension_reason IS NULL OR length(suspension_reason) <= 500);
UPDATE merchants SET activation_status = 'approved', activated_at = created_at;

CREATE FUNCTION merchant_activation_changed_notify() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify('sika_merchant_activation_changed', NEW.id::text);
  RETURN NEW;
END
$$;
CREATE TRIGGER merchants_activation_changed AFTER UPDATE OF activation_status, suspended_at ON merchants
  FOR EACH ROW WHEN (OLD.activation_status IS DISTINCT FROM NEW.activation_status
                     OR OLD.suspended_at IS DISTINCT FROM NEW.suspended_at)
  EXECUTE FUNCTION merchant_activation_changed_notify();
