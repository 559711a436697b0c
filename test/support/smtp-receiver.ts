// A real SMTP server for tests (the smtp-server package) on 127.0.0.1 and a random port: it keeps each message it
// accepts, read into its envelope, headers and text and HTML parts (a small MIME reader for what nodemailer
// writes: multipart/alternative, quoted-printable or base64, encoded-word headers), can refuse the next N
// messages with a given reply (4xx or 5xx), and checks the SMTP_URL's user and password when it has them.
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { SMTPServer } from 'smtp-server';

export interface ReceivedMail {
  /** The envelope: MAIL FROM and RCPT TO. */
  mailFrom: string;
  rcptTo: string[];
  /** Header names lower-cased, encoded words decoded. */
  headers: Record<string, string>;
  from: string;
  to: string;
  subject: string;
  text: string;
  html: string;
  /** The user that authenticated, if any. */
  user: string | null;
}

const WAIT_MS_DEFAULT = 10_000;

export class SmtpReceiver {
  readonly messages: ReceivedMail[] = [];
  /** Every message the server refused, with the reply it got. */
  readonly refused: { subject: string; code: number }[] = [];
  private refusals: { code: number; message: string }[] = [];
  private server: SMTPServer | null = null;
  private port = 0;

  constructor(private readonly credentials: { user: string; pass: string } | null = null) {}

  async start(): Promise<this> {
    const credentials = this.credentials;
    this.server = new SMTPServer({
      logger: false,
      disabledCommands: credentials ? ['STARTTLS'] : ['STARTTLS', 'AUTH'],
      authOptional: !credentials,
      allowInsecureAuth: true,
      onAuth(auth, _session, callback) {
        if (credentials && auth.username === credentials.user && auth.password === credentials.pass)
          return callback(null, { user: auth.username });
        return callback(new Error('Invalid username or password'));
      },
      onData: (stream, session, callback) => {
        const chunks: Buffer[] = [];
        stream.on('data', (chunk: Buffer) => chunks.push(chunk));
        stream.on('end', () => {
          const mail = parseMessage(Buffer.concat(chunks).toString('utf8'));
          const refusal = this.refusals.shift();
          if (refusal) {
            this.refused.push({ subject: mail.subject, code: refusal.code });
            const error = Object.assign(new Error(refusal.message), { responseCode: refusal.code });
            return callback(error);
          }
          this.messages.push({
            ...mail,
            mailFrom: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
            rcptTo: session.envelope.rcptTo.map((r) => r.address),
            user: typeof session.user === 'string' ? session.user : null,
          });
          callback();
        });
      },
    });
    await new Promise<void>((resolve, reject) => {
      this.server!.once('error', reject);
      this.server!.listen(0, '127.0.0.1', () => resolve());
    });
    this.port = (this.server.server.address() as AddressInfo).port;
    return this;
  }

  /** The SMTP_URL that reaches this server (with the user and password when it checks them). */
  get url(): string {
    const auth = this.credentials
      ? `${encodeURIComponent(this.credentials.user)}:${encodeURIComponent(this.credentials.pass)}@`
      : '';
    return `smtp://${auth}127.0.0.1:${this.port}`;
  }

  /** The next `count` messages are refused with this reply (e.g. 451 try later, 550 mailbox unavailable). */
  refuseNext(count: number, code = 451, message = 'Requested action aborted: try again later'): void {
    for (let i = 0; i < count; i++) this.refusals.push({ code, message });
  }

  /** The first message (already here or arriving within timeoutMs) that matches; throws when none does. */
  async waitFor(predicate: (mail: ReceivedMail) => boolean, timeoutMs = WAIT_MS_DEFAULT): Promise<ReceivedMail> {
    const until = Date.now() + timeoutMs;
    for (;;) {
      const found = this.messages.find(predicate);
      if (found) return found;
      if (Date.now() > until)
        throw new Error(`no matching mail within ${timeoutMs} ms (${this.messages.length} received)`);
      await sleep(20);
    }
  }

  async close(): Promise<void> {
    const server = this.server;
    this.server = null;
    if (server) await new Promise<void>((resolve) => server.close(() => resolve()));
  }
}

// ---- a small MIME reader ----

function splitHead(raw: string): { head: Record<string, string>; body: string } {
  const at = raw.search(/\r?\n\r?\n/);
  const headText = at < 0 ? raw : raw.slice(0, at);
  const body = at < 0 ? '' : raw.slice(at).replace(/^\r?\n\r?\n/, '');
  const head: Record<string, string> = {};
  for (const line of headText.replace(/\r?\n[ \t]+/g, ' ').split(/\r?\n/)) {
    const colon = line.indexOf(':');
    if (colon > 0) head[line.slice(0, colon).trim().toLowerCase()] = decodeWords(line.slice(colon + 1).trim());
  }
  return { head, body };
}

/** RFC 2047 encoded words (=?utf-8?Q?...?= and =?utf-8?B?...?=). */
function decodeWords(value: string): string {
  return value
    .replace(/\?=\s+=\?/g, '?==?')
    .replace(/=\?([^?]+)\?([QqBb])\?([^?]*)\?=/g, (_, _charset: string, encoding: string, text: string) =>
      encoding.toUpperCase() === 'B'
        ? Buffer.from(text, 'base64').toString('utf8')
        : decodeQuotedPrintable(text.replace(/_/g, ' ')),
    );
}

function decodeQuotedPrintable(text: string): string {
  const bytes: number[] = [];
  const source = text.replace(/=\r?\n/g, '');
  for (let i = 0; i < source.length; i++) {
    if (source[i] === '=' && /^[0-9A-Fa-f]{2}$/.test(source.slice(i + 1, i + 3))) {
      bytes.push(parseInt(source.slice(i + 1, i + 3), 16));
      i += 2;
    } else bytes.push(...Buffer.from(source[i]!, 'utf8'));
  }
  return Buffer.from(bytes).toString('utf8');
}

function decodeBody(body: string, encoding: string | undefined): string {
  const kind = (encoding ?? '').toLowerCase();
  if (kind === 'base64') return Buffer.from(body.replace(/\s+/g, ''), 'base64').toString('utf8');
  if (kind === 'quoted-printable') return decodeQuotedPrintable(body);
  return body;
}

/** The text and HTML parts of a message or part, however deep its multiparts. */
function parts(head: Record<string, string>, body: string): { text: string; html: string } {
  const type = head['content-type'] ?? 'text/plain';
  const boundary = /boundary="?([^";]+)"?/i.exec(type)?.[1];
  if (/^multipart\//i.test(type) && boundary) {
    const found = { text: '', html: '' };
    for (const piece of body.split(`--${boundary}`).slice(1)) {
      if (piece.startsWith('--')) break;
      const part = splitHead(piece.replace(/^\r?\n/, ''));
      const inner = parts(part.head, part.body.replace(/\r?\n$/, ''));
      found.text ||= inner.text;
      found.html ||= inner.html;
    }
    return found;
  }
  const decoded = decodeBody(body, head['content-transfer-encoding']).replace(/\r\n/g, '\n');
  return /^text\/html/i.test(type) ? { text: '', html: decoded } : { text: decoded, html: '' };
}

function parseMessage(raw: string): Omit<ReceivedMail, 'mailFrom' | 'rcptTo' | 'user'> {
  const { head, body } = splitHead(raw);
  return {
    headers: head,
    from: head.from ?? '',
    to: head.to ?? '',
    subject: head.subject ?? '',
    ...parts(head, body),
  };
}
