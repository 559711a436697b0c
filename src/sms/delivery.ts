// The send-sms worker's pass (src/workers.ts runs it every second in every process), as send-mail's: claim due
// SMS in one short transaction (SKIP LOCKED, a lease token and its expiry), send each outside any transaction
// through the configured provider, then write each outcome in a statement of its own, only while the lease
// still holds. What a failed send comes to depends on how it failed (providers.ts): a refusal is failed at
// once, a send the provider certainly did not take is retried on SMS_RETRY_SCHEDULE_S, and a send whose answer
// was lost is failed at once ("answer lost, may have been sent"): neither provider can be asked whether it went
// out, and a payer receiving a receipt twice is worse than an operator seeing one unknown. With no provider
// configured each SMS is written to the log (at info: to and text) and marked logged.
import type { Db } from '../db/index.ts';
import { randomToken } from '../lib/ids.ts';
import { hubtelSmsProvider } from './hubtel.ts';
import {
  SMS_CLAIM_ROWS_MAX,
  SMS_ERROR_LENGTH_MAX,
  SMS_LEASE_S,
  SMS_RETRY_SCHEDULE_S,
  type SmsSettings,
  smsMachine,
  smsRetryDelayS,
} from './model.ts';
import { mnotifySmsProvider } from './mnotify.ts';
import { SmsAnswerLostError, type SmsProvider, SmsRefusedError } from './providers.ts';
import { type ClaimedSms, claimDueSms, recordSmsOutcome, type SmsOutcome } from './store.ts';

/** The part of a pino logger the worker writes to. */
export interface SmsLog {
  info(object: object, message: string): void;
  warn(object: object, message: string): void;
}

export interface SmsDelivery {
  /** The provider; null: SMS go to the log. */
  provider: SmsProvider | null;
  retryScheduleS: readonly number[];
  log: SmsLog;
  /** How long a claim holds (SMS_LEASE_S). */
  leaseS?: number;
  /**
   * Only SMS to numbers LIKE this pattern (all when absent): a worker serving part of the outbox, as each test
   * file's worker on a shared database serves only its own numbers.
   */
  toLike?: string;
}

/** The provider SMS_PROVIDER names, with its settings; null for 'none'. */
export function smsProviderFor(settings: SmsSettings, timeoutMs?: number): SmsProvider | null {
  if (settings.provider === 'hubtel' && settings.hubtel) return hubtelSmsProvider(settings.hubtel, timeoutMs);
  if (settings.provider === 'mnotify' && settings.mnotify) return mnotifySmsProvider(settings.mnotify, timeoutMs);
  if (settings.provider !== 'none')
    throw new Error(`assertion failed: SMS_PROVIDER ${settings.provider} comes with its settings`);
  return null;
}

/** What the worker needs from the configuration: the provider (or none) and the schedule. */
export const smsDelivery = (settings: SmsSettings, log: SmsLog): SmsDelivery => ({
  provider: smsProviderFor(settings),
  retryScheduleS: settings.retryScheduleS ?? SMS_RETRY_SCHEDULE_S,
  log,
});

/** One pass: sends (or logs) every due SMS it claims; answers how many it claimed. */
export async function deliverDueSms(db: Db, delivery: SmsDelivery, limit = SMS_CLAIM_ROWS_MAX): Promise<number> {
  const token = randomToken(16);
  const claimed = await db.transaction((tx) =>
    claimDueSms(tx, limit, delivery.leaseS ?? SMS_LEASE_S, token, delivery.toLike ?? null),
  );
  // All at once: each send ends within SMS_SEND_TIMEOUT_MS, so the whole pass within the lease.
  await Promise.all(
    claimed.map(async (sms) => {
      const outcome = await sendOne(sms, delivery);
      const written = await recordSmsOutcome(db, sms.id, token, outcome);
      if (!written) delivery.log.warn({ sms_id: sms.id }, 'sms outcome not written: its lease ran out meanwhile');
    }),
  );
  return claimed.length;
}

const errorText = (error: unknown): string =>
  (error instanceof Error ? error.message : String(error)).replace(/\u0000/g, '\uFFFD').slice(0, SMS_ERROR_LENGTH_MAX);

async function sendOne(sms: ClaimedSms, delivery: SmsDelivery): Promise<SmsOutcome> {
  const provider = delivery.provider;
  if (!provider) {
    delivery.log.info(
      { sms: { id: sms.id, kind: sms.kind, to: sms.to_phone, body: sms.body } },
      'sms written to the log, not sent (no SMS_PROVIDER)',
    );
    return { transition: smsMachine.transition('pending', 'logged') };
  }
  try {
    const { messageId } = await provider.send(sms.to_phone, sms.body, sms.id);
    return { transition: smsMachine.transition('pending', 'sent'), provider: provider.id, messageId };
  } catch (error) {
    const text = errorText(error);
    // Only a send the provider certainly did not take is tried again (SmsNotSentError, or anything unforeseen
    // thrown before the request went out); a refusal or a lost answer is final.
    const final = error instanceof SmsRefusedError || error instanceof SmsAnswerLostError;
    const retryInS = final ? null : smsRetryDelayS(delivery.retryScheduleS, sms.attempts);
    delivery.log.warn(
      { sms_id: sms.id, provider: provider.id, attempts: sms.attempts, error: text, retry_in_s: retryInS },
      retryInS === null ? 'sms failed' : 'sms not sent; will retry',
    );
    return retryInS === null
      ? { transition: smsMachine.transition('pending', 'failed'), provider: provider.id, error: text }
      : { transition: smsMachine.transition('pending', 'pending'), provider: provider.id, error: text, retryInS };
  }
}
