// The send-mail worker's pass (src/workers.ts runs it every second in every process): claim due mail in one
// short transaction (SKIP LOCKED, a lease token and its expiry), send each outside any transaction, then write
// each outcome in a statement of its own, only while the lease still holds. A send that fails is retried on
// MAIL_RETRY_SCHEDULE_S and failed only once the schedule is spent; an operator can send it again. With no
// SMTP server configured each mail is written to the log (at info: to, subject and text, so a developer can
// follow a link in it) and marked logged.
import type { Db } from '../db/index.ts';
import { randomToken } from '../lib/ids.ts';
import {
  MAIL_CLAIM_ROWS_MAX,
  MAIL_ERROR_LENGTH_MAX,
  MAIL_LEASE_S,
  MAIL_RETRY_SCHEDULE_S,
  mailMachine,
  mailRetryDelayS,
  type MailSettings,
} from './model.ts';
import { sendErrorText, smtpSender, type MailSender } from './sender.ts';
import { claimDueMail, recordOutcome, type ClaimedMail, type MailOutcome } from './store.ts';

/** The part of a pino logger the worker writes to. */
export interface MailLog {
  info(object: object, message: string): void;
  warn(object: object, message: string): void;
}

export interface MailDelivery {
  /** The SMTP sender; null: mail goes to the log. */
  sender: MailSender | null;
  from: string;
  retryScheduleS: readonly number[];
  log: MailLog;
  /** How long a claim holds (MAIL_LEASE_S). */
  leaseS?: number;
  /**
   * Only mail to addresses LIKE this pattern (all when absent): a worker serving part of the outbox, as each
   * test file's worker on a shared database serves only its own addresses and leaves the others' mail alone.
   */
  toLike?: string;
}

/** What the worker needs from the configuration: the sender (or none) and the schedule. */
export const mailDelivery = (settings: MailSettings, log: MailLog): MailDelivery => ({
  sender: settings.smtpUrl ? smtpSender(settings.smtpUrl, settings.from) : null,
  from: settings.from,
  retryScheduleS: settings.retryScheduleS ?? MAIL_RETRY_SCHEDULE_S,
  log,
});

/** One pass: sends (or logs) every due mail it claims; answers how many it claimed. */
export async function deliverDueMail(db: Db, delivery: MailDelivery, limit = MAIL_CLAIM_ROWS_MAX): Promise<number> {
  const token = randomToken(16);
  const claimed = await db.transaction((tx) =>
    claimDueMail(tx, limit, delivery.leaseS ?? MAIL_LEASE_S, token, delivery.toLike ?? null),
  );
  // All at once: each send ends within MAIL_SEND_DEADLINE_MS, so the whole pass within the lease.
  await Promise.all(
    claimed.map(async (mail) => {
      const outcome = await sendOne(mail, delivery);
      const written = await recordOutcome(db, mail.id, token, outcome);
      if (!written) delivery.log.warn({ mail_id: mail.id }, 'mail outcome not written: its lease ran out meanwhile');
    }),
  );
  return claimed.length;
}

async function sendOne(mail: ClaimedMail, delivery: MailDelivery): Promise<MailOutcome> {
  if (!delivery.sender) {
    delivery.log.info(
      {
        mail: {
          id: mail.id,
          kind: mail.kind,
          from: delivery.from,
          to: mail.to_address,
          subject: mail.subject,
          text: mail.text_body,
        },
      },
      'mail written to the log, not sent (no SMTP_URL)',
    );
    return { transition: mailMachine.transition('pending', 'logged') };
  }
  try {
    const { messageId } = await delivery.sender.send({
      to: mail.to_address,
      subject: mail.subject,
      text: mail.text_body,
      html: mail.html_body,
    });
    return { transition: mailMachine.transition('pending', 'sent'), messageId };
  } catch (error) {
    const text = sendErrorText(error, MAIL_ERROR_LENGTH_MAX);
    const retryInS = mailRetryDelayS(delivery.retryScheduleS, mail.attempts);
    delivery.log.warn(
      { mail_id: mail.id, attempts: mail.attempts, error: text, retry_in_s: retryInS },
      retryInS === null ? 'mail failed: its retries are spent' : 'mail not sent; will retry',
    );
    return retryInS === null
      ? { transition: mailMachine.transition('pending', 'failed'), error: text }
      : { transition: mailMachine.transition('pending', 'pending'), error: text, retryInS };
  }
}
