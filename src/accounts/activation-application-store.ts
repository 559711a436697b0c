// SQL of the Go-Live application and its documents (migration 038).
import type { Queryable } from '../db/index.ts';
import { firstRow } from '../db/first-row.ts';
import type { ActivationStatus } from './activation-model.ts';
import type { DocumentKind } from './activation-fields.ts';

export interface ApplicationRow {
  merchant_id: string;
  draft: unknown;
  name_enquiry_result: unknown;
  name_matched: boolean | null;
  updated_at: Date;
  submitted_at: Date | null;
  decided_at: Date | null;
  decided_by: string | null;
  decision_reason: string | null;
  changes_requested_fields: unknown;
}

const COLUMNS = `merchant_id, draft, name_enquiry_result, name_matched, updated_at, submitted_at, decided_at,
  decided_by, decision_reason, changes_requested_fields`;

export const findApplication = (db: Queryable, merchantId: string): Promise<ApplicationRow | null> =>
  firstRow(
    db.query<ApplicationRow>(`SELECT ${COLUMNS} FROM activation_applications WHERE merchant_id = $1`, [merchantId]),
  );

/** The row, made empty first if the merchant has none, and locked for the rest of tx. */
export async function lockApplication(tx: Queryable, merchantId: string): Promise<ApplicationRow> {
  await tx.query('INSERT INTO activation_applications (merchant_id) VALUES ($1) ON CONFLICT (merchant_id) DO NOTHING', [
    merchantId,
  ]);
  return (await firstRow(
    tx.query<ApplicationRow>(`SELECT ${COLUMNS} FROM activation_applications WHERE merchant_id = $1 FOR UPDATE`, [
      merchantId,
    ]),
  ))!;
}

export async function saveDraft(
  tx: Queryable,
  merchantId: string,
  draft: unknown,
  nameEnquiry: { result: unknown; matched: boolean | null } | null,
): Promise<void> {
  await tx.query(
    `UPDATE activation_applications SET draft = $2::jsonb, name_enquiry_result = $3::jsonb, name_matched = $4,
       updated_at = now() WHERE merchant_id = $1`,
    [
      merchantId,
      JSON.stringify(draft),
      nameEnquiry ? JSON.stringify(nameEnquiry.result) : null,
      nameEnquiry?.matched ?? null,
    ],
  );
}

export const touchApplication = (tx: Queryable, merchantId: string) =>
  tx.query('UPDATE activation_applications SET updated_at = now() WHERE merchant_id = $1', [merchantId]);

export const markSubmitted = (tx: Queryable, merchantId: string) =>
  tx.query('UPDATE activation_applications SET submitted_at = now() WHERE merchant_id = $1', [merchantId]);

export const recordDecision = (
  tx: Queryable,
  merchantId: string,
  d: { decidedBy: string; reason: string | null; changesRequestedFields: readonly string[] },
) =>
  tx.query(
    `UPDATE activation_applications SET decided_at = now(), decided_by = $2, decision_reason = $3,
       changes_requested_fields = $4::jsonb WHERE merchant_id = $1`,
    [merchantId, d.decidedBy, d.reason, JSON.stringify(d.changesRequestedFields)],
  );

export interface QueueRow {
  merchant_id: string;
  merchant_name: string;
  legal_name: string | null;
  submitted_at: Date;
  name_matched: boolean | null;
}

/** Applications waiting for review, oldest submission first. */
export const listUnderReview = (db: Queryable, limit: number) =>
  db.query<QueueRow>(
    `SELECT a.merchant_id, m.name AS merchant_name, a.draft->>'legal_name' AS legal_name, a.submitted_at, a.name_matched
       FROM activation_applications a JOIN merchants m ON m.id = a.merchant_id
      WHERE m.activation_status = 'under_review' AND a.submitted_at IS NOT NULL
      ORDER BY a.submitted_at, a.merchant_id LIMIT $1`,
    [limit],
  );

export interface DuplicateRow {
  merchant_id: string;
  merchant_name: string;
  activation_status: ActivationStatus;
  what: 'ghana_card_pin' | 'settlement_account';
  value: string;
}

/** Other merchants' applications naming one of these Ghana Card PINs, or the same settlement account. */
export const findDuplicates = (
  db: Queryable,
  merchantId: string,
  pins: readonly string[],
  account: { type: string; institution: string; number: string } | null,
) =>
  db.query<DuplicateRow>(
    `SELECT a.merchant_id, m.name AS merchant_name, m.activation_status, 'ghana_card_pin' AS what, d->>'ghana_card_pin' AS value
       FROM activation_applications a JOIN merchants m ON m.id = a.merchant_id,
            jsonb_array_elements(CASE WHEN jsonb_typeof(a.draft->'directors') = 'array' THEN a.draft->'directors' ELSE '[]'::jsonb END) d
      WHERE a.merchant_id <> $1 AND d->>'ghana_card_pin' = ANY($2::text[])
     UNION ALL
     SELECT a.merchant_id, m.name, m.activation_status, 'settlement_account', a.draft->'settlement'->>'account_number'
       FROM activation_applications a JOIN merchants m ON m.id = a.merchant_id
      WHERE a.merchant_id <> $1 AND $3::text IS NOT NULL
        AND a.draft->'settlement'->>'type' = $3
        AND coalesce(a.draft->'settlement'->>'bank_code', a.draft->'settlement'->>'network') = $4
        AND a.draft->'settlement'->>'account_number' = $5
     ORDER BY 4, 5, 2`,
    [merchantId, pins, account?.type ?? null, account?.institution ?? null, account?.number ?? null],
  );

// ---- documents ----

export interface DocumentRow {
  id: string;
  merchant_id: string;
  kind: DocumentKind;
  director_index: number | null;
  content_type: string;
  sha256: string;
  filename: string | null;
  size: number;
  uploaded_at: Date;
}

const DOCUMENT_COLUMNS = 'id, merchant_id, kind, director_index, content_type, sha256, filename, size, uploaded_at';

/** Stores a document, replacing the merchant's earlier one of the same kind (and director). */
export async function replaceDocument(
  tx: Queryable,
  d: Omit<DocumentRow, 'uploaded_at' | 'size'> & { data: Buffer },
): Promise<void> {
  await tx.query(
    `DELETE FROM activation_documents WHERE merchant_id = $1 AND kind = $2 AND coalesce(director_index, -1) = coalesce($3::integer, -1)`,
    [d.merchant_id, d.kind, d.director_index],
  );
  await tx.query(
    `INSERT INTO activation_documents (id, merchant_id, kind, director_index, content_type, data, sha256, filename, size)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
    [d.id, d.merchant_id, d.kind, d.director_index, d.content_type, d.data, d.sha256, d.filename, d.data.length],
  );
}

export const listDocuments = (db: Queryable, merchantId: string) =>
  db.query<DocumentRow>(
    `SELECT ${DOCUMENT_COLUMNS} FROM activation_documents WHERE merchant_id = $1 ORDER BY kind, director_index`,
    [merchantId],
  );

export const findDocument = (db: Queryable, documentId: string) =>
  firstRow(
    db.query<DocumentRow & { data: Uint8Array }>(
      `SELECT ${DOCUMENT_COLUMNS}, data FROM activation_documents WHERE id = $1`,
      [documentId],
    ),
  );

/** A removed director's Ghana Card sides go, and those of the directors after it move up one place. */
export async function dropDirectorDocuments(tx: Queryable, merchantId: string, index: number): Promise<void> {
  await tx.query('DELETE FROM activation_documents WHERE merchant_id = $1 AND director_index = $2', [
    merchantId,
    index,
  ]);
  // Moved in increasing order, one at a time, so the one-of-each index never sees two at one place.
  const later = await tx.query<{ id: string; director_index: number }>(
    'SELECT id, director_index FROM activation_documents WHERE merchant_id = $1 AND director_index > $2 ORDER BY director_index',
    [merchantId, index],
  );
  for (const row of later)
    await tx.query('UPDATE activation_documents SET director_index = $2 WHERE id = $1', [
      row.id,
      row.director_index - 1,
    ]);
}
