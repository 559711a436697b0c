// The payer's receipt as a PDF (issue 35): the same rows as the receipt page, the number large and spaced for
// reading out, on an A5 page a payer can print or keep.
import type { Receipt } from '../../checkout/receipts.ts';
import { spacedReceiptNumber } from '../../checkout/receipt-number.ts';
import { receiptRows } from './receipt-page.ts';

export async function receiptPdf(r: Receipt): Promise<Buffer> {
  // pdfkit (and its fonts) loads on the first receipt, not at start, as the payout receipts do.
  const { default: PDFDocument } = await import('pdfkit');
  const doc = new PDFDocument({
    size: 'A5',
    margin: 40,
    info: { Title: `Receipt ${r.receiptNumber}`, Author: 'Sika' },
  });
  const chunks: Buffer[] = [];
  doc.on('data', (chunk: Buffer) => chunks.push(chunk));
  const done = new Promise<Buffer>((resolve) => doc.on('end', () => resolve(Buffer.concat(chunks))));
  doc.font('Helvetica-Bold').fontSize(16).text('Payment receipt');
  if (r.test)
    doc
      .moveDown(0.3)
      .font('Helvetica')
      .fontSize(10)
      .fillColor('#a15c00')
      .text('TEST MODE: no real money moved.')
      .fillColor('black');
  doc.moveDown(0.8).font('Helvetica').fontSize(10).fillColor('#4a5563').text('Receipt number').fillColor('black');
  doc.font('Courier-Bold').fontSize(24).text(spacedReceiptNumber(r.receiptNumber), { characterSpacing: 2 });
  doc.moveDown(0.8).fontSize(10);
  for (const [label, value] of receiptRows(r)) {
    doc.font('Helvetica-Bold').text(`${label}: `, { continued: true }).font('Helvetica').text(value);
    doc.moveDown(0.2);
  }
  doc
    .moveDown(1)
    .fontSize(8)
    .fillColor('#4a5563')
    .text(`Quote the receipt number to ${r.merchantName} or to Sika about this payment. Processed by Sika.`);
  doc.end();
  return done;
}
