// A payment link's page and form (issue 35, /l/{slug}): what a payer sees for a fixed and an open amount, the
// weight of the first load, every refusal of the form (422, the values kept, a message beside the field, no
// session made), the session a valid form starts (303 to its checkout_url; payment_link_id and custom_fields in
// the API), the 410 of a link turned off, expired or used up, and a Live link of a suspended merchant.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { Agent, get } from 'node:http';
import { describe, it } from 'node:test';
import { brotliDecompressSync } from 'node:zlib';
import type { CreatedMerchant } from '../../src/accounts/service.ts';
import type { CustomField } from '../../src/checkout/payment-link-model.ts';
import { randomToken } from '../../src/lib/ids.ts';
import { storageKind, type TestContext } from '../support/helpers.ts';
import { useTestApp } from '../support/hooks.ts';
import { call, sessionCount } from '../support/http.ts';
import { momoBody, simulate, startAttempt } from '../support/checkout.ts';

interface LinkOptions {
  environment?: 'test' | 'live';
  name?: string;
  description?: string | null;
  amount_minor?: number | null;
  amount_min_minor?: number;
  amount_max_minor?: number;
  custom_fields?: CustomField[];
  single_use?: boolean;
  max_payments?: number | null;
  payments_count?: number;
  active?: boolean;
  expires_at?: Date | null;
  redirect_url?: string | null;
  metadata?: Record<string, unknown>;
}

/** A link written as the API writes one (the API is another file's subject): id, slug and the fields given. */
async function insertLink(t: TestContext, m: CreatedMerchant, options: LinkOptions = {}) {
  const link = {
    id: `pl_${randomToken(24).toLowerCase()}`,
    slug: randomToken(10),
    environment: options.environment ?? 'test',
    name: options.name ?? 'School fees, term 2',
    description: options.description === undefined ? 'Pay for your ward before 30 May.' : options.description,
    amount_minor: options.amount_minor === undefined ? 2550 : options.amount_minor,
    amount_min_minor: options.amount_min_minor ?? 100,
    amount_max_minor: options.amount_max_minor ?? 100_000_000,
    custom_fields: options.custom_fields ?? [],
    single_use: options.single_use ?? false,
    max_payments: options.max_payments ?? null,
    payments_count: options.payments_count ?? 0,
    active: options.active ?? true,
    expires_at: options.expires_at ?? null,
    redirect_url: options.redirect_url ?? null,
    metadata: options.metadata ?? {},
  };
  await t.db.query(
    `INSERT INTO payment_links (id, merchant_id, environment, slug, name, description, amount_minor, amount_min_minor,
       amount_max_minor, custom_fields, single_use, max_payments, payments_count, active, expires_at, redirect_url, metadata)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10::jsonb, $11, $12, $13, $14, $15, $16, $17::jsonb)`,
    [
      link.id,
      m.merchant_id,
      link.environment,
      link.slug,
      link.name,
      link.description,
      link.amount_minor,
      link.amount_min_minor,
      link.amount_max_minor,
      JSON.stringify(link.custom_fields),
      link.single_use,
      link.max_payments,
      link.payments_count,
      link.active,
      link.expires_at,
      link.redirect_url,
      JSON.stringify(link.metadata),
    ],
  );
  return link;
}

const FIELDS: CustomField[] = [
  { key: 'student_id', label: 'Student ID', type: 'text', required: true },
  { key: 'class_size', label: 'Class size', type: 'number', required: false },
  { key: 'parent_phone', label: 'Parent phone', type: 'phone', required: true },
  { key: 'parent_email', label: 'Parent e-mail', type: 'email', required: false },
];

describe(`payment link page and form (${storageKind})`, () => {
  const t = useTestApp();

  const getPage = (slug: string, headers: Record<string, string> = {}) =>
    t.app.inject({ method: 'GET', url: `/l/${slug}`, headers });
  const postForm = (slug: string, fields: Record<string, string>) =>
    t.app.inject({
      method: 'POST',
      url: `/l/${slug}`,
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: new URLSearchParams(fields).toString(),
    });
  const linkSessions = async (linkId: string) =>
    (
      await t.db.query<{ n: number }>('SELECT count(*)::int AS n FROM checkout_sessions WHERE payment_link_id = $1', [
        linkId,
      ])
    )[0]!.n;
  /** The value attribute of the input named `name`, as the page shows it. */
  const inputValue = (body: string, name: string) =>
    new RegExp(`<input [^>]*name="${name.replace(/[[\]]/g, '\\$&')}" value="([^"]*)"`).exec(body)?.[1];
  const merchantNameOf = async (m: CreatedMerchant) =>
    (await t.db.query<{ name: string }>('SELECT name FROM merchants WHERE id = $1', [m.merchant_id]))[0]!.name;

  it('a fixed link shows the merchant, its name, description and amount, its custom fields with their inputs, one Pay button and no script', async () => {
    const m = await t.merchant();
    const link = await insertLink(t, m, { custom_fields: FIELDS });
    const res = await getPage(link.slug);
    assert.equal(res.statusCode, 200);
    assert.match(String(res.headers['content-type']), /^text\/html/);
    assert.equal(res.headers['cache-control'], 'no-store');
    assert.match(String(res.headers['content-security-policy']), /default-src 'none'/);
    const body = res.body;
    assert.ok(body.includes(await merchantNameOf(m)));
    assert.match(body, /School fees, term 2/);
    assert.match(body, /Pay for your ward before 30 May\./);
    assert.match(body, /GHS 25\.50/);
    assert.equal(inputValue(body, 'amount'), undefined, 'a fixed amount has no amount field');
    assert.match(body, /<input type="text" id="customer_name" name="customer_name"/);
    assert.match(
      body,
      /<input type="text" id="f-student_id" name="fields\[student_id\]" value="" maxlength="200" required>/,
    );
    assert.match(
      body,
      /<input type="text" id="f-class_size" name="fields\[class_size\]" value="" maxlength="200" inputmode="decimal">/,
    );
    assert.match(body, /<input type="tel" id="f-parent_phone" name="fields\[parent_phone\]"[^>]* required/);
    assert.match(body, /<input type="email" id="f-parent_email" name="fields\[parent_email\]"/);
    assert.match(body, /Class size <span class="opt-mark">\(optional\)<\/span>/);
    assert.doesNotMatch(body, /Student ID <span class="opt-mark">/);
    assert.equal([...body.matchAll(/<button type="submit"/g)].length, 1);
    assert.match(body, /<button type="submit" class="block">Pay GHS 25\.50<\/button>/);
    assert.doesNotMatch(body, /<script/);
    assert.match(body, /Test mode — no real money moves/);
  });

  it('an open link asks for the amount in cedis and shows its minimum and maximum', async () => {
    const m = await t.merchant();
    const link = await insertLink(t, m, { amount_minor: null, amount_min_minor: 500, amount_max_minor: 150_000 });
    const body = (await getPage(link.slug)).body;
    assert.match(body, /Amount of your choice/);
    assert.match(
      body,
      /<input type="text" id="amount" name="amount" value="" maxlength="20" inputmode="decimal" required/,
    );
    assert.match(body, /Between GHS 5\.00 and GHS 1,500\.00/);
    assert.match(body, /Continue to payment/);
  });

  it('escapes what the merchant wrote', async () => {
    const m = await t.merchant();
    const link = await insertLink(t, m, {
      name: '<script>alert(1)</script>',
      description: '"quotes" & <b>tags</b>',
      custom_fields: [{ key: 'x', label: '<img src=x onerror=alert(1)>', type: 'text', required: true }],
    });
    const body = (await getPage(link.slug)).body;
    assert.doesNotMatch(body, /<script>alert|<b>tags|<img src=x/);
    assert.match(body, /&lt;script&gt;alert\(1\)&lt;\/script&gt;/);
  });

  it('a Live link shows no Test bar', async () => {
    const m = await t.merchant();
    const link = await insertLink(t, m, { environment: 'live' });
    const res = await getPage(link.slug);
    assert.equal(res.statusCode, 200);
    assert.doesNotMatch(res.body, /Test mode/);
  });

  it('an unknown or impossible slug is a 404 page', async () => {
    for (const slug of ['Zz9Zz9Zz9Z', 'short', 'x'.repeat(40), 'bad%20slug']) {
      for (const path of ['', '/qr.svg', '/qr.png', '/poster.pdf']) {
        const res = await t.app.inject({ method: 'GET', url: `/l/${slug}${path}` });
        assert.equal(res.statusCode, 404, `${slug}${path}`);
        assert.match(res.body, /We could not find this payment link/);
      }
      assert.equal((await postForm(slug, { customer_name: 'Ama' })).statusCode, 404);
    }
  });

  /** The first load's budget on the wire (issue 31's, for the payer page): the page and whatever it loads. */
  const FIRST_LOAD_BYTES_MAX = 30 * 1024;

  it(`a first load of /l/{slug} (the page as served, compressed, with headers) is at most ${FIRST_LOAD_BYTES_MAX} bytes and loads nothing else`, async () => {
    const base = await t.listen();
    const m = await t.merchant();
    const link = await insertLink(t, m, { amount_minor: null, custom_fields: FIELDS });
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    try {
      const { wireBytes, body } = await new Promise<{ wireBytes: number; body: Buffer }>((resolve, reject) => {
        get(
          `${base}/l/${link.slug}`,
          { agent, headers: { 'accept-encoding': 'gzip, deflate, br', accept: 'text/html' } },
          (res) => {
            const socket = res.socket;
            const chunks: Buffer[] = [];
            res.on('data', (chunk: Buffer) => chunks.push(chunk));
            res.on('end', () => resolve({ wireBytes: socket.bytesRead, body: Buffer.concat(chunks) }));
            res.on('error', reject);
          },
        ).on('error', reject);
      });
      const html = brotliDecompressSync(body).toString('utf8');
      const loads = [...html.matchAll(/<(?:script|link|img|iframe|source)\b[^>]*\b(?:src|href)="([^"]+)"/g)]
        .map((l) => l[1]!)
        .filter((url) => !url.startsWith('data:'));
      assert.deepEqual(loads, [], 'the page loads nothing over the network');
      assert.doesNotMatch(html, /url\(/);
      assert.ok(wireBytes <= FIRST_LOAD_BYTES_MAX, `first load ${wireBytes} B`);
      console.log(
        `first load of /l/{slug}, on the wire: ${wireBytes} B (body ${body.length} B br, ${html.length} B html)`,
      );
    } finally {
      agent.destroy();
    }
  });

  describe('refusals: 422, the same page with the values kept and a message beside the field, and no session', () => {
    const cases: { name: string; fields: Record<string, string>; field: string; message: RegExp }[] = [
      { name: 'no amount', fields: { amount: '' }, field: 'amount', message: /Enter the amount you want to pay/ },
      { name: 'three decimals', fields: { amount: '25.505' }, field: 'amount', message: /at most 2 decimals/ },
      { name: 'not a number', fields: { amount: 'ten' }, field: 'amount', message: /at most 2 decimals/ },
      { name: 'a negative amount', fields: { amount: '-5' }, field: 'amount', message: /at most 2 decimals/ },
      {
        name: 'below the minimum',
        fields: { amount: '4.99' },
        field: 'amount',
        message: /between GHS 5\.00 and GHS 1,500\.00/,
      },
      { name: 'above the maximum', fields: { amount: '1500.01' }, field: 'amount', message: /between GHS 5\.00/ },
      {
        name: 'a required field missing',
        fields: { 'fields[student_id]': '  ' },
        field: 'f-student_id',
        message: /Enter Student ID\./,
      },
      {
        name: 'a number field not numeric',
        fields: { 'fields[class_size]': '12a' },
        field: 'f-class_size',
        message: /Class size must be a number/,
      },
      {
        name: 'a phone not a Ghana mobile',
        fields: { 'fields[parent_phone]': '0301234567' },
        field: 'f-parent_phone',
        message: /Parent phone must be a Ghana mobile number/,
      },
      {
        name: 'a phone too short',
        fields: { 'fields[parent_phone]': '024123' },
        field: 'f-parent_phone',
        message: /Ghana mobile number/,
      },
      {
        name: 'an e-mail without @',
        fields: { 'fields[parent_email]': 'ama.example.com' },
        field: 'f-parent_email',
        message: /Parent e-mail must be an e-mail address/,
      },
      {
        name: 'a field too long',
        fields: { 'fields[student_id]': 's'.repeat(201) },
        field: 'f-student_id',
        message: /at most 200 characters/,
      },
      {
        name: 'a name too long',
        fields: { customer_name: 'A'.repeat(201) },
        field: 'customer_name',
        message: /at most 200 characters/,
      },
    ];
    const valid = {
      amount: '25.50',
      customer_name: 'Ama Mensah',
      'fields[student_id]': 'S-1042',
      'fields[class_size]': '32',
      'fields[parent_phone]': '024 123 4567',
      'fields[parent_email]': 'ama@example.com',
    };
    for (const c of cases)
      it(c.name, async () => {
        const m = await t.merchant();
        const link = await insertLink(t, m, {
          amount_minor: null,
          amount_min_minor: 500,
          amount_max_minor: 150_000,
          custom_fields: FIELDS,
        });
        const sent = { ...valid, ...c.fields };
        const res = await postForm(link.slug, sent);
        assert.equal(res.statusCode, 422, res.body.slice(0, 300));
        assert.match(String(res.headers['content-type']), /^text\/html/);
        assert.match(res.body, /Please correct the fields marked below/);
        // The message sits beside its field, tied to it, and the field is marked.
        const error = new RegExp(`<p class="msg bad" id="${c.field}-error">([^<]*)</p>`).exec(res.body);
        assert.ok(error, `a message beside ${c.field}`);
        assert.match(error[1]!.replace(/&#39;/g, "'"), c.message);
        assert.match(
          res.body,
          new RegExp(`id="${c.field}"[^>]*aria-invalid="true"[^>]*aria-describedby="[^"]*${c.field}-error"`),
        );
        assert.equal([...res.body.matchAll(/class="msg bad"/g)].length, 1, 'only the failing field');
        // What was typed is shown again (escaped), the other fields too.
        for (const [name, value] of Object.entries(sent))
          assert.equal(inputValue(res.body, name), value.replace(/&/g, '&amp;'), name);
        assert.equal(await sessionCount(t, m.merchant_id), 0);
      });

    it('several failing fields each get their message at once', async () => {
      const m = await t.merchant();
      const link = await insertLink(t, m, { amount_minor: null, custom_fields: FIELDS });
      const res = await postForm(link.slug, { amount: 'x', 'fields[parent_email]': 'nope' });
      assert.equal(res.statusCode, 422);
      for (const field of ['amount', 'f-student_id', 'f-parent_phone', 'f-parent_email'])
        assert.match(res.body, new RegExp(`id="${field}-error"`), field);
      assert.equal(await sessionCount(t, m.merchant_id), 0);
    });
  });

  it('a valid form makes one session of the link and answers 303 to its checkout_url; the API shows payment_link_id and custom_fields', async () => {
    const m = await t.merchant({ webhookUrl: 'https://hooks.example.com/sika' });
    const link = await insertLink(t, m, {
      amount_minor: null,
      amount_min_minor: 500,
      amount_max_minor: 150_000,
      custom_fields: FIELDS,
      redirect_url: 'https://school.example.com/thanks',
      metadata: { campus: 'Legon' },
    });
    const res = await postForm(link.slug, {
      amount: '1,200.5',
      customer_name: '  Ama Mensah ',
      'fields[student_id]': ' S-1042 ',
      'fields[parent_phone]': '024-123-4567',
      'fields[class_size]': '',
      'fields[unknown_key]': 'ignored',
      'fields[__proto__x]': 'ignored too',
    });
    assert.equal(res.statusCode, 303, res.body.slice(0, 300));
    const location = String(res.headers.location);
    const match = new RegExp(`^${t.config.checkoutUrlHost.replace(/[.]/g, '\\.')}/pay/(cs_[A-Za-z0-9_-]+)$`).exec(
      location,
    );
    assert.ok(match, location);
    assert.equal(await sessionCount(t, m.merchant_id), 1);

    const api = await call(t, 'GET', `/api/v1/sessions/${match[1]}`, { key: m.test_api_key });
    assert.equal(api.statusCode, 200, api.body);
    const session = api.json();
    assert.equal(session.checkout_url, location);
    assert.equal(session.payment_link_id, link.id);
    assert.deepEqual(session.custom_fields, { student_id: 'S-1042', parent_phone: '+233241234567' });
    assert.equal(session.amount_minor, 120_050);
    assert.match(session.invoice_ref, /^PL-[0-9A-HJKMNP-TV-Z]{8}$/, 'a readable reference of its own');
    assert.equal(session.description, link.name);
    assert.equal(session.customer.name, 'Ama Mensah');
    assert.equal(session.callback_url, 'https://school.example.com/thanks');
    assert.deepEqual(session.metadata, { campus: 'Legon' });
    assert.equal(session.status, 'open');
    assert.equal(session.livemode, false);
    const hours = (Date.parse(session.expires_at) - Date.parse(session.created_at)) / 3_600_000;
    assert.equal(Math.round(hours), 24);
    const [row] = await t.db.query<{ api_key_id: string | null }>(
      'SELECT api_key_id FROM checkout_sessions WHERE id = $1',
      [session.id],
    );
    assert.equal(row!.api_key_id, null);
    // The payer page it leads to opens.
    assert.equal((await t.app.inject({ method: 'GET', url: `/pay/${session.id}` })).statusCode, 200);

    // Paid: checkout.session.completed carries the link, the payer's answers and the receipt number, and goes to
    // the merchant's endpoint although no key made the session.
    const attempt = await startAttempt(t, session.id, momoBody(session.amount_minor));
    await simulate(t, m, attempt.attempt_reference, 'paid');
    const [completed] = await t.db.query<{ payload: string }>(
      "SELECT payload FROM events WHERE object_id = $1 AND type = 'checkout.session.completed'",
      [session.id],
    );
    const data = JSON.parse(completed!.payload).data.session;
    assert.equal(data.payment_link_id, link.id);
    assert.deepEqual(data.custom_fields, { student_id: 'S-1042', parent_phone: '+233241234567' });
    assert.match(data.receipt_number, /^[0-9A-HJKMNP-TV-Z]{9}$/);
    const deliveries = await t.db.query(
      `SELECT d.id FROM webhook_deliveries d JOIN events e ON e.id = d.event_id
        WHERE e.object_id = $1 AND e.type = 'checkout.session.completed'`,
      [session.id],
    );
    assert.equal(deliveries.length, 1, "to the merchant's one Test endpoint");
  });

  it('a fixed link takes its own amount and ignores an amount sent with the form', async () => {
    const m = await t.merchant();
    const link = await insertLink(t, m, { amount_minor: 2550 });
    const res = await postForm(link.slug, { amount: '1.00' });
    assert.equal(res.statusCode, 303);
    const id = /\/pay\/(\S+)$/.exec(String(res.headers.location))![1]!;
    const session = (await call(t, 'GET', `/api/v1/sessions/${id}`, { key: m.test_api_key })).json();
    assert.equal(session.amount_minor, 2550);
    assert.deepEqual(session.custom_fields, {});
    assert.equal(session.customer.name, null);
  });

  describe('410 for a link that takes no payment, on GET, POST, its QR codes and poster; no session made', () => {
    const gone: { name: string; options: LinkOptions; heading: RegExp }[] = [
      { name: 'turned off', options: { active: false }, heading: /This payment link is turned off/ },
      {
        name: 'expired',
        options: { expires_at: new Date(Date.now() - 1000) },
        heading: /This payment link has expired/,
      },
      { name: 'used up (max_payments)', options: { max_payments: 3, payments_count: 3 }, heading: /has been used/ },
      { name: 'a paid single-use link', options: { single_use: true, payments_count: 1 }, heading: /has been used/ },
    ];
    for (const g of gone)
      it(g.name, async () => {
        const m = await t.merchant();
        const link = await insertLink(t, m, g.options);
        const page = await getPage(link.slug);
        assert.equal(page.statusCode, 410);
        assert.match(page.body, g.heading);
        assert.match(page.body, /Nothing was charged/);
        const post = await postForm(link.slug, { customer_name: 'Kofi' });
        assert.equal(post.statusCode, 410);
        assert.match(post.body, g.heading);
        for (const path of ['qr.svg', 'qr.png', 'poster.pdf'])
          assert.equal((await t.app.inject({ method: 'GET', url: `/l/${link.slug}/${path}` })).statusCode, 410, path);
        assert.equal(await linkSessions(link.id), 0);
      });

    it('a link turned off after its page was read makes no session (asked again under the link lock)', async () => {
      const m = await t.merchant();
      const link = await insertLink(t, m, { max_payments: 2, payments_count: 1 });
      assert.equal((await getPage(link.slug)).statusCode, 200);
      assert.equal((await postForm(link.slug, {})).statusCode, 303);
      await t.db.query('UPDATE payment_links SET payments_count = 2 WHERE id = $1', [link.id]);
      const res = await postForm(link.slug, {});
      assert.equal(res.statusCode, 410);
      assert.equal(await linkSessions(link.id), 1);
    });
  });

  it('a Live link of a suspended merchant says payments are paused (403) and starts no payment; its Test link still works', async () => {
    const m = await t.merchant();
    const live = await insertLink(t, m, { environment: 'live' });
    const test = await insertLink(t, m, { environment: 'test' });
    assert.equal((await getPage(live.slug)).statusCode, 200);
    await t.db.query('UPDATE merchants SET suspended_at = now() WHERE id = $1', [m.merchant_id]);
    // The gate's cache lasts at most 500 ms (src/accounts/live-access.ts).
    await new Promise((resolve) => setTimeout(resolve, 600));
    const page = await getPage(live.slug);
    assert.equal(page.statusCode, 403);
    assert.match(page.body, /are paused/);
    const post = await postForm(live.slug, { customer_name: 'Kofi' });
    assert.equal(post.statusCode, 403);
    assert.match(post.body, /are paused/);
    assert.equal(await linkSessions(live.id), 0);
    assert.equal((await getPage(test.slug)).statusCode, 200);
    assert.equal((await postForm(test.slug, {})).statusCode, 303);
  });

  it('a Live link of an active merchant starts a Live session', async () => {
    const m = await t.merchant();
    const link = await insertLink(t, m, { environment: 'live', amount_minor: 1000 });
    const res = await postForm(link.slug, { customer_name: `Payer ${randomUUID().slice(0, 4)}` });
    assert.equal(res.statusCode, 303);
    const id = /\/pay\/(\S+)$/.exec(String(res.headers.location))![1]!;
    const session = (await call(t, 'GET', `/api/v1/sessions/${id}`, { key: m.live_api_key })).json();
    assert.equal(session.livemode, true);
    assert.equal(session.payment_link_id, link.id);
  });
});

describe(`payment link form rate limit (${storageKind})`, () => {
  // The payer endpoints' second budget (RATE_LIMIT_SESSION_PER_S), counted per client address for a link's form.
  const t = useTestApp({ RATE_LIMIT_SESSION_PER_S: '2' });

  it('POST /l/{slug} beyond the budget is a 429 page with Retry-After, and makes no session', async () => {
    const m = await t.merchant();
    const link = await insertLink(t, m);
    const statuses: number[] = [];
    let limited: { body: string; retryAfter: unknown } | null = null;
    for (let i = 0; i < 5; i++) {
      const res = await t.app.inject({
        method: 'POST',
        url: `/l/${link.slug}`,
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        payload: '',
      });
      statuses.push(res.statusCode);
      if (res.statusCode === 429) limited = { body: res.body, retryAfter: res.headers['retry-after'] };
    }
    assert.ok(limited, `some request was limited: ${statuses}`);
    assert.match(limited.body, /Too many requests/);
    assert.ok(Number(limited.retryAfter) >= 1);
    assert.equal(await sessionCount(t, m.merchant_id), statuses.filter((s) => s === 303).length);
    // The page's reads are on the wider per-address budget only.
    assert.equal((await t.app.inject({ method: 'GET', url: `/l/${link.slug}` })).statusCode, 200);
  });
});
