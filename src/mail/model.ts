// A mail's life in the outbox (migration 035): pending until the send-mail worker sends it (sent), writes it
// to the log because no SMTP server is configured (logged), or gives up after its retry schedule (failed).
// A send that fails moves pending -> pending with a later next_attempt_at; an operator's "Send again" moves a
// failed or logged mail back to pending.
import { defineStateMachine } from '../lib/state-machine.ts';

export const MAIL_STATUSES = ['pending', 'sent', 'logged', 'failed'] as const;
export type MailStatus = (typeof MAIL_STATUSES)[number];

export const mailMachine = defineStateMachine<MailStatus>({
  name: 'mail',
  statuses: MAIL_STATUSES,
  initial: ['pending'],
  transitions: {
    pending: ['sent', 'logged', 'failed', 'pending'],
    sent: [],
    logged: ['pending'],
    failed: ['pending'],
  },
});

/** The statuses an operator may send again from (the console's "Send again"). */
export const MAIL_RESENDABLE: readonly MailStatus[] = mailMachine
  .fromStatusesTo('pending')
  .filter((s) => s !== 'pending');

/**
 * Waits before each retry, after the first, second, ... failed send: 10 s, 1 min, 5 min, 30 min, 2 h; a send
 * failing after the last is the mail's last (failed, with its error, for an operator to send again).
 */
export const MAIL_RETRY_SCHEDULE_S: readonly number[] = [10, 60, 300, 1_800, 7_200];

/** One step of an SMTP conversation (connecting, the greeting, each reply) is given up after this. */
export const MAIL_SEND_TIMEOUT_MS = 20_000;
/** A whole send is given up after this, however the server trickles its answers. */
export const MAIL_SEND_DEADLINE_MS = 60_000;
/**
 * A claimed mail is this worker's for this long (the lease): longer than a whole send can take, so another
 * worker takes it again only when this one died, never while it is still sending.
 */
export const MAIL_LEASE_S = MAIL_SEND_DEADLINE_MS / 1000 + 30;
/** Mails claimed by one pass of the worker, at most. */
export const MAIL_CLAIM_ROWS_MAX = 20;
/** The longest error text kept on a mail. */
export const MAIL_ERROR_LENGTH_MAX = 500;

/** The seconds to wait after send number `attempts` (1-based) failed; null when the schedule is spent (failed). */
export const mailRetryDelayS = (schedule: readonly number[], attempts: number): number | null =>
  schedule[attempts - 1] ?? null;

/** What the worker is configured with (src/workers.ts builds it from the configuration). */
export interface MailSettings {
  /** SMTP_URL; null writes each mail to the log instead (status logged). */
  smtpUrl: string | null;
  /** MAIL_FROM. */
  from: string;
  retryScheduleS?: readonly number[];
}

/** A mail as the console shows it. */
export interface MailRow {
  id: string;
  kind: string;
  merchant_id: string | null;
  to_address: string;
  subject: string;
  text_body: string;
  html_body: string;
  status: MailStatus;
  attempts: number;
  next_attempt_at: Date;
  last_error: string | null;
  message_id: string | null;
  sent_at: Date | null;
  created_at: Date;
}
