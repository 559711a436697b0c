// The SMS path (issue 35, a payer's receipt by SMS), on both storages, against the stand-in speaking Hubtel's
// and mNotify's documented protocols (test/support/standins/sms.ts): a queued SMS goes out once through each
// provider with the documented request and is marked sent with the provider's id; a 5xx or an unreachable
// provider is retried on the schedule and sent later; a refusal is failed without a retry; a lost answer (the
// socket dropped, or no answer within the timeout) is failed and never sent again; with no provider the text
// goes to the log and the SMS is logged; an SMS queued in a transaction that rolled back is never sent.
import assert from 'node:assert/strict';
import { randomInt } from 'node:crypto';
import { createServer } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { deliverDueSms, type SmsDelivery, type SmsLog, smsDelivery } from '../../src/sms/delivery.ts';
import { hubtelSmsProvider } from '../../src/sms/hubtel.ts';
import { mnotifySmsProvider } from '../../src/sms/mnotify.ts';
import type { SmsSettings } from '../../src/sms/model.ts';
import { enqueueSms } from '../../src/sms/outbox.ts';
import type { SmsProvider } from '../../src/sms/providers.ts';
import { findSms } from '../../src/sms/store.ts';
import { startTestApp, storageKind, type TestContext } from '../support/helpers.ts';
import { type SmsStandIn, startSmsStandIn } from '../support/standins/sms.ts';

const quietLog: SmsLog = { info: () => {}, warn: () => {} };
const HUBTEL = { clientId: 'hubtel-client', clientSecret: 'hubtel secret:with colon' };
const MNOTIFY_KEY = 'mnotify-key-&-symbols';

describe(`SMS delivery through Hubtel and mNotify (${storageKind})`, () => {
  let t: TestContext;
  let standIn: SmsStandIn;
  // This file's numbers: its workers take only these (PostgreSQL's outbox is shared with other files).
  const prefix = `2335${String(randomInt(10_000)).padStart(4, '0')}`;
  let serial = 0;
  const phone = () => `${prefix}${String(++serial).padStart(4, '0')}`;

  const settings = (provider: 'hubtel' | 'mnotify', retryScheduleS: readonly number[] = [0.3, 0.3]): SmsSettings => ({
    provider,
    hubtel: provider === 'hubtel' ? { ...HUBTEL, sender: 'Sika Pay', url: standIn.hubtelUrl } : null,
    mnotify: provider === 'mnotify' ? { apiKey: MNOTIFY_KEY, sender: 'SikaPay', url: standIn.mnotifyUrl } : null,
    retryScheduleS,
  });
  /** A worker of this file through the configured provider (the settings the configuration gives). */
  const worker = (provider: 'hubtel' | 'mnotify', retryScheduleS?: readonly number[]): SmsDelivery => ({
    ...smsDelivery(settings(provider, retryScheduleS), quietLog),
    toLike: `${prefix}%`,
  });
  /** A worker of this file through a provider built here (a short timeout, other credentials, another base). */
  const impatient = (provider: SmsProvider): SmsDelivery => ({
    provider,
    retryScheduleS: [0, 0],
    log: quietLog,
    toLike: `${prefix}%`,
  });

  const queue = (to: string, body: string) => t.db.transaction((tx) => enqueueSms(tx, { kind: 'test.sms', to, body }));
  const row = async (id: string) => {
    const found = await findSms(t.db, id);
    assert.ok(found, id);
    return found;
  };
  const requestsTo = (to: string) => standIn.requests.filter((r) => JSON.stringify(r.body ?? '').includes(to));

  before(async () => {
    t = await startTestApp();
    standIn = await startSmsStandIn({ hubtel: HUBTEL, mnotify: { apiKey: MNOTIFY_KEY } });
  });
  after(async () => {
    await standIn.close();
    await t.close();
  });

  it('through Hubtel: one documented POST /v1/messages/send with Basic auth, marked sent with its messageId', async () => {
    const to = phone();
    const body = 'Sika receipt R7K2M9Q4: GHS 25.50 paid to Ama Stores. Thank you.';
    const id = await queue(to, body);
    assert.match(id, /^sms_/);
    assert.equal((await row(id)).status, 'pending');
    assert.ok((await deliverDueSms(t.db, worker('hubtel'))) >= 1);
    const [request, ...more] = requestsTo(to);
    assert.equal(more.length, 0, 'one request');
    assert.equal(request!.method, 'POST');
    assert.equal(request!.path, '/v1/messages/send');
    assert.equal(
      request!.headers.authorization,
      `Basic ${Buffer.from(`${HUBTEL.clientId}:${HUBTEL.clientSecret}`).toString('base64')}`,
    );
    assert.match(String(request!.headers['content-type']), /^application\/json/);
    assert.deepEqual(request!.body, { From: 'Sika Pay', To: to, Content: body });
    assert.equal(request!.outcome, 'taken');
    const message = standIn.sent.find((m) => m.to === to);
    const sent = await row(id);
    assert.equal(sent.status, 'sent');
    assert.equal(sent.attempts, 1);
    assert.equal(sent.provider, 'hubtel');
    assert.equal(sent.provider_message_id, message!.messageId);
    assert.ok(sent.sent_at);
    assert.equal(sent.last_error, null);
    // Sent once: another pass finds nothing of it.
    await deliverDueSms(t.db, worker('hubtel'));
    assert.equal(requestsTo(to).length, 1);
  });

  it('through mNotify: one documented POST /api/sms/quick?key=, marked sent with the campaign id', async () => {
    const to = phone();
    const body = 'Sika receipt K4TQ9ZP2: GHS 100.00 paid to St. Mary School.';
    const id = await queue(to, body);
    await deliverDueSms(t.db, worker('mnotify'));
    const [request, ...more] = requestsTo(to);
    assert.equal(more.length, 0, 'one request');
    assert.equal(request!.path, '/api/sms/quick');
    assert.equal(request!.query.key, MNOTIFY_KEY, 'the key rides in the query string, encoded');
    assert.equal(request!.headers.authorization, undefined);
    assert.deepEqual(request!.body, {
      recipient: [to],
      sender: 'SikaPay',
      message: body,
      is_schedule: false,
      schedule_date: '',
    });
    const sent = await row(id);
    assert.equal(sent.status, 'sent');
    assert.equal(sent.provider, 'mnotify');
    assert.equal(sent.provider_message_id, standIn.sent.find((m) => m.to === to)!.messageId);
    await deliverDueSms(t.db, worker('mnotify'));
    assert.equal(requestsTo(to).length, 1);
  });

  for (const provider of ['hubtel', 'mnotify'] as const) {
    it(`${provider}: a 5xx is retried on the schedule and the SMS sent once later`, async () => {
      const to = phone();
      const id = await queue(to, `retry ${provider}`);
      standIn.next(provider, { kind: 'http_error', status: 503 });
      // A minute's wait (not a fraction of a second: a busy machine may take that long between two statements);
      // the test then makes the retry due by moving its time, instead of sleeping through it.
      const fast = worker(provider, [60, 60]);
      const before = Date.now();
      await deliverDueSms(t.db, fast);
      let sms = await row(id);
      assert.equal(sms.status, 'pending');
      assert.equal(sms.attempts, 1);
      assert.match(sms.last_error ?? '', /HTTP 503/);
      assert.ok(sms.next_attempt_at.getTime() >= before + 59_000, 'the retry waits for the schedule');
      // Not due yet: a pass right away leaves it alone.
      await deliverDueSms(t.db, fast);
      assert.equal(requestsTo(to).length, 1);
      await t.db.query(`UPDATE sms_outbox SET next_attempt_at = now() WHERE id = $1`, [id]);
      await deliverDueSms(t.db, fast);
      sms = await row(id);
      assert.equal(sms.status, 'sent');
      assert.equal(sms.attempts, 2);
      assert.equal(sms.last_error, null);
      assert.equal(standIn.sent.filter((m) => m.to === to).length, 1);
    });

    it(`${provider}: a refusal is failed at once, without a retry`, async () => {
      const to = phone();
      const id = await queue(to, `refused ${provider}`);
      standIn.next(provider, { kind: 'refuse' });
      const fast = worker(provider, [0, 0, 0]);
      await deliverDueSms(t.db, fast);
      const sms = await row(id);
      assert.equal(sms.status, 'failed');
      assert.equal(sms.attempts, 1);
      assert.match(sms.last_error ?? '', provider === 'hubtel' ? /refused.*HTTP 402/ : /refused.*4004/);
      await deliverDueSms(t.db, fast);
      assert.equal(requestsTo(to).length, 1, 'never asked again');
      assert.equal(standIn.sent.filter((m) => m.to === to).length, 0);
    });

    it(`${provider}: a lost answer is failed as "may have been sent" and never sent again`, async () => {
      const to = phone();
      const id = await queue(to, `lost ${provider}`);
      standIn.next(provider, { kind: 'lose_answer' });
      const fast = worker(provider, [0, 0, 0]);
      await deliverDueSms(t.db, fast);
      const sms = await row(id);
      assert.equal(sms.status, 'failed');
      assert.match(sms.last_error ?? '', /answer lost, may have been sent/);
      await deliverDueSms(t.db, fast);
      await sleep(50);
      await deliverDueSms(t.db, fast);
      assert.equal(requestsTo(to).length, 1, 'not sent twice');
      assert.equal(standIn.sent.filter((m) => m.to === to).length, 1, 'the provider took it once');
    });
  }

  it('no answer within the timeout counts as a lost answer: failed, not resent', async () => {
    for (const provider of [
      hubtelSmsProvider({ ...HUBTEL, sender: 'Sika', url: standIn.hubtelUrl }, 300),
      mnotifySmsProvider({ apiKey: MNOTIFY_KEY, sender: 'Sika', url: standIn.mnotifyUrl }, 300),
    ]) {
      const to = phone();
      const id = await queue(to, `hang ${provider.id}`);
      standIn.next(provider.id as 'hubtel' | 'mnotify', { kind: 'hang' });
      const started = Date.now();
      await deliverDueSms(t.db, impatient(provider));
      assert.ok(Date.now() - started < 5_000, 'the pass gave up waiting');
      const sms = await row(id);
      assert.equal(sms.status, 'failed', provider.id);
      assert.match(sms.last_error ?? '', /answer lost, may have been sent/);
      await deliverDueSms(t.db, impatient(provider));
      assert.equal(requestsTo(to).length, 1, `${provider.id}: not sent twice`);
    }
  });

  it('wrong credentials are a refusal: failed with the 401, no retry', async () => {
    const to = phone();
    const id = await queue(to, 'bad credentials');
    const wrong = impatient(
      hubtelSmsProvider({ clientId: 'x', clientSecret: 'y', sender: 'Sika', url: standIn.hubtelUrl }),
    );
    await deliverDueSms(t.db, wrong);
    const sms = await row(id);
    assert.equal(sms.status, 'failed');
    assert.match(sms.last_error ?? '', /HTTP 401/);
    assert.equal(requestsTo(to)[0]!.outcome, 'unauthorized');
  });

  it('an unreachable provider (connection refused) is retried: the SMS certainly did not go out', async () => {
    // A port nobody listens on: bind one, note it, close it.
    const port = await new Promise<number>((resolve) => {
      const s = createServer().listen(0, '127.0.0.1', () => {
        const p = (s.address() as { port: number }).port;
        s.close(() => resolve(p));
      });
    });
    const to = phone();
    const id = await queue(to, 'unreachable');
    const away = impatient(
      mnotifySmsProvider({ apiKey: MNOTIFY_KEY, sender: 'Sika', url: `http://127.0.0.1:${port}/api` }),
    );
    await deliverDueSms(t.db, { ...away, retryScheduleS: [0.2] });
    const sms = await row(id);
    assert.equal(sms.status, 'pending');
    assert.match(sms.last_error ?? '', /unreachable \(ECONNREFUSED\)/);
    await sleep(300);
    await deliverDueSms(t.db, worker('mnotify'));
    assert.equal((await row(id)).status, 'sent');
    assert.equal(standIn.sent.filter((m) => m.to === to).length, 1);
  });

  it('a 5xx past the last retry is failed with the error', async () => {
    const to = phone();
    const id = await queue(to, 'spent');
    standIn.next('hubtel', { kind: 'http_error', status: 500 });
    standIn.next('hubtel', { kind: 'http_error', status: 502 });
    const fast = worker('hubtel', [0]);
    await deliverDueSms(t.db, fast);
    assert.equal((await row(id)).status, 'pending');
    await deliverDueSms(t.db, fast);
    const sms = await row(id);
    assert.equal(sms.status, 'failed');
    assert.equal(sms.attempts, 2);
    assert.match(sms.last_error ?? '', /HTTP 502/);
  });

  it('with no provider the text is written to the log at info and the SMS is logged', async () => {
    const to = phone();
    const body = 'Sika receipt Q2W3E4R5: GHS 5.00 paid.';
    const id = await queue(to, body);
    const lines: { object: object; message: string }[] = [];
    const log: SmsLog = { info: (object, message) => lines.push({ object, message }), warn: () => {} };
    const none = { ...smsDelivery({ provider: 'none', hubtel: null, mnotify: null }, log), toLike: `${prefix}%` };
    assert.equal(none.provider, null);
    await deliverDueSms(t.db, none);
    const sms = await row(id);
    assert.equal(sms.status, 'logged');
    assert.equal(sms.provider, null);
    const line = lines.find((l) => JSON.stringify(l.object).includes(to));
    assert.ok(line, 'logged');
    assert.match(line.message, /no SMS_PROVIDER/);
    assert.deepEqual((line.object as { sms: unknown }).sms, { id, kind: 'test.sms', to, body });
    assert.equal(requestsTo(to).length, 0);
  });

  it('an SMS queued in a transaction that rolled back is never sent', async () => {
    const to = phone();
    await assert.rejects(
      t.db.transaction(async (tx) => {
        await enqueueSms(tx, { kind: 'test.sms', to, body: 'rolled back' });
        throw new Error('roll back');
      }),
      /roll back/,
    );
    await deliverDueSms(t.db, worker('hubtel'));
    assert.equal(requestsTo(to).length, 0);
  });

  it('two workers passing at once send each SMS exactly once', async () => {
    const numbers = [phone(), phone(), phone(), phone()];
    for (const to of numbers) await queue(to, `race ${to}`);
    await Promise.all([deliverDueSms(t.db, worker('hubtel')), deliverDueSms(t.db, worker('hubtel'))]);
    for (const to of numbers) assert.equal(standIn.sent.filter((m) => m.to === to).length, 1, to);
  });
});
