// Live end-to-end support: the app on a known loopback port (so providers can call it back), configured
// with the provider stand-ins' base URLs, and payer / merchant steps over real HTTP.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { createServer } from 'node:net';
import type { CreatedMerchant } from '../../src/accounts/service.ts';
import { createLiveProviders } from '../../src/rails/live-config.ts';
import type { LiveProviders } from '../../src/rails/live.ts';
import { startTestApp, type TestContext } from './helpers.ts';
import { useStarted } from './hooks.ts';
import { mtnMomoSettings, type AccountHolder, type MtnMomoStandIn, startMtnMomoStandIn } from './standins/mtn-momo.ts';
import { startPaystackStandIn, type PaystackStandIn } from './standins/paystack.ts';

export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

export interface LiveApp {
  t: TestContext;
  baseUrl: string;
  /** JSON over real HTTP against the listening app. */
  http(
    method: string,
    path: string,
    options?: { key?: string; body?: unknown; headers?: Record<string, string> },
    // biome-ignore lint/suspicious/noExplicitAny: every answer's JSON, read by the tests field by field as each expects
  ): Promise<{ status: number; headers: Headers; json: any; text: string }>;
}

/** Starts the app listening on `port` with BASE_URL pointing at it, and the given provider settings. */
export async function startLiveApp(port: number, env: Record<string, string>): Promise<LiveApp> {
  const baseUrl = `http://127.0.0.1:${port}`;
  const t = await startTestApp({ BASE_URL: baseUrl, PORT: String(port), PROVIDER_TIMEOUT_MS: '2000', ...env });
  await t.listen();
  return {
    t,
    baseUrl,
    async http(method, path, options = {}) {
      const headers: Record<string, string> = { ...options.headers };
      if (options.key) headers.authorization = `Bearer ${options.key}`;
      if (options.body !== undefined) headers['content-type'] = 'application/json';
      const res = await fetch(`${baseUrl}${path}`, {
        method,
        headers,
        body: options.body === undefined ? undefined : JSON.stringify(options.body),
      });
      const text = await res.text();
      let json: unknown = null;
      try {
        json = text ? JSON.parse(text) : null;
      } catch {
        json = null;
      }
      return { status: res.status, headers: res.headers, json, text };
    },
  };
}

export interface LiveWithStandIns {
  app: LiveApp;
  /** Paystack's stand-in, its webhooks sent to the app. */
  paystack: PaystackStandIn;
  mtn: MtnMomoStandIn;
  /** The providers the app's configuration enables, for driving the workers (status checks, refunds). */
  providers: LiveProviders;
  /** Closes the app, then both stand-ins. */
  close(): Promise<void>;
}

/**
 * The app in Live on a free port with both stand-ins: Paystack (`secretKey`, its webhooks sent to the app) and
 * MTN MoMo (collection and disbursement unless `mtnProducts` says 'collection'); `env` adds or overrides settings.
 */
export async function startLiveWithStandIns(options: {
  secretKey: string;
  mtnProducts?: 'collection' | 'both';
  env?: Record<string, string>;
}): Promise<LiveWithStandIns> {
  const port = await freePort();
  const paystack = await startPaystackStandIn({
    secretKey: options.secretKey,
    webhookUrl: `http://127.0.0.1:${port}/api/v1/providers/paystack/webhook`,
  });
  const mtn = await startMtnMomoStandIn();
  const app = await startLiveApp(port, {
    PAYSTACK_SECRET_KEY: options.secretKey,
    PAYSTACK_BASE_URL: paystack.baseUrl,
    ...mtnMomoSettings(mtn.baseUrl, options.mtnProducts),
    ...options.env,
  });
  return {
    app,
    paystack,
    mtn,
    providers: createLiveProviders(app.t.config),
    async close() {
      await app.t.close();
      await paystack.close();
      await mtn.close();
    },
  };
}

/** Registers a before hook that starts startLiveWithStandIns(options) and hands it to `ready`, and an after hook that closes it. */
export function useLiveWithStandIns(
  options: Parameters<typeof startLiveWithStandIns>[0],
  ready: (live: LiveWithStandIns) => void | Promise<void>,
): void {
  useStarted(() => startLiveWithStandIns(options), ready);
}

export interface LiveWithMtnMomo {
  app: LiveApp;
  mtn: MtnMomoStandIn;
  /** Closes the app, then the stand-in. */
  close(): Promise<void>;
}

/**
 * The app in Live on a free port with MTN MoMo's stand-in as its only provider (collection and disbursement, first
 * in LIVE_PROVIDER_ORDER, target environment mtnghana); `accountHolders` are the wallets the stand-in knows by MSISDN.
 */
export async function startLiveWithMtnMomo(accountHolders: Record<string, AccountHolder>): Promise<LiveWithMtnMomo> {
  const mtn = await startMtnMomoStandIn({ accountHolders });
  try {
    const port = await freePort();
    const app = await startLiveApp(port, {
      LIVE_PROVIDER_ORDER: 'mtn_momo,paystack',
      ...mtnMomoSettings(mtn.baseUrl),
      MTN_MOMO_TARGET_ENVIRONMENT: 'mtnghana',
    });
    return {
      app,
      mtn,
      async close() {
        await app.t.close();
        await mtn.close();
      },
    };
  } catch (error) {
    await mtn.close();
    throw error;
  }
}

/** Registers a before hook that starts startLiveWithMtnMomo(accountHolders) and hands it to `ready`, and an after hook that closes it. */
export function useLiveWithMtnMomo(
  accountHolders: Record<string, AccountHolder>,
  ready: (live: LiveWithMtnMomo) => void | Promise<void>,
): void {
  useStarted(() => startLiveWithMtnMomo(accountHolders), ready);
}

/** A Live session of `amount` pesewas created with the merchant's Live key. */
export async function liveSession(
  app: LiveApp,
  m: CreatedMerchant,
  amountMinor = 10_000,
  extra: Record<string, unknown> = {},
) {
  const res = await app.http('POST', '/api/v1/sessions', {
    key: m.live_api_key,
    body: { amount_minor: amountMinor, invoice_ref: `INV-${randomUUID().slice(0, 8)}`, ...extra },
  });
  assert.equal(res.status, 201, res.text);
  return res.json as { id: string; amount_minor: number; status: string };
}

export async function quoteTotal(app: LiveApp, sessionId: string, rail: string): Promise<number> {
  const res = await app.http('GET', `/api/v1/checkout/sessions/${sessionId}/quote`);
  assert.equal(res.status, 200, res.text);
  return res.json.surcharges[rail].total_minor as number;
}

export async function payerAttempt(app: LiveApp, sessionId: string, body: Record<string, unknown>) {
  const amount = body.amount_minor ?? (await quoteTotal(app, sessionId, String(body.rail)));
  return app.http('POST', `/api/v1/checkout/sessions/${sessionId}/provider-attempts`, {
    body: { ...body, amount_minor: amount },
  });
}

export const attemptStatus = (app: LiveApp, sessionId: string, attemptId: string, refresh = true) =>
  app.http(
    'GET',
    `/api/v1/checkout/sessions/${sessionId}/provider-attempts/${attemptId}${refresh ? '?refresh=true' : ''}`,
  );

export const merchantSession = (app: LiveApp, m: CreatedMerchant, sessionId: string) =>
  app.http('GET', `/api/v1/sessions/${sessionId}`, { key: m.live_api_key });

/** Polls `check` until it returns a value (not undefined) or the time runs out. */
export async function eventually<T>(check: () => Promise<T | undefined>, timeoutMs = 5_000, stepMs = 50): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, stepMs));
  }
}

/** Reads a row, and while `until` does not hold advances the worker (ten passes at most); the last row read. */
export async function driveUntil<R>(
  read: () => Promise<R>,
  advance: () => Promise<unknown>,
  until: (r: R) => boolean,
): Promise<R> {
  for (let i = 0; i < 10; i++) {
    const r = await read();
    if (until(r)) return r;
    await advance();
  }
  return read();
}
