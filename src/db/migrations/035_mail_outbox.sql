-- Every e-mail Sika sends (issue 33): written here in the transaction that causes it, sent by the
-- send-mail worker over SMTP outside any transaction, retried on failure, never lost. With no SMTP_URL
-- a mail is written to the log instead and kept here for the operator console (status 'logged').
CREATE TABLE mail_outbox (
  id text PRIMARY KEY,
  kind text NOT NULL CHECK (length(kind) BETWEEN 1 AND 64),
  merchant_id uuid REFERENCES merchants(id),
  to_address text NOT NULL CHECK (length(to_address) BETWEEN 3 AND 254),
  subject text NOT NULL CHECK (length(subject) BETWEEN 1 AND 300),
  text_body text NOT NULL,
  html_body text NOT NULL,
  status text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'sent', 'logged', 'failed')),
  attempts integer NOT NULL DEFAULT 0,
  next_attempt_at timestamptz NOT NULL DEFAULT now(),
  lease_token text,
  lease_expires_at timestamptz,
  last_error text,
  message_id text,
  sent_at timestamptz,
  created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX mail_outbox_due_idx ON mail_outbox (next_attempt_at) WHERE status = 'pending';
CREATE INDEX mail_outbox_created_idx ON mail_outbox (created_at DESC, id DESC);
CREATE INDEX mail_outbox_to_idx ON mail_outbox (lower(to_address), created_at DESC);
