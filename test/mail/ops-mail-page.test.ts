// The mail a developer reads without an SMTP server, and the operator console's Mail page (issue 33), over HTTP on
// both storages: with no SMTP_URL a mail is written to the log (at info, with to, subject and text) and marked
// logged; /ops/mail lists it newest first, filtered by address and status, with pages; /ops/mail/:id shows the
// text with its links clickable and the HTML only inside a sandboxed frame (escaped, never live in the console);
// "Send again" (POST, CSRF, audited) queues a logged or failed mail again and refuses a sent one; and
// `sika user sign-in-link --send` queues the link's mail in the link's transaction, which arrives over SMTP and
// signs the user in, while without --send the link is printed and nothing is mailed.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { createMerchant } from '../../src/accounts/service.ts';
import { deliverDueMail, mailDelivery, type MailDelivery, type MailLog } from '../../src/mail/delivery.ts';
import { enqueueMail } from '../../src/mail/outbox.ts';
import { mailById } from '../../src/mail/queries.ts';
import { createOperator } from '../../src/ops/service.ts';
import { runCliHere } from '../support/cli-io.ts';
import { ConsoleClient, csrfIn, flashOf } from '../support/console-client.ts';
import { startTestApp, storageKind, type TestContext } from '../support/helpers.ts';
import { SmtpReceiver } from '../support/smtp-receiver.ts';
import { CONSOLE_PAGE_ROWS } from '../../src/web/ops/console-list.ts';

const PASSWORD = 'ops-mail-password-1';

describe(`mail without SMTP and the ops Mail page (${storageKind})`, () => {
  let t: TestContext;
  let ops: ConsoleClient;
  const domain = `d${randomUUID().slice(0, 8)}.mail.test`;
  const address = (name: string) => `${name}-${randomUUID().slice(0, 6)}@${domain}`;
  const logged: { level: string; object: Record<string, unknown>; message: string }[] = [];
  const log: MailLog = {
    info: (object, message) => logged.push({ level: 'info', object: object as Record<string, unknown>, message }),
    warn: (object, message) => logged.push({ level: 'warn', object: object as Record<string, unknown>, message }),
  };
  /** This file's worker with no SMTP_URL: mail goes to the log. */
  let toLog: MailDelivery;

  const queue = (to: string, subject: string, html = '<p>Hello</p>') =>
    t.db.transaction((tx) =>
      enqueueMail(tx, {
        kind: 'signup.verify',
        to,
        subject,
        text: `Welcome to Sika.\n\nVerify your address: https://sika.test/signup/verify/tok-${subject.length}\n`,
        html,
      }),
    );

  before(async () => {
    t = await startTestApp();
    toLog = { ...mailDelivery({ smtpUrl: null, from: 'Sika <no-reply@localhost>' }, log), toLike: `%@${domain}` };
    const operatorEmail = `operator-${randomUUID()}@example.com`;
    await createOperator(t.db, { email: operatorEmail, password: PASSWORD });
    ops = await new ConsoleClient(t, '/ops').signedIn(operatorEmail, PASSWORD);
  });
  after(() => t.close());

  it('with no SMTP_URL a mail is written to the log at info with to, subject and text, and marked logged', async () => {
    const to = address('dev');
    const subject = `Verify ${randomUUID().slice(0, 8)}`;
    const id = await queue(to, subject);
    await deliverDueMail(t.db, toLog);
    const line = logged.find((l) => (l.object.mail as { id?: string } | undefined)?.id === id);
    assert.ok(line, 'the mail was logged');
    assert.equal(line.level, 'info');
    const mail = line.object.mail as Record<string, string>;
    assert.equal(mail.to, to);
    assert.equal(mail.subject, subject);
    assert.match(mail.text ?? '', /https:\/\/sika\.test\/signup\/verify\/tok-/);
    const row = await mailById(t.db, id);
    assert.equal(row.status, 'logged');
    assert.equal(row.sent_at, null);
  });

  it('/ops/mail lists mail newest first, filtered by address and status, and shows one with its link and sandboxed HTML', async () => {
    const to = address('Merchant.Owner');
    const subject = `Check <this> ${randomUUID().slice(0, 8)}`;
    const id = await queue(to, subject, '<p>Hi</p><script>alert(1)</script><img src=x onerror=alert(2)>');
    await deliverDueMail(t.db, toLog);

    const list = await ops.get(`/ops/mail?q=${encodeURIComponent(to.toUpperCase())}`);
    assert.equal(list.statusCode, 200);
    assert.match(list.body, /<a href="\/ops\/mail"[^>]*aria-current="page">Mail<\/a>/, 'the nav shows Mail');
    assert.ok(
      list.body.includes(`<a href="/ops/mail/${id}">Check &lt;this&gt;`),
      'the subject links to the mail, escaped',
    );
    assert.ok(list.body.includes(to), 'the address is shown');
    assert.match(list.body, /<span class="badge [a-z]+">logged<\/span>/);
    const other = await ops.get(`/ops/mail?q=${encodeURIComponent(address('nobody'))}`);
    assert.ok(!other.body.includes(id), 'another address does not list it');
    assert.ok(!(await ops.get(`/ops/mail?q=${encodeURIComponent(to)}&status=sent`)).body.includes(id));
    assert.ok((await ops.get(`/ops/mail?q=${encodeURIComponent(to)}&status=logged`)).body.includes(id));
    assert.equal((await ops.get('/ops/mail?status=bogus')).statusCode, 400);

    const one = await ops.get(`/ops/mail/${id}`);
    assert.equal(one.statusCode, 200);
    const link = /<a href="(https:\/\/sika\.test\/signup\/verify\/tok-\d+)" rel="noreferrer">/.exec(one.body);
    assert.ok(link, 'the link in the text is clickable');
    assert.match(
      one.body,
      /<iframe title="The mail's HTML body" sandbox="" srcdoc="&lt;p&gt;Hi&lt;\/p&gt;&lt;script&gt;/,
    );
    assert.ok(!one.body.includes('<script>alert(1)'), 'the mail HTML is never live markup in the console');
    assert.ok(!one.body.includes('<img src=x'), 'nor its attributes');
    assert.match(one.body, /<button type="submit">Send again<\/button>/);

    assert.equal((await ops.get('/ops/mail/mail_doesnotexist')).statusCode, 404);
  });

  it('the list pages through every mail once, newest first', async () => {
    const who = `paged-${randomUUID().slice(0, 6)}@paged.${domain}`;
    const ids: string[] = [];
    for (let i = 0; i < CONSOLE_PAGE_ROWS + 5; i++) ids.push(await queue(who, `Paged ${i}`));
    const seen: string[] = [];
    let url: string | null = `/ops/mail?q=${encodeURIComponent(who)}`;
    let pages = 0;
    while (url) {
      const res = await ops.get(url);
      pages++;
      seen.push(...[...res.body.matchAll(/<a href="\/ops\/mail\/(mail_[\w]+)">/g)].map((m) => m[1]!));
      url =
        /<a class="button secondary" href="([^"]+)">Next page<\/a>/.exec(res.body)?.[1]?.replace(/&amp;/g, '&') ?? null;
    }
    assert.equal(pages, 2);
    assert.equal(seen.length, ids.length, 'each once');
    assert.deepEqual([...seen].sort(), [...ids].sort());
    const created = new Map(
      (
        await t.db.query<{ id: string; at: number }>(
          `SELECT id, floor(extract(epoch FROM created_at) * 1000)::float8 AS at FROM mail_outbox WHERE to_address = $1`,
          [who],
        )
      ).map((r) => [r.id, Number(r.at)]),
    );
    for (let i = 1; i < seen.length; i++)
      assert.ok(
        created.get(seen[i - 1]!)! > created.get(seen[i]!)! ||
          (created.get(seen[i - 1]!) === created.get(seen[i]!) && seen[i - 1]! > seen[i]!),
        'newest first',
      );
    const csv = await ops.get(`/ops/mail?q=${encodeURIComponent(who)}&format=csv`);
    assert.equal(csv.statusCode, 200);
    assert.equal(csv.body.trim().split('\n').length, ids.length + 1);
    // Out of the outbox's way: written to the log.
    while ((await deliverDueMail(t.db, { ...toLog, toLike: who })) > 0);
  });

  it('Send again queues a logged mail again (audited), refuses one already queued, and needs the CSRF token', async () => {
    const id = await queue(address('again'), `Again ${randomUUID().slice(0, 8)}`);
    await deliverDueMail(t.db, toLog);
    assert.equal((await mailById(t.db, id)).status, 'logged');

    // Signed out: sent to sign in; signed in with a wrong CSRF token: refused. Nothing changes.
    const anonymous = await t.app.inject({
      method: 'POST',
      url: `/ops/mail/${id}/resend`,
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: '_csrf=x',
    });
    assert.notEqual(anonymous.statusCode, 200);
    assert.equal((await t.app.inject({ method: 'GET', url: '/ops/mail' })).statusCode, 303);
    const token = ops.csrf ?? csrfIn((await ops.get('/ops/mail')).body)!;
    ops.csrf = 'not-the-token';
    const forged = await ops.post(`/ops/mail/${id}/resend`);
    ops.csrf = token;
    assert.equal(forged.statusCode, 403);
    assert.equal((await mailById(t.db, id)).status, 'logged');

    const res = await ops.post(`/ops/mail/${id}/resend`);
    assert.equal(res.statusCode, 200);
    assert.equal(flashOf(res.body), 'The mail is queued to be sent again.');
    const row = await mailById(t.db, id);
    assert.equal(row.status, 'pending');
    assert.equal(row.attempts, 0);
    const audits = await t.db.query<{ action: string; actor_type: string; before: unknown; after: unknown }>(
      `SELECT action, actor_type, before, after FROM audit_log WHERE object_id = $1`,
      [id],
    );
    assert.equal(audits.length, 1);
    assert.equal(audits[0]!.action, 'mail.resend');
    assert.equal(audits[0]!.actor_type, 'operator');

    const again = await ops.post(`/ops/mail/${id}/resend`);
    assert.equal(again.statusCode, 409);
    assert.match(flashOf(again.body), /Only a failed or logged mail is sent again; this one is pending/);

    // Sent to the log again by the next pass.
    await deliverDueMail(t.db, toLog);
    assert.equal((await mailById(t.db, id)).status, 'logged');
    assert.equal((await ops.post('/ops/mail/mail_doesnotexist/resend')).statusCode, 404);
  });

  it('sika user sign-in-link --send mails the link (it arrives over SMTP and signs in once); without --send it is printed, nothing mailed', async () => {
    const email = `owner-${randomUUID()}@example.com`;
    await createMerchant(t.db, { name: `Mail Merchant ${randomUUID().slice(0, 8)}`, email }, t.webhookTargets);
    const smtp = await new SmtpReceiver().start();
    const worker = { ...mailDelivery({ smtpUrl: smtp.url, from: 'Sika <no-reply@sika.test>' }, log), toLike: email };
    try {
      const sent = await runCliHere(t, ['user', 'sign-in-link', '--email', email, '--send', '--json']);
      assert.equal(sent.code, 0, sent.stderr);
      const answer = JSON.parse(sent.stdout) as { email: string; mail_id: string; url?: string };
      assert.equal(answer.url, undefined, 'the link is mailed, not printed');
      assert.equal((await mailById(t.db, answer.mail_id)).kind, 'user.sign_in_link');
      await deliverDueMail(t.db, worker);
      const mail = await smtp.waitFor((m) => m.to === email);
      assert.equal(mail.subject, 'Your Sika dashboard sign-in link');
      const url = /(http:\/\/sika\.test\/dashboard\/login\/link\/[\w-]+)/.exec(mail.text)?.[1];
      assert.ok(url, 'the text carries the whole link');
      assert.ok(mail.html.includes(`href="${url}"`), 'so does the HTML');
      const first = await t.app.inject({ method: 'GET', url: new URL(url).pathname });
      assert.equal(first.statusCode, 303);
      assert.ok(first.cookies.some((c) => c.name === 'sika_dashboard'));
      assert.equal((await t.app.inject({ method: 'GET', url: new URL(url).pathname })).statusCode, 410);

      const printed = await runCliHere(t, ['user', 'sign-in-link', '--email', email, '--json']);
      assert.equal(printed.code, 0, printed.stderr);
      assert.match(
        (JSON.parse(printed.stdout) as { url: string }).url,
        /^http:\/\/sika\.test\/dashboard\/login\/link\//,
      );
      assert.equal(await deliverDueMail(t.db, worker), 0, 'nothing queued without --send');

      // An unknown address: nothing is queued (the link's transaction never ran).
      const unknown = await runCliHere(t, ['user', 'sign-in-link', '--email', `nobody-${email}`, '--send']);
      assert.notEqual(unknown.code, 0);
      assert.equal(
        (await t.db.query('SELECT 1 FROM mail_outbox WHERE to_address = $1', [`nobody-${email}`])).length,
        0,
      );
    } finally {
      worker.sender?.close();
      await smtp.close();
    }
  });
});
