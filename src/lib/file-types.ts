// What an uploaded file is, read from its bytes (never its name or the browser's type): payout evidence and
// the Go-Live application's documents take PDF, PNG and JPEG only.

export type DocumentContentType = 'application/pdf' | 'image/png' | 'image/jpeg';

/** What the bytes are, whatever the name says: PDF, PNG or JPEG, else null. */
export function sniffContentType(data: Buffer): DocumentContentType | null {
  if (data.subarray(0, 5).toString('latin1') === '%PDF-') return 'application/pdf';
  if (data.subarray(0, 8).equals(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]))) return 'image/png';
  if (data.length >= 3 && data[0] === 0xff && data[1] === 0xd8 && data[2] === 0xff) return 'image/jpeg';
  return null;
}
