// A merchant's settlement schedule per environment (issue 34, item 2): read it (the defaults until one is saved),
// save a partial change of it (GET/POST /api/v1/settlements/schedule and the dashboard's Settlements page), and the
// account-takeover rules of the settlement account: a new account receives nothing for 24 hours, a Live API key
// may not replace it (the dashboard asks for a second-factor code), and every change is audited and mailed to the
// owner in the same transaction. Saving resumes a schedule a failed settlement paused. SQL in
// settlement-schedule-store.ts; the run instants come from src/lib/accra-calendar.ts.
import { findMerchant } from '../accounts/service.ts';
import type { Actor } from '../audit/log.ts';
import { audit } from '../audit/log.ts';
import type { Db, Queryable } from '../db/index.ts';
import {
  ACCRA_TIME_ZONE,
  SETTLEMENT_INTERVALS,
  scheduledRunAfter,
  WEEKDAYS,
  type SettlementInterval,
  type Weekday,
} from '../lib/accra-calendar.ts';
import type { Environment } from '../lib/environment.ts';
import { errors, type FieldError } from '../lib/errors.ts';
import { absoluteUrl, plainMailBodies } from '../mail/compose.ts';
import { enqueueMail } from '../mail/outbox.ts';
import { findClearingSettings, upsertClearingSettings } from '../ledger/clearing.ts';
import { formatGhs } from '../lib/ghana.ts';
import { findRecipient, listRecipients, type RecipientRow } from './recipient-store.ts';
import {
  findSchedule,
  lockSchedule,
  saveSchedule,
  type ScheduleFields,
  type ScheduleRow,
} from './settlement-schedule-store.ts';

export { pauseSchedule, findSchedule, type ScheduleRow } from './settlement-schedule-store.ts';

/** A new settlement account receives nothing for this long after a change (account-takeover protection). */
export const RECIPIENT_HOLD_MS = 24 * 60 * 60 * 1000;
export const MONTHLY_ANCHOR_MIN = 1;
export const MONTHLY_ANCHOR_MAX = 28;
/** HH:MM, 00:00 to 23:59 (the table's CHECK). */
export const TIME_OF_DAY_PATTERN = '^([01][0-9]|2[0-3]):[0-5][0-9]$';
export const SETTLEMENT_MINIMUM_MAX_MINOR = 100_000_000_000;
export const SETTLEMENT_RECIPIENT_ID_LENGTH_MAX = 64;
export const LIVE_API_RECIPIENT_CHANGE_REFUSAL =
  'Change the settlement account in the dashboard, with your second-factor code.';

export { SETTLEMENT_INTERVALS, WEEKDAYS, type SettlementInterval, type Weekday };

/** The schedule a merchant has before saving one. */
export const DEFAULT_SCHEDULE = {
  interval: 'manual',
  weekly_anchor: 'monday',
  monthly_anchor: 1,
  time_of_day: '10:00',
  minimum_minor: 0,
} as const satisfies Partial<ScheduleRow>;

/** A partial change of the schedule, as the API body and the dashboard's form give it. */
export interface ScheduleInput {
  interval?: string;
  weekly_anchor?: string;
  monthly_anchor?: number;
  time?: string;
  minimum_minor?: number;
  recipient_id?: string;
}

/** Where a change comes from: the API (Test or Live key) or the dashboard (a second factor checked there). */
export type ScheduleChannel = 'api' | 'dashboard';

export interface ScheduleChange {
  merchantId: string;
  environment: Environment;
  actor: Actor;
  channel: ScheduleChannel;
  /** BASE_URL, for the dashboard link in the owner's mails (none without it). */
  baseUrl: string | null;
  /** The instant of the change (tests); now by default. */
  now?: Date;
}

/** The API's settlement_schedule object. */
export interface ScheduleResponse {
  object: 'settlement_schedule';
  environment: Environment;
  interval: SettlementInterval;
  weekly_anchor: Weekday;
  monthly_anchor: number;
  time: string;
  time_zone: typeof ACCRA_TIME_ZONE;
  minimum_minor: number;
  recipient_id: string | null;
  recipient_active_at: string | null;
  next_run_at: string | null;
  paused: boolean;
  paused_reason: string | null;
  paused_payout_id: string | null;
  updated_at: string | null;
}

const iso = (at: Date | null) => (at ? at.toISOString() : null);

/** The response of a saved schedule, or of the defaults (row null). */
export function scheduleResponse(row: ScheduleRow | null, environment: Environment): ScheduleResponse {
  return {
    object: 'settlement_schedule',
    environment,
    interval: row?.interval ?? DEFAULT_SCHEDULE.interval,
    weekly_anchor: row?.weekly_anchor ?? DEFAULT_SCHEDULE.weekly_anchor,
    monthly_anchor: row?.monthly_anchor ?? DEFAULT_SCHEDULE.monthly_anchor,
    time: row?.time_of_day ?? DEFAULT_SCHEDULE.time_of_day,
    time_zone: ACCRA_TIME_ZONE,
    minimum_minor: row?.minimum_minor ?? DEFAULT_SCHEDULE.minimum_minor,
    recipient_id: row?.recipient_id ?? null,
    recipient_active_at: iso(row?.recipient_active_at ?? null),
    next_run_at: iso(row?.next_run_at ?? null),
    paused: row?.paused_at != null,
    paused_reason: row?.paused_reason ?? null,
    paused_payout_id: row?.paused_payout_id ?? null,
    updated_at: iso(row?.updated_at ?? null),
  };
}

/** The schedule of the merchant in this environment (the defaults until one is saved). */
export async function getSchedule(db: Queryable, merchantId: string, environment: Environment) {
  return scheduleResponse(await findSchedule(db, merchantId, environment), environment);
}

/** The dashboard home's banner: the schedule paused after a failed settlement, else null. */
export async function settlementBanner(
  db: Queryable,
  merchantId: string,
  environment: Environment,
): Promise<{ reason: string; payoutId: string | null } | null> {
  const row = await findSchedule(db, merchantId, environment);
  return row?.paused_at
    ? { reason: row.paused_reason ?? 'A settlement failed.', payoutId: row.paused_payout_id }
    : null;
}

/** The recipients a settlement account may be: the merchant's verified, active recipients in this environment. */
export async function settlementRecipientChoices(db: Queryable, merchantId: string, environment: Environment) {
  return (await listRecipients(db, merchantId, environment)).filter(
    (r) => r.active && r.verification_status === 'verified',
  );
}

/** A recipient of the merchant (any state) by id, or null: the page names the current settlement account. */
export const settlementRecipient = (db: Queryable, merchantId: string, environment: Environment, id: string) =>
  findRecipient(db, merchantId, environment, id);

const refuse = (field: string, message: string): never => {
  throw errors.invalidArgument(`${field} ${message}.`, [{ field, message }]);
};

/** The input checked field by field (the API's schema says the same; the dashboard's form reaches here too). */
function checkInput(input: ScheduleInput): void {
  const problems: FieldError[] = [];
  if (input.interval !== undefined && !(SETTLEMENT_INTERVALS as readonly string[]).includes(input.interval))
    problems.push({ field: 'interval', message: `must be one of ${SETTLEMENT_INTERVALS.join(', ')}` });
  if (input.weekly_anchor !== undefined && !(WEEKDAYS as readonly string[]).includes(input.weekly_anchor))
    problems.push({ field: 'weekly_anchor', message: `must be one of ${WEEKDAYS.join(', ')}` });
  if (
    input.monthly_anchor !== undefined &&
    !(
      Number.isInteger(input.monthly_anchor) &&
      input.monthly_anchor >= MONTHLY_ANCHOR_MIN &&
      input.monthly_anchor <= MONTHLY_ANCHOR_MAX
    )
  )
    problems.push({
      field: 'monthly_anchor',
      message: `must be a day of the month from ${MONTHLY_ANCHOR_MIN} to ${MONTHLY_ANCHOR_MAX}`,
    });
  if (input.time !== undefined && !new RegExp(TIME_OF_DAY_PATTERN).test(input.time))
    problems.push({ field: 'time', message: 'must be HH:MM from 00:00 to 23:59 (Africa/Accra), e.g. 09:30' });
  if (
    input.minimum_minor !== undefined &&
    !(
      Number.isSafeInteger(input.minimum_minor) &&
      input.minimum_minor >= 0 &&
      input.minimum_minor <= SETTLEMENT_MINIMUM_MAX_MINOR
    )
  )
    problems.push({ field: 'minimum_minor', message: 'must be a whole number of pesewas, 0 or more' });
  const [first] = problems;
  if (first) throw errors.invalidArgument(`${first.field} ${first.message}.`, problems);
}

/** The recipient a change names, checked: the merchant's (404 otherwise), active and verified (409). */
async function checkedRecipient(tx: Queryable, merchantId: string, environment: Environment, id: string) {
  const recipient = await findRecipient(tx, merchantId, environment, id, true);
  if (!recipient) throw errors.notFound('Recipient');
  if (!recipient.active)
    throw errors.conflict('RECIPIENT_UNAVAILABLE', `Recipient ${id} is not active: choose an active recipient.`);
  if (recipient.verification_status !== 'verified')
    throw errors.conflict(
      'RECIPIENT_NOT_VERIFIED',
      `Recipient ${id} is ${recipient.verification_status.replace(/_/g, ' ')}: a settlement account must be a verified recipient.`,
    );
  return recipient;
}

/**
 * Saves a partial change of the schedule, in one transaction with its audit row and the owner's mails, and
 * answers the schedule. Any save clears a pause. The row is locked first, so saves at once take turns.
 */
export function updateSchedule(db: Db, change: ScheduleChange, input: ScheduleInput): Promise<ScheduleResponse> {
  return db.transaction((tx) => updateScheduleIn(tx, change, input));
}

/** updateSchedule in the caller's transaction (an Idempotency-Key's). */
export async function updateScheduleIn(
  tx: Queryable,
  change: ScheduleChange,
  input: ScheduleInput,
): Promise<ScheduleResponse> {
  checkInput(input);
  const { merchantId, environment } = change;
  const now = change.now ?? new Date();
  const { row: before, created } = await lockSchedule(tx, merchantId, environment);
  const recipientChanges = input.recipient_id !== undefined && input.recipient_id !== before.recipient_id;
  if (recipientChanges && before.recipient_id !== null && change.channel === 'api' && environment === 'live')
    throw errors.forbidden(LIVE_API_RECIPIENT_CHANGE_REFUSAL);
  const recipient =
    input.recipient_id !== undefined ? await checkedRecipient(tx, merchantId, environment, input.recipient_id) : null;
  const interval = (input.interval ?? before.interval) as SettlementInterval;
  const recipientId = input.recipient_id ?? before.recipient_id;
  if (interval !== 'manual' && recipientId === null)
    refuse(
      'recipient_id',
      `is required for a ${interval} schedule: name the verified recipient settlements are paid to`,
    );
  const rule = {
    interval,
    weekly_anchor: (input.weekly_anchor ?? before.weekly_anchor) as Weekday,
    monthly_anchor: input.monthly_anchor ?? before.monthly_anchor,
    time_of_day: input.time ?? before.time_of_day,
  };
  const from = before.clock_at && before.clock_at > now ? before.clock_at : now;
  const fields: ScheduleFields = {
    ...rule,
    minimum_minor: input.minimum_minor ?? before.minimum_minor,
    recipient_id: recipientId,
    // First account: at once. A replacement: 24 hours from now. The same account: as it was.
    recipient_active_at: !recipientChanges
      ? before.recipient_active_at
      : before.recipient_id === null
        ? now
        : new Date(now.getTime() + RECIPIENT_HOLD_MS),
    next_run_at: rule.interval === 'manual' ? null : scheduledRunAfter({ ...rule, interval: rule.interval }, from),
  };
  const after = await saveSchedule(tx, merchantId, environment, fields, created);
  const ruleChanged = (['interval', 'weekly_anchor', 'monthly_anchor', 'time_of_day', 'minimum_minor'] as const).some(
    (key) => before[key] !== after[key],
  );
  const resumed = before.paused_at !== null;
  if (ruleChanged || recipientChanges || resumed || created)
    await audit(tx, {
      actor: change.actor,
      merchantId,
      action: recipientChanges ? 'settlement_schedule.recipient_change' : 'settlement_schedule.update',
      objectType: 'settlement_schedule',
      objectId: `${merchantId}:${environment}`,
      before: created ? null : auditView(before),
      after: auditView(after),
    });
  if (recipientChanges || ruleChanged) {
    const merchant = await findMerchant(tx, merchantId);
    if (merchant) {
      const mail = ownerMails(change, merchant.email);
      if (recipientChanges && recipient) await enqueueMail(tx, mail.account(recipient, before.recipient_id, after));
      if (ruleChanged) await enqueueMail(tx, mail.schedule(after));
    }
  }
  return scheduleResponse(after, environment);
}

const auditView = (row: ScheduleRow) => ({
  interval: row.interval,
  weekly_anchor: row.weekly_anchor,
  monthly_anchor: row.monthly_anchor,
  time: row.time_of_day,
  minimum_minor: row.minimum_minor,
  recipient_id: row.recipient_id,
  recipient_active_at: iso(row.recipient_active_at),
  paused_reason: row.paused_reason,
});

/** Sets whether the merchant's Test environment rehearses Live clearing times; audited. */
export async function setTestClearing(db: Db, actor: Actor, merchantId: string, on: boolean): Promise<void> {
  await db.transaction(async (tx) => {
    const before = (await findClearingSettings(tx, merchantId, 'test'))?.test_clearing ?? false;
    await upsertClearingSettings(tx, merchantId, 'test', { test_clearing: on });
    if (before !== on)
      await audit(tx, {
        actor,
        merchantId,
        action: 'clearing_settings.test_clearing',
        objectType: 'clearing_settings',
        objectId: `${merchantId}:test`,
        before: { test_clearing: before },
        after: { test_clearing: on },
      });
  });
}

/** Whether the merchant's Test environment rehearses Live clearing times. */
export const testClearing = async (db: Queryable, merchantId: string) =>
  (await findClearingSettings(db, merchantId, 'test'))?.test_clearing ?? false;

// ---- the owner's mails ----

const ACCRA_WHEN = new Intl.DateTimeFormat('en-GB', {
  timeZone: ACCRA_TIME_ZONE,
  weekday: 'short',
  day: 'numeric',
  month: 'short',
  year: 'numeric',
  hour: '2-digit',
  minute: '2-digit',
  hourCycle: 'h23',
});

/** An instant as the owner reads it: "Mon, 7 Dec 2026, 10:00 (Africa/Accra time)". */
export const accraWhen = (at: Date) => `${ACCRA_WHEN.format(at)} (Africa/Accra time)`;

const lastFour = (digits: string | null) => `ending ${(digits ?? '').replace(/\D/g, '').slice(-4) || '????'}`;

/** A settlement account named without its number: the bank and the last 4 digits, or the network and the phone's. */
export function maskedAccount(
  r: Pick<RecipientRow, 'account_type' | 'bank_name' | 'account_number' | 'network' | 'phone' | 'account_name'>,
) {
  return r.account_type === 'momo'
    ? `${(r.network ?? 'Mobile Money').toUpperCase()} Mobile Money ${lastFour(r.phone)} (${r.account_name})`
    : `${r.bank_name ?? 'Bank'} account ${lastFour(r.account_number)} (${r.account_name})`;
}

/** How the schedule reads in a sentence: "every business day at 10:00", "on the 5th of each month at 09:30". */
export function describeRule(row: Pick<ScheduleRow, 'interval' | 'weekly_anchor' | 'monthly_anchor' | 'time_of_day'>) {
  const at = `at ${row.time_of_day} Africa/Accra time`;
  switch (row.interval) {
    case 'manual':
      return 'manual (no automatic settlements: you request payouts yourself)';
    case 'daily':
      return `every business day ${at}`;
    case 'weekly':
      return `every ${row.weekly_anchor[0]!.toUpperCase()}${row.weekly_anchor.slice(1)} (or the next business day) ${at}`;
    case 'monthly':
      return `on day ${row.monthly_anchor} of each month (or the next business day) ${at}`;
  }
}

const cedis = formatGhs;

function ownerMails(change: ScheduleChange, to: string) {
  const env = change.environment === 'live' ? 'Live' : 'Test';
  const link = change.baseUrl
    ? { link: { url: absoluteUrl(change.baseUrl, '/dashboard/settlements'), label: 'Your settlement settings' } }
    : {};
  const mail = (kind: string, subject: string, paragraphs: string[]) => ({
    kind,
    to,
    subject,
    ...plainMailBodies({ paragraphs, ...link }),
    merchantId: change.merchantId,
  });
  return {
    account: (recipient: RecipientRow, previous: string | null, after: ScheduleRow) =>
      mail('settlement.account_changed', `Your ${env} settlement account was ${previous ? 'changed' : 'set'}`, [
        `Your ${env} settlements will be paid to a ${previous ? 'new ' : ''}account: ${maskedAccount(recipient)}.`,
        previous && after.recipient_active_at
          ? `For your protection it receives no settlement before ${accraWhen(after.recipient_active_at)}, 24 hours after the change.`
          : 'It receives settlements from now on.',
        'If you did not make this change, contact Sika at once and change your dashboard password.',
      ]),
    schedule: (after: ScheduleRow) =>
      mail('settlement.schedule_changed', `Your ${env} settlement schedule was changed`, [
        `Your ${env} settlements are now ${describeRule(after)}, when the available balance is at least ${cedis(after.minimum_minor)}.`,
        ...(after.next_run_at ? [`The next settlement is due ${accraWhen(after.next_run_at)}.`] : []),
        'If you did not make this change, contact Sika.',
      ]),
  };
}
