// The schedule and clearing rules on random rules and instants (2024-2030, fast-check): the next run is after
// the instant, on a business day, with no run between; it is the earliest of a reference that rolls every
// anchor day forward by itself; clearing never goes back in time and never overtakes a later credit.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import {
  accraDay,
  accraMidnight,
  accraTime,
  addBusinessDays,
  clearingInstant,
  isBusinessDay,
  latestScheduledRun,
  type ScheduleRule,
  scheduledRunAfter,
  WEEKDAYS,
} from '../../src/lib/accra-calendar.ts';

const DAY_MS = 86_400_000;
const FROM_MS = Date.parse('2024-01-01T00:00:00Z');
const TO_MS = Date.parse('2030-12-31T00:00:00Z');

const instant = fc.integer({ min: FROM_MS, max: TO_MS }).map((ms) => new Date(ms));
const timeOfDay = fc
  .tuple(fc.integer({ min: 0, max: 23 }), fc.integer({ min: 0, max: 59 }))
  .map(([h, m]) => `${String(h).padStart(2, '0')}:${String(m).padStart(2, '0')}`);
const scheduleRule: fc.Arbitrary<ScheduleRule> = fc.record({
  interval: fc.constantFrom('daily', 'weekly', 'monthly'),
  weekly_anchor: fc.constantFrom(...WEEKDAYS),
  monthly_anchor: fc.integer({ min: 1, max: 28 }),
  time_of_day: timeOfDay,
});
/** An instant, or exactly a run of the rule (the boundary `after` must be strictly past). */
const ruleAndInstant = fc.tuple(scheduleRule, instant, fc.boolean()).map(([rule, at, onRun]) => {
  return [rule, onRun ? scheduledRunAfter(rule, at) : at] as const;
});

const shiftDay = (day: string, days: number) =>
  new Date(Date.parse(`${day}T00:00:00Z`) + days * DAY_MS).toISOString().slice(0, 10);

/** The reference: every anchor day near `after`, rolled to the first business day on or after it. */
function referenceRunAfter(rule: ScheduleRule, after: Date): Date {
  const first = accraDay(after);
  const runs: Date[] = [];
  for (let offset = -20; offset <= 70; offset++) {
    const day = shiftDay(first, offset);
    const date = new Date(`${day}T00:00:00Z`);
    const anchored =
      rule.interval === 'daily' ||
      (rule.interval === 'weekly' && WEEKDAYS[(date.getUTCDay() + 6) % 7] === rule.weekly_anchor) ||
      (rule.interval === 'monthly' && date.getUTCDate() === rule.monthly_anchor);
    if (!anchored) continue;
    const runDay = isBusinessDay(day) ? day : addBusinessDays(day, 1);
    const run = accraTime(runDay, rule.time_of_day);
    if (run > after) runs.push(run);
  }
  assert.ok(runs.length > 0);
  return new Date(Math.min(...runs.map((run) => run.getTime())));
}

describe('accra-calendar properties', () => {
  it('the next run is after the instant, on a business day at its time, and no run comes between', () => {
    fc.assert(
      fc.property(ruleAndInstant, ([rule, after]) => {
        const run = scheduledRunAfter(rule, after);
        assert.ok(run > after);
        const day = accraDay(run);
        assert.ok(isBusinessDay(day), day);
        assert.equal(run.getTime(), accraTime(day, rule.time_of_day).getTime());
        assert.equal(latestScheduledRun(rule, after, new Date(run.getTime() - 1)), null);
        assert.equal(latestScheduledRun(rule, after, run)?.getTime(), run.getTime());
        assert.equal(run.getTime(), referenceRunAfter(rule, after).getTime());
      }),
      { numRuns: 500 },
    );
  });

  it('the latest run up to an instant is the one just before the next run after it', () => {
    fc.assert(
      fc.property(scheduleRule, instant, fc.integer({ min: 1, max: 90 * DAY_MS }), (rule, after, spanMs) => {
        const at = new Date(after.getTime() + spanMs);
        const latest = latestScheduledRun(rule, after, at);
        const next = scheduledRunAfter(rule, after);
        if (latest === null) {
          assert.ok(next > at);
        } else {
          assert.ok(latest > after && latest <= at);
          assert.ok(scheduledRunAfter(rule, latest) > at);
        }
      }),
      { numRuns: 300 },
    );
  });

  it('clearing is at or after the credit, monotone in it, and on a business day midnight', () => {
    fc.assert(
      fc.property(instant, instant, fc.integer({ min: 0, max: 5 }), (a, b, businessDays) => {
        const [early, late] = a <= b ? [a, b] : [b, a];
        const cleared = clearingInstant(early, businessDays);
        assert.ok(cleared >= early);
        assert.ok(cleared <= clearingInstant(late, businessDays));
        if (businessDays > 0) {
          const day = accraDay(cleared);
          assert.ok(isBusinessDay(day), day);
          assert.equal(cleared.getTime(), accraMidnight(day).getTime());
          assert.equal(day, addBusinessDays(accraDay(early), businessDays));
        }
      }),
      { numRuns: 500 },
    );
  });

  it('a day and its midnight agree', () => {
    fc.assert(
      fc.property(instant, (at) => {
        const day = accraDay(at);
        assert.ok(accraMidnight(day) <= at);
        assert.ok(at < accraMidnight(shiftDay(day, 1)));
      }),
      { numRuns: 300 },
    );
  });
});
