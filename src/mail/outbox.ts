// Writing a mail: one row in mail_outbox, in the caller's transaction, so a mail exists exactly when
// what caused it committed. The send-mail worker (src/mail/delivery.ts) sends it later, with retries.
import type { Queryable } from '../db/index.ts';
import { newId } from '../lib/ids.ts';
import { insertMail } from './store.ts';

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
  await insertMail(tx, { ...mail, id, merchantId: mail.merchantId ?? null });
  return id;
}
