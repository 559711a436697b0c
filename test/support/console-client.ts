// A browser stand-in for the console tests that run through inject: the sign-in form with its CSRF
// cookie, the session cookie, the trusted-device cookie (kept like a browser keeps it), each page's CSRF
// token, and the client address (request.ip) of every request, so tests can sign in from several addresses.
import assert from 'node:assert/strict';
import type { LightMyRequestResponse } from 'fastify';
import { setTimeout as sleep } from 'node:timers/promises';
import { totpCode, totpStep, TOTP_PERIOD_S } from '../../src/accounts/totp.ts';
import { newPaymentReference } from '../../src/rails/bank-transfer/reference.ts';
import type { TestContext } from './helpers.ts';

export type Base = '/dashboard' | '/ops';
const SESSION_COOKIE: Record<Base, string> = { '/dashboard': 'sika_dashboard', '/ops': 'sika_ops' };
export const DEVICE_COOKIE: Record<Base, string> = { '/dashboard': 'sika_dashboard_device', '/ops': 'sika_ops_device' };

export const cookieOf = (res: LightMyRequestResponse, name: string): string | undefined =>
  res.cookies.find((c) => c.name === name)?.value;
export const csrfIn = (body: string): string | undefined => /name="_csrf" value="([^"]+)"/.exec(body)?.[1];
/** The text of the flash message on a console page (role alert or status). */
export const flashOf = (body: string): string =>
  /class="flash[^"]*" role="(?:alert|status)">([^<]*)</.exec(body)?.[1] ?? '';

/**
 * A throttled answer announces the delay the last counted failure set, less the time gone since:
 * Retry-After rounds the time left up, so it is the delay itself unless that failure was counted more
 * than a second before the refusal (a slow or busy machine). `since` is when the request that set the
 * delay was sent; with `flash`, the page must say the same number of seconds.
 */
export function assertWaits(
  res: LightMyRequestResponse,
  delayS: number,
  since: number,
  { flash = false } = {},
): number {
  assert.equal(res.statusCode, 429);
  const header = String(res.headers['retry-after']);
  const seconds = Number(header);
  const gone = Math.ceil((Date.now() - since) / 1000);
  assert.ok(
    /^\d+$/.test(header) && seconds <= delayS && seconds >= Math.max(1, delayS - gone),
    `Retry-After ${header}, expected ${delayS} less at most the ${gone} s gone since the failure that set it`,
  );
  if (flash) assert.equal(flashOf(res.body), `Too many attempts. Try again in ${seconds} seconds.`);
  return seconds;
}

/**
 * Operators must use a second factor (issue 30). The sign-in helpers below (ConsoleClient, HttpConsole and
 * the browser's signIn) complete an operator's sign-in as a person would: an operator without one yet is
 * sent to enrol, and the helper enrols with the secret the page shows and keeps it here (by lower-cased
 * email, with the last time step it used and the recovery codes shown); later sign-ins answer the code step.
 */
export const operatorSecondFactors = new Map<string, { secret: string; lastStep: number; recoveryCodes: string[] }>();

/** The enrolment page's secret (shown in groups of four). */
export const secretIn = (body: string): string | undefined =>
  /id="totp-secret">([A-Z2-7 ]+)</.exec(body)?.[1]?.replace(/\s+/g, '');
export const recoveryCodesIn = (body: string): string[] =>
  [...body.matchAll(/<li>([0-9a-z]{4}-[0-9a-z]{4}-[0-9a-z]{4}-[0-9a-z]{4})<\/li>/g)].map((m) => m[1]!);

/** Keeps an enrolled operator's secret (the step its confirming code used is used up). */
export function rememberSecondFactor(email: string, secret: string, step: number, recoveryCodes: string[]): void {
  operatorSecondFactors.set(email.toLowerCase(), { secret, lastStep: step, recoveryCodes });
}

/**
 * A code of the operator's known secret for a time step not used yet: the current step or the next (both
 * accepted whatever the server's clock does in between), else it waits for the next step, since a code's
 * step is never accepted twice.
 */
export async function freshTotpCode(email: string): Promise<string> {
  const known = operatorSecondFactors.get(email.toLowerCase());
  assert.ok(known, `no known second factor for ${email}: sign in once with signedIn() to enrol it`);
  for (;;) {
    const current = totpStep(Date.now());
    const step = Math.max(known.lastStep + 1, current);
    if (step <= current + 1) {
      known.lastStep = step;
      return totpCode(known.secret, step * TOTP_PERIOD_S * 1000);
    }
    await sleep((current + 1) * TOTP_PERIOD_S * 1000 - Date.now() + 50);
  }
}

export class ConsoleClient {
  session: string | null = null;
  csrf: string | null = null;
  /** The device cookie this browser holds (set by a complete sign-in; tests may set or clear it). */
  device: string | null = null;

  constructor(
    readonly t: TestContext,
    readonly base: Base = '/dashboard',
    readonly address = '203.0.113.10',
  ) {}

  /** Posts the sign-in form (with a fresh form CSRF token); keeps the session cookie when one is set. */
  async signIn(email: string, password: string): Promise<LightMyRequestResponse> {
    const form = await this.t.app.inject({ method: 'GET', url: `${this.base}/login`, remoteAddress: this.address });
    const loginCsrf = cookieOf(form, 'sika_login_csrf');
    assert.ok(loginCsrf, 'the sign-in form sets its CSRF cookie');
    const res = await this.t.app.inject({
      method: 'POST',
      url: `${this.base}/login`,
      remoteAddress: this.address,
      headers: {
        cookie: [`sika_login_csrf=${loginCsrf}`, ...this.deviceCookie()].join('; '),
        'content-type': 'application/x-www-form-urlencoded',
      },
      payload: new URLSearchParams({ _csrf: loginCsrf, email, password }).toString(),
    });
    const token = cookieOf(res, SESSION_COOKIE[this.base]);
    if (token) {
      this.session = token;
      this.csrf = null;
    }
    this.keepDevice(res);
    return res;
  }

  /**
   * Signs in and checks it opened the console (a dashboard user without a second factor). An operator's
   * sign-in is completed: the code step answered with the known secret, or the second factor enrolled
   * when the console sends there first (operatorSecondFactors).
   */
  async signedIn(email: string, password: string): Promise<this> {
    const res = await this.signIn(email, password);
    assert.equal(res.statusCode, 303, `sign-in as ${email}: ${res.statusCode} ${res.body.slice(0, 300)}`);
    if (this.base === '/ops') {
      await this.completeOperatorSignIn(res, email, password);
      return this;
    }
    assert.equal(res.headers.location, this.base);
    return this;
  }

  /** After an operator's right password: the code step, or the enrolment the console requires first. */
  async completeOperatorSignIn(res: LightMyRequestResponse, email: string, password: string): Promise<void> {
    if (res.headers.location === '/ops/login/code') {
      await this.get('/ops/login/code');
      const answered = await this.post('/ops/login/code', { code: await freshTotpCode(email) });
      assert.equal(
        answered.statusCode,
        303,
        `the code step of ${email}: ${answered.statusCode} ${answered.body.slice(0, 300)}`,
      );
      assert.equal(answered.headers.location, '/ops');
    } else assert.equal(res.headers.location, '/ops');
    const home = await this.get('/ops');
    if (home.statusCode === 303 && home.headers.location === '/ops/account/2fa')
      await this.enrolOperator(email, password);
  }

  /** Enrols the signed-in operator's second factor through the page, as a person would, and keeps the secret. */
  async enrolOperator(email: string, password: string): Promise<{ secret: string; recoveryCodes: string[] }> {
    const page = await this.get('/ops/account/2fa');
    const secret = secretIn(page.body);
    assert.ok(secret, `the enrolment page shows the secret: ${page.statusCode} ${page.body.slice(0, 300)}`);
    const step = totpStep(Date.now());
    const done = await this.post('/ops/account/2fa', {
      code: totpCode(secret, step * TOTP_PERIOD_S * 1000),
      current_password: password,
    });
    const recoveryCodes = recoveryCodesIn(done.body);
    assert.equal(done.statusCode, 200, done.body.slice(0, 300));
    assert.equal(recoveryCodes.length, 10, 'ten recovery codes are shown once');
    rememberSecondFactor(email, secret, step, recoveryCodes);
    return { secret, recoveryCodes };
  }

  private deviceCookie(): string[] {
    return this.device ? [`${DEVICE_COOKIE[this.base]}=${this.device}`] : [];
  }

  private keepDevice(res: LightMyRequestResponse): void {
    const device = cookieOf(res, DEVICE_COOKIE[this.base]);
    if (device) this.device = device;
  }

  private headers(extra: Record<string, string> = {}): Record<string, string> {
    const cookies = [...(this.session ? [`${SESSION_COOKIE[this.base]}=${this.session}`] : []), ...this.deviceCookie()];
    return { ...(cookies.length > 0 ? { cookie: cookies.join('; ') } : {}), ...extra };
  }

  async get(url: string): Promise<LightMyRequestResponse> {
    const res = await this.t.app.inject({ method: 'GET', url, remoteAddress: this.address, headers: this.headers() });
    const token = csrfIn(res.body);
    if (res.statusCode === 200 && token) this.csrf = token;
    const rotated = cookieOf(res, SESSION_COOKIE[this.base]);
    if (rotated) this.session = rotated;
    this.keepDevice(res);
    return res;
  }

  /** Posts a form with this session's CSRF token (read from a page first when not known yet); fields may repeat. */
  async post(url: string, fields: Record<string, string> | [string, string][] = {}): Promise<LightMyRequestResponse> {
    if (!this.csrf) {
      const page = await this.get(this.base === '/dashboard' ? '/dashboard/account' : '/ops');
      this.csrf = csrfIn(page.body) ?? null;
      assert.ok(this.csrf, `a page to read the CSRF token from: ${page.statusCode} ${page.body.slice(0, 200)}`);
    }
    const pairs = Array.isArray(fields) ? fields : Object.entries(fields);
    const res = await this.t.app.inject({
      method: 'POST',
      url,
      remoteAddress: this.address,
      headers: this.headers({ 'content-type': 'application/x-www-form-urlencoded' }),
      payload: new URLSearchParams([['_csrf', this.csrf!], ...pairs]).toString(),
    });
    const rotated = cookieOf(res, SESSION_COOKIE[this.base]);
    if (rotated) {
      this.session = rotated;
      this.csrf = null;
    }
    this.keepDevice(res);
    return res;
  }
}

/** A console page or form answer read over real HTTP. */
export interface HttpAnswer {
  status: number;
  type: string;
  body: string;
}

/**
 * A browser over real HTTP (the app listening, t.listen()): the sign-in form with its CSRF cookie, the
 * session cookie, each page's CSRF token, forms posted url-encoded. Redirects are not followed.
 */
export class HttpConsole {
  private cookie = '';
  private csrf = '';

  constructor(
    readonly baseUrl: string,
    readonly base: Base = '/dashboard',
  ) {}

  private static setCookie(res: Response, name: string): string | undefined {
    return res.headers
      .getSetCookie()
      .find((c) => c.startsWith(`${name}=`))
      ?.slice(name.length + 1)
      .split(';')[0];
  }

  private async answer(res: Response): Promise<HttpAnswer> {
    const body = await res.text();
    const rotated = HttpConsole.setCookie(res, SESSION_COOKIE[this.base]);
    if (rotated) this.cookie = `${SESSION_COOKIE[this.base]}=${rotated}`;
    const token = csrfIn(body);
    if (res.status === 200 && token) this.csrf = token;
    return { status: res.status, type: res.headers.get('content-type') ?? '', body };
  }

  async signedIn(email: string, password: string): Promise<this> {
    const form = await fetch(`${this.baseUrl}${this.base}/login`, {
      redirect: 'manual',
      signal: AbortSignal.timeout(10_000),
    });
    const loginCsrf = HttpConsole.setCookie(form, 'sika_login_csrf');
    await form.text();
    assert.ok(loginCsrf, 'the sign-in form sets its CSRF cookie');
    const login = await fetch(`${this.baseUrl}${this.base}/login`, {
      method: 'POST',
      redirect: 'manual',
      headers: { cookie: `sika_login_csrf=${loginCsrf}`, 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ _csrf: loginCsrf, email, password }).toString(),
      signal: AbortSignal.timeout(10_000),
    });
    const token = HttpConsole.setCookie(login, SESSION_COOKIE[this.base]);
    assert.equal(login.status, 303, `sign-in as ${email}: ${(await login.text()).slice(0, 300)}`);
    assert.ok(token, 'signed in');
    this.cookie = `${SESSION_COOKIE[this.base]}=${token}`;
    // An operator: the code step with the known secret, or the enrolment the console requires first.
    if (login.headers.get('location') === '/ops/login/code') {
      await this.get('/ops/login/code');
      const answered = await this.post('/ops/login/code', { code: await freshTotpCode(email) });
      assert.equal(answered.status, 303, `the code step of ${email}: ${answered.body.slice(0, 300)}`);
    }
    let home = await this.get(this.base);
    if (this.base === '/ops' && home.status === 303) {
      const page = await this.get('/ops/account/2fa');
      const secret = secretIn(page.body);
      assert.ok(secret, `the enrolment page shows the secret: ${page.body.slice(0, 300)}`);
      const step = totpStep(Date.now());
      const done = await this.post('/ops/account/2fa', {
        code: totpCode(secret, step * TOTP_PERIOD_S * 1000),
        current_password: password,
      });
      assert.equal(done.status, 200, done.body.slice(0, 300));
      rememberSecondFactor(email, secret, step, recoveryCodesIn(done.body));
      home = await this.get(this.base);
    }
    assert.equal(home.status, 200, home.body.slice(0, 300));
    assert.ok(this.csrf, 'the console pages carry a CSRF token');
    return this;
  }

  async get(path: string): Promise<HttpAnswer> {
    return this.answer(
      await fetch(`${this.baseUrl}${path}`, {
        headers: { cookie: this.cookie },
        redirect: 'manual',
        signal: AbortSignal.timeout(10_000),
      }),
    );
  }

  /** Posts a form with this session's CSRF token; fields may repeat. */
  async post(path: string, fields: Record<string, string> | [string, string][] = {}): Promise<HttpAnswer> {
    const pairs = Array.isArray(fields) ? fields : Object.entries(fields);
    const res = await fetch(`${this.baseUrl}${path}`, {
      method: 'POST',
      redirect: 'manual',
      headers: { cookie: this.cookie, 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams([['_csrf', this.csrf], ...pairs]).toString(),
      signal: AbortSignal.timeout(10_000),
    });
    return this.answer(res);
  }
}

/** A console route's input schema part (body or querystring), as the tests read it. */
export interface FormSchema {
  required?: string[];
  properties?: Record<
    string,
    {
      enum?: unknown[];
      examples?: unknown[];
      pattern?: string;
      format?: string;
      description?: string;
      maxLength?: number;
    }
  >;
}

/** Text for the required free-text fields of the console forms (what a person would type). */
const FREE_TEXT: Record<string, () => string> = {
  url: () => 'https://example.com/sika/hook',
  email: () => `invited-${Math.random().toString(36).slice(2, 10)}@example.com`,
  code: () => `C${Math.random().toString(36).slice(2, 7).toUpperCase()}`,
  // A payment reference as the statements queue takes it (SK and 8 characters).
  reference: () => newPaymentReference(),
};

/**
 * A form (or query) its schema accepts: each required field, and each field with an example (its first
 * value), unless `values` names it; the required free text from FREE_TEXT or a plain word.
 */
export function validForm(schema: FormSchema | undefined, values: Record<string, string> = {}): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, field] of Object.entries(schema?.properties ?? {})) {
    if (name === '_csrf') continue;
    if (name in values) out[name] = values[name]!;
    else if (field.examples?.length) out[name] = String(field.examples[0]);
    else if (schema?.required?.includes(name)) out[name] = FREE_TEXT[name]?.() ?? 'Checked by a test';
  }
  for (const [name, value] of Object.entries(values)) if (!(name in out)) out[name] = value;
  return out;
}
