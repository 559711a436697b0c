// Writing a mail's bodies: absolute links from BASE_URL (a link in a mail must work from the reader's
// inbox) and the text and HTML bodies of a plain mail, the HTML escaped so that names and other user data in a
// mail are always text, never markup.

/** BASE_URL (config.baseUrl) followed by `path`, which starts with /; BASE_URL's trailing slashes dropped. */
export function absoluteUrl(baseUrl: string, path: string): string {
  if (!path.startsWith('/')) throw new Error(`assertion failed: a link's path starts with / (got ${path})`);
  return `${baseUrl.replace(/\/+$/, '')}${path}`;
}

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };
export const escapeHtml = (text: string): string => text.replace(/[&<>"']/g, (c) => ESCAPES[c]!);

/** A plain mail: paragraphs, and optionally one link (shown whole in the text body, as a button-like link in the HTML). */
export interface PlainMail {
  paragraphs: readonly string[];
  link?: { url: string; label: string };
  /** Paragraphs after the link (e.g. how long it works). */
  after?: readonly string[];
}

/** The text and HTML bodies of a plain mail (what enqueueMail takes as text and html). */
export function plainMailBodies(mail: PlainMail): { text: string; html: string } {
  const after = mail.after ?? [];
  const text = [...mail.paragraphs, ...(mail.link ? [`${mail.link.label}: ${mail.link.url}`] : []), ...after, '— Sika']
    .join('\n\n')
    .concat('\n');
  const p = (line: string) => `<p>${escapeHtml(line)}</p>`;
  const link = mail.link
    ? `<p><a href="${escapeHtml(mail.link.url)}">${escapeHtml(mail.link.label)}</a></p><p style="color:#555">Or open: ${escapeHtml(mail.link.url)}</p>`
    : '';
  const html = `<!doctype html><html><body style="font-family:sans-serif;line-height:1.5">${mail.paragraphs.map(p).join('')}${link}${after.map(p).join('')}<p>— Sika</p></body></html>`;
  return { text, html };
}
