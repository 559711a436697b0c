// An SMS's life in the outbox (migration 040): pending until the send-sms worker hands it to the provider
// (sent), writes it to the log because no provider is configured (logged), or gives up (failed): after the
// provider refused it, after its retry schedule, or at once when the provider's answer was lost (see
// delivery.ts: neither Hubtel nor mNotify lets us ask whether a message went out, so one unknown is failed
// rather than risk a payer receiving it twice).
import { defineStateMachine } from '../lib/state-machine.ts';

export const SMS_STATUSES = ['pending', 'sent', 'logged', 'failed'] as const;
export type SmsStatus = (typeof SMS_STATUSES)[number];

export const smsMachine = defineStateMachine<SmsStatus>({
  name: 'sms',
  statuses: SMS_STATUSES,
  initial: ['pending'],
  transitions: {
    pending: ['sent', 'logged', 'failed', 'pending'],
    sent: [],
    logged: [],
    failed: [],
  },
});

/**
 * Waits before each retry after a send the provider certainly did not take (it could not be reached, or it
 * answered 5xx/429): 10 s, 1 min, 5 min, 30 min. A receipt SMS hours late is of little use, so the schedule is
 * shorter than mail's.
 */
export const SMS_RETRY_SCHEDULE_S: readonly number[] = [10, 60, 300, 1_800];

/** A provider's answer is given up after this (the request then counts as a lost answer). */
export const SMS_SEND_TIMEOUT_MS = 15_000;
/** A claimed SMS is this worker's for this long: longer than a send can take. */
export const SMS_LEASE_S = SMS_SEND_TIMEOUT_MS / 1000 + 30;
/** SMS claimed by one pass of the worker, at most. */
export const SMS_CLAIM_ROWS_MAX = 20;
/** The longest error text kept on an SMS. */
export const SMS_ERROR_LENGTH_MAX = 500;

/** The seconds to wait after send number `attempts` (1-based) failed; null when the schedule is spent. */
export const smsRetryDelayS = (schedule: readonly number[], attempts: number): number | null =>
  schedule[attempts - 1] ?? null;

export const SMS_PROVIDER_IDS = ['none', 'hubtel', 'mnotify'] as const;
export type SmsProviderId = (typeof SMS_PROVIDER_IDS)[number];

/** What the worker is configured with (src/workers.ts builds it from the configuration, as MailSettings). */
export interface SmsSettings {
  /** SMS_PROVIDER; 'none' writes each SMS to the log instead (status logged). */
  provider: SmsProviderId;
  hubtel: { clientId: string; clientSecret: string; sender: string; url: string } | null;
  mnotify: { apiKey: string; sender: string; url: string } | null;
  retryScheduleS?: readonly number[];
}

/**
 * True when SMS really go out (SMS_PROVIDER names a provider): the payer page offers an SMS receipt only then.
 * Takes the configuration (its `sms`) as it is, so a caller needs nothing of src/config's types.
 */
export const smsConfigured = (config: { sms: Pick<SmsSettings, 'provider'> }): boolean =>
  config.sms.provider !== 'none';

/** An SMS as the console would show it. */
export interface SmsRow {
  id: string;
  kind: string;
  merchant_id: string | null;
  to_phone: string;
  body: string;
  status: SmsStatus;
  attempts: number;
  next_attempt_at: Date;
  last_error: string | null;
  provider: string | null;
  provider_message_id: string | null;
  sent_at: Date | null;
  created_at: Date;
}
