// The SMS outbox's SQL (migration 040): the insert, the worker's claim (SKIP LOCKED, with a lease token and
// its expiry), each outcome written only while the lease that sent it still holds, and a read by id.
import type { Queryable } from '../db/index.ts';
import type { Transition } from '../lib/state-machine.ts';
import { smsMachine, type SmsRow, type SmsStatus } from './model.ts';

const NEW_SMS = smsMachine.initialStatus('pending');

export interface SmsInsert {
  id: string;
  kind: string;
  merchantId: string | null;
  to: string;
  body: string;
}

export const insertSms = (tx: Queryable, sms: SmsInsert) =>
  tx.query(
    `INSERT INTO sms_outbox (id, kind, merchant_id, to_phone, body, status) VALUES ($1, $2, $3, $4, $5, '${NEW_SMS}')`,
    [sms.id, sms.kind, sms.merchantId, sms.to, sms.body],
    'sms_insert',
  );

/** An SMS a worker claimed: what it sends, and how many sends this one makes (this claim's included). */
export interface ClaimedSms {
  id: string;
  kind: string;
  to_phone: string;
  body: string;
  attempts: number;
}

/**
 * Claims up to `limit` due pending SMS for the lease `token` until `leaseS` from now: SKIP LOCKED, so two
 * workers claiming at once take different messages, and one whose lease has not run out is skipped (its
 * worker is still sending it). Each claim counts as a send.
 */
export const claimDueSms = (
  tx: Queryable,
  limit: number,
  leaseS: number,
  token: string,
  toLike: string | null = null,
) =>
  tx.query<ClaimedSms>(
    `UPDATE sms_outbox s
        SET lease_token = $3, lease_expires_at = now() + make_interval(secs => $2), attempts = s.attempts + 1
      WHERE s.id IN (SELECT id FROM sms_outbox
                      WHERE status = 'pending' AND next_attempt_at <= now()
                        AND (lease_expires_at IS NULL OR lease_expires_at < now())
                        AND ($4::text IS NULL OR to_phone LIKE $4::text)
                      ORDER BY next_attempt_at LIMIT $1 FOR UPDATE SKIP LOCKED)
      RETURNING s.id, s.kind, s.to_phone, s.body, s.attempts`,
    [limit, leaseS, token, toLike],
    'sms_claim',
  );

/** What a send came to, written on the SMS with its move. */
export interface SmsOutcome {
  transition: Transition<SmsStatus>;
  /** For a retry: the next send's wait, in seconds. */
  retryInS?: number;
  error?: string | null;
  /** The provider the send went to ('hubtel', 'mnotify'; null when only logged). */
  provider?: string | null;
  messageId?: string | null;
}

/**
 * Writes a send's outcome while the lease `token` still holds the SMS (a worker whose lease ran out and was
 * taken over writes nothing); true when written.
 */
export async function recordSmsOutcome(
  db: Queryable,
  id: string,
  token: string,
  outcome: SmsOutcome,
): Promise<boolean> {
  const { from, to } = smsMachine.check(outcome.transition);
  const rows = await db.query<{ id: string }>(
    `UPDATE sms_outbox
        SET status = $3, lease_token = NULL, lease_expires_at = NULL,
            next_attempt_at = CASE WHEN $4::double precision IS NULL THEN next_attempt_at ELSE now() + make_interval(secs => $4::double precision) END,
            last_error = $5, provider = coalesce($6, provider), provider_message_id = coalesce($7, provider_message_id),
            sent_at = CASE WHEN $3 = 'sent' THEN now() ELSE sent_at END
      WHERE id = $1 AND lease_token = $2 AND status = $8
      RETURNING id`,
    [
      id,
      token,
      to,
      outcome.retryInS ?? null,
      outcome.error ?? null,
      outcome.provider ?? null,
      outcome.messageId ?? null,
      from,
    ],
    'sms_outcome',
  );
  return rows.length === 1;
}

const SMS_COLUMNS = `id, kind, merchant_id, to_phone, body, status, attempts, next_attempt_at, last_error, provider,
  provider_message_id, sent_at, created_at`;

export const findSms = async (db: Queryable, id: string): Promise<SmsRow | null> =>
  (await db.query<SmsRow>(`SELECT ${SMS_COLUMNS} FROM sms_outbox WHERE id = $1`, [id]))[0] ?? null;
