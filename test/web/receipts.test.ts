// Payer receipts (issue 35), over HTTP on both storages: a session gets its receipt number when it succeeds
// (in checkout.session.completed, unique over many sessions, given on a collision without failing the payment,
// and lazily to one that succeeded before receipt numbers existed); the receipt page and PDF answer 404 before
// success and for an unknown session, and show the number and the amounts after; the e-mail receipt is sent once
// for two requests to the same address (read from a real SMTP server through the send-mail worker), at most three
// addresses; the SMS receipt is queued once in the SMS outbox; the dashboard's and the operator console's
// searches find a session by its receipt number as a payer reads it out.
import assert from 'node:assert/strict';
import { randomInt, randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { createMerchant, type CreatedMerchant } from '../../src/accounts/service.ts';
import { giveReceiptNumber } from '../../src/checkout/receipts.ts';
import { isValidReceiptNumber, newReceiptNumber, spacedReceiptNumber } from '../../src/checkout/receipt-number.ts';
import { insertLink } from '../../src/checkout/payment-link-store.ts';
import { lockSession } from '../../src/checkout/store.ts';
import { deliverDueMail, mailDelivery } from '../../src/mail/delivery.ts';
import { createOperator } from '../../src/ops/service.ts';
import { createSession, feeOf, momoBody, simulate, startAttempt, totalOf } from '../support/checkout.ts';
import { ConsoleClient } from '../support/console-client.ts';
import { startTestApp, storageKind, type TestContext } from '../support/helpers.ts';
import { call } from '../support/http.ts';
import { pdfText } from '../support/pdf-text.ts';
import { SmtpReceiver } from '../support/smtp-receiver.ts';
import { type SmsStandIn, startSmsStandIn } from '../support/standins/sms.ts';
import { deliverDueSms, smsDelivery } from '../../src/sms/delivery.ts';

const PASSWORD = 'receipts-test-password';

describe(`payer receipts (${storageKind})`, () => {
  let t: TestContext;
  let smtp: SmtpReceiver;
  let smsStandIn: SmsStandIn;
  // This file's addresses: its mail worker takes only these (PostgreSQL's outbox is shared with other files).
  const domain = `r${randomUUID().slice(0, 8)}.mail.test`;
  const address = (name: string) => `${name}-${randomUUID().slice(0, 6)}@${domain}`;

  before(async () => {
    smsStandIn = await startSmsStandIn({ hubtel: { clientId: 'client', clientSecret: 'secret' } });
    t = await startTestApp({
      SMS_PROVIDER: 'hubtel',
      HUBTEL_SMS_CLIENT_ID: 'client',
      HUBTEL_SMS_CLIENT_SECRET: 'secret',
      HUBTEL_SMS_SENDER: 'Sika',
      HUBTEL_SMS_URL: smsStandIn.hubtelUrl,
    });
    smtp = await new SmtpReceiver().start();
  });
  after(async () => {
    await smtp?.close();
    await t?.close();
    await smsStandIn?.close();
  });

  const sendMail = async () => {
    const delivery = {
      ...mailDelivery({ smtpUrl: smtp.url, from: 'Sika <no-reply@sika.test>' }, { info() {}, warn() {} }),
      toLike: `%@${domain}`,
    };
    try {
      return await deliverDueMail(t.db, delivery);
    } finally {
      delivery.sender?.close();
    }
  };

  const receiptNumberOf = async (id: string) =>
    (
      await t.db.query<{ receipt_number: string | null }>(
        'SELECT receipt_number FROM checkout_sessions WHERE id = $1',
        [id],
      )
    )[0]!.receipt_number;

  async function paidSession(m: CreatedMerchant, amountMinor = 2_550) {
    const session = await createSession(t, m, { amount_minor: amountMinor });
    const attempt = await startAttempt(t, session.id, momoBody(amountMinor));
    await simulate(t, m, attempt.attempt_reference, 'paid');
    return { session, attempt };
  }

  const form = (t_: TestContext, url: string, fields: Record<string, string>) =>
    t_.app.inject({
      method: 'POST',
      url,
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: new URLSearchParams(fields).toString(),
    });

  it('a session gets a valid receipt number when it succeeds, and checkout.session.completed carries it', async () => {
    const m = await t.merchant();
    const session = await createSession(t, m, { amount_minor: 2_550 });
    const attempt = await startAttempt(t, session.id, momoBody(2_550));
    assert.equal(await receiptNumberOf(session.id), null, 'none before success');
    await simulate(t, m, attempt.attempt_reference, 'paid');
    const number = await receiptNumberOf(session.id);
    assert.ok(number && isValidReceiptNumber(number), String(number));
    const api = await call(t, 'GET', `/api/v1/sessions/${session.id}`, { key: m.test_api_key });
    assert.equal(api.json().receipt_number, number);
    const events = await t.db.query<{ payload: string }>(
      "SELECT payload FROM events WHERE object_id = $1 AND type = 'checkout.session.completed'",
      [session.id],
    );
    assert.equal(events.length, 1);
    assert.equal(JSON.parse(events[0]!.payload).data.session.receipt_number, number);
  });

  it('receipt numbers are unique over many sessions, and a failed session has none', async () => {
    const m = await t.merchant();
    const numbers = await Promise.all(
      Array.from({ length: 20 }, async () => receiptNumberOf((await paidSession(m, 1_000)).session.id)),
    );
    assert.ok(numbers.every((n) => n && isValidReceiptNumber(n)));
    assert.equal(new Set(numbers).size, numbers.length);
    const failed = await createSession(t, m);
    const attempt = await startAttempt(t, failed.id, momoBody(50_000));
    await simulate(t, m, attempt.attempt_reference, 'failed');
    assert.equal(await receiptNumberOf(failed.id), null);
  });

  it('a number another session holds is retried with a new one inside the same transaction', async () => {
    const m = await t.merchant();
    const { session: first } = await paidSession(m);
    const taken = (await receiptNumberOf(first.id))!;
    // As a session that succeeded before migration 040: no number yet. The first two draws are taken.
    const second = await createSession(t, m);
    const free = newReceiptNumber();
    const draws = [taken, taken, free];
    const given = await t.db.transaction(async (tx) => {
      const row = (await lockSession(tx, second.id))!;
      const updated = await giveReceiptNumber(tx, row, () => draws.shift()!);
      // The transaction goes on after the refused statements.
      await tx.query('SELECT 1');
      return updated;
    });
    assert.equal(given.receipt_number, free);
    assert.equal(draws.length, 0, 'both taken draws were tried');
    assert.equal(await receiptNumberOf(second.id), free);
    assert.equal(await receiptNumberOf(first.id), taken);
  });

  it('the receipt page and PDF are 404 before success and for an unknown session, then show the number and the amounts', async () => {
    const m = await t.merchant();
    const amountMinor = 2_550;
    const session = await createSession(t, m, { amount_minor: amountMinor });
    for (const path of ['receipt', 'receipt.pdf']) {
      assert.equal((await t.app.inject({ url: `/pay/${session.id}/${path}` })).statusCode, 404);
      assert.equal((await t.app.inject({ url: `/pay/cs_unknown${randomUUID().slice(0, 8)}/${path}` })).statusCode, 404);
    }
    const attempt = await startAttempt(t, session.id, momoBody(amountMinor));
    assert.equal((await t.app.inject({ url: `/pay/${session.id}/receipt` })).statusCode, 404, 'pending: still 404');
    await simulate(t, m, attempt.attempt_reference, 'paid');
    const number = (await receiptNumberOf(session.id))!;
    const total = totalOf('momo', amountMinor);
    const money = (minor: number) => `GHS ${Math.floor(minor / 100)}.${String(minor % 100).padStart(2, '0')}`;

    const page = await t.app.inject({ url: `/pay/${session.id}/receipt` });
    assert.equal(page.statusCode, 200);
    assert.match(page.headers['content-type'] as string, /text\/html/);
    assert.match(
      page.body,
      new RegExp(
        spacedReceiptNumber(number)
          .split(' ')
          .map((g) => `<span>${g}</span>`)
          .join(''),
      ),
    );
    assert.ok(page.body.includes(money(amountMinor)), 'the amount');
    assert.ok(page.body.includes(money(feeOf('momo', amountMinor))), 'the fee the payer bore');
    assert.ok(page.body.includes(money(total)), 'the total charged');
    assert.ok(page.body.includes('024 *** 4567'), 'the masked wallet');
    assert.ok(page.body.includes(session.invoice_ref));
    assert.ok(page.body.includes('MTN MoMo'));
    assert.ok(page.body.includes('GMT'), 'the date in Accra time');
    assert.match(page.body, /action="\/pay\/[^"]+\/receipt\/sms"/, 'SMS offered: a provider is configured');

    const pdf = await t.app.inject({ url: `/pay/${session.id}/receipt.pdf` });
    assert.equal(pdf.statusCode, 200);
    assert.equal(pdf.headers['content-type'], 'application/pdf');
    const text = await pdfText(pdf.rawPayload);
    assert.ok(text.replace(/\s/g, '').includes(number), text);
    assert.ok(text.includes(money(total)), text);
    assert.ok(text.includes(session.invoice_ref), text);

    // The payer page's success screen offers the receipt.
    const pay = await t.app.inject({ url: `/pay/${session.id}` });
    assert.ok(pay.body.includes(`href="/pay/${session.id}/receipt"`));
    assert.ok(pay.body.includes(`href="/pay/${session.id}/receipt.pdf"`));
    assert.ok(pay.body.includes(`action="/pay/${session.id}/receipt/email"`));
  });

  it("a duplicate payment refunded automatically is not the receipt's: it shows the session's payment (the first)", async () => {
    const m = await t.merchant();
    const amountMinor = 30_000;
    const session = await createSession(t, m, { amount_minor: amountMinor });
    const cancel = async (ref: string) => {
      const res = await call(t, 'POST', `/api/v1/checkout/sessions/${session.id}/provider-attempts/${ref}/cancel`, {});
      assert.equal(res.statusCode, 200, res.body);
    };
    // The payer leaves a Mobile Money prompt, then a card payment, then approves both late: the first to succeed
    // is the session's payment; the card's, though started later, is a duplicate refunded in full.
    const momo = await startAttempt(t, session.id, momoBody(amountMinor));
    await cancel(momo.attempt_reference);
    const card = await startAttempt(t, session.id, { rail: 'card', amount_minor: totalOf('card', amountMinor) });
    await cancel(card.attempt_reference);
    await simulate(t, m, momo.attempt_reference, 'paid');
    await simulate(t, m, card.attempt_reference, 'paid');
    const refunds = await t.db.query<{ attempt_id: string }>('SELECT attempt_id FROM refunds WHERE session_id = $1', [
      session.id,
    ]);
    assert.deepEqual(
      refunds.map((r) => r.attempt_id),
      [card.attempt_reference],
      'the late card payment was refunded as a duplicate',
    );
    const api = await call(t, 'GET', `/api/v1/sessions/${session.id}`, { key: m.test_api_key });
    assert.equal(api.json().payment.attempt_reference, momo.attempt_reference, "the API's payment is the first");

    const money = (minor: number) => `GHS ${Math.floor(minor / 100)}.${String(minor % 100).padStart(2, '0')}`;
    const page = await t.app.inject({ url: `/pay/${session.id}/receipt` });
    assert.equal(page.statusCode, 200);
    const text = page.body
      .replace(/<style>[^<]*<\/style>/g, '')
      .replace(/<[^>]+>/g, ' ')
      .replace(/\s+/g, ' ');
    assert.match(text, /Paid with MTN MoMo/, 'the method of the payment that stands');
    assert.ok(text.includes('024 *** 4567'), 'its wallet');
    assert.ok(text.includes(`Fee ${money(feeOf('momo', amountMinor))}`), text);
    assert.ok(text.includes(`Total charged ${money(totalOf('momo', amountMinor))}`), text);
    assert.doesNotMatch(text, /Paid with Card/, "not the duplicate's method");
    const pdf = await pdfText((await t.app.inject({ url: `/pay/${session.id}/receipt.pdf` })).rawPayload);
    assert.ok(pdf.includes('MTN MoMo') && pdf.includes(money(totalOf('momo', amountMinor))), pdf);
  });

  it("a link's payment names the link and the payer's custom fields, with their labels, on the page and the PDF", async () => {
    const m = await t.merchant();
    const { session } = await paidSession(m);
    const linkId = `pl_${randomUUID().replace(/-/g, '').slice(0, 24)}`;
    const now = new Date();
    await t.db.transaction((tx) =>
      insertLink(tx, {
        id: linkId,
        merchant_id: m.merchant_id,
        environment: 'test',
        slug: randomUUID().replace(/-/g, '').slice(0, 12),
        api_key_id: null,
        created_by_user_id: null,
        name: 'Term 2 school fees',
        description: null,
        amount_minor: 2_550,
        amount_min_minor: 2_550,
        amount_max_minor: 2_550,
        currency: 'GHS',
        custom_fields: [{ key: 'student_id', label: 'Student ID', type: 'text', required: true }],
        single_use: false,
        max_payments: null,
        payments_count: 1,
        active: true,
        expires_at: null,
        redirect_url: null,
        metadata: {},
        version: 1,
        created_at: now,
        updated_at: now,
      }),
    );
    await t.db.query('UPDATE checkout_sessions SET payment_link_id = $2, custom_fields = $3::jsonb WHERE id = $1', [
      session.id,
      linkId,
      JSON.stringify({ student_id: 'KW-2231 <b>' }),
    ]);
    const page = await t.app.inject({ url: `/pay/${session.id}/receipt` });
    assert.equal(page.statusCode, 200);
    assert.ok(page.body.includes('Term 2 school fees'));
    assert.ok(page.body.includes('<dt>Student ID</dt><dd>KW-2231 &lt;b&gt;</dd>'), 'labelled and escaped');
    const text = await pdfText((await t.app.inject({ url: `/pay/${session.id}/receipt.pdf` })).rawPayload);
    assert.ok(text.includes('Term 2 school fees') && text.includes('Student ID: KW-2231 <b>'), text);
  });

  it('a session that succeeded before receipt numbers existed gets one on its first receipt view', async () => {
    const m = await t.merchant();
    const { session } = await paidSession(m);
    await t.db.query('UPDATE checkout_sessions SET receipt_number = NULL WHERE id = $1', [session.id]);
    const page = await t.app.inject({ url: `/pay/${session.id}/receipt` });
    assert.equal(page.statusCode, 200);
    const number = await receiptNumberOf(session.id);
    assert.ok(number && isValidReceiptNumber(number));
    assert.ok(page.body.includes(spacedReceiptNumber(number).split(' ')[0]!));
    // Seen again: the same number.
    await t.app.inject({ url: `/pay/${session.id}/receipt` });
    assert.equal(await receiptNumberOf(session.id), number);
  });

  it('an e-mail receipt is sent once for two requests to the same address, at most three addresses, never before success', async () => {
    const m = await t.merchant();
    const unpaid = await createSession(t, m);
    const to = address('payer');
    assert.equal((await form(t, `/pay/${unpaid.id}/receipt/email`, { email: to })).statusCode, 404);
    assert.equal(
      (await form(t, `/pay/cs_nope${randomUUID().slice(0, 6)}/receipt/email`, { email: to })).statusCode,
      404,
    );

    const { session } = await paidSession(m);
    const number = (await receiptNumberOf(session.id))!;
    for (const email of [to, ` ${to.toUpperCase()} `]) {
      const res = await form(t, `/pay/${session.id}/receipt/email`, { email });
      assert.equal(res.statusCode, 303, res.body.slice(0, 300));
      assert.equal(res.headers.location, `/pay/${session.id}/receipt?sent=email`);
    }
    const sentPage = await t.app.inject({ url: `/pay/${session.id}/receipt?sent=email` });
    assert.match(sentPage.body, /Sent\. Check your inbox/);
    await sendMail();
    const got = await smtp.waitFor((mail) => mail.to === to && mail.subject.includes(number));
    assert.match(got.subject, /\[Test\] Your receipt/);
    assert.ok(got.text.includes(spacedReceiptNumber(number)), got.text);
    assert.ok(got.text.includes(`/pay/${session.id}/receipt`), got.text);
    await sendMail();
    assert.equal(smtp.messages.filter((mail) => mail.to === to).length, 1, 'one mail for two requests');

    const bad = await form(t, `/pay/${session.id}/receipt/email`, { email: 'not an address' });
    assert.equal(bad.statusCode, 422);
    assert.match(bad.body, /Enter an e-mail address/);
    assert.match(bad.body, /aria-invalid="true"/);

    for (const name of ['second', 'third'])
      assert.equal((await form(t, `/pay/${session.id}/receipt/email`, { email: address(name) })).statusCode, 303);
    const fourth = await form(t, `/pay/${session.id}/receipt/email`, { email: address('fourth') });
    assert.equal(fourth.statusCode, 422);
    assert.match(fourth.body, /already sent to 3 e-mail addresses/);
    const rows = await t.db.query<{ n: number }>(
      "SELECT count(*)::int AS n FROM receipt_deliveries WHERE session_id = $1 AND channel = 'email'",
      [session.id],
    );
    assert.equal(rows[0]!.n, 3);
  });

  it('two requests at once for the same address queue one mail', async () => {
    const m = await t.merchant();
    const { session } = await paidSession(m);
    const to = address('racer');
    const answers = await Promise.all([0, 1, 2].map(() => form(t, `/pay/${session.id}/receipt/email`, { email: to })));
    assert.deepEqual(
      answers.map((res) => res.statusCode),
      [303, 303, 303],
    );
    const mails = await t.db.query<{ n: number }>(
      "SELECT count(*)::int AS n FROM mail_outbox WHERE to_address = $1 AND kind = 'receipt'",
      [to],
    );
    assert.equal(mails[0]!.n, 1);
  });

  it('an SMS receipt is sent once per number through the SMS provider, in one part naming the number, amount and merchant', async () => {
    const m = await t.merchant();
    const { session } = await paidSession(m);
    const number = (await receiptNumberOf(session.id))!;
    // This file's own number: on PostgreSQL the outbox is shared, so its worker serves only this number.
    const local = `24${String(randomInt(10_000_000)).padStart(7, '0')}`;
    const to = `233${local}`;
    for (const phone of [`0${local.slice(0, 2)} ${local.slice(2, 5)} ${local.slice(5)}`, `+${to}`]) {
      const res = await form(t, `/pay/${session.id}/receipt/sms`, { phone });
      assert.equal(res.statusCode, 303, res.body.slice(0, 300));
    }
    const sms = await t.db.query<{ to_phone: string; body: string; kind: string }>(
      `SELECT o.to_phone, o.body, o.kind FROM sms_outbox o JOIN receipt_deliveries d ON d.outbox_id = o.id
        WHERE d.session_id = $1`,
      [session.id],
    );
    assert.equal(sms.length, 1);
    assert.equal(sms[0]!.to_phone, to);
    assert.equal(sms[0]!.kind, 'receipt');
    assert.ok(sms[0]!.body.length <= 160, sms[0]!.body);
    assert.match(sms[0]!.body, new RegExp(`^Sika receipt ${number}: GHS \\d+\\.\\d{2} to Test`));
    // The send-sms worker hands it to Hubtel (the stand-in) once, as documented; a second pass sends nothing.
    const worker = { ...smsDelivery(t.config.sms, { info() {}, warn() {} }), toLike: to };
    assert.equal(await deliverDueSms(t.db, worker), 1);
    assert.equal(await deliverDueSms(t.db, worker), 0);
    const delivered = smsStandIn.sent.filter((message) => message.to === to);
    assert.equal(delivered.length, 1);
    assert.equal(delivered[0]!.text, sms[0]!.body);
    assert.equal(delivered[0]!.sender, 'Sika');
    const bad = await form(t, `/pay/${session.id}/receipt/sms`, { phone: '12345' });
    assert.equal(bad.statusCode, 422);
    assert.match(bad.body, /Ghana mobile number/);
  });

  it("the dashboard's session search and the operator console's search find a session by its receipt number as read out", async () => {
    const email = `owner-${randomUUID().slice(0, 8)}@example.com`;
    const m = await createMerchant(
      t.db,
      { name: `Receipt Shop ${randomUUID().slice(0, 4)}`, email, password: PASSWORD, webhookUrl: null },
      t.webhookTargets,
    );
    const { session } = await paidSession(m);
    const number = (await receiptNumberOf(session.id))!;
    const readOut = spacedReceiptNumber(number).toLowerCase().replace(/0/g, 'o');

    const dashboard = await new ConsoleClient(t, '/dashboard').signedIn(email, PASSWORD);
    for (const q of [number, readOut]) {
      const res = await dashboard.get(`/dashboard/sessions?invoice_ref=${encodeURIComponent(q)}`);
      assert.equal(res.statusCode, 303, res.body.slice(0, 300));
      assert.equal(res.headers.location, `/dashboard/sessions/${session.id}`);
    }
    const detail = await dashboard.get(`/dashboard/sessions/${session.id}`);
    assert.ok(detail.body.includes(`<span class="mono">${number}</span>`), 'the session page names its receipt number');
    // Another merchant's receipt number is not found in this dashboard.
    const { session: theirs } = await paidSession(await t.merchant());
    const foreign = await dashboard.get(`/dashboard/sessions?invoice_ref=${(await receiptNumberOf(theirs.id))!}`);
    assert.equal(foreign.statusCode, 200);
    assert.ok(!foreign.body.includes(theirs.id));

    const operatorEmail = `operator-${randomUUID()}@example.com`;
    await createOperator(t.db, { email: operatorEmail, password: PASSWORD });
    const ops = await new ConsoleClient(t, '/ops').signedIn(operatorEmail, PASSWORD);
    for (const q of [number, readOut]) {
      const res = await ops.get(`/ops?q=${encodeURIComponent(q)}`);
      assert.equal(res.statusCode, 200);
      const table = /<table aria-label="Payments">([\s\S]*?)<\/table>/.exec(res.body)?.[1] ?? '';
      assert.ok(table.includes(session.id), `search ${q}`);
      assert.ok(!table.includes(theirs.id));
    }
  });
});
