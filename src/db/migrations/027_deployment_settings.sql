-- Issue 29: what the server was started with, for the `sika` CLI. A CLI run on the same storage (a hosted
-- PostgreSQL database, or an embedded data dir while no server holds it) builds sign-in links and payer
-- URLs, and judges webhook targets, by the deployment's settings rather than by its own shell's guess.
--
-- One row, written by every server process at start (the last one started wins: processes of one
-- deployment share their settings). webhook_allow_private_targets is the resolved rule
-- (WEBHOOK_ALLOW_PRIVATE_TARGETS, or its default from a loopback BASE_URL), not the raw variable.
CREATE TABLE deployment_settings (
  singleton boolean PRIMARY KEY DEFAULT true CHECK (singleton),
  base_url text NOT NULL CHECK (length(base_url) <= 2000),
  checkout_url_host text NOT NULL CHECK (length(checkout_url_host) <= 2000),
  webhook_allow_private_targets boolean NOT NULL,
  recorded_at timestamptz NOT NULL DEFAULT now()
);
