// Shared set-up of the Paystack adapter tests (test/rails/paystack-*.test.ts): the Paystack stand-in
// (./standins/paystack.ts) over real loopback HTTP, a receiver of its webhooks, the adapter on both, and the
// attempts, payouts and look-ups the tests build on them.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, beforeEach } from 'node:test';
import { newId } from '../../src/lib/ids.ts';
import type { PayoutForRail } from '../../src/rails/payouts.ts';
import { createPaystack, type Paystack } from '../../src/rails/paystack/index.ts';
import type { AttemptForRail } from '../../src/rails/types.ts';
import { STAND_IN_GHANA_BANKS, startPaystackStandIn, type PaystackStandIn } from './standins/paystack.ts';

export const SECRET_KEY = 'sk_test_4f1c0ffee0ddba11';
/** Short, so a held request fails the test run in a fraction of a second rather than the default 15 s. */
// Long enough for a loaded 2-core machine to answer a call the stand-in answers; only the three held answers wait it out.
export const TIMEOUT_MS = 2_000;

interface Received {
  raw: Buffer;
  signature: string | undefined;
}

async function startReceiver(): Promise<{ url: string; received: Received[]; close(): Promise<void> }> {
  const received: Received[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const signature = req.headers['x-paystack-signature'];
      received.push({ raw: Buffer.concat(chunks), signature: Array.isArray(signature) ? signature[0] : signature });
      res.writeHead(200).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/paystack`;
  return { url, received, close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
}

// Live bindings: set by the before hook usePaystackStandIn registers, read by the tests when they run.
export let standIn: PaystackStandIn;
let receiver: Awaited<ReturnType<typeof startReceiver>>;
export let paystack: Paystack;

/** An attempt as the attempt flow hands it over: our reference chosen by reference() and stored first. */
export function momoAttempt(overrides: Partial<AttemptForRail> = {}): AttemptForRail {
  const reference = overrides.reference ?? newId('att');
  const rail = overrides.rail ?? 'momo';
  return {
    reference,
    sessionId: newId('cs'),
    environment: 'live',
    rail,
    amountMinor: 2_550,
    currency: 'GHS',
    network: 'mtn',
    phone: '+233551234987',
    providerReference: paystack.collection.reference!({ reference, rail }),
    payerEmail: null,
    returnUrl: 'https://pay.sika.test/pay/cs_x?attempt=att_x',
    ...overrides,
  };
}

export const cardAttempt = (overrides: Partial<AttemptForRail> = {}) =>
  momoAttempt({ rail: 'card', network: null, phone: null, ...overrides });

export function payout(
  recipient: Partial<PayoutForRail['recipient']>,
  overrides: Partial<PayoutForRail> = {},
): PayoutForRail {
  const payoutId = overrides.payoutId ?? newId('po');
  return {
    payoutId,
    reference: `PO-${payoutId.slice(-6).toUpperCase()}`,
    providerReference: paystack.payouts.reference!({ payoutId, reference: '' }),
    amountMinor: 120_000,
    currency: 'GHS',
    recipient: {
      accountType: 'bank',
      bankCode: 'GCB',
      accountNumber: '1020304050',
      network: null,
      phone: null,
      accountName: 'Kofi Boateng',
      ...recipient,
    },
    ...overrides,
  };
}

export const standInCode = (name: string) => STAND_IN_GHANA_BANKS.find((bank) => bank.name === name)!.code;
export const requestsTo = (endpoint: Parameters<PaystackStandIn['count']>[0]) =>
  standIn.requests.filter((request) => request.endpoint === endpoint);
export const lastBody = (endpoint: Parameters<PaystackStandIn['count']>[0]) => requestsTo(endpoint).at(-1)!.body;
/** Paystack's id of a charge (data.id), as the adapter names it. */
export const idOf = (reference: string) => String(standIn.charge(reference)!.id);

export async function deliveredFor(reference: string, event?: string): Promise<Received[]> {
  await standIn.webhooksIdle();
  return receiver.received.filter((delivery) => {
    const parsed = paystack.parseWebhook(JSON.parse(delivery.raw.toString('utf8')));
    return parsed.reference === reference && (!event || parsed.event === event);
  });
}

export async function api(method: string, path: string, body?: unknown, key: string | null = SECRET_KEY) {
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (key !== null) headers.authorization = `Bearer ${key}`;
  const response = await fetch(`${standIn.baseUrl}${path}`, {
    method,
    headers,
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: response.status, json: (await response.json()) as Record<string, unknown> };
}

/** Registers the file's hooks: the webhook receiver, the stand-in and the adapter on it before its tests, closed
 * after them; the stand-in's scripted answers cleared before each test. */
export function usePaystackStandIn(): void {
  before(async () => {
    receiver = await startReceiver();
    standIn = await startPaystackStandIn({ secretKey: SECRET_KEY, webhookUrl: receiver.url });
    paystack = createPaystack({ secretKey: SECRET_KEY, baseUrl: standIn.baseUrl, timeoutMs: TIMEOUT_MS });
  });

  after(async () => {
    await standIn.close();
    await receiver.close();
  });

  beforeEach(() => standIn.clearRules());
}
