// The dashboard's Payment links pages (issue 35, item 5) over real HTTP, on embedded storage and on PostgreSQL
// (DATABASE_URL): an owner creates a fixed link and an open-amount link with custom fields through the New link
// form, sees them listed, edits and deactivates one (its payer page then answers 410) and activates it again;
// refused forms name their fields and make no link; another merchant's link and the other environment's are not
// found and unchanged; a viewer reads but changes nothing; and a link's page lists its payments (two payers paid
// through the Test simulator, one refunded in part) with their totals.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { describe, it } from 'node:test';
import { setPassword } from '../../src/accounts/console-accounts.ts';
import { createMerchant, inviteUser, type CreatedMerchant } from '../../src/accounts/service.ts';
import { createPaymentLink } from '../../src/checkout/payment-links.ts';
import { momoBody, simulate, startAttempt } from '../support/checkout.ts';
import { ConsoleClient, flashOf } from '../support/console-client.ts';
import { storageKind } from '../support/helpers.ts';
import { useTestApp } from '../support/hooks.ts';
import { call } from '../support/http.ts';

const PASSWORD = 'payment-links-password-1';

const unescapeHtml = (text: string) =>
  text
    .replace(/&#39;/g, "'")
    .replace(/&quot;/g, '"')
    .replace(/&amp;/g, '&');
const flash = (body: string) => unescapeHtml(flashOf(body));
/** The field messages listed beside a refused form. */
const fieldErrorsOf = (body: string) =>
  [...(/<ul class="field-errors"[^>]*>([\s\S]*?)<\/ul>/.exec(body)?.[1] ?? '').matchAll(/<li>([\s\S]*?)<\/li>/g)].map(
    (m) => unescapeHtml(m[1]!.replace(/<[^>]+>/g, '')),
  );
/** A day `days` from now, as the form's date input sends it. */
const dayFromNow = (days: number) => new Date(Date.now() + days * 86_400_000).toISOString().slice(0, 10);

interface LinkDbRow {
  id: string;
  slug: string;
  name: string;
  description: string | null;
  amount_minor: number | null;
  amount_min_minor: number;
  amount_max_minor: number;
  custom_fields: { key: string; label: string; type: string; required: boolean }[];
  single_use: boolean;
  max_payments: number | null;
  active: boolean;
  expires_at: Date | null;
  redirect_url: string | null;
  api_key_id: string | null;
  created_by_user_id: string | null;
  version: number;
}

describe(`dashboard: payment links (${storageKind})`, () => {
  const t = useTestApp();

  async function owner(): Promise<{ m: CreatedMerchant; email: string; browser: ConsoleClient }> {
    const email = `owner-${randomUUID()}@example.com`;
    const m = await createMerchant(t.db, {
      name: `Links ${randomUUID().slice(0, 6)}`,
      email,
      password: PASSWORD,
      webhookUrl: null,
    });
    const browser = await new ConsoleClient(t).signedIn(email, PASSWORD);
    return { m, email, browser };
  }

  const links = (merchantId: string) =>
    t.db.query<LinkDbRow>('SELECT * FROM payment_links WHERE merchant_id = $1 ORDER BY created_at, id', [merchantId]);

  /** The New link form as a browser sends it: every field, the blank custom field rows included. */
  const newLinkForm = (fields: Record<string, string>): [string, string][] => {
    const out: Record<string, string> = {
      name: '',
      description: '',
      amount_type: 'fixed',
      amount: '',
      amount_min: '',
      amount_max: '',
      max_payments: '',
      expires: '',
      redirect_url: '',
    };
    for (let n = 1; n <= 5; n++) {
      out[`field_${n}_key`] = '';
      out[`field_${n}_label`] = '';
      out[`field_${n}_type`] = 'text';
    }
    return Object.entries({ ...out, ...fields });
  };

  async function createThroughForm(browser: ConsoleClient, fields: Record<string, string>): Promise<string> {
    const res = await browser.post('/dashboard/links', newLinkForm(fields));
    assert.equal(res.statusCode, 303, `${flash(res.body)} ${fieldErrorsOf(res.body).join('; ')}`);
    const id = /^\/dashboard\/links\/(pl_\w+)\?created=1$/.exec(res.headers.location ?? '')?.[1];
    assert.ok(id, `to the new link's page: ${res.headers.location}`);
    return id;
  }

  it('an owner creates a fixed link and an open-amount link with custom fields through the form, and sees them listed and shared', async () => {
    const { m, browser } = await owner();
    const empty = await browser.get('/dashboard/links');
    assert.equal(empty.statusCode, 200, empty.body.slice(0, 300));
    assert.match(
      empty.body,
      /<a href="\/dashboard\/links" aria-current="page">Payment links<\/a>/,
      'in the navigation',
    );
    assert.match(empty.body, /No payment links yet\./);
    assert.match(empty.body, /<form method="post" action="\/dashboard\/links"/);

    const fixedId = await createThroughForm(browser, {
      name: 'School fees, Term 1',
      description: 'JHS 2 fees',
      amount: '1,250.50',
      field_2_key: 'student_name',
      field_2_label: "Student's name",
      field_2_required: 'on',
      field_4_key: 'class',
      field_4_label: 'Class',
      field_4_type: 'number',
      max_payments: '300',
      expires: dayFromNow(30),
      redirect_url: 'https://school.example.com/thanks',
    });
    const openId = await createThroughForm(browser, {
      name: 'Church offering',
      amount_type: 'open',
      amount: '99.00', // ignored: the payer chooses
      amount_min: '5',
      amount_max: '500.00',
      single_use: 'on',
    });
    const [fixed, open] = await links(m.merchant_id);
    assert.equal(fixed?.id, fixedId);
    assert.equal(fixed.name, 'School fees, Term 1');
    assert.equal(fixed.description, 'JHS 2 fees');
    assert.equal(Number(fixed.amount_minor), 125_050);
    assert.deepEqual(fixed.custom_fields, [
      { key: 'student_name', label: "Student's name", type: 'text', required: true },
      { key: 'class', label: 'Class', type: 'number', required: false },
    ]);
    assert.equal(fixed.max_payments, 300);
    assert.equal(fixed.single_use, false);
    assert.equal(fixed.expires_at?.toISOString(), `${dayFromNow(30)}T23:59:59.000Z`);
    assert.equal(fixed.redirect_url, 'https://school.example.com/thanks');
    assert.equal(fixed.api_key_id, null, 'made by a user, not a key');
    assert.ok(fixed.created_by_user_id, 'the user who made it is kept');
    assert.equal(open?.id, openId);
    assert.equal(open.amount_minor, null);
    assert.equal(Number(open.amount_min_minor), 500);
    assert.equal(Number(open.amount_max_minor), 50_000);
    assert.equal(open.single_use, true);
    assert.deepEqual(open.custom_fields, []);

    const list = await browser.get('/dashboard/links');
    assert.match(list.body, new RegExp(`<a href="/dashboard/links/${fixedId}">School fees, Term 1</a>`));
    assert.match(list.body, new RegExp(`<a href="/dashboard/links/${openId}">Church offering</a>`));
    assert.match(list.body, /GHS 1,250\.50/);
    assert.match(list.body, /Payer chooses/);
    assert.match(list.body, /<td class="num" data-label="Payments">0 \/ 300<\/td>/);
    assert.match(
      list.body,
      /<td class="num" data-label="Payments">0 \/ 1<\/td>/,
      'a single-use link takes one payment',
    );

    const page = await browser.get(`/dashboard/links/${fixedId}?created=1`);
    assert.equal(page.statusCode, 200);
    assert.equal(flash(page.body), 'Payment link created: share it or print its QR code.');
    const url = `${t.config.checkoutUrlHost}/l/${fixed.slug}`;
    assert.match(page.body, new RegExp(`<input id="link-url" value="${url}" readonly`), 'the url, selectable');
    assert.match(page.body, /id="copy-url"[^>]*hidden>Copy<\/button>/, 'Copy appears with JavaScript');
    assert.match(page.body, new RegExp(`<img src="/l/${fixed.slug}/qr.svg"`));
    assert.match(page.body, new RegExp(`href="/l/${fixed.slug}/qr.png" download="${fixedId}-qr.png"`));
    assert.match(page.body, new RegExp(`href="/l/${fixed.slug}/poster.pdf"`));
    const share = `https://wa.me/?text=${encodeURIComponent(`School fees, Term 1 ${url}`)}`;
    assert.ok(page.body.includes(`href="${share}"`), 'the WhatsApp share link carries the name and the url');
    assert.match(page.body, /Student&#39;s name<\/strong> <span class="muted">\(student_name, text, required\)/);
    assert.match(page.body, /No payments yet\./);
    // The QR code the page shows is served where it points.
    const qr = await fetch(`${await t.listen()}/l/${fixed.slug}/qr.svg`);
    assert.equal(qr.status, 200);
    assert.match(qr.headers.get('content-type') ?? '', /svg/);
  });

  it('a refused form names what to correct beside the form, keeps what was typed, and makes no link', async () => {
    const { m, browser } = await owner();
    const cases: [string, Record<string, string>, number, RegExp][] = [
      ['a fixed link without an amount', { name: 'Fees' }, 400, /^Amount: write the amount in GHS/],
      [
        'a custom field with a key and no label',
        { name: 'Fees', amount: '10', field_3_key: 'student' },
        400,
        /^Custom field 3: give it both a key and a label\.$/,
      ],
      ['an expiry in the past', { name: 'Fees', amount: '10', expires: dayFromNow(-2) }, 400, /^Expires on: /],
      [
        'a minimum above the maximum',
        { name: 'Fees', amount_type: 'open', amount_min: '50', amount_max: '20' },
        400,
        /^At most: /,
      ],
      [
        'a repeated custom field key',
        {
          name: 'Fees',
          amount: '10',
          field_1_key: 'ref',
          field_1_label: 'Reference',
          field_5_key: 'ref',
          field_5_label: 'Again',
        },
        400,
        /^Custom field 5 key: /,
      ],
      [
        'a redirect that is not a URL',
        { name: 'Fees', amount: '10', redirect_url: 'thanks page' },
        400,
        /^After paying: /,
      ],
    ];
    for (const [what, fields, status, problem] of cases) {
      const res = await browser.post('/dashboard/links', newLinkForm(fields));
      assert.equal(res.statusCode, status, `${what}: ${flash(res.body)}`);
      const listed = fieldErrorsOf(res.body);
      assert.ok(
        listed.some((line) => problem.test(line)),
        `${what}: ${problem} beside the form, got ${JSON.stringify(listed)}`,
      );
      assert.match(res.body, /<input id="name" name="name" value="Fees"/, `${what}: what was typed is kept`);
    }
    // A key outside a-z, 0-9 and _, or an amount with three decimals, is refused by the form's schema, naming the field.
    for (const [fields, label] of [
      [{ name: 'Fees', amount: '10', field_1_key: 'Bad Key', field_1_label: 'X' }, /^Key 1 is not valid/],
      [{ name: 'Fees', amount: '12.345' }, /^Amount is not valid: enter an amount in GHS/],
      [{ name: 'Fees', amount: '10', max_payments: '0' }, /^Most payments is not valid/],
    ] as const) {
      const refused = await browser.post('/dashboard/links', newLinkForm(fields));
      assert.equal(refused.statusCode, 400);
      assert.match(flash(refused.body), label);
    }
    assert.deepEqual(await links(m.merchant_id), [], 'no link was made');
  });

  it('edits a link, deactivates it (its payer page then answers 410) and activates it again', async () => {
    const { m, browser } = await owner();
    const id = await createThroughForm(browser, { name: 'Shoes', amount: '300' });
    const slug = (await links(m.merchant_id))[0]!.slug;
    const payerPage = async () => (await fetch(`${await t.listen()}/l/${slug}`)).status;
    assert.equal(await payerPage(), 200);

    const edited = await browser.post(`/dashboard/links/${id}`, {
      name: 'Sneakers',
      description: 'Size 42',
      expires: dayFromNow(10),
    });
    assert.equal(edited.statusCode, 200, flash(edited.body));
    assert.equal(flash(edited.body), 'Payment link saved.');
    assert.match(edited.body, /<h1>Sneakers <span class="badge ok">active<\/span><\/h1>/);
    let [row] = await links(m.merchant_id);
    assert.equal(row?.name, 'Sneakers');
    assert.equal(row.description, 'Size 42');
    assert.equal(row.expires_at?.toISOString(), `${dayFromNow(10)}T23:59:59.000Z`);
    assert.equal(row.version, 2);

    const cleared = await browser.post(`/dashboard/links/${id}`, { name: 'Sneakers', description: '', expires: '' });
    assert.equal(cleared.statusCode, 200);
    [row] = await links(m.merchant_id);
    assert.equal(row?.description, null);
    assert.equal(row.expires_at, null, 'an empty expiry: never');

    const refused = await browser.post(`/dashboard/links/${id}`, { name: 'Sneakers', expires: dayFromNow(-1) });
    assert.equal(refused.statusCode, 400);
    assert.ok(fieldErrorsOf(refused.body).some((line) => line.startsWith('Expires on: ')));

    const off = await browser.post(`/dashboard/links/${id}/active`, { active: 'off' });
    assert.equal(off.statusCode, 200);
    assert.equal(flash(off.body), 'Payment link deactivated: payers see that it no longer takes payments.');
    assert.match(off.body, /<span class="badge [a-z]+">inactive<\/span>/);
    assert.match(off.body, /<input type="hidden" name="active" value="on">\s*<button type="submit">Activate<\/button>/);
    assert.equal((await links(m.merchant_id))[0]?.active, false);
    assert.equal(await payerPage(), 410);
    const list = await browser.get('/dashboard/links');
    assert.match(list.body, /inactive<\/span>/);

    const on = await browser.post(`/dashboard/links/${id}/active`, { active: 'on' });
    assert.equal(on.statusCode, 200);
    assert.equal(flash(on.body), 'Payment link activated: payers can pay it again.');
    assert.equal((await links(m.merchant_id))[0]?.active, true);
    assert.equal(await payerPage(), 200);
    const events = await t.db.query<{ type: string }>(
      "SELECT type FROM events WHERE merchant_id = $1 AND type LIKE 'payment_link.%' ORDER BY created_at, id",
      [m.merchant_id],
    );
    // Made, edited, expiry cleared, deactivated, activated: the refused edit announced nothing.
    assert.deepEqual(
      events.map((e) => e.type),
      ['payment_link.created', ...Array<string>(4).fill('payment_link.updated')],
    );
  });

  it("another merchant's link and the other environment's are not found on every link route, and stay unchanged", async () => {
    const { m, browser } = await owner();
    const other = await owner();
    const input = { name: 'Not yours', amount_minor: 1_000 };
    const theirs = await createPaymentLink(
      t.db,
      { merchantId: other.m.merchant_id, environment: 'test', apiKeyId: null, userId: null },
      input,
      t.config.checkoutUrlHost,
    );
    const live = await createPaymentLink(
      t.db,
      { merchantId: m.merchant_id, environment: 'live', apiKeyId: null, userId: null },
      input,
      t.config.checkoutUrlHost,
    );
    for (const [whose, id] of [
      ['another merchant', theirs.id],
      ['the other environment', live.id],
    ] as const) {
      const before = await t.db.query('SELECT * FROM payment_links WHERE id = $1', [id]);
      for (const res of [
        await browser.get(`/dashboard/links/${id}`),
        await browser.post(`/dashboard/links/${id}`, { name: 'Taken over' }),
        await browser.post(`/dashboard/links/${id}/active`, { active: 'off' }),
      ]) {
        assert.equal(res.statusCode, 404, `${whose}: ${flash(res.body)}`);
        assert.equal(flash(res.body), 'Payment link not found.');
      }
      assert.deepEqual(
        await t.db.query('SELECT * FROM payment_links WHERE id = $1', [id]),
        before,
        `${whose}: unchanged`,
      );
    }
    const list = await browser.get('/dashboard/links');
    assert.ok(!list.body.includes(theirs.id) && !list.body.includes(live.id), 'the list shows neither');
  });

  it('a viewer reads the links but cannot create, edit or deactivate one', async () => {
    const { m, email, browser } = await owner();
    const id = await createThroughForm(browser, { name: 'Rent', amount: '1500' });
    const viewerEmail = `viewer-${randomUUID()}@example.com`;
    const actor = { type: 'user' as const, id: m.owner_user_id, email };
    await inviteUser(t.db, actor, m.merchant_id, { email: viewerEmail, role: 'viewer' });
    await setPassword(t.db, { kind: 'merchant', email: viewerEmail, password: PASSWORD, actor });
    const viewer = await new ConsoleClient(t).signedIn(viewerEmail, PASSWORD);
    const list = await viewer.get('/dashboard/links');
    assert.equal(list.statusCode, 200);
    assert.match(list.body, /Rent<\/a>/);
    assert.doesNotMatch(list.body, /method="post" action="\/dashboard\/links"/, 'no New link form');
    assert.match(list.body, /Only an owner, admin or developer can create payment links\./);
    const page = await viewer.get(`/dashboard/links/${id}`);
    assert.equal(page.statusCode, 200);
    assert.doesNotMatch(page.body, /Deactivate<\/button>/);
    const before = await links(m.merchant_id);
    for (const res of [
      await viewer.post('/dashboard/links', newLinkForm({ name: 'Mine now', amount: '1' })),
      await viewer.post(`/dashboard/links/${id}`, { name: 'Renamed' }),
      await viewer.post(`/dashboard/links/${id}/active`, { active: 'off' }),
    ]) {
      assert.equal(res.statusCode, 403);
      assert.equal(flash(res.body), 'Your role cannot change payment links; ask an owner, admin or developer.');
    }
    assert.deepEqual(await links(m.merchant_id), before);
  });

  it("a link's page lists its payments newest first with what each payer entered, and totals what succeeded and was refunded", async () => {
    const { m, browser } = await owner();
    const id = await createThroughForm(browser, {
      name: 'Exam fees',
      amount: '20.00',
      field_1_key: 'student_name',
      field_1_label: 'Student',
      field_1_required: 'on',
    });
    const slug = (await links(m.merchant_id))[0]!.slug;
    const base = await t.listen();
    /** A payer fills the link's form: the new session's id. */
    const payerStarts = async (name: string, student: string) => {
      const res = await fetch(`${base}/l/${slug}`, {
        method: 'POST',
        redirect: 'manual',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ customer_name: name, 'fields[student_name]': student }).toString(),
      });
      assert.equal(res.status, 303, await res.text());
      const sessionId = /\/pay\/(cs_\w+)$/.exec(res.headers.get('location') ?? '')?.[1];
      assert.ok(sessionId, `to the session's payer page: ${res.headers.get('location')}`);
      return sessionId;
    };
    const pay = async (sessionId: string) => {
      const attempt = await startAttempt(t, sessionId, momoBody(2_000));
      await simulate(t, m, attempt.attempt_reference, 'paid');
    };
    const first = await payerStarts('Ama Mensah', 'Kofi Mensah');
    await pay(first);
    const second = await payerStarts('Yaw Boateng', 'Akua Boateng');
    await pay(second);
    const unpaid = await payerStarts('Esi Owusu', 'Kwame Owusu');
    const refund = await call(t, 'POST', '/api/v1/refunds', {
      key: m.test_api_key,
      body: { session_id: first, amount_minor: 500 },
    });
    assert.equal(refund.statusCode, 201, refund.body);

    const page = await browser.get(`/dashboard/links/${id}`);
    assert.equal(page.statusCode, 200);
    assert.match(page.body, /id="succeeded-count">2</);
    assert.match(page.body, /id="succeeded-sum">GHS 40\.00</);
    assert.match(page.body, /id="refunded-sum">GHS 5\.00</);
    const rows = [...page.body.matchAll(/<tr><td class="mono"><a href="\/dashboard\/sessions\/(cs_\w+)">/g)].map(
      (r) => r[1],
    );
    assert.deepEqual(rows, [unpaid, second, first], 'newest first, each linking to its session');
    for (const [sessionId, payer, student, status] of [
      [first, 'Ama Mensah', 'Kofi Mensah', 'success'],
      [second, 'Yaw Boateng', 'Akua Boateng', 'success'],
      [unpaid, 'Esi Owusu', 'Kwame Owusu', 'open'],
    ] as const) {
      const row =
        new RegExp(`<tr><td class="mono"><a href="/dashboard/sessions/${sessionId}">[\\s\\S]*?</tr>`).exec(
          page.body,
        )?.[0] ?? '';
      assert.ok(row.includes(`>${payer}<`), `${payer}'s name on the row`);
      assert.ok(row.includes(`<span class="muted">Student:</span> ${student}`), `${student} on the row`);
      assert.ok(row.includes(`>${status}</span>`), `${sessionId} is ${status}`);
      const [session] = await t.db.query<{ receipt_number: string | null }>(
        'SELECT receipt_number FROM checkout_sessions WHERE id = $1',
        [sessionId],
      );
      if (session?.receipt_number) assert.ok(row.includes(session.receipt_number), `${sessionId}: its receipt number`);
    }
    assert.match(page.body, /GHS 20\.00<br><span class="muted">refunded GHS 5\.00<\/span>/);
    const list = await browser.get('/dashboard/links');
    assert.match(list.body, /<td class="num" data-label="Payments">2<\/td>/, 'the list counts the successful payments');
    assert.match(list.body, /<td class="money" data-label="Collected">GHS 40\.00<\/td>/, 'and what they collected');
    assert.match(
      page.body,
      new RegExp(`<a href="/dashboard/sessions\\?link=${id}">Payments</a>`),
      'its payments on the Payments page, filtered by the link',
    );
  });

  /** The link ids of a list page's rows, top to bottom. */
  const listedIds = (body: string) =>
    [...body.matchAll(/<tr><td data-label="Name"><div[^>]*><a href="\/dashboard\/links\/(pl_\w+)">/g)].map(
      (r) => r[1]!,
    );
  /** A CSV's rows as objects by the header's names (the names written here hold no commas). */
  const csvRows = (text: string): Record<string, string>[] => {
    const [header, ...lines] = text
      .replace(/^\uFEFF/, '')
      .trim()
      .split(/\r?\n/);
    const names = header!.split(',');
    return lines.map((line) => Object.fromEntries(line.split(',').map((value, i) => [names[i]!, value])));
  };
  /** The "Next page" address of a list page, unescaped. */
  const nextHref = (body: string) =>
    unescapeHtml(/<a class="button secondary" href="([^"]+)">Next page<\/a>/.exec(body)?.[1] ?? '') || null;

  it('the list (issue 36): search by name, id, url or amount, the status filter, pages of 25 and the CSV of exactly what is shown', async () => {
    const { m, browser } = await owner();
    const dashboardOwner = {
      merchantId: m.merchant_id,
      environment: 'test' as const,
      apiKeyId: null,
      userId: null,
    };
    const made: string[] = [];
    for (let n = 1; n <= 26; n++)
      made.push(
        (
          await createPaymentLink(
            t.db,
            dashboardOwner,
            { name: `Bulk ${n}`, amount_minor: 1_000 + n },
            'http://sika.test',
          )
        ).id,
      );
    const choir = await createPaymentLink(
      t.db,
      dashboardOwner,
      { name: 'Choir dues', amount_minor: 2_500 },
      'http://sika.test',
    );
    const off = await createPaymentLink(
      t.db,
      dashboardOwner,
      { name: 'Old raffle', amount_minor: 700 },
      'http://sika.test',
    );
    const expired = await createPaymentLink(
      t.db,
      dashboardOwner,
      { name: 'Harvest', amount_minor: 800 },
      'http://sika.test',
    );
    const usedUp = await createPaymentLink(
      t.db,
      dashboardOwner,
      { name: 'Raffle ticket', amount_minor: 900, single_use: true },
      'http://sika.test',
    );
    await t.db.query('UPDATE payment_links SET active = false WHERE id = $1', [off.id]);
    await t.db.query("UPDATE payment_links SET expires_at = now() - interval '1 day' WHERE id = $1", [expired.id]);
    await t.db.query('UPDATE payment_links SET payments_count = 1 WHERE id = $1', [usedUp.id]);
    // Not listed: another merchant's link and this merchant's Live one.
    const other = await owner();
    const foreign = await createPaymentLink(
      t.db,
      { ...dashboardOwner, merchantId: other.m.merchant_id },
      { name: 'Choir dues', amount_minor: 2_500 },
      'http://sika.test',
    );
    const live = await createPaymentLink(
      t.db,
      { ...dashboardOwner, environment: 'live' },
      { name: 'Choir dues', amount_minor: 2_500 },
      'http://sika.test',
    );
    const all = [usedUp.id, expired.id, off.id, choir.id, ...[...made].reverse()];

    // Pages of 25, newest first, with no row twice and none left out.
    const first = await browser.get('/dashboard/links');
    assert.equal(first.statusCode, 200);
    assert.deepEqual(listedIds(first.body), all.slice(0, 25));
    const next = nextHref(first.body);
    assert.equal(next, `/dashboard/links?after=${all[24]}`);
    const second = await browser.get(next!);
    assert.equal(second.statusCode, 200);
    assert.deepEqual(listedIds(second.body), all.slice(25));
    assert.equal(nextHref(second.body), null, 'the last page');
    assert.match(second.body, /<a class="button secondary" href="\/dashboard\/links">Newest<\/a>/);

    // The search: a name's part, a link id, its url or slug, a fixed amount; never another's or the other environment's.
    const search = async (q: string) =>
      listedIds((await browser.get(`/dashboard/links?q=${encodeURIComponent(q)}`)).body);
    assert.deepEqual(await search('choir'), [choir.id]);
    assert.deepEqual(await search('RAFFLE'), [usedUp.id, off.id]);
    assert.deepEqual(await search(choir.id), [choir.id]);
    assert.deepEqual(await search(choir.url), [choir.id]);
    assert.deepEqual(await search(new URL(choir.url).pathname.slice(3)), [choir.id], 'the slug alone');
    assert.deepEqual(await search('25.00'), [choir.id]);
    assert.deepEqual(await search('25'), [choir.id, made[24]], 'GHS 25 and the name "Bulk 25"');
    assert.deepEqual(await search(foreign.id), []);
    assert.deepEqual(await search(live.id), []);
    assert.deepEqual(await search('100%_'), [], 'wildcards taken literally');
    const none = await browser.get('/dashboard/links?q=nothing-like-this');
    assert.match(none.body, /No payment links match\./);

    // The status filter, as each link's badge reads.
    const byStatus = async (status: string) => listedIds((await browser.get(`/dashboard/links?status=${status}`)).body);
    assert.deepEqual(await byStatus('inactive'), [off.id]);
    assert.deepEqual(await byStatus('expired'), [expired.id]);
    assert.deepEqual(await byStatus('used_up'), [usedUp.id]);
    assert.deepEqual(await byStatus('active'), [choir.id, ...[...made].reverse()].slice(0, 25));
    assert.deepEqual(listedIds((await browser.get('/dashboard/links?status=active&q=raffle')).body), []);
    const filtered = await browser.get('/dashboard/links?q=raffle&status=used_up');
    assert.match(filtered.body, /<span class="badge [a-z]+">used up<\/span>/);
    assert.match(
      filtered.body,
      /href="\/dashboard\/links\?q=raffle&amp;status=used_up&amp;format=csv"/,
      'the export of this search',
    );

    // The CSV: exactly the search's rows, every page of them.
    const csv = await browser.get('/dashboard/links?status=active&format=csv');
    assert.equal(csv.statusCode, 200);
    assert.match(String(csv.headers['content-type']), /^text\/csv/);
    assert.match(
      String(csv.headers['content-disposition']),
      /attachment; filename="payment-links-test-\d{4}-\d{2}-\d{2}\.csv"/,
    );
    const rows = csvRows(csv.body);
    assert.deepEqual(
      rows.map((row) => row.id),
      [choir.id, ...[...made].reverse()],
      'all 27 active links, beyond the first page',
    );
    assert.deepEqual(
      { ...rows[0], created_at: '' },
      {
        id: choir.id,
        name: 'Choir dues',
        url: choir.url,
        amount_ghs: '25.00',
        amount_min_ghs: '',
        amount_max_ghs: '',
        status: 'active',
        payments_count: '0',
        collected_ghs: '0.00',
        created_at: '',
      },
    );
    assert.match(rows[0]!.created_at!, /^\d{4}-\d{2}-\d{2}T/);
    const everyRow = csvRows((await browser.get('/dashboard/links?format=csv')).body);
    assert.deepEqual(
      everyRow.map((row) => row.id),
      all,
    );
    assert.deepEqual(
      everyRow.filter((row) => row.status !== 'active').map((row) => [row.id, row.status]),
      [
        [usedUp.id, 'used_up'],
        [expired.id, 'expired'],
        [off.id, 'inactive'],
      ],
    );
    assert.deepEqual(
      csvRows((await browser.get('/dashboard/links?q=raffle&format=csv')).body).map((row) => row.id),
      [usedUp.id, off.id],
    );

    // Another merchant's or the other environment's link as a page cursor is not found; bad input is a 400 page.
    assert.equal((await browser.get(`/dashboard/links?after=${foreign.id}`)).statusCode, 404);
    assert.equal((await browser.get(`/dashboard/links?after=${live.id}`)).statusCode, 404);
    assert.equal((await browser.get('/dashboard/links?after=pl_nosuch')).statusCode, 404);
    assert.equal((await browser.get('/dashboard/links?status=gone')).statusCode, 400);
    assert.equal((await browser.get('/dashboard/links?format=xml')).statusCode, 400);
    assert.equal((await browser.get(`/dashboard/links?q=${'x'.repeat(101)}`)).statusCode, 400);
    assert.equal((await browser.get('/dashboard/links?status=&q=')).statusCode, 200, 'empty means any');
  });

  it("the New link form's one-time key: a second press shows the first link and makes none", async () => {
    const { m, browser } = await owner();
    const page = await browser.get('/dashboard/links');
    const formKey = /<input type="hidden" name="form_key" value="([^"]+)">/.exec(page.body)?.[1];
    assert.ok(formKey, 'the form carries its key');
    const fields = { name: 'Youth camp', amount: '150.00', form_key: formKey };
    const [one, two] = await Promise.all([
      browser.post('/dashboard/links', newLinkForm(fields)),
      browser.post('/dashboard/links', newLinkForm(fields)),
    ]);
    const three = await browser.post('/dashboard/links', newLinkForm(fields));
    for (const res of [one, two, three]) assert.equal(res.statusCode, 303, flash(res.body));
    const made = await links(m.merchant_id);
    assert.equal(made.length, 1, 'one link for the three presses');
    for (const res of [one, two, three])
      assert.equal(res.headers.location, `/dashboard/links/${made[0]!.id}?created=1`);
    const events = await t.db.query('SELECT 1 FROM events WHERE merchant_id = $1 AND type = $2', [
      m.merchant_id,
      'payment_link.created',
    ]);
    assert.equal(events.length, 1, 'announced once');
    // The key is kept on the link (migration 043), not among the API's Idempotency-Keys.
    const kept = await t.db.query<{ form_key: string }>('SELECT form_key FROM payment_links WHERE id = $1', [
      made[0]!.id,
    ]);
    assert.equal(kept[0]?.form_key, formKey);
    assert.equal(
      (await t.db.query('SELECT 1 FROM idempotency_keys WHERE merchant_id = $1', [m.merchant_id])).length,
      0,
    );
    // The key is this merchant's: another merchant's form with the same key makes its own link.
    const other = await owner();
    const theirs = await createThroughForm(other.browser, fields);
    assert.notEqual(theirs, made[0]!.id);
    // A form shown again beside a refusal keeps its key; a new form has another.
    const refused = await browser.post(
      '/dashboard/links',
      newLinkForm({ name: 'Camp', amount: '', form_key: 'dash-kept' }),
    );
    assert.equal(refused.statusCode, 400);
    assert.match(refused.body, /name="form_key" value="dash-kept"/);
    assert.notEqual(/name="form_key" value="([^"]+)"/.exec((await browser.get('/dashboard/links')).body)?.[1], formKey);
    await createThroughForm(browser, { name: 'Another camp', amount: '150.00' });
    assert.equal((await links(m.merchant_id)).length, 2, 'a form without the key (or with a new one) makes a link');
  });

  it("a Test link's 410 page has the Test bar, as its payer page; a Live link's has none", async () => {
    const { m, browser } = await owner();
    const id = await createThroughForm(browser, { name: 'Exam fees', amount: '20.00' });
    const slug = (await links(m.merchant_id))[0]!.slug;
    const base = await t.listen();
    const open = await fetch(`${base}/l/${slug}`);
    assert.equal(open.status, 200);
    assert.match(await open.text(), /<div class="testbar" role="note">Test mode — no real money moves<\/div>/);
    assert.equal((await browser.post(`/dashboard/links/${id}/active`, { active: 'off' })).statusCode, 200);
    const gone = await fetch(`${base}/l/${slug}`);
    assert.equal(gone.status, 410);
    const body = await gone.text();
    assert.match(body, /<div class="testbar" role="note">Test mode — no real money moves<\/div>/);
    assert.match(body, /This payment link is turned off/);
    const live = await createPaymentLink(
      t.db,
      { merchantId: m.merchant_id, environment: 'live', apiKeyId: null, userId: null },
      { name: 'Live fees', amount_minor: 2_000 },
      'http://sika.test',
    );
    await t.db.query('UPDATE payment_links SET active = false WHERE id = $1', [live.id]);
    const liveGone = await fetch(`${base}${new URL(live.url).pathname}`);
    assert.equal(liveGone.status, 410);
    assert.doesNotMatch(await liveGone.text(), /Test mode/);
  });
});
