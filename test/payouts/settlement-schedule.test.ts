// The settlement schedule API (issue 34, item 2) over real HTTP, on embedded storage and on PostgreSQL
// (DATABASE_URL): the defaults, a save and a partial change, each refusal (bad anchors, times and minimums, no
// settlement account, another merchant's or the other environment's recipient, an unverified or inactive one), the
// 24-hour rule on a changed settlement account, the owner's mails, a Live key refused a change of account, a
// paused schedule resumed by a save, and an Idempotency-Key replay.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { before, describe, it } from 'node:test';
import type { Environment } from '../../src/lib/environment.ts';
import { mailList } from '../../src/mail/queries.ts';
import { pauseSchedule } from '../../src/payouts/settlement-schedule-store.ts';
import { storageKind } from '../support/helpers.ts';
import {
  bankRecipient,
  merchantWithHooks,
  momoRecipient,
  verifyRecipientsNow,
  type JsonBody,
} from '../support/payouts-fixtures.ts';
import { usePayoutApp } from '../support/payout-app.ts';

const PATH = '/api/v1/settlements/schedule';
const DAY_MS = 24 * 60 * 60 * 1000;
/** Slack on "about now" for a slow shared machine. */
const NOW_SLACK_MS = 60_000;

interface Answer {
  status: number;
  headers: Headers;
  json: Record<string, unknown> & { error?: { code: string; message: string; fields?: { field: string }[] } };
}

describe(`settlement schedule API (${storageKind})`, () => {
  const { t } = usePayoutApp();
  let base = '';
  before(async () => {
    base = await t.listen();
  });

  async function call(key: string, method: 'GET' | 'POST', body?: JsonBody, idempotencyKey?: string): Promise<Answer> {
    const res = await fetch(`${base}${PATH}`, {
      method,
      headers: {
        authorization: `Bearer ${key}`,
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        ...(idempotencyKey ? { 'idempotency-key': idempotencyKey } : {}),
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return { status: res.status, headers: res.headers, json: (await res.json()) as Answer['json'] };
  }
  const post = (key: string, body: JsonBody, idempotencyKey?: string) => call(key, 'POST', body, idempotencyKey);

  function refused(answer: Answer, status: number, code: string, field?: string) {
    assert.equal(answer.status, status, JSON.stringify(answer.json));
    assert.equal(answer.json.error?.code, code, JSON.stringify(answer.json));
    assert.ok(answer.json.error?.message, 'a message');
    if (field)
      assert.ok(
        answer.json.error?.fields?.some((f) => f.field === field || f.field.endsWith(field)),
        `the refusal names ${field}: ${JSON.stringify(answer.json)}`,
      );
  }

  /** A merchant with a verified Test recipient (and a second one when asked). */
  async function ready() {
    const m = await merchantWithHooks(t);
    const first = await bankRecipient(t, m.test_api_key, '1234567890');
    const second = await momoRecipient(t, m.test_api_key, '0241234567');
    await verifyRecipientsNow(t, first.id, second.id);
    return { m, first: first.id, second: second.id };
  }

  const ownerEmail = async (merchantId: string) =>
    (await t.db.query<{ email: string }>('SELECT email FROM merchants WHERE id = $1', [merchantId]))[0]!.email;
  const mailsOf = async (merchantId: string, kind: string) =>
    (await mailList(t.db, { kind }, 1000)).filter((m) => m.merchant_id === merchantId);
  const scheduleRow = async (merchantId: string, environment: Environment = 'test') =>
    (
      await t.db.query<{ version: number; paused_at: Date | null }>(
        'SELECT version, paused_at FROM settlement_schedules WHERE merchant_id = $1 AND environment = $2',
        [merchantId, environment],
      )
    )[0];

  it('answers the defaults before any save, in each environment', async () => {
    const m = await merchantWithHooks(t);
    for (const [key, environment] of [
      [m.test_api_key, 'test'],
      [m.live_api_key, 'live'],
    ] as const) {
      const got = await call(key, 'GET');
      assert.equal(got.status, 200, JSON.stringify(got.json));
      assert.deepEqual(got.json, {
        object: 'settlement_schedule',
        environment,
        interval: 'manual',
        weekly_anchor: 'monday',
        monthly_anchor: 1,
        time: '10:00',
        time_zone: 'Africa/Accra',
        minimum_minor: 0,
        recipient_id: null,
        recipient_active_at: null,
        next_run_at: null,
        paused: false,
        paused_reason: null,
        paused_payout_id: null,
        updated_at: null,
      });
    }
    assert.equal(await scheduleRow(m.merchant_id), undefined, 'a GET saves nothing');
  });

  it('saves a schedule, changes part of it, and computes the next run after now', async () => {
    const { m, first } = await ready();
    const startedAt = Date.now();
    const saved = await post(m.test_api_key, {
      interval: 'weekly',
      weekly_anchor: 'friday',
      time: '09:30',
      minimum_minor: 5000,
      recipient_id: first,
    });
    assert.equal(saved.status, 200, JSON.stringify(saved.json));
    assert.equal(saved.json.interval, 'weekly');
    assert.equal(saved.json.weekly_anchor, 'friday');
    assert.equal(saved.json.time, '09:30');
    assert.equal(saved.json.minimum_minor, 5000);
    assert.equal(saved.json.recipient_id, first);
    const activeAt = Date.parse(saved.json.recipient_active_at as string);
    assert.ok(Math.abs(activeAt - startedAt) < NOW_SLACK_MS, 'the first settlement account is active at once');
    const next = new Date(saved.json.next_run_at as string);
    assert.ok(next.getTime() > startedAt && next.getTime() < startedAt + 12 * DAY_MS, `next run ${next.toISOString()}`);
    assert.equal(next.getUTCHours(), 9, 'Africa/Accra is GMT: 09:30 there is 09:30 UTC');
    assert.equal(next.getUTCMinutes(), 30);
    assert.ok(next.getUTCDay() >= 1 && next.getUTCDay() <= 5, 'a business day');
    assert.equal((await scheduleRow(m.merchant_id))?.version, 1);

    const changed = await post(m.test_api_key, { interval: 'monthly', monthly_anchor: 28 });
    assert.equal(changed.status, 200, JSON.stringify(changed.json));
    assert.equal(changed.json.interval, 'monthly');
    assert.equal(changed.json.monthly_anchor, 28);
    assert.equal(changed.json.time, '09:30', 'kept');
    assert.equal(changed.json.minimum_minor, 5000, 'kept');
    assert.equal(changed.json.recipient_id, first, 'kept');
    assert.equal(changed.json.recipient_active_at, saved.json.recipient_active_at, 'the same account: no new hold');
    assert.equal((await scheduleRow(m.merchant_id))?.version, 2);
    assert.deepEqual((await call(m.test_api_key, 'GET')).json, changed.json);

    const manual = await post(m.test_api_key, { interval: 'manual' });
    assert.equal(manual.status, 200);
    assert.equal(manual.json.next_run_at, null, 'manual: no next run');

    const audits = await t.db.query<{ action: string; actor_type: string }>(
      "SELECT action, actor_type FROM audit_log WHERE merchant_id = $1 AND object_type = 'settlement_schedule' ORDER BY created_at, id",
      [m.merchant_id],
    );
    assert.deepEqual(
      audits.map((a) => a.action),
      ['settlement_schedule.recipient_change', 'settlement_schedule.update', 'settlement_schedule.update'],
    );
    assert.ok(audits.every((a) => a.actor_type === 'api_key'));
  });

  it('refuses bad anchors, times and minimums, naming the field', async () => {
    const { m, first } = await ready();
    refused(await post(m.test_api_key, { monthly_anchor: 29 }), 400, 'INVALID_ARGUMENT', 'monthly_anchor');
    refused(await post(m.test_api_key, { monthly_anchor: 0 }), 400, 'INVALID_ARGUMENT', 'monthly_anchor');
    refused(await post(m.test_api_key, { weekly_anchor: 'mon' }), 400, 'INVALID_ARGUMENT', 'weekly_anchor');
    refused(await post(m.test_api_key, { time: '24:00' }), 400, 'INVALID_ARGUMENT', 'time');
    refused(await post(m.test_api_key, { time: '9:00' }), 400, 'INVALID_ARGUMENT', 'time');
    refused(await post(m.test_api_key, { minimum_minor: -1 }), 400, 'INVALID_ARGUMENT', 'minimum_minor');
    refused(await post(m.test_api_key, { minimum_minor: 1.5 }), 400, 'INVALID_ARGUMENT', 'minimum_minor');
    refused(await post(m.test_api_key, { interval: 'hourly' }), 400, 'INVALID_ARGUMENT', 'interval');
    refused(await post(m.test_api_key, { recipient_id: '' }), 400, 'INVALID_ARGUMENT', 'recipient_id');
    // No settlement account, now or given: only manual.
    refused(await post(m.test_api_key, { interval: 'daily' }), 400, 'INVALID_ARGUMENT', 'recipient_id');
    assert.equal(await scheduleRow(m.merchant_id), undefined, 'nothing saved by a refusal');
    // With one, daily is fine; the account stays for later changes.
    assert.equal((await post(m.test_api_key, { interval: 'daily', recipient_id: first })).status, 200);
    assert.equal((await post(m.test_api_key, { interval: 'weekly' })).status, 200);
    // An unknown field is dropped (the API's bodies are additionalProperties: false, with removeAdditional).
    const unknown = await post(m.test_api_key, { every: 'day' });
    assert.equal(unknown.status, 200);
    assert.equal(unknown.json.every, undefined);
    assert.equal(unknown.json.interval, 'weekly');
  });

  it("refuses another merchant's recipient and the other environment's as not found", async () => {
    const { m } = await ready();
    const other = await ready();
    refused(await post(m.test_api_key, { recipient_id: other.first }), 404, 'NOT_FOUND');
    refused(await post(m.test_api_key, { recipient_id: `rcp_${randomUUID().replace(/-/g, '')}` }), 404, 'NOT_FOUND');
    const live = await bankRecipient(t, m.live_api_key, '5555555555');
    refused(await post(m.test_api_key, { recipient_id: live.id }), 404, 'NOT_FOUND');
    assert.equal(await scheduleRow(m.merchant_id), undefined);
  });

  it('refuses a recipient not verified yet (409 RECIPIENT_NOT_VERIFIED) and an inactive one (409 RECIPIENT_UNAVAILABLE)', async () => {
    const m = await merchantWithHooks(t);
    const pending = await bankRecipient(t, m.test_api_key, '1234567890');
    assert.equal(pending.verification_status, 'pending_verification');
    const notVerified = await post(m.test_api_key, { interval: 'daily', recipient_id: pending.id });
    refused(notVerified, 409, 'RECIPIENT_NOT_VERIFIED');
    assert.match(notVerified.json.error!.message, /verified/);
    await verifyRecipientsNow(t, pending.id);
    const deleted = await fetch(`${base}/api/v1/payouts/recipients/${pending.id}`, {
      method: 'DELETE',
      headers: { authorization: `Bearer ${m.test_api_key}` },
    });
    assert.equal(deleted.status, 204);
    refused(await post(m.test_api_key, { recipient_id: pending.id }), 409, 'RECIPIENT_UNAVAILABLE');
  });

  it('a new settlement account receives nothing for 24 hours, and the owner is mailed each change', async () => {
    const { m, first, second } = await ready();
    const email = await ownerEmail(m.merchant_id);
    const set = await post(m.test_api_key, { interval: 'daily', recipient_id: first });
    assert.equal(set.status, 200);
    const setMails = await mailsOf(m.merchant_id, 'settlement.account_changed');
    assert.equal(setMails.length, 1, 'the first account is mailed');
    assert.equal(setMails[0]!.to_address, email);
    assert.match(setMails[0]!.text_body, /ending 7890/);
    assert.doesNotMatch(setMails[0]!.text_body, /1234567890/, 'the number is masked');

    const startedAt = Date.now();
    const changed = await post(m.test_api_key, { recipient_id: second });
    assert.equal(changed.status, 200, JSON.stringify(changed.json));
    assert.equal(changed.json.recipient_id, second);
    const activeAt = Date.parse(changed.json.recipient_active_at as string);
    assert.ok(
      Math.abs(activeAt - (startedAt + DAY_MS)) < NOW_SLACK_MS,
      `active 24 hours after the change: ${changed.json.recipient_active_at as string}`,
    );
    const mails = await mailsOf(m.merchant_id, 'settlement.account_changed');
    assert.equal(mails.length, 2);
    const change = mails.find((mail) => mail.text_body.includes('ending 4567'));
    assert.ok(change, 'the mail names the new account by its last 4 digits');
    assert.equal(change.to_address, email);
    assert.match(change.subject, /settlement account was changed/);
    assert.match(change.text_body, /MTN Mobile Money ending 4567/);
    assert.doesNotMatch(change.text_body, /0241234567|241234567/, 'the phone is masked');
    assert.match(change.text_body, /receives no settlement before .*2\d\d\d, \d\d:\d\d \(Africa\/Accra time\)/);
    assert.match(change.text_body, /If you did not make this change, contact Sika/);
    assert.match(change.html_body, /contact Sika/);

    // A rule change: one short mail; the hold on the account stays as it was.
    const ruled = await post(m.test_api_key, { interval: 'weekly', weekly_anchor: 'wednesday', time: '14:00' });
    assert.equal(ruled.json.recipient_active_at, changed.json.recipient_active_at);
    const scheduleMails = await mailsOf(m.merchant_id, 'settlement.schedule_changed');
    assert.equal(scheduleMails.length, 2, 'daily at first, then weekly');
    assert.ok(scheduleMails.some((mail) => /every Wednesday .*at 14:00/.test(mail.text_body)));
    // Saving the same values changes nothing and mails nothing.
    await post(m.test_api_key, { interval: 'weekly' });
    assert.equal((await mailsOf(m.merchant_id, 'settlement.schedule_changed')).length, 2);
    assert.equal((await mailsOf(m.merchant_id, 'settlement.account_changed')).length, 2);
  });

  it('a Live key may set the first settlement account but not replace it', async () => {
    const m = await merchantWithHooks(t);
    const one = await bankRecipient(t, m.live_api_key, '1111111111');
    const two = await bankRecipient(t, m.live_api_key, '2222222222');
    await t.db.query(
      "UPDATE recipients SET verification_status = 'verified', verified_at = now() WHERE id = ANY($1::text[])",
      [[one.id, two.id]],
    );
    const first = await post(m.live_api_key, { interval: 'daily', recipient_id: one.id });
    assert.equal(first.status, 200, JSON.stringify(first.json));
    assert.equal(first.json.environment, 'live');
    const change = await post(m.live_api_key, { recipient_id: two.id });
    refused(change, 403, 'FORBIDDEN');
    assert.equal(
      change.json.error!.message,
      'Change the settlement account in the dashboard, with your second-factor code.',
    );
    assert.equal((await call(m.live_api_key, 'GET')).json.recipient_id, one.id, 'unchanged');
    // The same account, and other fields, are fine.
    assert.equal((await post(m.live_api_key, { recipient_id: one.id, minimum_minor: 100 })).status, 200);
    // Test keys may change theirs (the 24-hour rule still applies: the test above).
  });

  it('a failed settlement pauses the schedule; a save resumes it', async () => {
    const { m, first } = await ready();
    await post(m.test_api_key, { interval: 'daily', recipient_id: first });
    await t.db.transaction((tx) =>
      pauseSchedule(tx, m.merchant_id, 'test', 'The bank returned the transfer: account closed.', 'po_failed1'),
    );
    const paused = await call(m.test_api_key, 'GET');
    assert.equal(paused.json.paused, true);
    assert.equal(paused.json.paused_reason, 'The bank returned the transfer: account closed.');
    assert.equal(paused.json.paused_payout_id, 'po_failed1');
    assert.equal(paused.json.next_run_at, null, 'no run while paused');
    const resumed = await post(m.test_api_key, {});
    assert.equal(resumed.status, 200, JSON.stringify(resumed.json));
    assert.equal(resumed.json.paused, false);
    assert.equal(resumed.json.paused_reason, null);
    assert.equal(resumed.json.paused_payout_id, null);
    assert.ok(resumed.json.next_run_at, 'runs again');
    assert.equal((await scheduleRow(m.merchant_id))?.paused_at, null);
  });

  it('replays an Idempotency-Key retry and refuses the key with another body', async () => {
    const { m, first, second } = await ready();
    const key = randomUUID();
    const body = { interval: 'daily', recipient_id: first };
    const one = await post(m.test_api_key, body, key);
    assert.equal(one.status, 200);
    await post(m.test_api_key, { recipient_id: second });
    const again = await post(m.test_api_key, body, key);
    assert.equal(again.status, 200);
    assert.equal(again.headers.get('idempotent-replayed'), 'true');
    assert.deepEqual(again.json, one.json, 'the first answer, not a second save');
    assert.equal((await call(m.test_api_key, 'GET')).json.recipient_id, second, 'the replay changed nothing');
    refused(await post(m.test_api_key, { interval: 'weekly' }, key), 422, 'IDEMPOTENCY_KEY_REUSED');
  });

  it('two saves at once both land (the row is locked)', async () => {
    const { m, first } = await ready();
    await post(m.test_api_key, { interval: 'daily', recipient_id: first });
    const answers = await Promise.all([
      post(m.test_api_key, { minimum_minor: 700 }),
      post(m.test_api_key, { time: '11:15' }),
    ]);
    assert.deepEqual(
      answers.map((a) => a.status),
      [200, 200],
    );
    const now = (await call(m.test_api_key, 'GET')).json;
    assert.equal(now.minimum_minor, 700);
    assert.equal(now.time, '11:15');
    assert.equal((await scheduleRow(m.merchant_id))?.version, 3);
  });

  it('needs an API key', async () => {
    const res = await fetch(`${base}${PATH}`);
    assert.equal(res.status, 401);
    await res.text();
  });
});
