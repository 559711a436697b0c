// Sending one mail over SMTP (nodemailer): SMTP_URL names the server (smtp://user:pass@host:587 upgrades with
// STARTTLS when offered, smtps://host:465 is TLS from the start), MAIL_FROM the sender. A send answers the
// server's message id or throws; the worker (delivery.ts) decides what a failure means. nodemailer is loaded on
// first use: a process that never sends mail never loads it.
import { MAIL_SEND_DEADLINE_MS, MAIL_SEND_TIMEOUT_MS } from './model.ts';

/** One mail as it goes out. */
export interface MailMessage {
  to: string;
  subject: string;
  text: string;
  html: string;
}

export interface MailSender {
  /** Sends the mail; answers the id the server gave it. Throws when the server refused it or could not be reached. */
  send(message: MailMessage): Promise<{ messageId: string | null }>;
  close(): void;
}

/** A sender to the SMTP server at smtpUrl, mails from `from`. */
export function smtpSender(smtpUrl: string, from: string): MailSender {
  let transport: Promise<import('nodemailer').Transporter> | null = null;
  const open = () => {
    transport ??= import('nodemailer').then((nodemailer) =>
      nodemailer.createTransport({
        url: smtpUrl,
        connectionTimeout: MAIL_SEND_TIMEOUT_MS,
        greetingTimeout: MAIL_SEND_TIMEOUT_MS,
        socketTimeout: MAIL_SEND_TIMEOUT_MS,
      } as import('nodemailer').TransportOptions),
    );
    return transport;
  };
  return {
    async send(message) {
      const sending = (await open()).sendMail({ from, ...message });
      let deadline: NodeJS.Timeout | undefined;
      const late = new Promise<never>((_, reject) => {
        deadline = setTimeout(
          () => reject(new Error(`no answer from the SMTP server within ${MAIL_SEND_DEADLINE_MS} ms`)),
          MAIL_SEND_DEADLINE_MS,
        );
      });
      try {
        const info = await Promise.race([sending, late]);
        return { messageId: typeof info.messageId === 'string' ? info.messageId : null };
      } finally {
        clearTimeout(deadline);
      }
    },
    close() {
      void transport?.then((t) => t.close());
      transport = null;
    },
  };
}

/** An error's text for the mail's last_error: what the server said, never the SMTP_URL's password. */
export function sendErrorText(error: unknown, lengthMax: number): string {
  const e = error as { code?: string; responseCode?: number; response?: string; message?: string };
  const text = e.response
    ? `${e.responseCode ?? ''} ${e.response}`.trim()
    : `${e.code ? `${e.code}: ` : ''}${e.message ?? String(error)}`;
  return text.replace(/\u0000/g, '\uFFFD').slice(0, lengthMax);
}
