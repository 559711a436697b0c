-- The merchant dashboard and the operator console: operators, web sessions, lockout, audit log.
CREATE TABLE operators (
  id uuid PRIMARY KEY,
  email text NOT NULL,
  password_hash text NOT NULL,
  role text NOT NULL DEFAULT 'operator' CHECK (role IN ('operator', 'teller')),
  failed_logins integer NOT NULL DEFAULT 0,
  locked_until timestamptz,
  created_at timestamptz NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX operators_email_key ON operators (lower(email));

ALTER TABLE users ADD COLUMN failed_logins integer NOT NULL DEFAULT 0;
ALTER TABLE users ADD COLUMN locked_until timestamptz;
ALTER TABLE users ADD COLUMN invited_by_user_id uuid REFERENCES users(id);
ALTER TABLE users ADD COLUMN active boolean NOT NULL DEFAULT true;
ALTER TABLE merchants ADD COLUMN payouts_paused_reason text;

-- A signed-in browser: only the SHA-256 of the cookie token is stored.
CREATE TABLE web_sessions (
  token_hash text PRIMARY KEY,
  kind text NOT NULL CHECK (kind IN ('merchant', 'operator')),
  user_id uuid REFERENCES users(id),
  operator_id uuid REFERENCES operators(id),
  csrf_token text NOT NULL,
  environment text NOT NULL DEFAULT 'test' CHECK (environment IN ('test', 'live')),
  created_at timestamptz NOT NULL DEFAULT now(),
  expires_at timestamptz NOT NULL,
  CHECK ((kind = 'merchant' AND user_id IS NOT NULL) OR (kind = 'operator' AND operator_id IS NOT NULL))
);
CREATE INDEX web_sessions_expiry_idx ON web_sessions (expires_at);

-- Every operator and approver action: who, what, when, before and after. Append-only.
CREATE TABLE audit_log (
  id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  actor_type text NOT NULL CHECK (actor_type IN ('operator', 'user', 'system')),
  actor_id text NOT NULL,
  actor_email text,
  merchant_id uuid,
  action text NOT NULL,
  object_type text NOT NULL,
  object_id text NOT NULL,
  before jsonb,
  after jsonb,
  created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX audit_log_created_idx ON audit_log (created_at DESC);
CREATE INDEX audit_log_merchant_idx ON audit_log (merchant_id, created_at DESC);
CREATE FUNCTION audit_log_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION 'the audit log is append-only (% refused)', TG_OP USING ERRCODE = 'P0001';
END;
$$;
CREATE TRIGGER audit_log_immutable BEFORE UPDATE OR DELETE ON audit_log FOR EACH ROW EXECUTE FUNCTION audit_log_append_only();
