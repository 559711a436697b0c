// Africa/Accra days, Ghana's business days and the instants a settlement schedule runs at. Ghana keeps
// GMT all year, but nothing here assumes it: every local day and time goes through the zone's offset as
// Intl reports it. Public holidays come from date-holidays ('GH', public ones and their substitute days),
// read once per year into a map.
import Holidays from 'date-holidays';

export const ACCRA_TIME_ZONE = 'Africa/Accra';
export const WEEKDAYS = ['monday', 'tuesday', 'wednesday', 'thursday', 'friday', 'saturday', 'sunday'] as const;
export type Weekday = (typeof WEEKDAYS)[number];
export const SETTLEMENT_INTERVALS = ['manual', 'daily', 'weekly', 'monthly'] as const;
export type SettlementInterval = (typeof SETTLEMENT_INTERVALS)[number];

export interface ScheduleRule {
  interval: 'daily' | 'weekly' | 'monthly';
  weekly_anchor: Weekday;
  /** 1-28 */
  monthly_anchor: number;
  /** 'HH:MM' Africa/Accra */
  time_of_day: string;
}

const DAY_MS = 86_400_000;
const MINUTE_MS = 60_000;
/** The most days a search for a run day walks before it gives up (a bug: every rule runs at least monthly). */
const RUN_SEARCH_DAYS_MAX = 400;
/** The most days a walk to a business day takes before it gives up (a bug: no holiday stretch is this long). */
const BUSINESS_DAY_SEARCH_MAX = 60;
const DAY_PATTERN = /^(\d{4})-(\d{2})-(\d{2})$/;
const TIME_PATTERN = /^([01]\d|2[0-3]):([0-5]\d)$/;

const fail = (message: string): never => {
  throw new Error(`accra-calendar assertion failed: ${message}`);
};

// ---- days as numbers (days since 1970-01-01), so the walks below do no string or Intl work ----

/** A 'YYYY-MM-DD' that is a real calendar day, as its day number; throws otherwise. */
function dayNumber(day: string): number {
  const match = typeof day === 'string' ? DAY_PATTERN.exec(day) : null;
  if (!match) return fail(`${String(day)} is not a YYYY-MM-DD day`);
  const [year, month, date] = [Number(match[1]), Number(match[2]), Number(match[3])];
  if (year < 1) return fail(`${day} is before year 1`);
  // setUTCFullYear, not Date.UTC: Date.UTC reads years 0-99 as 1900-1999.
  const back = new Date(0);
  const ms = back.setUTCFullYear(year, month - 1, date);
  if (back.getUTCFullYear() !== year || back.getUTCMonth() !== month - 1 || back.getUTCDate() !== date) {
    return fail(`${day} is not a calendar day`);
  }
  return ms / DAY_MS;
}

function dayString(dayNo: number): string {
  const date = new Date(dayNo * DAY_MS);
  const year = date.getUTCFullYear();
  if (year < 1 || year > 9999) return fail(`day ${dayNo} is outside years 1-9999`);
  return `${String(year).padStart(4, '0')}-${String(date.getUTCMonth() + 1).padStart(2, '0')}-${String(date.getUTCDate()).padStart(2, '0')}`;
}

/** 0 for Monday ... 6 for Sunday (day 0, 1970-01-01, was a Thursday). */
const weekdayIndex = (dayNo: number): number => (((dayNo + 3) % 7) + 7) % 7;
const dayOfMonth = (dayNo: number): number => new Date(dayNo * DAY_MS).getUTCDate();

// ---- the zone ----

// The offset alone ('GMT', 'GMT+05:30'): a few times cheaper than formatting every field of the local time.
const zoneOffsetFormat = new Intl.DateTimeFormat('en-US', { timeZone: ACCRA_TIME_ZONE, timeZoneName: 'longOffset' });
const OFFSET_PATTERN = /GMT(?:([+-])(\d{2}):(\d{2})(?::(\d{2}))?)?$/;

/** Minutes Africa/Accra is ahead of UTC at an instant. */
function zoneOffsetMinutes(atMs: number): number {
  const text = zoneOffsetFormat.format(new Date(atMs));
  const match = OFFSET_PATTERN.exec(text);
  if (!match) return fail(`cannot read the zone offset in ${text}`);
  if (match[1] === undefined) return 0;
  const minutes = Number(match[2]) * 60 + Number(match[3]) + Math.round(Number(match[4] ?? 0) / 60);
  return match[1] === '-' ? -minutes : minutes;
}

/** The instant a local wall-clock time (ms as if UTC) is in Africa/Accra. */
function localToInstant(localMs: number): Date {
  const first = localMs - zoneOffsetMinutes(localMs) * MINUTE_MS;
  return new Date(localMs - zoneOffsetMinutes(first) * MINUTE_MS);
}

function instantMs(at: Date): number {
  const ms = at instanceof Date ? at.getTime() : Number.NaN;
  return Number.isFinite(ms) ? ms : fail(`${String(at)} is not a valid instant`);
}

function minutesOfDay(hhmm: string): number {
  const match = typeof hhmm === 'string' ? TIME_PATTERN.exec(hhmm) : null;
  if (!match) return fail(`${String(hhmm)} is not an HH:MM time`);
  return Number(match[1]) * 60 + Number(match[2]);
}

/**
 * Each local day and time asked for, as its instant in ms: Intl costs microseconds a call, and a pass over
 * 10,000 merchants asks about the same few days. Emptied when it reaches INSTANT_CACHE_SIZE_MAX entries.
 */
const instantCache = new Map<number, number>();
const INSTANT_CACHE_SIZE_MAX = 100_000;

function instantOnMs(dayNo: number, minutes: number): number {
  const key = dayNo * 1440 + minutes;
  let ms = instantCache.get(key);
  if (ms === undefined) {
    if (instantCache.size >= INSTANT_CACHE_SIZE_MAX) instantCache.clear();
    ms = localToInstant(dayNo * DAY_MS + minutes * MINUTE_MS).getTime();
    instantCache.set(key, ms);
  }
  return ms;
}

const instantOn = (dayNo: number, minutes: number): Date => new Date(instantOnMs(dayNo, minutes));

/**
 * The Africa/Accra day an instant falls in: the day whose midnight is at or before it and whose next
 * midnight is after it. A zone is at most 14 hours from UTC, so it is the UTC day or one either side.
 */
function dayNumberOf(atMs: number): number {
  let dayNo = Math.floor(atMs / DAY_MS) + 1;
  while (instantOnMs(dayNo, 0) > atMs) dayNo--;
  return dayNo;
}

/** 'YYYY-MM-DD' of the Africa/Accra day an instant falls in. */
export function accraDay(at: Date): string {
  return dayString(dayNumberOf(instantMs(at)));
}

/** 00:00 Africa/Accra of a day 'YYYY-MM-DD' as an instant. */
export function accraMidnight(day: string): Date {
  return instantOn(dayNumber(day), 0);
}

/** The instant of 'HH:MM' Africa/Accra on a day. */
export function accraTime(day: string, hhmm: string): Date {
  return instantOn(dayNumber(day), minutesOfDay(hhmm));
}

// ---- holidays and business days ----

let ghana: Holidays | null = null;
/** year -> (day number -> the holiday's English name), filled a year at a time. */
const holidaysByYear = new Map<number, Map<number, string>>();

function holidaysOf(year: number): Map<number, string> {
  let days = holidaysByYear.get(year);
  if (days) return days;
  ghana ??= new Holidays('GH');
  days = new Map();
  for (const holiday of ghana.getHolidays(year, 'en') || []) {
    if (holiday.type !== 'public') continue;
    const dayNo = dayNumber(holiday.date.slice(0, 10));
    if (!days.has(dayNo)) days.set(dayNo, holiday.name);
  }
  holidaysByYear.set(year, days);
  return days;
}

const holidayOn = (dayNo: number): string | null =>
  holidaysOf(new Date(dayNo * DAY_MS).getUTCFullYear()).get(dayNo) ?? null;

/** Each day asked about, whether it is a business day; emptied when it reaches DAY_CACHE_SIZE_MAX entries. */
const businessDayCache = new Map<number, boolean>();
const DAY_CACHE_SIZE_MAX = 100_000;

function isBusinessDayNo(dayNo: number): boolean {
  let business = businessDayCache.get(dayNo);
  if (business === undefined) {
    if (businessDayCache.size >= DAY_CACHE_SIZE_MAX) businessDayCache.clear();
    business = weekdayIndex(dayNo) < 5 && holidayOn(dayNo) === null;
    businessDayCache.set(dayNo, business);
  }
  return business;
}

/** The first business day on or after a day. */
function businessDayOnOrAfter(dayNo: number): number {
  for (let d = dayNo; d < dayNo + BUSINESS_DAY_SEARCH_MAX; d++) if (isBusinessDayNo(d)) return d;
  return fail(`no business day within ${BUSINESS_DAY_SEARCH_MAX} days of ${dayString(dayNo)}`);
}

/** The last business day strictly before a day. */
function businessDayBefore(dayNo: number): number {
  for (let d = dayNo - 1; d > dayNo - BUSINESS_DAY_SEARCH_MAX; d--) if (isBusinessDayNo(d)) return d;
  return fail(`no business day within ${BUSINESS_DAY_SEARCH_MAX} days before ${dayString(dayNo)}`);
}

/** Ghana's public holiday on that day (its English name), from date-holidays ('GH', public holidays only; substitute days count), else null. */
export function ghanaHoliday(day: string): string | null {
  return holidayOn(dayNumber(day));
}

/** Monday to Friday and not a Ghana public holiday. */
export function isBusinessDay(day: string): boolean {
  return isBusinessDayNo(dayNumber(day));
}

function addBusinessDayNos(dayNo: number, n: number): number {
  if (!Number.isSafeInteger(n) || n < 0) return fail(`${n} is not a count of business days`);
  let d = dayNo;
  for (let left = n; left > 0; left--) d = businessDayOnOrAfter(d + 1);
  return d;
}

/** The n-th business day after `day` (n >= 1); n = 0 gives `day` itself. */
export function addBusinessDays(day: string, n: number): string {
  return dayString(addBusinessDayNos(dayNumber(day), n));
}

/**
 * When money credited at `at` clears after `businessDays` Africa/Accra business days: 0 is `at` itself;
 * n >= 1 is 00:00 Africa/Accra of the n-th business day after at's day (MoMo 1: a Friday payment clears
 * Monday 00:00, or Tuesday when Monday is a holiday).
 */
export function clearingInstant(at: Date, businessDays: number): Date {
  const atMs = instantMs(at);
  const clearDay = addBusinessDayNos(dayNumberOf(atMs), businessDays);
  return businessDays === 0 ? new Date(atMs) : instantOn(clearDay, 0);
}

// ---- schedules ----

interface CheckedRule {
  interval: ScheduleRule['interval'];
  weekday: number;
  monthDay: number;
  minutes: number;
}

function checkRule(rule: ScheduleRule): CheckedRule {
  const interval = rule?.interval;
  if (interval !== 'daily' && interval !== 'weekly' && interval !== 'monthly') {
    return fail(`${String(interval)} is not a scheduled interval`);
  }
  const weekday = WEEKDAYS.indexOf(rule.weekly_anchor);
  if (interval === 'weekly' && weekday < 0) return fail(`${String(rule.weekly_anchor)} is not a weekday`);
  const monthDay = rule.monthly_anchor;
  if (interval === 'monthly' && !(Number.isInteger(monthDay) && monthDay >= 1 && monthDay <= 28)) {
    return fail(`${String(monthDay)} is not a monthly anchor (1-28)`);
  }
  return { interval, weekday, monthDay, minutes: minutesOfDay(rule.time_of_day) };
}

const isAnchor = (rule: CheckedRule, dayNo: number): boolean =>
  rule.interval === 'daily' ||
  (rule.interval === 'weekly' ? weekdayIndex(dayNo) === rule.weekday : dayOfMonth(dayNo) === rule.monthDay);

/**
 * A run day is a business day that some anchor day rolls forward to: an anchor after the previous
 * business day and on or before it.
 */
function isRunDay(rule: CheckedRule, dayNo: number): boolean {
  if (!isBusinessDayNo(dayNo)) return false;
  if (rule.interval === 'daily') return true;
  const previous = businessDayBefore(dayNo);
  for (let d = dayNo; d > previous; d--) if (isAnchor(rule, d)) return true;
  return false;
}

/**
 * The first scheduled run strictly after `after`. Run days: daily, every business day; weekly, the first
 * business day on or after each anchor weekday; monthly, the first business day on or after the anchor
 * date of each month. The run is at time_of_day Africa/Accra on that day.
 */
export function scheduledRunAfter(rule: ScheduleRule, after: Date): Date {
  const checked = checkRule(rule);
  const afterMs = instantMs(after);
  const first = dayNumberOf(afterMs);
  for (let d = first; d < first + RUN_SEARCH_DAYS_MAX; d++) {
    if (!isRunDay(checked, d)) continue;
    const run = instantOn(d, checked.minutes);
    if (run.getTime() > afterMs) return run;
  }
  return fail(`no run within ${RUN_SEARCH_DAYS_MAX} days after ${after.toISOString()}`);
}

/** The latest scheduled run at or before `at` and strictly after `after` (null when none). */
export function latestScheduledRun(rule: ScheduleRule, after: Date, at: Date): Date | null {
  const checked = checkRule(rule);
  const afterMs = instantMs(after);
  const atMs = instantMs(at);
  if (atMs <= afterMs) return null;
  const last = dayNumberOf(atMs);
  const first = dayNumberOf(afterMs);
  for (let d = last; d >= first && d > last - RUN_SEARCH_DAYS_MAX; d--) {
    if (!isRunDay(checked, d)) continue;
    const run = instantOn(d, checked.minutes);
    if (run.getTime() > atMs) continue;
    return run.getTime() > afterMs ? run : null;
  }
  if (first <= last - RUN_SEARCH_DAYS_MAX) fail(`no run within ${RUN_SEARCH_DAYS_MAX} days before ${at.toISOString()}`);
  return null;
}

/** The day number of a real calendar day written YYYY-MM-DD, else null (a form's pattern lets 2026-02-31 through). */
function dayNumberOrNull(day: string | undefined): number | null {
  if (!day) return null;
  try {
    return dayNumber(day);
  } catch {
    return null;
  }
}

/**
 * A list filter's Accra days as instants: created on or after 00:00 of `from`, before 00:00 of the day after `to`.
 * A day that is missing or not a real day leaves its side open.
 */
export function accraDayRange(
  from: string | undefined,
  to: string | undefined,
): { createdFrom?: Date; createdBefore?: Date } {
  const first = dayNumberOrNull(from);
  const last = dayNumberOrNull(to);
  return {
    createdFrom: first === null ? undefined : instantOn(first, 0),
    createdBefore: last === null ? undefined : instantOn(last + 1, 0),
  };
}
