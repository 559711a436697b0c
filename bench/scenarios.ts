// What each measured run sends: session create and read (merchant API), the payer's session view, the
// whole payment journey, and Test payouts across ten merchants.
import type { RequestSpec } from 'autocannon';
import type { LoadSpec } from './load.ts';
import type { Fixtures } from './setup.ts';

export const SESSION_BODY = JSON.stringify({
  amount_minor: 50_000,
  invoice_ref: 'INV-BENCH-0001',
  description: 'Benchmark session',
  currency: 'GHS',
  customer: { name: 'Ama Mensah', email: 'ama@example.com' },
  callback_url: 'https://merchant.example.com/return',
  metadata: { source: 'bench', order: '1001' },
});

export interface Target {
  baseUrl: string;
  pid: number;
  usesPostgres: boolean;
}

const spec = (target: Target, label: string, requests: RequestSpec[], extra: Partial<LoadSpec> = {}): LoadSpec => ({
  label,
  url: target.baseUrl,
  serverPid: target.pid,
  usesPostgres: target.usesPostgres,
  method: (requests[0]!.method ?? 'GET') as 'GET' | 'POST',
  path: requests[0]!.path ?? '/',
  requests,
  ...extra,
});

const bearer = (key: string) => ({ authorization: `Bearer ${key}` });

/** POST /api/v1/sessions with a fresh Idempotency-Key per request. */
export const sessionCreate = (target: Target, f: Fixtures, stamp: string): LoadSpec =>
  spec(
    target,
    'POST /api/v1/sessions',
    [
      {
        method: 'POST',
        path: '/api/v1/sessions',
        headers: {
          ...bearer(f.checkout.testKey),
          'content-type': 'application/json',
          'idempotency-key': `bench-${stamp}-[<id>]`,
        },
        body: SESSION_BODY,
      },
    ],
    { idReplacement: true },
  );

export const sessionRead = (target: Target, f: Fixtures, sessionId: string): LoadSpec =>
  spec(target, 'GET /api/v1/sessions/{id}', [
    { method: 'GET', path: `/api/v1/sessions/${sessionId}`, headers: bearer(f.checkout.testKey) },
  ]);

export const checkoutRead = (target: Target, sessionId: string): LoadSpec =>
  spec(target, 'GET /api/v1/checkout/sessions/{id}', [
    { method: 'GET', path: `/api/v1/checkout/sessions/${sessionId}` },
  ]);

/** When each journey started, by session id, and which were paid: the webhook receiver closes the journey. */
export interface JourneyTrack {
  starts: Map<string, number>;
  paid: Set<string>;
}

/**
 * The payment journey, four requests in sequence on each connection: create a session (merchant),
 * quote it and start a MoMo attempt (payer), simulate the payment succeeding (merchant Test key). keys:
 * the merchants' Test keys, taken in turn per journey (one key: every payment to one merchant).
 * The webhook for checkout.session.completed ends it (see the receiver).
 */
export function journey(
  target: Target,
  keys: readonly string[],
  track: JourneyTrack,
  label = 'payment journey',
): LoadSpec {
  const json = { 'content-type': 'application/json' };
  type Ctx = { startedAt?: number; sessionId?: string; totalMinor?: number; attempt?: string; key?: string };
  // Journeys go round the merchants' Test keys: one key = one merchant's balance taking every payment.
  let next = 0;
  const requests: RequestSpec[] = [
    {
      method: 'POST',
      path: '/api/v1/sessions',
      headers: { ...bearer(keys[0]!), ...json },
      body: SESSION_BODY,
      setupRequest: (request, context) => {
        const ctx = context as Ctx;
        ctx.startedAt = Date.now();
        ctx.key = keys[next++ % keys.length]!;
        return { ...request, headers: { ...request.headers, ...bearer(ctx.key) } };
      },
      onResponse: (status, body, context) => {
        const ctx = context as Ctx;
        if (status !== 201) return;
        ctx.sessionId = (JSON.parse(body) as { id: string }).id;
        track.starts.set(ctx.sessionId, ctx.startedAt!);
      },
    },
    {
      method: 'GET',
      setupRequest: (request, context) => ({
        ...request,
        path: `/api/v1/checkout/sessions/${(context as Ctx).sessionId}/quote`,
      }),
      onResponse: (status, body, context) => {
        if (status === 200)
          (context as Ctx).totalMinor = (
            JSON.parse(body) as { surcharges: { momo: { total_minor: number } } }
          ).surcharges.momo.total_minor;
      },
    },
    {
      method: 'POST',
      headers: json,
      setupRequest: (request, context) => {
        const ctx = context as Ctx;
        return {
          ...request,
          path: `/api/v1/checkout/sessions/${ctx.sessionId}/provider-attempts`,
          body: JSON.stringify({ rail: 'momo', amount_minor: ctx.totalMinor, operator: 'mtn', phone: '0241234567' }),
        };
      },
      onResponse: (status, body, context) => {
        if (status === 201)
          (context as Ctx).attempt = (JSON.parse(body) as { attempt_reference: string }).attempt_reference;
      },
    },
    {
      method: 'POST',
      headers: { ...bearer(keys[0]!), ...json },
      body: JSON.stringify({ outcome: 'paid' }),
      setupRequest: (request, context) => ({
        ...request,
        path: `/api/v1/test/payment-attempts/${(context as Ctx).attempt}/simulate`,
        headers: { ...request.headers, ...bearer((context as Ctx).key!) },
      }),
      onResponse: (status, _body, context) => {
        if (status === 200) track.paid.add((context as Ctx).sessionId!);
      },
    },
  ];
  return {
    ...spec(target, label, requests, { requestsPerUnit: requests.length }),
    method: 'POST',
    path: '/api/v1/sessions -> quote -> attempt -> simulate',
  };
}

/** POST /api/v1/payouts, GH₵1 to a MoMo recipient, round-robin over the ten payout merchants. */
export function payouts(target: Target, f: Fixtures, stamp: string): LoadSpec {
  let n = 0;
  const request: RequestSpec = {
    method: 'POST',
    path: '/api/v1/payouts',
    headers: { 'content-type': 'application/json' },
    setupRequest: (req) => {
      const m = f.payouts[n % f.payouts.length]!;
      n++;
      return {
        ...req,
        headers: { ...req.headers, ...bearer(m.testKey) },
        body: JSON.stringify({
          recipient_id: m.recipientId,
          amount_minor: 100,
          client_reference: `bench-${stamp}-${n}`,
        }),
      };
    },
  };
  return spec(target, `POST /api/v1/payouts (${f.payouts.length} merchants)`, [request]);
}
