// Evidence files and receipts for payouts.
import { createHash } from 'node:crypto';
import type { ApiPrincipal } from '../lib/environment.ts';
import type { Db, Queryable } from '../db/index.ts';
import { SikaError, errors } from '../lib/errors.ts';
import { sniffContentType } from '../lib/file-types.ts';
import { formatGhs, maskPhone } from '../lib/ghana.ts';
import { newId } from '../lib/ids.ts';
import { EVIDENCE_BYTES_MAX, EVIDENCE_FILENAME_LENGTH_MAX, STATUS_LABELS, maskAccountNumber } from './model.ts';
import { insertEvidence, merchantName } from './evidence-store.ts';
import type { PayoutRow } from './payout-store.ts';
import { findRecipient } from './recipient-store.ts';

/** One insert: in the caller's transaction when db is one (the API's, with its Idempotency-Key). */
export async function addEvidence(
  db: Queryable,
  principal: ApiPrincipal | null,
  payout: PayoutRow,
  file: { data: Buffer; filename: string | null },
  uploadedBy: string,
) {
  if (file.data.length === 0) throw errors.invalidArgument('The evidence file is empty.');
  if (file.data.length > EVIDENCE_BYTES_MAX)
    throw new SikaError('PAYLOAD_TOO_LARGE', `Evidence files may be at most ${EVIDENCE_BYTES_MAX} bytes.`);
  const contentType = sniffContentType(file.data);
  if (!contentType)
    throw new SikaError(
      'UNSUPPORTED_MEDIA_TYPE',
      'Evidence must be a PDF, PNG or JPEG file (checked by content, not name).',
    );
  const id = newId('evd');
  await insertEvidence(db, {
    id,
    payoutId: payout.id,
    merchantId: payout.merchant_id,
    environment: principal?.environment ?? payout.environment,
    contentType,
    data: file.data,
    sha256: createHash('sha256').update(file.data).digest('hex'),
    filename: file.filename?.slice(0, EVIDENCE_FILENAME_LENGTH_MAX) ?? null,
    uploadedBy,
  });
  return {
    id,
    object: 'evidence' as const,
    payout_id: payout.id,
    content_type: contentType,
    size_bytes: file.data.length,
    filename: file.filename ?? null,
  };
}

/** Receipt PDF: only for paid or returned payouts (409 otherwise). */
export async function receiptPdf(db: Db, payout: PayoutRow): Promise<Buffer> {
  if (payout.status !== 'paid' && payout.status !== 'returned') {
    throw new SikaError(
      'RECEIPT_NOT_AVAILABLE',
      `A receipt exists once a payout is paid; this one is ${payout.status}.`,
    );
  }
  const recipient = (await findRecipient(db, payout.merchant_id, payout.environment, payout.recipient_id))!;
  const merchant = await merchantName(db, payout.merchant_id);
  const maskedRecipient =
    recipient.account_type === 'bank'
      ? `${recipient.account_name}, ${recipient.bank_name ?? 'bank'} account ${maskAccountNumber(recipient.account_number ?? '')}`
      : `${recipient.account_name}, ${recipient.network?.toUpperCase()} wallet ${maskPhone(recipient.phone ?? '')}`;
  // pdfkit (and its fonts) loads on the first receipt, not at start: 28 MB and 0.3 s that most processes never use.
  const { default: PDFDocument } = await import('pdfkit');
  const doc = new PDFDocument({
    size: 'A4',
    margin: 56,
    info: { Title: `Payout receipt ${payout.reference}`, Author: 'Sika' },
  });
  const chunks: Buffer[] = [];
  doc.on('data', (chunk: Buffer) => chunks.push(chunk));
  const done = new Promise<Buffer>((resolve) => doc.on('end', () => resolve(Buffer.concat(chunks))));
  doc.fontSize(20).text('Sika payout receipt');
  if (payout.environment === 'test')
    doc.moveDown(0.3).fontSize(11).fillColor('#a15c00').text('TEST MODE: no money was sent.').fillColor('black');
  doc.moveDown();
  const rows: [string, string][] = [
    ['Reference', payout.reference],
    ['Merchant', merchant],
    ['Client reference', payout.client_reference],
    ['Recipient', maskedRecipient],
    ['Amount', formatGhs(payout.amount_minor)],
    ['Fee', formatGhs(payout.fee_minor)],
    ['Total debit', formatGhs(payout.total_debit_minor)],
    ['Status', `${payout.status} (${STATUS_LABELS[payout.status]})`],
    ['Bank reference', payout.bank_reference || '-'],
    ...(payout.return_reference ? ([['Return reference', payout.return_reference]] as [string, string][]) : []),
    ['Created', payout.created_at.toISOString()],
    ['Paid', payout.paid_at ? payout.paid_at.toISOString() : '-'],
    ['Issued', new Date().toISOString()],
  ];
  doc.fontSize(11);
  for (const [label, value] of rows) {
    doc.font('Helvetica-Bold').text(`${label}: `, { continued: true }).font('Helvetica').text(value);
    doc.moveDown(0.2);
  }
  doc.end();
  return done;
}
