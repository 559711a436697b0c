// The mail path (issue 33, "E-mail, for real"), on both storages, against a real SMTP server (the smtp-server
// package, test/support/smtp-receiver.ts): a queued mail arrives with its subject, from, to, text and HTML; a
// refused send is retried on the schedule and delivered later, and failed only once the schedule is spent;
// two workers at once deliver each mail exactly once; a mail queued in a transaction that rolled back is
// never sent; a mail whose lease still holds is not taken by another worker, and one whose lease ran out is.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { deliverDueMail, mailDelivery, type MailDelivery, type MailLog } from '../../src/mail/delivery.ts';
import { mailMachine, MAIL_RETRY_SCHEDULE_S } from '../../src/mail/model.ts';
import { enqueueMail } from '../../src/mail/outbox.ts';
import { mailById, resendMail } from '../../src/mail/queries.ts';
import { createLiveProviders } from '../../src/rails/live-config.ts';
import { startWorkers } from '../../src/workers.ts';
import { startTestApp, storageKind, type TestContext } from '../support/helpers.ts';
import { SmtpReceiver } from '../support/smtp-receiver.ts';

const quietLog: MailLog = { info: () => {}, warn: () => {} };

describe(`mail delivery over SMTP (${storageKind})`, () => {
  let t: TestContext;
  let smtp: SmtpReceiver;
  // This file's addresses: its workers take only these (PostgreSQL's outbox is shared with other files).
  const domain = `d${randomUUID().slice(0, 8)}.mail.test`;
  const address = (name: string) => `${name}-${randomUUID().slice(0, 6)}@${domain}`;
  const FROM = 'Sika Test <no-reply@sika.test>';
  let delivery: MailDelivery;
  /** A worker of this file with a retry schedule of its own (fast, for the tests). */
  const worker = (retryScheduleS: readonly number[] = MAIL_RETRY_SCHEDULE_S): MailDelivery => ({
    ...mailDelivery({ smtpUrl: smtp.url, from: FROM, retryScheduleS }, quietLog),
    toLike: `%@${domain}`,
  });

  const queue = (to: string, subject: string, extra: { text?: string; html?: string } = {}) =>
    t.db.transaction((tx) =>
      enqueueMail(tx, {
        kind: 'test.mail',
        to,
        subject,
        text: extra.text ?? `Hello ${to}\nOpen https://sika.test/x/${subject}`,
        html: extra.html ?? `<p>Hello <b>${to}</b></p>`,
      }),
    );

  before(async () => {
    t = await startTestApp();
    smtp = await new SmtpReceiver({ user: 'sika', pass: 'secret pass' }).start();
    delivery = worker();
  });
  after(async () => {
    delivery.sender?.close();
    await smtp.close();
    await t.close();
  });

  it('a queued mail arrives with its subject, from, to, text and HTML, and is marked sent with the message id', async () => {
    const to = address('owner');
    const subject = `Welcome ${randomUUID().slice(0, 8)} — Akwaaba`;
    const id = await queue(to, subject, {
      text: 'Line one\nVerify: https://sika.test/signup/verify/abc',
      html: '<p>Hi <b>there</b></p>',
    });
    assert.equal((await mailById(t.db, id)).status, 'pending');
    assert.ok((await deliverDueMail(t.db, delivery)) >= 1);
    const got = await smtp.waitFor((m) => m.subject === subject);
    assert.equal(got.to, to);
    assert.deepEqual(got.rcptTo, [to]);
    assert.equal(got.mailFrom, 'no-reply@sika.test');
    assert.match(got.from, /Sika Test.*<no-reply@sika\.test>/);
    assert.equal(got.text.trim(), 'Line one\nVerify: https://sika.test/signup/verify/abc');
    assert.match(got.html, /<p>Hi <b>there<\/b><\/p>/);
    assert.equal(got.user, 'sika', 'the SMTP_URL credentials authenticated');
    const row = await mailById(t.db, id);
    assert.equal(row.status, 'sent');
    assert.equal(row.attempts, 1);
    assert.ok(row.sent_at);
    assert.ok(row.message_id && got.headers['message-id']?.includes(row.message_id.replace(/[<>]/g, '')));
    // Sent once: another pass finds nothing of it.
    await deliverDueMail(t.db, delivery);
    assert.equal(smtp.messages.filter((m) => m.subject === subject).length, 1);
  });

  it('a mail the SMTP server refuses is retried on the schedule and delivered later, never lost', async () => {
    const fast = worker([0.3, 0.3]);
    try {
      const subject = `Retry ${randomUUID()}`;
      const id = await queue(address('retry'), subject);
      smtp.refuseNext(1, 451, 'Try again later');
      await deliverDueMail(t.db, fast);
      let row = await mailById(t.db, id);
      assert.equal(row.status, 'pending');
      assert.equal(row.attempts, 1);
      assert.match(row.last_error ?? '', /451/);
      assert.ok(row.next_attempt_at.getTime() > Date.now(), 'the retry waits for the schedule');
      assert.deepEqual(
        smtp.refused.filter((r) => r.subject === subject),
        [{ subject, code: 451 }],
      );
      // Not due yet: a pass right away leaves it alone.
      await deliverDueMail(t.db, fast);
      assert.equal((await mailById(t.db, id)).attempts, 1);
      await sleep(400);
      await deliverDueMail(t.db, fast);
      await smtp.waitFor((m) => m.subject === subject);
      row = await mailById(t.db, id);
      assert.equal(row.status, 'sent');
      assert.equal(row.attempts, 2);
      assert.equal(row.last_error, null);
    } finally {
      fast.sender?.close();
    }
  });

  it('a mail refused past its last retry is failed with the error, and an operator can send it again', async () => {
    const fast = worker([0]);
    try {
      const subject = `Refused ${randomUUID()}`;
      const id = await queue(address('refused'), subject);
      smtp.refuseNext(2, 550, 'Mailbox unavailable');
      await deliverDueMail(t.db, fast);
      assert.equal((await mailById(t.db, id)).status, 'pending');
      await deliverDueMail(t.db, fast);
      const failed = await mailById(t.db, id);
      assert.equal(failed.status, 'failed');
      assert.equal(failed.attempts, 2);
      assert.match(failed.last_error ?? '', /550 .*Mailbox unavailable/);
      assert.equal(smtp.messages.filter((m) => m.subject === subject).length, 0);
      // A failed mail stays failed: no worker takes it again by itself.
      await deliverDueMail(t.db, fast);
      assert.equal((await mailById(t.db, id)).status, 'failed');

      let audited: unknown = null;
      const resent = await resendMail(t.db, id, async (_tx, change) => {
        audited = change;
      });
      assert.deepEqual(resent, { resent: true, from: 'failed' });
      assert.deepEqual(audited, { before: 'failed', after: 'pending' });
      await deliverDueMail(t.db, fast);
      await smtp.waitFor((m) => m.subject === subject);
      assert.equal((await mailById(t.db, id)).status, 'sent');
      // A sent mail is not sent again.
      assert.deepEqual(await resendMail(t.db, id, async () => {}), { resent: false, status: 'sent' });
    } finally {
      fast.sender?.close();
    }
  });

  it('two workers passing at once deliver each mail exactly once', async () => {
    const tag = randomUUID().slice(0, 8);
    const COUNT = 30;
    for (let i = 0; i < COUNT; i++) await queue(address(`many${i}`), `Many ${tag} #${i}`);
    const a = worker();
    const b = worker();
    try {
      // Several passes each, concurrently, until all are out.
      for (let round = 0; round < 5; round++) {
        await Promise.all([deliverDueMail(t.db, a, 7), deliverDueMail(t.db, b, 7), deliverDueMail(t.db, a, 7)]);
      }
      const ours = smtp.messages.filter((m) => m.subject.startsWith(`Many ${tag} #`));
      assert.equal(ours.length, COUNT, 'every mail arrived');
      assert.equal(new Set(ours.map((m) => m.subject)).size, COUNT, 'none twice');
    } finally {
      a.sender?.close();
      b.sender?.close();
    }
  });

  it('a mail queued in a transaction that rolled back is never sent', async () => {
    const subject = `Rolled back ${randomUUID()}`;
    let id = '';
    await assert.rejects(
      t.db.transaction(async (tx) => {
        id = await enqueueMail(tx, {
          kind: 'test.mail',
          to: address('rollback'),
          subject,
          text: 't',
          html: '<p>t</p>',
        });
        throw new Error('the change that caused the mail failed');
      }),
      /the change that caused the mail failed/,
    );
    await deliverDueMail(t.db, delivery);
    await sleep(100);
    assert.equal(smtp.messages.filter((m) => m.subject === subject).length, 0);
    await assert.rejects(mailById(t.db, id), { code: 'NOT_FOUND' });
  });

  it('a mail another worker holds (its lease not run out) is left alone; once the lease runs out it is taken', async () => {
    const subject = `Leased ${randomUUID()}`;
    const id = await queue(address('lease'), subject);
    // A worker that claims with a 1 s lease and dies before sending (its sender never answers).
    const dying: MailDelivery = {
      ...worker(),
      leaseS: 1,
      sender: { send: () => new Promise(() => {}), close: () => {} },
    };
    void deliverDueMail(t.db, dying);
    await sleep(150);
    await deliverDueMail(t.db, delivery);
    assert.equal(smtp.messages.filter((m) => m.subject === subject).length, 0, 'not taken while the lease holds');
    await sleep(1_100);
    await deliverDueMail(t.db, delivery);
    await smtp.waitFor((m) => m.subject === subject);
    const row = await mailById(t.db, id);
    assert.equal(row.status, 'sent');
    assert.equal(row.attempts, 2, 'the dead claim counted as a send');
  });

  // Embedded only: the process's worker serves the whole outbox, and PostgreSQL's is shared with other test
  // files, whose mail it would take (each file's own workers above serve only its addresses).
  it('the process sends mail with its send-mail job within about a second of the commit', {
    skip: storageKind === 'postgres',
  }, async () => {
    const workers = startWorkers({
      db: t.db,
      log: t.app.log,
      config: { ...t.config, smtpUrl: smtp.url, mailFrom: FROM },
      providers: createLiveProviders(t.config),
    });
    try {
      const subject = `From the worker ${randomUUID()}`;
      const id = await queue(address('worker'), subject);
      const started = Date.now();
      await smtp.waitFor((m) => m.subject === subject, 5_000);
      assert.ok(Date.now() - started < 3_000, 'sent within the job interval');
      for (let i = 0; i < 50 && (await mailById(t.db, id)).status !== 'sent'; i++) await sleep(20);
      assert.equal((await mailById(t.db, id)).status, 'sent');
    } finally {
      await workers.stop();
    }
  });

  it('the mail table allows exactly the statuses of the mail status table', async () => {
    const rows = await t.db.query<{ def: string }>(
      `SELECT pg_get_constraintdef(oid) AS def FROM pg_constraint
        WHERE conrelid = 'mail_outbox'::regclass AND contype = 'c' AND pg_get_constraintdef(oid) LIKE '%status%'`,
    );
    const allowed = [...(rows[0]?.def ?? '').matchAll(/'([a-z_]+)'/g)].map((m) => m[1]!).sort();
    assert.deepEqual(allowed, [...mailMachine.statuses].sort());
    assert.deepEqual(mailMachine.final, ['sent']);
    assert.throws(() => mailMachine.transition('sent', 'pending'));
  });
});
