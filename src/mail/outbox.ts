// Writing a mail: one row in mail_outbox, in the caller's transaction, so a mail exists exactly when
// what caused it committed. The send-mail worker (src/mail/delivery.ts) sends it later, with retries.
import type { Queryable } from '../db/index.ts';
import { newId } from '../lib/ids.ts';

export interface OutgoingMail {
  /** What the mail is about, for the console and the tests: 'signup.verify', 'activation.approved', … */
  kind: string;
  to: string;
  subject: string;
  text: string;
  html: string;
  merchantId?: string | null;
}

/** Queues a mail in tx; answers its id (mail_…). */
export async function enqueueMail(tx: Queryable, mail: OutgoingMail): Promise<string> {
  const id = newId('mail');
  await tx.query(
    `INSERT INTO mail_outbox (id, kind, merchant_id, to_address, subject, text_body, html_body)
     VALUES ($1, $2, $3, $4, $5, $6, $7)`,
    [id, mail.kind, mail.merchantId ?? null, mail.to, mail.subject, mail.text, mail.html],
  );
  return id;
}
