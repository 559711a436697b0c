// The operator console's use of the outbox: mail newest first with filters, one mail, and "Send again" for a
// mail that failed or was only logged (from a fresh retry schedule, with the caller's audit row in the same
// transaction: src/mail imports no other domain).
import type { Db, Queryable } from '../db/index.ts';
import { SikaError } from '../lib/errors.ts';
import { MAIL_RESENDABLE, mailMachine, type MailRow, type MailStatus } from './model.ts';
import * as store from './store.ts';

export type { MailSearch } from './store.ts';

export const mailList = (db: Queryable, search: store.MailSearch, limit: number): Promise<MailRow[]> =>
  store.searchMail(db, search, limit);

/** One mail; NOT_FOUND when there is none with this id. */
export async function mailById(db: Queryable, id: string): Promise<MailRow> {
  const mail = await store.findMail(db, id);
  if (!mail) throw new SikaError('NOT_FOUND', 'No mail with this id.');
  return mail;
}

export type ResendResult = { resent: true; from: MailStatus } | { resent: false; status: MailStatus };

/**
 * Queues a failed or logged mail to be sent again now; `record` writes the caller's audit row in the same
 * transaction. A mail in any other status is left as it is ({resent: false} with its status).
 */
export async function resendMail(
  db: Db,
  id: string,
  record: (tx: Queryable, change: { before: MailStatus; after: MailStatus }) => Promise<unknown>,
): Promise<ResendResult> {
  return db.transaction(async (tx) => {
    const [row] = await store.lockMail(tx, id);
    if (!row) throw new SikaError('NOT_FOUND', 'No mail with this id.');
    if (!MAIL_RESENDABLE.includes(row.status)) return { resent: false as const, status: row.status };
    await store.requeueMail(tx, id, mailMachine.transition(row.status, 'pending'));
    await record(tx, { before: row.status, after: 'pending' });
    return { resent: true as const, from: row.status };
  });
}
