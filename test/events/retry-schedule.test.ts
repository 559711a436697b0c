// The one webhook retry schedule (src/events/retry-schedule.ts): jitter only lengthens a wait, by at most
// RETRY_JITTER_SHARE_MAX; a receiver's Retry-After lengthens it up to RETRY_AFTER_HONOURED_MAX_S and never
// shortens it; the schedule running out fails the delivery; the configuration's default is this schedule.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { loadConfig } from '../../src/config/index.ts';
import { defaultDeliveryOptions } from '../../src/events/delivery.ts';
import {
  parseRetryAfter,
  RETRY_AFTER_HONOURED_MAX_S,
  RETRY_JITTER_SHARE_MAX,
  RETRY_SCHEDULE_S,
  retryDelayS,
} from '../../src/events/retry-schedule.ts';

describe('webhook retry schedule', () => {
  it('is written once: DESIGN §3 steps, the configuration default and the worker default', () => {
    assert.deepEqual(RETRY_SCHEDULE_S, [5, 300, 1_800, 7_200, 18_000, 36_000, 36_000]);
    assert.deepEqual(loadConfig({}).webhookRetryScheduleS, RETRY_SCHEDULE_S);
    assert.deepEqual(defaultDeliveryOptions().retryScheduleS, RETRY_SCHEDULE_S);
    assert.deepEqual(loadConfig({ WEBHOOK_RETRY_SCHEDULE_S: '1,2' }).webhookRetryScheduleS, [1, 2]);
  });

  it('each wait is the step lengthened by a random share of at most 10%, never shortened', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: RETRY_SCHEDULE_S.length }),
        fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true }),
        (tryNumber, draw) => {
          const stepS = RETRY_SCHEDULE_S[tryNumber - 1]!;
          const waitS = retryDelayS(RETRY_SCHEDULE_S, tryNumber, null, () => draw)!;
          assert.ok(
            waitS >= stepS && waitS <= stepS * (1 + RETRY_JITTER_SHARE_MAX) + 0.001,
            `${waitS} s for a ${stepS} s step`,
          );
        },
      ),
    );
    const waits = new Set(Array.from({ length: 50 }, () => retryDelayS([300], 1)));
    assert.ok(waits.size > 10, 'deliveries that failed together come back spread out');
  });

  it("a receiver's Retry-After is honoured when longer, capped, and never makes a wait shorter", () => {
    const none = () => 0;
    assert.equal(retryDelayS([5], 1, 120, none), 120);
    assert.equal(retryDelayS([300], 1, 2, none), 300, 'asking for less does not shorten the schedule');
    assert.equal(retryDelayS([5], 1, 10 * RETRY_AFTER_HONOURED_MAX_S, none), RETRY_AFTER_HONOURED_MAX_S);
    assert.equal(
      retryDelayS([5], 2, 60, none),
      null,
      'past the schedule the delivery fails, whatever the receiver asks',
    );
    assert.equal(retryDelayS([], 1, null, none), null);
  });

  it('reads Retry-After as seconds or an HTTP date, and ignores anything else', () => {
    const nowMs = Date.parse('2026-11-24T10:00:00Z');
    assert.equal(parseRetryAfter('120', nowMs), 120);
    assert.equal(parseRetryAfter(' 0 ', nowMs), 0);
    assert.equal(parseRetryAfter('Tue, 24 Nov 2026 10:01:30 GMT', nowMs), 90);
    assert.equal(parseRetryAfter('Tue, 24 Nov 2026 09:00:00 GMT', nowMs), 0, 'a date in the past means now');
    for (const junk of [undefined, '', '-5', '1.5', 'soon', '12345678901'])
      assert.equal(parseRetryAfter(junk, nowMs), null, String(junk));
    assert.equal(parseRetryAfter(['30', '60'], nowMs), 30);
  });
});
