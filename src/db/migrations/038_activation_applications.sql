-- The Go-Live application (issue 33): one per merchant, filled in the dashboard as a draft, submitted for
-- review, decided by a compliance operator. The status lives on merchants.activation_status (migration 036);
-- this row holds what the merchant typed and what the review decided.
--
-- The draft is one jsonb document, not a column per field: it is saved half-filled (any field may be absent),
-- the directors are a list of any length, and the form's fields are read and checked as a whole by one pure
-- module (src/accounts/activation-fields.ts), which only ever stores values that passed their format check.
-- What the review searches across merchants (Ghana Card PINs, settlement accounts) is read from the document.
CREATE TABLE activation_applications (
  merchant_id uuid PRIMARY KEY REFERENCES merchants(id),
  draft jsonb NOT NULL DEFAULT '{}'::jsonb,
  -- The provider's (or in Test, the simulator's) name enquiry on the settlement account, made outside any
  -- transaction at save or submit: {source, provider, outcome, resolved_name, reason, account, checked_at}.
  name_enquiry_result jsonb,
  -- Whether the name the provider holds matches the legal name or a director's (namesMatch); null: not known.
  name_matched boolean,
  updated_at timestamptz NOT NULL DEFAULT now(),
  submitted_at timestamptz,
  decided_at timestamptz,
  decided_by text,
  decision_reason text CHECK (decision_reason IS NULL OR length(decision_reason) <= 2000),
  -- The fields or sections a reviewer asked to change (names from activation-fields.ts), shown highlighted.
  changes_requested_fields jsonb NOT NULL DEFAULT '[]'::jsonb
);
CREATE INDEX activation_applications_submitted_idx ON activation_applications (submitted_at);

-- The application's documents, stored like payout evidence: the bytes, their type read from the bytes (never
-- the name), their SHA-256. One of each kind per merchant (per director for the Ghana Card sides): a new
-- upload replaces the old one.
CREATE TABLE activation_documents (
  id text PRIMARY KEY,
  merchant_id uuid NOT NULL REFERENCES merchants(id),
  kind text NOT NULL CHECK (kind IN ('certificate_of_registration', 'ghana_card_front', 'ghana_card_back', 'proof_of_address')),
  director_index integer CHECK (director_index IS NULL OR director_index BETWEEN 0 AND 19),
  content_type text NOT NULL CHECK (content_type IN ('application/pdf', 'image/png', 'image/jpeg')),
  data bytea NOT NULL,
  sha256 text NOT NULL,
  filename text CHECK (filename IS NULL OR length(filename) <= 200),
  size integer NOT NULL CHECK (size > 0 AND size <= 5242880),
  uploaded_at timestamptz NOT NULL DEFAULT now(),
  CHECK ((kind IN ('ghana_card_front', 'ghana_card_back')) = (director_index IS NOT NULL))
);
CREATE UNIQUE INDEX activation_documents_one_of_each ON activation_documents (merchant_id, kind, coalesce(director_index, -1));

-- Compliance operators decide Go-Live applications (and must use a second factor, like every operator).
ALTER TABLE operators DROP CONSTRAINT operators_role_check;
ALTER TABLE operators ADD CONSTRAINT operators_role_check CHECK (role IN ('operator', 'teller', 'compliance'));
