// The text of a PDF, read with unpdf (pdf.js, pure JavaScript) so the default suite needs no system
// binary such as poppler's pdftotext.
import { extractText } from 'unpdf';

/** Every page's text, pages joined with a newline. */
export async function pdfText(pdf: Buffer | Uint8Array): Promise<string> {
  // pdf.js detaches the buffer it is given: hand it a copy so the caller's bytes stay usable.
  const { text } = await extractText(new Uint8Array(pdf), { mergePages: true });
  return text;
}
