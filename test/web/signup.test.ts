// Self-service sign-up (issue 33 item 1) over real HTTP: the form, the one "check your e-mail" answer whether or
// not the address has an account (byte for byte), each field's message, the limits per client address and per
// e-mail, the link mailed through the outbox, the confirmation that makes one merchant (pending activation,
// Test at once) and signs its owner in, dead links (used, expired, unknown, replaced), two clicks at once, the
// race with another way in, and the purge. Runs on embedded storage and on PostgreSQL (DATABASE_URL).
import assert from 'node:assert/strict';
import { createHash, randomUUID } from 'node:crypto';
import { before, describe, it } from 'node:test';
import { createMerchant } from '../../src/accounts/service.ts';
import {
  purgeExpiredSignups,
  SIGNUP_MAILS_PER_EMAIL_MAX,
  SIGNUPS_PER_ADDRESS_MAX,
} from '../../src/accounts/signups.ts';
import { PASSWORD_LENGTH_MAX } from '../../src/accounts/console-accounts.ts';
import { storageKind } from '../support/helpers.ts';
import { useTestApp } from '../support/hooks.ts';

const PASSWORD = 'a long enough password';
const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');
/** A fresh client address (documentation range), so runs on a kept PostgreSQL database never share a count. */
const freshAddress = () => `2001:db8:${randomUUID().slice(0, 4)}::${randomUUID().slice(0, 4)}`;
const freshEmail = () => `owner-${randomUUID()}@example.com`;

interface Answer {
  status: number;
  body: string;
  headers: Headers;
}

/** A browser without a session: a cookie jar, a client address it claims through the trusted proxy, no redirects followed. */
class Browser {
  private cookies = new Map<string, string>();
  constructor(
    readonly baseUrl: string,
    readonly address = freshAddress(),
  ) {}

  cookie(name: string): string | undefined {
    return this.cookies.get(name);
  }

  private async send(path: string, init: RequestInit = {}): Promise<Answer> {
    const res = await fetch(`${this.baseUrl}${path}`, {
      ...init,
      redirect: 'manual',
      headers: {
        ...(init.headers as Record<string, string>),
        'x-forwarded-for': this.address,
        cookie: [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; '),
      },
      signal: AbortSignal.timeout(10_000),
    });
    for (const set of res.headers.getSetCookie()) {
      const [pair] = set.split(';');
      const at = pair!.indexOf('=');
      const value = pair!.slice(at + 1);
      if (value === '' || /max-age=0|expires=thu, 01 jan 1970/i.test(set)) this.cookies.delete(pair!.slice(0, at));
      else this.cookies.set(pair!.slice(0, at), value);
    }
    return { status: res.status, body: await res.text(), headers: res.headers };
  }

  get = (path: string) => this.send(path);

  post(path: string, fields: Record<string, string>): Promise<Answer> {
    return this.send(path, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams(fields).toString(),
    });
  }

  /** GET /signup, then POST the form with its CSRF token. */
  async signUp(fields: Partial<Record<'business_name' | 'name' | 'email' | 'password', string>>): Promise<Answer> {
    const form = await this.get('/signup');
    assert.equal(form.status, 200);
    return this.post('/signup', {
      _csrf: csrfIn(form.body),
      business_name: 'Ama Foods',
      name: 'Ama Mensah',
      email: freshEmail(),
      password: PASSWORD,
      ...fields,
    });
  }

  /** Opens a link's page and presses its button. */
  async confirm(path: string): Promise<Answer> {
    const shown = await this.get(path);
    assert.equal(shown.status, 200, shown.body.slice(0, 400));
    return this.post(path, { _csrf: csrfIn(shown.body) });
  }
}

const csrfIn = (body: string): string => {
  const token = /name="_csrf" value="([^"]+)"/.exec(body)?.[1];
  assert.ok(token, 'the page carries a CSRF token');
  return token;
};

describe(`self-service sign-up (${storageKind})`, () => {
  // TRUST_PROXY: each browser claims its own client address, so the per-address limit counts per test.
  const t = useTestApp({ TRUST_PROXY: 'loopback' });
  let baseUrl = '';
  before(async () => {
    baseUrl = await t.listen();
  });

  const mailsTo = (email: string) =>
    t.db.query<{ kind: string; subject: string; text_body: string; html_body: string }>(
      'SELECT kind, subject, text_body, html_body FROM mail_outbox WHERE lower(to_address) = lower($1) ORDER BY created_at, id',
      [email],
    );
  const linkIn = (text: string): string => {
    const match = /http:\/\/sika\.test(\/signup\/verify\/[A-Za-z0-9_-]{43})\b/.exec(text);
    assert.ok(match, `a verification link in: ${text}`);
    return match[1]!;
  };
  const merchantsWith = async (email: string) =>
    (
      await t.db.query<{ n: number }>('SELECT count(*)::int AS n FROM merchants WHERE lower(email) = lower($1)', [
        email,
      ])
    )[0]!.n;

  /** Signs up a new address and answers the link mailed to it. */
  async function pendingSignup(email = freshEmail(), browser = new Browser(baseUrl)) {
    const answer = await browser.signUp({ email });
    assert.equal(answer.status, 200, answer.body.slice(0, 400));
    const mails = await mailsTo(email);
    return { email, browser, link: linkIn(mails.at(-1)!.text_body) };
  }

  it('GET /signup shows a labelled form with autocomplete hints, a CSRF field and a way to sign in', async () => {
    const browser = new Browser(baseUrl);
    const form = await browser.get('/signup');
    assert.equal(form.status, 200);
    assert.match(form.headers.get('content-type') ?? '', /text\/html/);
    for (const [id, autocomplete] of [
      ['business_name', 'organization'],
      ['name', 'name'],
      ['email', 'email'],
      ['password', 'new-password'],
    ]) {
      assert.match(form.body, new RegExp(`<label for="${id}">`), `a label for ${id}`);
      assert.match(form.body, new RegExp(`<input id="${id}" name="${id}"[^>]*autocomplete="${autocomplete}"`));
    }
    assert.match(form.body, /<meta name="viewport" content="width=device-width/);
    assert.ok(browser.cookie('sika_signup_csrf'), 'the CSRF cookie is set');
    assert.equal(csrfIn(form.body), browser.cookie('sika_signup_csrf'));
    assert.match(form.body, /href="\/dashboard\/login"/);
    const signIn = await browser.get('/dashboard/login');
    assert.match(signIn.body, /href="\/signup">Create an account</, 'the sign-in page links to sign-up');
  });

  it('a new address gets a pending sign-up and a mail with its link in text and HTML; only the token hash is stored', async () => {
    const email = freshEmail();
    const answer = await new Browser(baseUrl).signUp({ email, business_name: 'Kofi <Tools>', name: 'Kofi Boateng' });
    assert.equal(answer.status, 200);
    assert.match(answer.body, /Check your e-mail/);
    const mails = await mailsTo(email);
    assert.equal(mails.length, 1);
    assert.equal(mails[0]!.kind, 'signup.verify');
    const link = linkIn(mails[0]!.text_body);
    assert.ok(mails[0]!.html_body.includes(`http://sika.test${link}`), 'the HTML body carries the link');
    const token = link.split('/').pop()!;
    const rows = await t.db.query<{
      token_hash: string;
      business_name: string;
      owner_name: string;
      hours: number;
      password_hash: string;
    }>(
      `SELECT token_hash, business_name, owner_name, password_hash,
              round(extract(epoch FROM expires_at - now()) / 3600)::int AS hours
         FROM signups WHERE lower(email) = lower($1)`,
      [email],
    );
    assert.equal(rows.length, 1);
    assert.equal(rows[0]!.token_hash, sha256(token));
    assert.equal(rows[0]!.business_name, 'Kofi <Tools>');
    assert.equal(rows[0]!.owner_name, 'Kofi Boateng');
    assert.equal(rows[0]!.hours, 24);
    assert.match(rows[0]!.password_hash, /^\$argon2id\$/);
    const stored = JSON.stringify(await t.db.query('SELECT * FROM signups WHERE lower(email) = lower($1)', [email]));
    assert.ok(!stored.includes(token), 'the token itself is never stored');
    assert.ok(!stored.includes(PASSWORD), 'nor the password');
  });

  it("an existing user's address gets the byte-identical answer and status, and a sign-in mail with no link to verify", async () => {
    const existing = freshEmail();
    await createMerchant(t.db, { name: 'Existing Co', email: existing, password: PASSWORD });
    const fresh = await new Browser(baseUrl).signUp({ email: freshEmail() });
    const taken = await new Browser(baseUrl).signUp({ email: existing });
    // Differently cased: still the same user.
    const takenUpper = await new Browser(baseUrl).signUp({ email: existing.toUpperCase() });
    assert.equal(taken.status, fresh.status);
    assert.equal(taken.body, fresh.body, 'the body is the same byte for byte');
    assert.equal(takenUpper.body, fresh.body);
    assert.deepEqual(
      [...taken.headers.keys()].filter((k) => k !== 'date' && k !== 'keep-alive').sort(),
      [...fresh.headers.keys()].filter((k) => k !== 'date' && k !== 'keep-alive').sort(),
    );
    const mails = await mailsTo(existing);
    assert.deepEqual(
      mails.map((m) => m.kind),
      ['signup.account_exists', 'signup.account_exists'],
    );
    assert.match(mails[0]!.text_body, /http:\/\/sika\.test\/dashboard\/login/);
    assert.match(mails[0]!.html_body, /href="http:\/\/sika\.test\/dashboard\/login"/);
    assert.doesNotMatch(mails[0]!.text_body + mails[0]!.html_body, /signup\/verify/);
    const pending = await t.db.query('SELECT 1 FROM signups WHERE lower(email) = lower($1)', [existing]);
    assert.equal(pending.length, 0, 'no sign-up is stored for a user');
    assert.equal(await merchantsWith(existing), 1);
  });

  it('each field has its message, the form is shown again (password left out) and nothing is stored or mailed', async () => {
    const cases: [Record<string, string>, string, string][] = [
      [{ business_name: '  ' }, 'business_name', 'Enter the name of your business.'],
      [{ business_name: 'x'.repeat(201) }, 'business_name', 'The business name must be at most 200 characters.'],
      [{ name: '' }, 'name', 'Enter your name.'],
      [{ name: 'y'.repeat(201) }, 'name', 'Your name must be at most 200 characters.'],
      [{ email: '' }, 'email', 'Enter your e-mail address.'],
      [{ email: 'not-an-address' }, 'email', 'Enter an e-mail address like name@example.com.'],
      [{ email: 'a b@example.com' }, 'email', 'Enter an e-mail address like name@example.com.'],
      [{ email: `${'a'.repeat(250)}@example.com` }, 'email', 'Enter an e-mail address like name@example.com.'],
      [{ password: 'short' }, 'password', 'The password must be at least 10 characters.'],
      [
        { password: 'p'.repeat(PASSWORD_LENGTH_MAX + 1) },
        'password',
        `The password must be at most ${PASSWORD_LENGTH_MAX} characters.`,
      ],
    ];
    for (const [fields, field, message] of cases) {
      const email = fields.email ?? freshEmail();
      const answer = await new Browser(baseUrl).signUp({ ...fields, email });
      assert.equal(answer.status, 400, `${field}: ${JSON.stringify(fields).slice(0, 60)}`);
      assert.ok(
        answer.body.includes(`id="${field}-problem"`) && answer.body.includes(message.replace(/'/g, '&#39;')),
        `${field} shows "${message}"`,
      );
      assert.match(answer.body, new RegExp(`<input id="${field}" name="${field}"[^>]*aria-invalid="true"`));
      assert.doesNotMatch(answer.body, /value="a long enough password"/, 'the password is not sent back');
      if (field !== 'email') assert.equal((await mailsTo(email)).length, 0);
    }
    // The other fields keep their values.
    const kept = await new Browser(baseUrl).signUp({ business_name: 'Kept Co', password: 'short' });
    assert.match(kept.body, /id="business_name" name="business_name"[^>]*value="Kept Co"/);
  });

  it('a form without its CSRF token is refused with 403 and nothing is mailed', async () => {
    const browser = new Browser(baseUrl);
    await browser.get('/signup');
    const email = freshEmail();
    const answer = await browser.post('/signup', {
      _csrf: 'forged',
      business_name: 'A',
      name: 'B',
      email,
      password: PASSWORD,
    });
    assert.equal(answer.status, 403);
    assert.match(answer.body, /CSRF check failed/);
    assert.equal((await mailsTo(email)).length, 0);
    const noCookie = await new Browser(baseUrl).post('/signup', {
      _csrf: csrfIn(answer.body),
      business_name: 'A',
      name: 'B',
      email,
      password: PASSWORD,
    });
    assert.equal(noCookie.status, 403);
  });

  it(`one client address may send ${SIGNUPS_PER_ADDRESS_MAX} forms an hour; then a 429 that names no e-mail, and no mail`, async () => {
    const browser = new Browser(baseUrl);
    for (let i = 0; i < SIGNUPS_PER_ADDRESS_MAX; i++) {
      const answer = await browser.signUp({ email: freshEmail() });
      assert.equal(answer.status, 200, `form ${i + 1}`);
    }
    const email = freshEmail();
    const refused = await browser.signUp({ email });
    assert.equal(refused.status, 429);
    const retryAfter = Number(refused.headers.get('retry-after'));
    assert.ok(retryAfter > 0 && retryAfter <= 3_600, `Retry-After ${retryAfter}`);
    assert.match(refused.body, /Too many sign-ups from your network\. Try again in \d+ minutes?\./);
    assert.equal((await mailsTo(email)).length, 0);
    // Another address is not held back.
    assert.equal((await new Browser(baseUrl).signUp({ email })).status, 200);
    assert.equal((await mailsTo(email)).length, 1);
  });

  it(`one e-mail gets at most ${SIGNUP_MAILS_PER_EMAIL_MAX} mails an hour: then the same answer, no mail, and the last link still works`, async () => {
    const email = freshEmail();
    const answers: Answer[] = [];
    for (let i = 0; i < SIGNUP_MAILS_PER_EMAIL_MAX + 1; i++) answers.push(await new Browser(baseUrl).signUp({ email }));
    assert.deepEqual(
      answers.map((a) => a.status),
      answers.map(() => 200),
    );
    assert.ok(
      answers.every((a) => a.body === answers[0]!.body),
      'every answer is the same',
    );
    const mails = await mailsTo(email);
    assert.equal(mails.length, SIGNUP_MAILS_PER_EMAIL_MAX);
    // Each new form replaced the pending sign-up: only the newest link opens; the form beyond the limit replaced nothing.
    const links = mails.map((m) => linkIn(m.text_body));
    const browser = new Browser(baseUrl);
    for (const old of links.slice(0, -1)) assert.equal((await browser.get(old)).status, 410, 'a replaced link is dead');
    assert.equal((await browser.get(links.at(-1)!)).status, 200);
    const rows = await t.db.query('SELECT 1 FROM signups WHERE lower(email) = lower($1)', [email]);
    assert.equal(rows.length, 1, 'one pending sign-up per e-mail');
  });

  it('the link shows a button (a GET uses nothing); pressing it makes the merchant pending activation, signs the owner in and opens the dashboard in Test, where a Test key takes a checkout session', async () => {
    const { email, link } = await pendingSignup();
    const browser = new Browser(baseUrl);
    // A mail scanner's GET, twice: the link still works after.
    assert.equal((await browser.get(link)).status, 200);
    const shown = await browser.get(link);
    assert.match(shown.body, /<button type="submit">Confirm my e-mail<\/button>/);
    assert.equal(await merchantsWith(email), 0);
    // Before it is verified the sign-up is no user: its password signs in to nothing, like an unknown address.
    const login = await browser.get('/dashboard/login');
    const refused = await browser.post('/dashboard/login', { _csrf: csrfIn(login.body), email, password: PASSWORD });
    assert.equal(refused.status, 401);
    assert.match(refused.body, /Wrong email or password\./);

    const verified = await browser.post(link, { _csrf: csrfIn(shown.body) });
    assert.equal(verified.status, 303, verified.body.slice(0, 400));
    assert.equal(verified.headers.get('location'), '/dashboard');
    assert.ok(browser.cookie('sika_dashboard'), 'the owner is signed in');
    const home = await browser.get('/dashboard');
    assert.equal(home.status, 200, home.body.slice(0, 400));
    assert.match(home.body, /<h1>Ama Foods<\/h1>/);
    assert.match(home.body, /Test mode: no real money moves\./);

    const [merchant] = await t.db.query<{ id: string; activation_status: string; name: string }>(
      'SELECT id, activation_status, name FROM merchants WHERE lower(email) = lower($1)',
      [email],
    );
    assert.equal(merchant!.activation_status, 'not_submitted');
    const [owner] = await t.db.query<{ id: string; name: string; role: string }>(
      'SELECT id, name, role FROM users WHERE merchant_id = $1',
      [merchant!.id],
    );
    assert.deepEqual({ name: owner!.name, role: owner!.role }, { name: 'Ama Mensah', role: 'owner' });
    const keys = await t.db.query<{ environment: string }>('SELECT environment FROM api_keys WHERE merchant_id = $1', [
      merchant!.id,
    ]);
    assert.deepEqual(
      keys.map((k) => k.environment),
      ['test'],
      'a Test key, no Live key',
    );
    const audits = await t.db.query<{ actor_type: string; actor_id: string; action: string }>(
      "SELECT actor_type, actor_id, action FROM audit_log WHERE merchant_id = $1 AND action = 'merchant.signup'",
      [merchant!.id],
    );
    assert.deepEqual(audits, [{ actor_type: 'user', actor_id: owner!.id, action: 'merchant.signup' }]);
    const signup = await t.db.query<{ verified: boolean; password_hash: string | null; merchant_id: string }>(
      'SELECT verified_at IS NOT NULL AS verified, password_hash, merchant_id FROM signups WHERE lower(email) = lower($1)',
      [email],
    );
    assert.deepEqual(signup, [{ verified: true, password_hash: null, merchant_id: merchant!.id }]);

    // Test works at once: a new Test key from the developers page takes a checkout session.
    const developers = await browser.get('/dashboard/developers');
    assert.equal(developers.status, 200);
    const integrationId = /<select id="key-integration" name="integration_id"><option value="([^"]+)"/.exec(
      developers.body,
    )?.[1];
    assert.ok(integrationId, 'the owner may create a Test key');
    const created = await browser.post('/dashboard/keys', {
      _csrf: csrfIn(developers.body),
      integration_id: integrationId,
    });
    assert.equal(created.status, 200, created.body.slice(0, 400));
    const key = /<p class="secret" id="new-api-key">([^<]+)<\/p>/.exec(created.body)?.[1];
    assert.ok(key?.startsWith('ak_test_'), `a Test key: ${key}`);
    const session = await fetch(`${baseUrl}/api/v1/sessions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ amount_minor: 50_000, invoice_ref: `INV-${randomUUID().slice(0, 8)}` }),
    });
    assert.equal(session.status, 201, await session.clone().text());
    assert.equal(((await session.json()) as { livemode: boolean }).livemode, false);

    // And the owner's password signs in from now on.
    const again = new Browser(baseUrl);
    const form = await again.get('/dashboard/login');
    const signedIn = await again.post('/dashboard/login', { _csrf: csrfIn(form.body), email, password: PASSWORD });
    assert.equal(signedIn.status, 303);
  });

  it('a used, an expired and an unknown link all answer the same 410 page with ways to sign up again or sign in', async () => {
    const used = await pendingSignup();
    assert.equal((await used.browser.confirm(used.link)).status, 303);
    const expired = await pendingSignup();
    await t.db.query("UPDATE signups SET expires_at = now() - interval '1 second' WHERE lower(email) = lower($1)", [
      expired.email,
    ]);
    const unknown = `/signup/verify/${'A'.repeat(43)}`;
    const malformed = '/signup/verify/not-a-token';
    const browser = new Browser(baseUrl);
    const pages = await Promise.all([used.link, expired.link, unknown, malformed].map((path) => browser.get(path)));
    for (const answer of pages) {
      assert.equal(answer.status, 410);
      assert.equal(answer.body, pages[0]!.body);
    }
    assert.match(pages[0]!.body, /This link has expired or was already used/);
    assert.match(pages[0]!.body, /href="\/signup"/);
    assert.match(pages[0]!.body, /href="\/dashboard\/login"/);
    // Pressing the button of a page opened before the link died: the same page, nothing made.
    const stale = await new Browser(baseUrl).get('/signup');
    for (const path of [used.link, expired.link, unknown]) {
      const answer = await new Browser(baseUrl).post(path, { _csrf: csrfIn(stale.body) });
      assert.ok(answer.status === 410 || answer.status === 403, `${path}: ${answer.status}`);
    }
    const pressed = new Browser(baseUrl);
    const form = await pressed.get('/signup');
    const late = await pressed.post(expired.link, { _csrf: csrfIn(form.body) });
    assert.equal(late.status, 410);
    assert.equal(await merchantsWith(expired.email), 0);
    assert.equal(await merchantsWith(used.email), 1);
  });

  it('two clicks at once make exactly one merchant: one is signed in, the other told the link was used', async () => {
    const { email, link } = await pendingSignup();
    const browsers = Array.from({ length: 4 }, () => new Browser(baseUrl));
    const pages = await Promise.all(browsers.map((b) => b.get(link)));
    const answers = await Promise.all(browsers.map((b, i) => b.post(link, { _csrf: csrfIn(pages[i]!.body) })));
    assert.deepEqual(answers.map((a) => a.status).sort(), [303, 410, 410, 410]);
    assert.equal(await merchantsWith(email), 1);
    const users = await t.db.query('SELECT 1 FROM users WHERE lower(email) = lower($1)', [email]);
    assert.equal(users.length, 1);
  });

  it('an address that became a user between sign-up and confirmation: a clear 409 page and no second merchant', async () => {
    const { email, link, browser } = await pendingSignup();
    await createMerchant(t.db, { name: 'Got There First', email, password: PASSWORD });
    const answer = await browser.confirm(link);
    assert.equal(answer.status, 409);
    assert.match(answer.body, /This e-mail already has an account/);
    assert.equal(await merchantsWith(email), 1);
    assert.equal(browser.cookie('sika_dashboard'), undefined, 'nobody is signed in');
  });

  it('the purge deletes unverified sign-ups a day past their expiry and keeps the others and verified ones', async () => {
    const old = await pendingSignup();
    const recent = await pendingSignup();
    const verified = await pendingSignup();
    assert.equal((await verified.browser.confirm(verified.link)).status, 303);
    await t.db.query("UPDATE signups SET expires_at = now() - interval '25 hours' WHERE lower(email) = lower($1)", [
      old.email,
    ]);
    await t.db.query("UPDATE signups SET expires_at = now() - interval '1 hour' WHERE lower(email) = lower($1)", [
      recent.email,
    ]);
    await t.db.query(
      "UPDATE signups SET expires_at = now() - interval '30 days', verified_at = now() - interval '30 days' WHERE lower(email) = lower($1)",
      [verified.email],
    );
    assert.ok((await purgeExpiredSignups(t.db)) >= 1);
    const left = async (email: string) =>
      (await t.db.query('SELECT 1 FROM signups WHERE lower(email) = lower($1)', [email])).length;
    assert.equal(await left(old.email), 0, 'expired a day ago: purged');
    assert.equal(await left(recent.email), 1, 'expired an hour ago: kept a while');
    assert.equal(await left(verified.email), 1, 'verified: kept as the record');
    // A purged sign-up's address may sign up again.
    assert.equal((await new Browser(baseUrl).signUp({ email: old.email })).status, 200);
    assert.equal(await left(old.email), 1);
  });
});
