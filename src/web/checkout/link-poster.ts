// A payment link's printable poster (/l/{slug}/poster.pdf, issue 35): an A5 page a shop tapes to its counter
// or a school pins to its board. The QR code is drawn as vector squares, so it prints sharp at any size.
import { darkRuns, QUIET_ZONE_MODULES, qrModules } from './qr.ts';

export interface PosterFacts {
  merchantName: string;
  linkName: string;
  /** "GHS 25.50", or "Amount of your choice". */
  amountText: string;
  url: string;
  test: boolean;
}

/** A5 in PDF points (148 x 210 mm). */
const A5_PT: [number, number] = [419.53, 595.28];
const MARGIN_PT = 36;
/** The QR code's side with its quiet zone, in points (about 9 cm): a phone reads it from a metre away. */
const QR_SIDE_PT = 250;

export async function posterPdf(facts: PosterFacts): Promise<Buffer> {
  // pdfkit (and its fonts) loads on the first poster, not at start, as the payout receipts' (payouts/evidence.ts).
  const { default: PDFDocument } = await import('pdfkit');
  const [pageWidth] = A5_PT;
  const doc = new PDFDocument({
    size: A5_PT,
    margin: MARGIN_PT,
    info: { Title: `${facts.linkName} · ${facts.merchantName}`, Author: 'Sika' },
  });
  const chunks: Buffer[] = [];
  doc.on('data', (chunk: Buffer) => chunks.push(chunk));
  const done = new Promise<Buffer>((resolve) => doc.on('end', () => resolve(Buffer.concat(chunks))));
  const width = pageWidth - MARGIN_PT * 2;
  const centred = { width, align: 'center' as const };

  if (facts.test) doc.fontSize(10).fillColor('#a15c00').text('TEST MODE: no real money moves', centred).moveDown(0.5);
  doc.fillColor('black').font('Helvetica').fontSize(12).text('Pay', centred);
  doc.font('Helvetica-Bold').fontSize(20).text(facts.merchantName, centred).moveDown(0.3);
  doc.font('Helvetica').fontSize(15).text(facts.linkName, centred).moveDown(0.3);
  doc.font('Helvetica-Bold').fontSize(22).text(facts.amountText, centred).moveDown(0.6);

  const modules = qrModules(facts.url);
  const module = QR_SIDE_PT / (modules.length + QUIET_ZONE_MODULES * 2);
  const left = (pageWidth - QR_SIDE_PT) / 2 + QUIET_ZONE_MODULES * module;
  const top = doc.y + QUIET_ZONE_MODULES * module;
  for (const [row, col, length] of darkRuns(modules))
    doc.rect(left + col * module, top + row * module, length * module, module);
  doc.fill('black');
  doc.y = top - QUIET_ZONE_MODULES * module + QR_SIDE_PT;
  doc.x = MARGIN_PT;

  doc.font('Helvetica-Bold').fontSize(14).text('Scan to pay with Mobile Money or card', centred).moveDown(0.4);
  doc.font('Helvetica').fontSize(10).fillColor('#333333').text(facts.url, centred).moveDown(0.8);
  doc.fontSize(9).fillColor('#555555').text('Secure payment by Sika. Never share your Mobile Money PIN.', centred);
  doc.end();
  return done;
}
