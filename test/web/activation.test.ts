// The Go-Live application and its review (issue 33, items 3 and 4), over real HTTP on embedded storage and on
// PostgreSQL (DATABASE_URL): the owner's draft saved and reloaded, field checks on the page, a submission with
// something missing refused with the list, documents refused when over 5 MB or not what they claim, the
// settlement account's name enquiry (the Test simulator: no Live provider is configured here) and its match,
// duplicate Ghana Card PINs across merchants, the decisions (compliance operators only, approval with a
// second-factor code, rejection with its reason shown to the merchant, changes requested and resubmitted),
// and two operators deciding at once: one decision wins, the other is told it was already decided.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { setPassword } from '../../src/accounts/console-accounts.ts';
import { createMerchant, inviteUser } from '../../src/accounts/service.ts';
import { totpCode, totpStep, TOTP_PERIOD_S } from '../../src/accounts/totp.ts';
import { createOperator } from '../../src/ops/service.ts';
import { HttpConsole, freshTotpCode, operatorSecondFactors } from '../support/console-client.ts';
import { startTestApp, storageKind, type TestContext } from '../support/helpers.ts';
import { flattenFields, multipartFile, type Json } from '../support/http.ts';

const PASSWORD = 'activation-password-1';
const TIMEOUT_MS = 20_000;
const MB5 = 5 * 1024 * 1024;

const PNG = Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), Buffer.alloc(64, 1)]);
const PDF = Buffer.from('%PDF-1.4\n1 0 obj <<>> endobj\ntrailer <<>>\n%%EOF\n');
const EXE = Buffer.concat([Buffer.from('MZ\x90\x00\x03\x00\x00\x00', 'latin1'), Buffer.alloc(128, 0)]);

const unescapeHtml = (text: string) =>
  text
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&amp;/g, '&');
const flashOf = (body: string): string =>
  unescapeHtml(/class="flash[^"]*" role="(?:alert|status)">([^<]*)</.exec(body)?.[1] ?? '');

function setCookie(res: Response, name: string): string | undefined {
  return res.headers
    .getSetCookie()
    .find((c) => c.startsWith(`${name}=`))
    ?.slice(name.length + 1)
    .split(';')[0];
}

interface Answer {
  status: number;
  body: string;
  headers: Headers;
}

/** A merchant user's browser over real HTTP: cookies, the CSRF field, url-encoded forms and multipart uploads. */
class Browser {
  private cookie = '';
  private csrf = '';
  constructor(readonly base: string) {}

  async signIn(email: string): Promise<this> {
    const form = await fetch(`${this.base}/dashboard/login`, {
      redirect: 'manual',
      signal: AbortSignal.timeout(TIMEOUT_MS),
    });
    const loginCsrf = setCookie(form, 'sika_login_csrf')!;
    await form.text();
    const login = await fetch(`${this.base}/dashboard/login`, {
      method: 'POST',
      redirect: 'manual',
      headers: { cookie: `sika_login_csrf=${loginCsrf}`, 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ _csrf: loginCsrf, email, password: PASSWORD }).toString(),
      signal: AbortSignal.timeout(TIMEOUT_MS),
    });
    assert.equal(login.status, 303, await login.text());
    this.cookie = `sika_dashboard=${setCookie(login, 'sika_dashboard')}`;
    const page = await this.get('/dashboard/activation');
    assert.equal(page.status, 200, `${page.status} ${page.body.slice(0, 300)}`);
    return this;
  }

  private async answer(res: Response): Promise<Answer> {
    const body = await res.text();
    const token = /name="_csrf" value="([^"]+)"/.exec(body)?.[1];
    if (token) this.csrf = token;
    return { status: res.status, body, headers: res.headers };
  }

  async get(path: string): Promise<Answer> {
    return this.answer(
      await fetch(`${this.base}${path}`, {
        headers: { cookie: this.cookie },
        redirect: 'manual',
        signal: AbortSignal.timeout(TIMEOUT_MS),
      }),
    );
  }

  async raw(path: string): Promise<Response> {
    return fetch(`${this.base}${path}`, {
      headers: { cookie: this.cookie },
      redirect: 'manual',
      signal: AbortSignal.timeout(TIMEOUT_MS),
    });
  }

  async post(path: string, pairs: [string, string][]): Promise<Answer> {
    return this.answer(
      await fetch(`${this.base}${path}`, {
        method: 'POST',
        redirect: 'manual',
        headers: { cookie: this.cookie, 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams([['_csrf', this.csrf], ...pairs]).toString(),
        signal: AbortSignal.timeout(TIMEOUT_MS),
      }),
    );
  }

  async upload(kind: string, filename: string, type: string, data: Buffer, directorIndex?: number): Promise<Answer> {
    const fields: Record<string, string> = { _csrf: this.csrf, kind };
    if (directorIndex !== undefined) fields.director_index = String(directorIndex);
    const body = multipartFile('file', filename, type, data, fields);
    return this.answer(
      await fetch(`${this.base}/dashboard/activation/documents`, {
        method: 'POST',
        redirect: 'manual',
        headers: { cookie: this.cookie, 'content-type': body.contentType },
        body: body.payload,
        signal: AbortSignal.timeout(TIMEOUT_MS),
      }),
    );
  }
}

/** A unique Ghana Card PIN per call (the duplicate check must not see other tests' directors). */
const freshPin = () =>
  `GHA-${String(Math.floor(Math.random() * 1e9)).padStart(9, '0')}-${Math.floor(Math.random() * 10)}`;
const freshAccount = () => String(Math.floor(Math.random() * 1e12)).padStart(13, '1');

/** The complete form as the page posts it. */
function completeForm(overrides: Record<string, Json> = {}): Record<string, Json> {
  return {
    business_type: 'limited_company',
    legal_name: 'Adwoa Foods Limited',
    trading_name: 'Adwoa Foods',
    registration_number: 'CS123456789',
    tin: 'C0012345678',
    address: '12 Oxford Street, Osu, Accra',
    digital_address: 'GA-183-8164',
    phone: '030 123 4567',
    website: 'https://adwoafoods.com.gh',
    products: 'Packaged foods and spices',
    monthly_volume_band: '10k_to_50k',
    directors: [
      { full_name: 'Adwoa Mensah', ghana_card_pin: freshPin(), date_of_birth: '1985-03-21', phone: '024 123 4567' },
    ],
    settlement_type: 'bank',
    settlement_bank_code: 'GCB',
    settlement_account_number: freshAccount(),
    settlement_account_name: 'Adwoa Foods Limited',
    ...overrides,
  };
}
const pairsOf = (form: Record<string, Json>, action: string): [string, string][] => [
  ...flattenFields(form),
  ['action', action],
];

describe(`the Go-Live application and its review (${storageKind})`, () => {
  let t: TestContext;
  let base: string;
  const compliance = [`compliance-a-${randomUUID()}@sika.test`, `compliance-b-${randomUUID()}@sika.test`];
  const plainOperator = `operator-${randomUUID()}@sika.test`;

  before(async () => {
    t = await startTestApp({ BASE_URL: 'http://sika.test' });
    base = await t.listen();
    for (const email of compliance) await createOperator(t.db, { email, password: PASSWORD, role: 'compliance' });
    await createOperator(t.db, { email: plainOperator, password: PASSWORD });
  });
  after(async () => t?.close());

  async function merchant(): Promise<{ id: string; email: string; browser: Browser }> {
    const email = `owner-${randomUUID()}@example.com`;
    const created = await createMerchant(
      t.db,
      { name: `Adwoa Foods ${randomUUID().slice(0, 6)}`, email, password: PASSWORD, pendingActivation: true },
      t.webhookTargets,
    );
    return { id: created.merchant_id, email, browser: await new Browser(base).signIn(email) };
  }

  /** Saves the complete form and uploads every document; answers the form saved. */
  async function complete(browser: Browser, overrides: Record<string, Json> = {}): Promise<Record<string, Json>> {
    const form = completeForm(overrides);
    const saved = await browser.post('/dashboard/activation', pairsOf(form, 'save'));
    assert.equal(saved.status, 200, flashOf(saved.body));
    for (const [kind, index] of [
      ['certificate_of_registration', undefined],
      ['proof_of_address', undefined],
      ['ghana_card_front', 0],
      ['ghana_card_back', 0],
    ] as const) {
      const up = await browser.upload(kind, `${kind}.png`, 'image/png', PNG, index);
      assert.equal(up.status, 200, flashOf(up.body));
      assert.equal(flashOf(up.body), 'Document uploaded.');
    }
    return form;
  }

  async function submitted(overrides: Record<string, Json> = {}) {
    const m = await merchant();
    const form = await complete(m.browser, overrides);
    const sent = await m.browser.post('/dashboard/activation', pairsOf(form, 'submit'));
    assert.equal(sent.status, 200, flashOf(sent.body));
    assert.match(flashOf(sent.body), /Submitted for review/);
    return { ...m, form };
  }

  const statusOf = async (merchantId: string) =>
    (
      await t.db.query<{ activation_status: string }>('SELECT activation_status FROM merchants WHERE id = $1', [
        merchantId,
      ])
    )[0]!.activation_status;

  // One signed-in console per operator for the whole file: each sign-in spends a code step (30 s each).
  const consoles = new Map<string, Promise<HttpConsole>>();
  const operator = (email: string) => {
    if (!consoles.has(email)) consoles.set(email, new HttpConsole(base, '/ops').signedIn(email, PASSWORD));
    return consoles.get(email)!;
  };

  it('shows the page in the nav until approved; saves a draft and shows it again; a bad field is refused with its message and nothing is saved', async () => {
    const { browser, id } = await merchant();
    const home = await browser.get('/dashboard');
    assert.match(home.body, /href="\/dashboard\/activation"[^>]*>Activate your account</);
    const saved = await browser.post('/dashboard/activation', [
      ['legal_name', 'Adwoa Foods Limited'],
      ['digital_address', 'ga-183-8164'],
      ['directors[0][full_name]', 'Adwoa Mensah'],
      ['action', 'save'],
    ]);
    assert.equal(saved.status, 200);
    assert.equal(flashOf(saved.body), 'Draft saved.');
    const reloaded = await browser.get('/dashboard/activation');
    assert.match(reloaded.body, /name="legal_name" type="text" maxlength="150" value="Adwoa Foods Limited"/);
    assert.match(reloaded.body, /value="GA-183-8164"/, 'stored in its normal form');
    assert.match(reloaded.body, /name="directors\[0\]\[full_name\]"[^>]*value="Adwoa Mensah"/);
    assert.match(reloaded.body, /<li>Registrar-General number<\/li>/, 'what is still missing is listed');

    const refused = await browser.post('/dashboard/activation', [
      ['legal_name', 'Adwoa Foods Limited'],
      ['tin', 'not-a-tin'],
      ['directors[0][full_name]', 'Adwoa Mensah'],
      ['directors[0][ghana_card_pin]', 'GHA-12345-6'],
      ['action', 'save'],
    ]);
    assert.equal(refused.status, 400);
    assert.match(flashOf(refused.body), /Nothing was saved: 2 fields need fixing/);
    assert.match(unescapeHtml(refused.body), /id="f-tin-err">The TIN must be an organisation's/);
    assert.match(
      unescapeHtml(refused.body),
      /Director 1: The Ghana Card PIN must read GHA-, 9 digits, a dash and 1 digit/,
    );
    assert.match(
      refused.body,
      /value="not-a-tin" aria-describedby="f-tin-hint f-tin-err" aria-invalid="true"/,
      'the typed value is shown again',
    );
    const stored = await t.db.query<{ draft: { tin?: string; directors: { ghana_card_pin?: string }[] } }>(
      'SELECT draft FROM activation_applications WHERE merchant_id = $1',
      [id],
    );
    assert.equal(stored[0]!.draft.tin, undefined);
    assert.equal(stored[0]!.draft.directors[0]!.ghana_card_pin, undefined);
    assert.equal(await statusOf(id), 'not_submitted');
  });

  it('only the owner or an admin fills in the application: a developer is refused with a 403', async () => {
    const owner = await merchant();
    const [ownerUser] = await t.db.query<{ id: string }>('SELECT id FROM users WHERE email = $1', [owner.email]);
    const actor = { type: 'user' as const, id: ownerUser!.id, email: owner.email };
    const developer = await inviteUser(t.db, actor, owner.id, {
      email: `dev-${randomUUID()}@example.com`,
      role: 'developer',
    });
    await setPassword(t.db, { kind: 'merchant', email: developer.email, password: PASSWORD, actor });
    const browser = new Browser(base);
    await assert.rejects(browser.signIn(developer.email), /403/, 'the page is refused to a developer');
    const page = await browser.get('/dashboard/activation');
    assert.equal(page.status, 403);
    assert.match(flashOf(page.body), /Only the owner or an admin can fill in the Go-Live application/);
    const posted = await browser.post('/dashboard/activation', pairsOf(completeForm(), 'save'));
    assert.equal(posted.status, 403);
    assert.match(flashOf(posted.body), /Only the owner or an admin/, 'refused for the role, not the CSRF token');
    assert.equal(
      (await t.db.query('SELECT 1 FROM activation_applications WHERE merchant_id = $1', [owner.id])).length,
      0,
    );
  });

  it('refuses a submission with something missing, listing it; the draft is kept', async () => {
    const { browser, id } = await merchant();
    const form = completeForm();
    const sent = await browser.post('/dashboard/activation', pairsOf(form, 'submit'));
    assert.equal(sent.status, 400);
    assert.match(flashOf(sent.body), /cannot be submitted yet: 4 things are missing/);
    for (const missing of [
      'Certificate of registration',
      'Director 1: Ghana Card, front',
      'Director 1: Ghana Card, back',
      'Proof of address (a utility bill or tenancy agreement)',
    ])
      assert.ok(unescapeHtml(sent.body).includes(`<li>${missing}</li>`), missing);
    assert.equal(await statusOf(id), 'not_submitted');
  });

  it('refuses a file over 5 MB and a file that is not what its name says, with a clear message; serves an accepted one inline with its sniffed type', async () => {
    const { browser, id } = await merchant();
    await browser.post('/dashboard/activation', pairsOf(completeForm(), 'save'));
    const exact = await browser.upload(
      'proof_of_address',
      'bill.pdf',
      'application/pdf',
      Buffer.concat([PDF, Buffer.alloc(MB5 - PDF.length, 0x20)]),
    );
    assert.equal(exact.status, 200, flashOf(exact.body));
    const tooLarge = await browser.upload(
      'proof_of_address',
      'bill.pdf',
      'application/pdf',
      Buffer.concat([PDF, Buffer.alloc(MB5 + 1 - PDF.length, 0x20)]),
    );
    assert.equal(tooLarge.status, 413);
    assert.match(tooLarge.headers.get('content-type') ?? '', /^text\/html/);
    assert.match(flashOf(tooLarge.body), /The file is larger than 5 MB, the most a document may be/);
    const disguised = await browser.upload('certificate_of_registration', 'certificate.pdf', 'application/pdf', EXE);
    assert.equal(disguised.status, 415);
    assert.match(
      flashOf(disguised.body),
      /"certificate\.pdf" is not a PDF, PNG or JPEG file \(judged by what is inside it, not its name\)/,
    );
    const cardFirst = await browser.upload('ghana_card_front', 'card.png', 'image/png', PNG, 3);
    assert.equal(cardFirst.status, 400);
    assert.match(flashOf(cardFirst.body), /Save the director first/);

    const renamed = await browser.upload('certificate_of_registration', 'certificate.pdf', 'application/pdf', PNG);
    assert.equal(renamed.status, 200);
    const docs = await t.db.query<{ id: string; kind: string; content_type: string; size: number }>(
      'SELECT id, kind, content_type, size FROM activation_documents WHERE merchant_id = $1 ORDER BY kind',
      [id],
    );
    assert.deepEqual(
      docs.map((d) => [d.kind, d.content_type, d.size]),
      [
        ['certificate_of_registration', 'image/png', PNG.length],
        ['proof_of_address', 'application/pdf', MB5],
      ],
    );
    const served = await browser.raw(`/dashboard/activation/document?id=${docs[0]!.id}`);
    assert.equal(served.status, 200);
    assert.equal(served.headers.get('content-type'), 'image/png', 'the type from the bytes, not the name');
    assert.match(served.headers.get('content-disposition') ?? '', /^inline/);
    assert.equal(served.headers.get('x-content-type-options'), 'nosniff');
    assert.deepEqual(Buffer.from(await served.arrayBuffer()), PNG);
    // Another merchant does not see it.
    const other = await merchant();
    assert.equal((await other.browser.raw(`/dashboard/activation/document?id=${docs[0]!.id}`)).status, 404);
  });

  it('checks the settlement account by name enquiry (Test simulator) and matches it against the legal name or a director', async () => {
    const { browser, id } = await merchant();
    const director = await browser.post(
      '/dashboard/activation',
      pairsOf(completeForm({ settlement_account_name: 'MENSAH ADWOA' }), 'save'),
    );
    assert.match(
      unescapeHtml(director.body),
      /Name matches<\/span> The account is held by MENSAH ADWOA, which matches Adwoa Mensah \(Test simulator/,
    );
    const stranger = await browser.post(
      '/dashboard/activation',
      pairsOf(completeForm({ settlement_account_name: 'Kwame Owusu' }), 'save'),
    );
    assert.match(
      unescapeHtml(stranger.body),
      /Name does not match<\/span> The account is held by "Kwame Owusu", which matches neither the legal name nor a director/,
    );
    const row = await t.db.query<{ name_matched: boolean; name_enquiry_result: { source: string; outcome: string } }>(
      'SELECT name_matched, name_enquiry_result FROM activation_applications WHERE merchant_id = $1',
      [id],
    );
    assert.equal(row[0]!.name_matched, false);
    assert.equal(row[0]!.name_enquiry_result.source, 'test_simulator');
    const rejected = await browser.post(
      '/dashboard/activation',
      pairsOf(completeForm({ settlement_account_number: '0000000000' }), 'save'),
    );
    assert.match(unescapeHtml(rejected.body), /The account check failed: account not found/);
  });

  it('a mismatch does not block submission; the review shows it failed, and a Ghana Card PIN and a settlement account another merchant named too', async () => {
    const first = await submitted();
    const pin = (first.form.directors as { ghana_card_pin: string }[])[0]!.ghana_card_pin;
    const second = await submitted({
      settlement_account_name: 'Kwame Owusu',
      settlement_account_number: first.form.settlement_account_number!,
      directors: [{ full_name: 'Ama Serwaa', ghana_card_pin: pin, date_of_birth: '1990-01-02', phone: '0201234567' }],
    });
    assert.equal(await statusOf(second.id), 'under_review');
    const ops = await operator(compliance[0]!);
    const queue = await ops.get('/ops/activation');
    assert.equal(queue.status, 200);
    const firstAt = queue.body.indexOf(`/ops/activation/${first.id}`);
    const secondAt = queue.body.indexOf(`/ops/activation/${second.id}`);
    assert.ok(firstAt > 0 && secondAt > firstAt, 'oldest submission first');
    const page = await ops.get(`/ops/activation/${second.id}`);
    const text = unescapeHtml(page.body);
    assert.match(text, /<h3>Settlement account name<\/h3>\s*<p><span class="badge bad">failed<\/span>/);
    assert.match(
      text,
      new RegExp(`Ghana Card PIN <span class="mono">${pin}</span> is also in <a href="/ops/activation/${first.id}">`),
    );
    assert.match(
      text,
      new RegExp(
        `Settlement account <span class="mono">${first.form.settlement_account_number}</span> is also in <a href="/ops/activation/${first.id}">`,
      ),
    );
    assert.match(text, /<h3>Formats<\/h3>\s*<p><span class="badge ok">passed<\/span> Every field is given and valid/);
    assert.match(text, /<img src="\/ops\/activation\/documents\/kdoc_[^"]+" alt="Director 1: Ghana Card, front"/);
    const docId = /\/ops\/activation\/documents\/(kdoc_[^"]+)"/.exec(page.body)![1]!;
    const doc = await fetch(`${base}/ops/activation/documents/${docId}`, { redirect: 'manual' });
    assert.equal(doc.status, 303, 'documents are only for signed-in operators');
    await doc.text();
  });

  it('only compliance operators decide; approval needs a current code; the merchant then sees Live is open', async () => {
    const m = await submitted();
    const plain = await operator(plainOperator);
    const readOnly = await plain.get(`/ops/activation/${m.id}`);
    assert.equal(readOnly.status, 200);
    assert.doesNotMatch(readOnly.body, /name="decision"/, 'no decision forms for other operators');
    const forbidden = await plain.post(`/ops/activation/${m.id}/decision`, { decision: 'reject', reason: 'No' });
    assert.equal(forbidden.status, 403);
    assert.match(flashOf(forbidden.body), /Only compliance operators decide/);

    const ops = await operator(compliance[0]!);
    const noCode = await ops.post(`/ops/activation/${m.id}/decision`, { decision: 'approve', code: '' });
    assert.equal(noCode.status, 403);
    const secret = operatorSecondFactors.get(compliance[0]!.toLowerCase())!.secret;
    const stale = totpCode(secret, (totpStep(Date.now()) - 20) * TOTP_PERIOD_S * 1000);
    const wrong = await ops.post(`/ops/activation/${m.id}/decision`, { decision: 'approve', code: stale });
    assert.equal(wrong.status, 403);
    assert.match(flashOf(wrong.body), /Enter the current code from your authenticator app/);
    assert.equal(await statusOf(m.id), 'under_review');

    const approved = await ops.post(`/ops/activation/${m.id}/decision`, {
      decision: 'approve',
      code: await freshTotpCode(compliance[0]!),
    });
    assert.equal(approved.status, 200, flashOf(approved.body));
    assert.match(flashOf(approved.body), /Approved/);
    assert.equal(await statusOf(m.id), 'approved');
    const audit = await t.db.query<{ actor_email: string }>(
      "SELECT actor_email FROM audit_log WHERE merchant_id = $1 AND action = 'merchant.activation.approved'",
      [m.id],
    );
    assert.deepEqual(
      audit.map((a) => a.actor_email),
      [compliance[0]],
    );
    const mails = await t.db.query<{ kind: string }>(
      "SELECT kind FROM mail_outbox WHERE merchant_id = $1 AND kind LIKE 'activation.%'",
      [m.id],
    );
    assert.deepEqual(
      mails.map((r) => r.kind),
      ['activation.approved'],
    );

    const page = await m.browser.get('/dashboard/activation');
    assert.match(page.body, /<h2>Live is open<\/h2>/);
    assert.match(page.body, /href="\/dashboard\/developers">Developers page<\/a>/);
    const home = await m.browser.get('/dashboard');
    assert.doesNotMatch(home.body, /Activate your account/, 'the link goes once approved');
  });

  it('a rejection needs a reason, and the merchant sees it', async () => {
    const m = await submitted();
    const ops = await operator(compliance[1]!);
    const noReason = await ops.post(`/ops/activation/${m.id}/decision`, { decision: 'reject', reason: '  ' });
    assert.equal(noReason.status, 400);
    assert.match(flashOf(noReason.body), /Give the reason for the rejection/);
    const rejected = await ops.post(`/ops/activation/${m.id}/decision`, {
      decision: 'reject',
      reason: 'The business is not registered in Ghana.',
    });
    assert.equal(rejected.status, 200);
    assert.equal(await statusOf(m.id), 'rejected');
    const page = await m.browser.get('/dashboard/activation');
    assert.match(
      page.body,
      /Your application was not approved<\/h2><p>Reason: The business is not registered in Ghana\.<\/p>/,
    );
    const edit = await m.browser.post('/dashboard/activation', pairsOf(completeForm(), 'save'));
    assert.equal(edit.status, 409, 'a decided application is not changed');
  });

  it('changes requested: the merchant sees the fields highlighted, edits and resubmits; under review again', async () => {
    const m = await submitted();
    const ops = await operator(compliance[0]!);
    const noFields = await ops.post(`/ops/activation/${m.id}/decision`, {
      decision: 'request_changes',
      reason: 'Fix it',
    });
    assert.equal(noFields.status, 400);
    const asked = await ops.post(`/ops/activation/${m.id}/decision`, [
      ['decision', 'request_changes'],
      ['change_digital_address', 'on'],
      ['change_settlement_account', 'on'],
      ['reason', 'The GPS address does not match the proof of address; and use the business account.'],
    ]);
    assert.equal(asked.status, 200, flashOf(asked.body));
    assert.equal(await statusOf(m.id), 'changes_requested');
    const page = unescapeHtml((await m.browser.get('/dashboard/activation')).body);
    assert.match(
      page,
      /<h2>Changes requested<\/h2><p>The GPS address does not match the proof of address; and use the business account\.<\/p>/,
    );
    assert.match(
      page,
      /Please change: <strong>GhanaPost GPS digital address<\/strong>, <strong>Settlement account<\/strong>/,
    );
    assert.match(page, /<div class="requested"><label for="f-digital_address">/);
    assert.match(page, /<section class="card requested" aria-labelledby="settlement-h">/);
    assert.match(page, />Resubmit<\/button>/);
    const mails = await t.db.query<{ kind: string }>(
      "SELECT kind FROM mail_outbox WHERE merchant_id = $1 AND kind LIKE 'activation.%'",
      [m.id],
    );
    assert.deepEqual(
      mails.map((r) => r.kind),
      ['activation.changes_requested'],
    );

    const resent = await m.browser.post(
      '/dashboard/activation',
      pairsOf({ ...m.form, digital_address: 'GA-184-1234', settlement_account_number: freshAccount() }, 'submit'),
    );
    assert.equal(resent.status, 200, flashOf(resent.body));
    assert.equal(await statusOf(m.id), 'under_review');
    assert.match(resent.body, /<h2>Under review<\/h2>/);
    assert.doesNotMatch(resent.body, /name="legal_name"/, 'read-only while under review');
    const again = unescapeHtml((await ops.get('/ops/activation')).body);
    assert.ok(again.includes(`/ops/activation/${m.id}`), 'back in the queue');
  });

  it('two operators deciding at once: one decision wins, the other is told it was already decided', async () => {
    const m = await submitted();
    const [a, b] = await Promise.all([operator(compliance[1]!), operator(compliance[0]!)]);
    const code = await freshTotpCode(compliance[1]!);
    const [approve, reject] = await Promise.all([
      a.post(`/ops/activation/${m.id}/decision`, { decision: 'approve', code }),
      b.post(`/ops/activation/${m.id}/decision`, { decision: 'reject', reason: 'Documents unreadable.' }),
    ]);
    const statuses = [approve.status, reject.status].sort();
    assert.deepEqual(
      statuses,
      [200, 409],
      `${approve.status} ${flashOf(approve.body)} / ${reject.status} ${flashOf(reject.body)}`,
    );
    const loser = approve.status === 409 ? approve : reject;
    assert.match(
      flashOf(loser.body),
      /^Already decided by another operator: The merchant's activation is now (approved|rejected); nothing was changed\. Your decision was not applied\.$/,
    );
    const final = await statusOf(m.id);
    assert.equal(final, approve.status === 200 ? 'approved' : 'rejected');
    const decisions = await t.db.query<{ action: string }>(
      "SELECT action FROM audit_log WHERE merchant_id = $1 AND action IN ('merchant.activation.approved', 'merchant.activation.rejected')",
      [m.id],
    );
    assert.deepEqual(
      decisions.map((d) => d.action),
      [`merchant.activation.${final}`],
    );
    const mails = await t.db.query<{ kind: string }>(
      "SELECT kind FROM mail_outbox WHERE merchant_id = $1 AND kind LIKE 'activation.%'",
      [m.id],
    );
    assert.deepEqual(
      mails.map((r) => r.kind),
      [`activation.${final}`],
      'one mail, for the decision that won',
    );
  });
});
