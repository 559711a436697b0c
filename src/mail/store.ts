// The mail outbox's SQL (migration 035): the insert, the worker's claim (SKIP LOCKED, with a lease token and
// its expiry), each outcome written only while the lease that sent it still holds, an operator's resend, and
// the console's reads.
import type { Queryable } from '../db/index.ts';
import { mailMachine, type MailRow, type MailStatus } from './model.ts';
import type { Transition } from '../lib/state-machine.ts';

const NEW_MAIL = mailMachine.initialStatus('pending');

export interface MailInsert {
  id: string;
  kind: string;
  merchantId: string | null;
  to: string;
  subject: string;
  text: string;
  html: string;
}

export const insertMail = (tx: Queryable, mail: MailInsert) =>
  tx.query(
    `INSERT INTO mail_outbox (id, kind, merchant_id, to_address, subject, text_body, html_body, status)
     VALUES ($1, $2, $3, $4, $5, $6, $7, '${NEW_MAIL}')`,
    [mail.id, mail.kind, mail.merchantId, mail.to, mail.subject, mail.text, mail.html],
    'mail_insert',
  );

/** A mail a worker claimed: what it sends, and how many sends this one makes (this claim's included). */
export interface ClaimedMail {
  id: string;
  kind: string;
  to_address: string;
  subject: string;
  text_body: string;
  html_body: string;
  attempts: number;
}

/**
 * Claims up to `limit` due pending mails for the lease `token` until `leaseS` from now: SKIP LOCKED, so two
 * workers claiming at once take different mails, and a mail whose lease has not run out is skipped (its
 * worker is still sending it). Each claim counts as a send.
 */
export const claimDueMail = (
  tx: Queryable,
  limit: number,
  leaseS: number,
  token: string,
  toLike: string | null = null,
) =>
  tx.query<ClaimedMail>(
    `UPDATE mail_outbox m
        SET lease_token = $3, lease_expires_at = now() + make_interval(secs => $2), attempts = m.attempts + 1
      WHERE m.id IN (SELECT id FROM mail_outbox
                      WHERE status = 'pending' AND next_attempt_at <= now()
                        AND (lease_expires_at IS NULL OR lease_expires_at < now())
                        AND ($4::text IS NULL OR to_address LIKE $4::text)
                      ORDER BY next_attempt_at LIMIT $1 FOR UPDATE SKIP LOCKED)
      RETURNING m.id, m.kind, m.to_address, m.subject, m.text_body, m.html_body, m.attempts`,
    [limit, leaseS, token, toLike],
    'mail_claim',
  );

/** What a send came to, written on the mail with its move. */
export interface MailOutcome {
  transition: Transition<MailStatus>;
  /** For a retry: the next send's wait, in seconds. */
  retryInS?: number;
  error?: string | null;
  messageId?: string | null;
}

/**
 * Writes a send's outcome while the lease `token` still holds the mail (a worker whose lease ran out and was
 * taken over writes nothing); true when written.
 */
export async function recordOutcome(db: Queryable, id: string, token: string, outcome: MailOutcome): Promise<boolean> {
  const { from, to } = mailMachine.check(outcome.transition);
  const rows = await db.query<{ id: string }>(
    `UPDATE mail_outbox
        SET status = $3, lease_token = NULL, lease_expires_at = NULL,
            next_attempt_at = CASE WHEN $4::double precision IS NULL THEN next_attempt_at ELSE now() + make_interval(secs => $4::double precision) END,
            last_error = $5, message_id = coalesce($6, message_id),
            sent_at = CASE WHEN $3 = 'sent' THEN now() ELSE sent_at END
      WHERE id = $1 AND lease_token = $2 AND status = $7
      RETURNING id`,
    [id, token, to, outcome.retryInS ?? null, outcome.error ?? null, outcome.messageId ?? null, from],
    'mail_outcome',
  );
  return rows.length === 1;
}

/** A mail's status, locked for the change the caller makes in tx. */
export const lockMail = (tx: Queryable, id: string) =>
  tx.query<{ status: MailStatus; attempts: number }>(
    'SELECT status, attempts FROM mail_outbox WHERE id = $1 FOR UPDATE',
    [id],
  );

/** Sends a mail again at once, from a fresh retry schedule (an operator's "Send again"). */
export async function requeueMail(tx: Queryable, id: string, transition: Transition<MailStatus>): Promise<void> {
  const { from, to } = mailMachine.check(transition);
  await tx.query(
    `UPDATE mail_outbox SET status = $2, attempts = 0, next_attempt_at = now(), lease_token = NULL, lease_expires_at = NULL
      WHERE id = $1 AND status = $3`,
    [id, to, from],
  );
}

const MAIL_COLUMNS = `id, kind, merchant_id, to_address, subject, text_body, html_body, status, attempts, next_attempt_at,
  last_error, message_id, sent_at, created_at`;

export const findMail = async (db: Queryable, id: string): Promise<MailRow | null> =>
  (await db.query<MailRow>(`SELECT ${MAIL_COLUMNS} FROM mail_outbox WHERE id = $1`, [id]))[0] ?? null;

export interface MailSearch {
  /** Part of the address, any case. */
  to?: string;
  status?: MailStatus;
  kind?: string;
  /** The rows after this one, newest first. */
  after?: { at: Date; id: string } | null;
}

/** A page of mail, newest first, keyset on (created_at to the millisecond, id) as the console lists page. */
export function searchMail(db: Queryable, search: MailSearch, limit: number): Promise<MailRow[]> {
  const where: string[] = [];
  const params: unknown[] = [];
  const add = (clause: (n: number) => string, value: unknown) => {
    params.push(value);
    where.push(clause(params.length));
  };
  if (search.to) add((n) => `to_address ILIKE $${n}`, `%${search.to.replace(/[\\%_]/g, (c) => `\\${c}`)}%`);
  if (search.status) add((n) => `status = $${n}`, search.status);
  if (search.kind) add((n) => `kind = $${n}`, search.kind);
  if (search.after) {
    params.push(search.after.at, search.after.id);
    where.push(`(date_trunc('milliseconds', created_at), id) < ($${params.length - 1}, $${params.length})`);
  }
  params.push(limit);
  return db.query<MailRow>(
    `SELECT ${MAIL_COLUMNS} FROM mail_outbox ${where.length ? `WHERE ${where.join(' AND ')}` : ''}
      ORDER BY date_trunc('milliseconds', created_at) DESC, id DESC LIMIT $${params.length}`,
    params,
  );
}
