// Africa/Accra days and Ghana's business days, on real dates from date-holidays' Ghana data (2026: Independence
// Day Fri 6 March, Eid al-Fitr Fri 20 March, Good Friday 3 April and Easter Monday 6 April, Kwame Nkrumah
// Memorial Day Mon 21 September, Christmas Fri 25 December, Boxing Day Sat 26 December observed Mon 28 December).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  ACCRA_TIME_ZONE,
  accraDay,
  accraMidnight,
  accraTime,
  addBusinessDays,
  clearingInstant,
  ghanaHoliday,
  isBusinessDay,
  latestScheduledRun,
  type ScheduleRule,
  scheduledRunAfter,
  WEEKDAYS,
} from '../../src/lib/accra-calendar.ts';

const at = (iso: string) => new Date(iso);
const rule = (overrides: Partial<ScheduleRule>): ScheduleRule => ({
  interval: 'daily',
  weekly_anchor: 'monday',
  monthly_anchor: 1,
  time_of_day: '10:00',
  ...overrides,
});
const iso = (date: Date | null) => date?.toISOString() ?? null;

describe('Africa/Accra days and times', () => {
  it('names the zone and the weekdays', () => {
    assert.equal(ACCRA_TIME_ZONE, 'Africa/Accra');
    assert.deepEqual([...WEEKDAYS], ['monday', 'tuesday', 'wednesday', 'thursday', 'friday', 'saturday', 'sunday']);
  });

  it('an instant falls in its GMT day, the last millisecond included', () => {
    assert.equal(accraDay(at('2026-11-29T23:59:59.999Z')), '2026-11-29');
    assert.equal(accraDay(at('2026-11-30T00:00:00.000Z')), '2026-11-30');
    assert.equal(accraDay(at('2024-02-29T12:00:00Z')), '2024-02-29');
  });

  it('midnight and HH:MM of a day are GMT instants', () => {
    assert.equal(iso(accraMidnight('2026-11-29')), '2026-11-29T00:00:00.000Z');
    assert.equal(iso(accraTime('2026-11-29', '10:00')), '2026-11-29T10:00:00.000Z');
    assert.equal(iso(accraTime('2026-12-31', '23:59')), '2026-12-31T23:59:00.000Z');
    assert.equal(iso(accraTime('2026-01-01', '00:00')), '2026-01-01T00:00:00.000Z');
  });

  it('refuses a day that is not YYYY-MM-DD or not in the calendar, and a time that is not HH:MM', () => {
    for (const day of ['2026-02-30', '2026-2-3', '26-01-01', '2026-13-01', '', '2026-01-01T00:00', '0000-01-01']) {
      assert.throws(() => accraMidnight(day), Error, day);
      assert.throws(() => isBusinessDay(day), Error, day);
      assert.throws(() => ghanaHoliday(day), Error, day);
    }
    for (const time of ['24:00', '9:00', '10:60', '10:00:00', '', 'noon']) {
      assert.throws(() => accraTime('2026-11-30', time), Error, time);
    }
    assert.throws(() => accraDay(new Date(Number.NaN)), Error);
  });
});

describe('Ghana public holidays and business days', () => {
  it('names the public holidays of 2026, substitute days included', () => {
    assert.equal(ghanaHoliday('2026-01-01'), "New Year's Day");
    assert.equal(ghanaHoliday('2026-03-06'), 'Independence Day');
    assert.equal(ghanaHoliday('2026-03-20'), 'End of Ramadan (Eid al-Fitr)');
    assert.equal(ghanaHoliday('2026-05-27'), 'Feast of the Sacrifice (Eid al-Adha)');
    assert.equal(ghanaHoliday('2026-12-25'), 'Christmas Day');
    assert.equal(ghanaHoliday('2026-12-26'), 'Boxing Day');
    assert.equal(ghanaHoliday('2026-12-28'), 'Boxing Day (substitute day)');
    assert.equal(ghanaHoliday('2025-09-22'), 'Kwame Nkrumah Memorial Day (substitute day)');
  });

  it('an observance is not a public holiday, nor an ordinary day', () => {
    assert.equal(ghanaHoliday('2026-04-05'), null); // Easter Sunday: an observance
    assert.equal(ghanaHoliday('2026-11-30'), null);
    assert.equal(ghanaHoliday('2026-12-24'), null);
  });

  it('a business day is Monday to Friday and not a public holiday', () => {
    assert.equal(isBusinessDay('2026-11-27'), true); // Friday
    assert.equal(isBusinessDay('2026-11-28'), false); // Saturday
    assert.equal(isBusinessDay('2026-11-29'), false); // Sunday
    assert.equal(isBusinessDay('2026-11-30'), true); // Monday
    assert.equal(isBusinessDay('2026-03-06'), false); // Independence Day, a Friday
    assert.equal(isBusinessDay('2026-12-28'), false); // Boxing Day observed, a Monday
    assert.equal(isBusinessDay('2026-12-29'), true);
  });

  it('counts business days past weekends and holidays', () => {
    assert.equal(addBusinessDays('2026-11-27', 0), '2026-11-27');
    assert.equal(addBusinessDays('2026-11-28', 0), '2026-11-28'); // 0 is the day itself, business day or not
    assert.equal(addBusinessDays('2026-11-27', 1), '2026-11-30'); // Friday -> Monday
    assert.equal(addBusinessDays('2026-11-28', 1), '2026-11-30'); // Saturday -> Monday
    assert.equal(addBusinessDays('2026-09-18', 1), '2026-09-22'); // Monday 21 is a holiday
    assert.equal(addBusinessDays('2026-04-02', 1), '2026-04-07'); // Good Friday to Easter Monday
    assert.equal(addBusinessDays('2026-12-24', 1), '2026-12-29'); // 25, 26 (27) and 28 off
    assert.equal(addBusinessDays('2026-12-24', 2), '2026-12-30');
    assert.equal(addBusinessDays('2026-12-30', 2), '2027-01-04'); // New Year's Day, a Friday
    assert.equal(addBusinessDays('2026-11-30', 5), '2026-12-08'); // Farmers Day Friday 4 December
  });

  it('refuses a count that is not a whole number of days at least 0', () => {
    for (const n of [-1, 1.5, Number.NaN, Number.POSITIVE_INFINITY]) {
      assert.throws(() => addBusinessDays('2026-11-27', n), Error, String(n));
      assert.throws(() => clearingInstant(at('2026-11-27T12:00:00Z'), n), Error, String(n));
    }
  });
});

describe('clearingInstant', () => {
  it('0 business days is the instant itself', () => {
    assert.equal(iso(clearingInstant(at('2026-11-27T14:03:05.123Z'), 0)), '2026-11-27T14:03:05.123Z');
  });

  it('MoMo 1: a Friday payment clears Monday 00:00, or Tuesday when Monday is a holiday', () => {
    assert.equal(iso(clearingInstant(at('2026-11-27T14:00:00Z'), 1)), '2026-11-30T00:00:00.000Z');
    assert.equal(iso(clearingInstant(at('2026-11-27T23:59:59.999Z'), 1)), '2026-11-30T00:00:00.000Z');
    assert.equal(iso(clearingInstant(at('2026-11-28T00:00:00Z'), 1)), '2026-11-30T00:00:00.000Z'); // Saturday
    assert.equal(iso(clearingInstant(at('2026-11-30T00:00:00Z'), 1)), '2026-12-01T00:00:00.000Z'); // Monday
    assert.equal(iso(clearingInstant(at('2026-09-18T09:00:00Z'), 1)), '2026-09-22T00:00:00.000Z');
  });

  it('card 2: Thursday 24 December 2026 clears on Wednesday 30 December (25, 26 and the 28th are holidays)', () => {
    assert.equal(iso(clearingInstant(at('2026-12-24T15:00:00Z'), 2)), '2026-12-30T00:00:00.000Z');
    assert.equal(iso(clearingInstant(at('2026-12-24T15:00:00Z'), 1)), '2026-12-29T00:00:00.000Z');
  });
});

describe('scheduledRunAfter', () => {
  it('daily: every business day at its time, strictly after', () => {
    const daily = rule({ interval: 'daily', time_of_day: '10:00' });
    assert.equal(iso(scheduledRunAfter(daily, at('2026-11-27T09:00:00Z'))), '2026-11-27T10:00:00.000Z');
    assert.equal(iso(scheduledRunAfter(daily, at('2026-11-27T09:59:59.999Z'))), '2026-11-27T10:00:00.000Z');
    assert.equal(iso(scheduledRunAfter(daily, at('2026-11-27T10:00:00Z'))), '2026-11-30T10:00:00.000Z'); // exactly at a run
    assert.equal(iso(scheduledRunAfter(daily, at('2026-12-24T10:00:00Z'))), '2026-12-29T10:00:00.000Z');
    assert.equal(
      iso(scheduledRunAfter(rule({ time_of_day: '23:45' }), at('2026-11-30T23:00:00Z'))),
      '2026-11-30T23:45:00.000Z',
    );
  });

  it('weekly: the anchor weekday, or the first business day after it', () => {
    const friday = rule({ interval: 'weekly', weekly_anchor: 'friday' });
    assert.equal(iso(scheduledRunAfter(friday, at('2026-11-23T00:00:00Z'))), '2026-11-27T10:00:00.000Z');
    assert.equal(iso(scheduledRunAfter(friday, at('2026-11-27T10:00:00Z'))), '2026-12-07T10:00:00.000Z'); // Farmers Day Friday 4 Dec -> Monday 7
    assert.equal(iso(scheduledRunAfter(friday, at('2026-12-19T00:00:00Z'))), '2026-12-29T10:00:00.000Z'); // 25 Dec, 28 Dec off
    const monday = rule({ interval: 'weekly', weekly_anchor: 'monday', time_of_day: '08:30' });
    assert.equal(iso(scheduledRunAfter(monday, at('2026-09-14T08:30:00Z'))), '2026-09-22T08:30:00.000Z'); // 21 Sep off
    const saturday = rule({ interval: 'weekly', weekly_anchor: 'saturday' });
    assert.equal(iso(scheduledRunAfter(saturday, at('2026-11-25T00:00:00Z'))), '2026-11-30T10:00:00.000Z');
    assert.equal(iso(scheduledRunAfter(saturday, at('2026-11-30T10:00:00Z'))), '2026-12-07T10:00:00.000Z');
  });

  it('monthly: the anchor date, or the first business day after it, across the year end', () => {
    const sixth = rule({ interval: 'monthly', monthly_anchor: 6 });
    assert.equal(iso(scheduledRunAfter(sixth, at('2026-02-10T00:00:00Z'))), '2026-03-09T10:00:00.000Z'); // Independence Day
    assert.equal(iso(scheduledRunAfter(sixth, at('2026-03-09T10:00:00Z'))), '2026-04-07T10:00:00.000Z'); // Easter Monday 6 Apr
    const first = rule({ interval: 'monthly', monthly_anchor: 1, time_of_day: '06:00' });
    assert.equal(iso(scheduledRunAfter(first, at('2026-12-15T00:00:00Z'))), '2027-01-04T06:00:00.000Z'); // New Year's Day Friday
    assert.equal(iso(scheduledRunAfter(first, at('2026-07-31T00:00:00Z'))), '2026-08-03T06:00:00.000Z'); // 1 Aug a Saturday
    const twentyEighth = rule({ interval: 'monthly', monthly_anchor: 28 });
    assert.equal(iso(scheduledRunAfter(twentyEighth, at('2026-11-28T09:00:00Z'))), '2026-11-30T10:00:00.000Z');
    assert.equal(iso(scheduledRunAfter(twentyEighth, at('2026-11-30T10:00:00Z'))), '2026-12-29T10:00:00.000Z');
    assert.equal(iso(scheduledRunAfter(twentyEighth, at('2027-01-20T00:00:00Z'))), '2027-01-28T10:00:00.000Z');
  });

  it('a run rolled past its anchor is still found from a day after the anchor', () => {
    // The anchor, Friday 25 December, has passed; its run is on Tuesday 29 December.
    const friday = rule({ interval: 'weekly', weekly_anchor: 'friday' });
    assert.equal(iso(scheduledRunAfter(friday, at('2026-12-27T12:00:00Z'))), '2026-12-29T10:00:00.000Z');
    const sixth = rule({ interval: 'monthly', monthly_anchor: 6 });
    assert.equal(iso(scheduledRunAfter(sixth, at('2026-03-08T00:00:00Z'))), '2026-03-09T10:00:00.000Z');
  });

  it('refuses a rule it cannot run', () => {
    const bad: unknown[] = [
      rule({ interval: 'manual' as 'daily' }),
      rule({ interval: 'weekly', weekly_anchor: 'funday' as 'monday' }),
      rule({ interval: 'monthly', monthly_anchor: 29 }),
      rule({ interval: 'monthly', monthly_anchor: 0 }),
      rule({ interval: 'monthly', monthly_anchor: 1.5 }),
      rule({ time_of_day: '25:00' }),
    ];
    for (const r of bad) assert.throws(() => scheduledRunAfter(r as ScheduleRule, at('2026-11-27T00:00:00Z')), Error);
    assert.throws(() => scheduledRunAfter(rule({}), new Date(Number.NaN)), Error);
  });

  it('10,000 calls over mixed rules take well under 2 s', () => {
    const rules = [
      rule({ interval: 'daily', time_of_day: '10:00' }),
      ...WEEKDAYS.map((weekday) => rule({ interval: 'weekly', weekly_anchor: weekday, time_of_day: '09:15' })),
      ...Array.from({ length: 28 }, (_, i) =>
        rule({ interval: 'monthly', monthly_anchor: i + 1, time_of_day: '17:00' }),
      ),
    ];
    const start = at('2026-01-01T00:00:00Z').getTime();
    scheduledRunAfter(rules[0]!, new Date(start)); // the year's holidays are read once, not timed
    const began = performance.now();
    for (let i = 0; i < 10_000; i++) {
      const run = scheduledRunAfter(rules[i % rules.length]!, new Date(start + i * 3_541_000));
      assert.ok(run.getTime() > start);
    }
    const elapsed_ms = performance.now() - began;
    assert.ok(elapsed_ms < 2_000, `10,000 calls took ${elapsed_ms} ms`);
  });
});

describe('latestScheduledRun', () => {
  const daily = rule({ interval: 'daily' });

  it('the latest run at or before `at` and after `after`', () => {
    assert.equal(
      iso(latestScheduledRun(daily, at('2026-11-25T10:00:00Z'), at('2026-11-30T09:00:00Z'))),
      '2026-11-27T10:00:00.000Z',
    );
    assert.equal(
      iso(latestScheduledRun(daily, at('2026-11-25T10:00:00Z'), at('2026-11-30T10:00:00Z'))),
      '2026-11-30T10:00:00.000Z',
    ); // at exactly a run counts
    assert.equal(latestScheduledRun(daily, at('2026-11-27T10:00:00Z'), at('2026-11-30T09:59:59.999Z')), null); // after exactly a run does not
    assert.equal(latestScheduledRun(daily, at('2026-11-30T10:00:00Z'), at('2026-11-30T10:00:00Z')), null);
    assert.equal(latestScheduledRun(daily, at('2026-11-30T12:00:00Z'), at('2026-11-30T11:00:00Z')), null);
  });

  it('a weekly run rolled past the holidays is not due before its day', () => {
    const friday = rule({ interval: 'weekly', weekly_anchor: 'friday' });
    assert.equal(latestScheduledRun(friday, at('2026-12-18T10:00:00Z'), at('2026-12-28T23:00:00Z')), null);
    assert.equal(
      iso(latestScheduledRun(friday, at('2026-12-18T10:00:00Z'), at('2026-12-29T10:00:00Z'))),
      '2026-12-29T10:00:00.000Z',
    );
  });

  it('over a long gap, the latest run only', () => {
    const monthly = rule({ interval: 'monthly', monthly_anchor: 6 });
    assert.equal(
      iso(latestScheduledRun(monthly, at('2025-01-01T00:00:00Z'), at('2026-03-31T00:00:00Z'))),
      '2026-03-09T10:00:00.000Z',
    );
    assert.equal(
      iso(latestScheduledRun(daily, at('2020-01-01T00:00:00Z'), at('2026-11-29T12:00:00Z'))),
      '2026-11-27T10:00:00.000Z',
    );
  });
});
