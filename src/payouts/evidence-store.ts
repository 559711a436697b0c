// Evidence files attached to payouts, and what a receipt reads besides the payout: their SQL.
import type { Environment } from '../lib/environment.ts';
import type { Queryable } from '../db/index.ts';

export interface EvidenceRow {
  id: string;
  payout_id: string;
  content_type: string;
  size_bytes: number;
  sha256: string;
  filename: string | null;
  created_at: Date;
}

export const insertEvidence = (
  tx: Queryable,
  e: {
    id: string;
    payoutId: string;
    merchantId: string;
    environment: Environment;
    contentType: string;
    data: Buffer;
    sha256: string;
    filename: string | null;
    uploadedBy: string;
  },
) =>
  tx.query(
    `INSERT INTO payout_evidence (id, payout_id, merchant_id, environment, content_type, size_bytes, sha256, filename, data, uploaded_by)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`,
    [
      e.id,
      e.payoutId,
      e.merchantId,
      e.environment,
      e.contentType,
      e.data.length,
      e.sha256,
      e.filename,
      e.data,
      e.uploadedBy,
    ],
  );

export const listEvidence = (db: Queryable, payoutId: string) =>
  db.query<EvidenceRow>(
    'SELECT id, payout_id, content_type, size_bytes, sha256, filename, created_at FROM payout_evidence WHERE payout_id = $1 ORDER BY created_at',
    [payoutId],
  );

export async function findEvidence(db: Queryable, payoutId: string, evidenceId: string) {
  const rows = await db.query<EvidenceRow & { data: Uint8Array }>(
    'SELECT id, payout_id, content_type, size_bytes, sha256, filename, created_at, data FROM payout_evidence WHERE id = $1 AND payout_id = $2',
    [evidenceId, payoutId],
  );
  return rows[0] ?? null;
}

/** The merchant's name, printed on a payout receipt. */
export async function merchantName(db: Queryable, merchantId: string): Promise<string> {
  return (await db.query<{ name: string }>('SELECT name FROM merchants WHERE id = $1', [merchantId]))[0]!.name;
}
