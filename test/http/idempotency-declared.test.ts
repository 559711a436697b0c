// Every POST honours Idempotency-Key or has a documented replay rule of its own (issue 29, item 2). The
// operations come from the served API document (GET /openapi.json), never from a list kept here: an
// operation that takes an API key must document the header and prove it, by sending the same request twice
// (the effect happens once, the answer is replayed) and a changed one (422 IDEMPOTENCY_KEY_REUSED); a public
// operation (payer, provider notification: security []) takes no key and proves its own rule. A new POST
// without its fixture below, or with an API key and without `config: { idempotent: true }`, fails here.
import assert from 'node:assert/strict';
import { createHmac, randomUUID } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { after, before, describe, it } from 'node:test';
import Fastify, { type LightMyRequestResponse } from 'fastify';
import type { CreatedMerchant } from '../../src/accounts/service.ts';
import { RESENDS_MAX } from '../../src/checkout/attempts.ts';
import { registerIdempotentRoutes } from '../../src/http/idempotency.ts';
import { IdempotencyHeaders } from '../../src/http/schemas.ts';
import { createSession, momoBody, simulate, startAttempt, TELECEL_PHONE, totalOf } from '../support/checkout.ts';
import { startTestApp, storageKind, type TestContext } from '../support/helpers.ts';
import { assertErrorEnvelope, call, multipartFile, syncCodes, type Json } from '../support/http.ts';
import { api, bankRecipient, createPayout, fund, merchantWithHooks } from '../support/payouts-fixtures.ts';

/** What a routes file must not call: the idempotency plumbing runs from the hook alone. */
const BY_HAND = ['idempotencyKeyOf', 'requestHash', 'runIdempotent', 'insertOnce', 'sendOutcome'];
const PAYSTACK_SECRET = 'sk_test_idempotency_walk';
/** A port nothing listens on: the provider routes below name no transaction of ours, so nothing is ever asked. */
const NO_PROVIDER = 'http://127.0.0.1:9';

const SRC = new URL('../../src/', import.meta.url).pathname;
const routesFiles = (dir: string): string[] =>
  readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory()
      ? routesFiles(join(dir, entry.name))
      : entry.name.endsWith('routes.ts')
        ? [join(dir, entry.name)]
        : [],
  );

interface Operation {
  parameters?: { in: string; name: string; description?: string }[];
  security?: Record<string, string[]>[];
  description?: string;
}

/** One request of a keyed fixture: a JSON body, or a multipart upload of one file; to the case's path unless it names another. */
interface Sent {
  body?: Record<string, Json>;
  file?: Buffer;
  path?: string;
}

/** What a keyed operation is proven with: its path, the request, a changed request, and what its effect changes. */
interface KeyedCase {
  path: string;
  key: string;
  same: Sent;
  changed: Sent;
  /** A snapshot of what the effect writes (a count, or row versions): changed by the first request, never by a replay. Null: no effect to see (the answer's random ids prove it). */
  effect: (() => Promise<string>) | null;
}

type Ctx = { t: TestContext };

const count = (t: TestContext, sql: string, params: unknown[]) => async () =>
  String((await t.db.query<{ n: number }>(sql, params))[0]!.n);
/** The row versions (xmin) of what a query selects: an UPDATE, even to the same values, changes them. */
const versions = (t: TestContext, table: string, where: string, params: unknown[]) => async () =>
  (
    await t.db.query<{ v: string }>(
      `SELECT coalesce(string_agg(xmin::text, ',' ORDER BY xmin::text), '') AS v FROM ${table} WHERE ${where}`,
      params,
    )
  )[0]!.v;

async function fundedPayoutMerchant(t: TestContext) {
  const m = await merchantWithHooks(t);
  await fund(t, m.merchant_id, 'test', 1_000_000);
  const recipient = await bankRecipient(t, m.test_api_key);
  return { m, recipient };
}

async function paidSession(t: TestContext, m: CreatedMerchant) {
  const session = await createSession(t, m);
  const attempt = await startAttempt(t, session.id, momoBody(50000));
  await simulate(t, m, attempt.attempt_reference, 'paid');
  return session;
}

async function eventOf(t: TestContext, m: CreatedMerchant): Promise<{ id: string; created_at: string }> {
  const recipient = await bankRecipient(t, m.test_api_key);
  await fund(t, m.merchant_id, 'test', 100_000);
  await createPayout(t, m.test_api_key, recipient.id, 100);
  const list = await call(t, 'GET', '/api/v1/events', { key: m.test_api_key });
  assert.equal(list.statusCode, 200, list.body);
  return list.json().data[0];
}

const PNG = (tail: string) =>
  Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), Buffer.from(tail)]);

/** Every POST that takes an API key: how to prove it honours Idempotency-Key. */
const KEYED: Record<string, (c: Ctx) => Promise<KeyedCase>> = {
  'POST /api/v1/sessions': async ({ t }) => {
    const m = await t.merchant();
    return {
      path: '/api/v1/sessions',
      key: m.test_api_key,
      same: { body: { amount_minor: 100, invoice_ref: 'INV-WALK' } },
      changed: { body: { amount_minor: 101, invoice_ref: 'INV-WALK' } },
      effect: count(t, 'SELECT count(*)::int AS n FROM checkout_sessions WHERE merchant_id = $1', [m.merchant_id]),
    };
  },
  'POST /api/v1/payment-links': async ({ t }) => {
    const m = await t.merchant();
    return {
      path: '/api/v1/payment-links',
      key: m.test_api_key,
      same: { body: { name: 'Walk fees', amount_minor: 100 } },
      changed: { body: { name: 'Walk fees', amount_minor: 101 } },
      effect: count(t, 'SELECT count(*)::int AS n FROM payment_links WHERE merchant_id = $1', [m.merchant_id]),
    };
  },
  'POST /api/v1/payment-links/{id}': async ({ t }) => {
    const m = await t.merchant();
    const link = await call(t, 'POST', '/api/v1/payment-links', {
      key: m.test_api_key,
      body: { name: 'Walk fees', amount_minor: 100 },
    });
    assert.equal(link.statusCode, 201, link.body);
    const id = link.json().id as string;
    return {
      path: `/api/v1/payment-links/${id}`,
      key: m.test_api_key,
      same: { body: { name: 'Walk fees, term 2' } },
      changed: { body: { name: 'Walk fees, term 3' } },
      effect: versions(t, 'payment_links', 'id = $1', [id]),
    };
  },
  'POST /api/v1/invoice-lines': async ({ t }) => {
    const m = await t.merchant();
    await syncCodes(t, m.test_api_key, [{ code: 'TUITION', name: 'Tuition' }]);
    const line = { code: 'TUITION', name: 'Tuition', amount_minor: 100 };
    return {
      path: '/api/v1/invoice-lines',
      key: m.test_api_key,
      same: { body: { invoice_ref: 'INV-WALK', currency: 'GHS', lines: [line] } },
      changed: { body: { invoice_ref: 'INV-WALK', currency: 'GHS', lines: [{ ...line, amount_minor: 200 }] } },
      effect: versions(t, 'invoice_lines', 'merchant_id = $1', [m.merchant_id]),
    };
  },
  'POST /api/v1/revenue-lines': async ({ t }) => {
    const m = await t.merchant();
    return {
      path: '/api/v1/revenue-lines',
      key: m.test_api_key,
      same: { body: { lines: [{ code: 'FEES', name: 'Fees' }] } },
      changed: { body: { lines: [{ code: 'FEES', name: 'School fees' }] } },
      effect: versions(t, 'revenue_lines', 'merchant_id = $1', [m.merchant_id]),
    };
  },
  'POST /api/v1/test/payment-attempts/{reference}/simulate': async ({ t }) => {
    const m = await t.merchant();
    const session = await createSession(t, m);
    const attempt = await startAttempt(t, session.id, momoBody(50000));
    return {
      path: `/api/v1/test/payment-attempts/${attempt.attempt_reference}/simulate`,
      key: m.test_api_key,
      same: { body: { outcome: 'paid' } },
      changed: { body: { outcome: 'failed' } },
      effect: versions(t, 'payment_attempts', 'id = $1', [attempt.attempt_reference]),
    };
  },
  'POST /api/v1/refunds': async ({ t }) => {
    const m = await t.merchant();
    const session = await paidSession(t, m);
    return {
      path: '/api/v1/refunds',
      key: m.test_api_key,
      same: { body: { session_id: session.id, amount_minor: 100 } },
      changed: { body: { session_id: session.id, amount_minor: 200 } },
      effect: count(t, 'SELECT count(*)::int AS n FROM refunds WHERE merchant_id = $1', [m.merchant_id]),
    };
  },
  'POST /api/v1/test/refunds/{id}/simulate': async ({ t }) => {
    const m = await t.merchant();
    const session = await paidSession(t, m);
    const refund = await call(t, 'POST', '/api/v1/refunds', {
      key: m.test_api_key,
      body: { session_id: session.id, amount_minor: 100, test_outcome: 'pending' },
    });
    assert.equal(refund.statusCode, 201, refund.body);
    const id = refund.json().id as string;
    return {
      path: `/api/v1/test/refunds/${id}/simulate`,
      key: m.test_api_key,
      same: { body: { outcome: 'succeeded' } },
      changed: { body: { outcome: 'failed' } },
      effect: versions(t, 'refunds', 'id = $1', [id]),
    };
  },
  'POST /api/v1/payouts/recipients': async ({ t }) => {
    const m = await merchantWithHooks(t);
    const [bankId] = (await api(t, m.test_api_key, 'GET', '/api/v1/payouts/capabilities'))
      .json()
      .banks.map((b: { id: string }) => b.id);
    const body = { bank_id: bankId, account_number: '1234567890', account_name: 'Kofi Mensah' };
    return {
      path: '/api/v1/payouts/recipients',
      key: m.test_api_key,
      same: { body },
      changed: { body: { ...body, account_number: '1234567891' } },
      effect: count(t, 'SELECT count(*)::int AS n FROM recipients WHERE merchant_id = $1', [m.merchant_id]),
    };
  },
  // Issue 34: a save of the settlement schedule (every save moves its version on).
  'POST /api/v1/settlements/schedule': async ({ t }) => {
    const m = await merchantWithHooks(t);
    return {
      path: '/api/v1/settlements/schedule',
      key: m.test_api_key,
      same: { body: { minimum_minor: 100 } },
      changed: { body: { minimum_minor: 101 } },
      effect: versions(t, 'settlement_schedules', 'merchant_id = $1', [m.merchant_id]),
    };
  },
  // Issue 34: a rehearsal moves the merchant's clock (and may settle): a replay moves nothing.
  'POST /api/v1/test/settlements/run': async ({ t }) => {
    const m = await merchantWithHooks(t);
    const asOf = new Date(Date.now() + 86_400_000);
    return {
      path: '/api/v1/test/settlements/run',
      key: m.test_api_key,
      same: { body: { as_of: asOf.toISOString() } },
      changed: { body: { as_of: new Date(asOf.getTime() + 1).toISOString() } },
      effect: versions(t, 'settlement_schedules', 'merchant_id = $1', [m.merchant_id]),
    };
  },
  // A quote writes nothing; its quote_id is random, so the same quote_id in the second answer proves the replay.
  'POST /api/v1/payouts/quote': async ({ t }) => {
    const { m, recipient } = await fundedPayoutMerchant(t);
    return {
      path: '/api/v1/payouts/quote',
      key: m.test_api_key,
      same: { body: { recipient_id: recipient.id, amount_minor: 100 } },
      changed: { body: { recipient_id: recipient.id, amount_minor: 101 } },
      effect: null,
    };
  },
  'POST /api/v1/payouts': async ({ t }) => {
    const { m, recipient } = await fundedPayoutMerchant(t);
    const body = { recipient_id: recipient.id, amount_minor: 100, client_reference: `walk-${randomUUID()}` };
    return {
      path: '/api/v1/payouts',
      key: m.test_api_key,
      same: { body },
      changed: { body: { ...body, amount_minor: 101 } },
      effect: count(t, 'SELECT count(*)::int AS n FROM payouts WHERE merchant_id = $1', [m.merchant_id]),
    };
  },
  'POST /api/v1/payouts/{payout_id}/cancel': async ({ t }) => {
    const { m, recipient } = await fundedPayoutMerchant(t);
    const payout = await createPayout(t, m.test_api_key, recipient.id, 100, { test_outcome: 'requested' });
    return {
      path: `/api/v1/payouts/${payout.id}/cancel`,
      key: m.test_api_key,
      same: { body: { reason: 'duplicate order' } },
      changed: { body: { reason: 'wrong recipient' } },
      effect: versions(t, 'payouts', 'id = $1', [payout.id]),
    };
  },
  'POST /api/v1/payouts/{payout_id}/evidence': async ({ t }) => {
    const { m, recipient } = await fundedPayoutMerchant(t);
    const payout = await createPayout(t, m.test_api_key, recipient.id, 100);
    return {
      path: `/api/v1/payouts/${payout.id}/evidence`,
      key: m.test_api_key,
      same: { file: PNG('first file') },
      // The same name and field, other bytes: the digest of the file is part of the request.
      changed: { file: PNG('second file') },
      effect: count(t, 'SELECT count(*)::int AS n FROM payout_evidence WHERE payout_id = $1', [payout.id]),
    };
  },
  'POST /api/v1/test/payouts/{payout_id}/simulate': async ({ t }) => {
    const { m, recipient } = await fundedPayoutMerchant(t);
    const payout = await createPayout(t, m.test_api_key, recipient.id, 100, { test_outcome: 'requested' });
    return {
      path: `/api/v1/test/payouts/${payout.id}/simulate`,
      key: m.test_api_key,
      same: { body: { outcome: 'processing' } },
      changed: { body: { outcome: 'paid' } },
      effect: versions(t, 'payouts', 'id = $1', [payout.id]),
    };
  },
  'POST /api/v1/events/{id}/replay': async ({ t }) => {
    const m = await merchantWithHooks(t);
    const event = await eventOf(t, m);
    const other = await eventOf(t, m);
    return {
      path: `/api/v1/events/${event.id}/replay`,
      key: m.test_api_key,
      same: {},
      // Another event under the same key is another request (the path is part of it), with the same (no) body.
      changed: { path: `/api/v1/events/${other.id}/replay` },
      effect: count(t, "SELECT count(*)::int AS n FROM audit_log WHERE merchant_id = $1 AND action = 'events.replay'", [
        m.merchant_id,
      ]),
    };
  },
  'POST /api/v1/events/replay': async ({ t }) => {
    const m = await merchantWithHooks(t);
    const event = await eventOf(t, m);
    const from = new Date(Date.parse(event.created_at) - 60_000).toISOString();
    const to = new Date(Date.now() + 60_000).toISOString();
    return {
      path: '/api/v1/events/replay',
      key: m.test_api_key,
      same: { body: { created_gte: from, created_lt: to, only_failed: false } },
      changed: { body: { created_gte: from, created_lt: to, only_failed: true } },
      effect: count(
        t,
        "SELECT count(*)::int AS n FROM audit_log WHERE merchant_id = $1 AND action LIKE 'events.replay%'",
        [m.merchant_id],
      ),
    };
  },
};

/**
 * Every public POST (no API key): its own replay rule, proven; `says` is what its description must state. One
 * that takes an Idempotency-Key scoped to its session (`keyed`) documents the header and proves it too.
 */
const PUBLIC: Record<string, { says: RegExp; keyed?: true; prove: (c: Ctx) => Promise<void> }> = {
  'POST /api/v1/checkout/sessions/{reference}/provider-attempts/{attempt_reference}/cancel': {
    says: /With an Idempotency-Key \(scoped to the session\) a retry answers exactly what the first call did/,
    keyed: true,
    async prove({ t }) {
      const session = await createSession(t, await t.merchant());
      const first = await startAttempt(t, session.id, momoBody(50000));
      const cancel = (ref: string, key?: string) =>
        call(
          t,
          'POST',
          `/api/v1/checkout/sessions/${session.id}/provider-attempts/${ref}/cancel`,
          key ? { idempotencyKey: key } : {},
        );
      const key = `walk-${randomUUID()}`;
      const done = await cancel(first.attempt_reference, key);
      assert.equal(done.statusCode, 200, done.body);
      assert.equal(done.json().status, 'cancelled');
      const row = versions(t, 'payment_attempts', 'id = $1', [first.attempt_reference]);
      const afterFirst = await row();
      const again = await cancel(first.attempt_reference, key);
      assert.equal(again.headers['idempotent-replayed'], 'true');
      assert.equal(again.body, done.body, 'the first answer, byte for byte');
      assert.equal(await row(), afterFirst, 'the repeat changed nothing');
      // Without a key a repeat is still harmless: an ended attempt answers its status and nothing moves.
      assert.equal((await cancel(first.attempt_reference)).json().status, 'cancelled');
      assert.equal(await row(), afterFirst);
      // The same key for another attempt of the session is another request: 422, and that attempt stays pending.
      const second = await startAttempt(t, session.id, momoBody(50000, '0245550199'));
      assertErrorEnvelope(await cancel(second.attempt_reference, key), 422, 'IDEMPOTENCY_KEY_REUSED');
      assert.equal(
        (
          await call(t, 'GET', `/api/v1/checkout/sessions/${session.id}/provider-attempts/${second.attempt_reference}`)
        ).json().status,
        'pending',
      );
    },
  },
  'POST /api/v1/checkout/sessions/{reference}/provider-attempts': {
    says: /same attempt .* replayed \(200, replayed true\)/,
    async prove({ t }) {
      const session = await createSession(t, await t.merchant());
      const send = () =>
        call(t, 'POST', `/api/v1/checkout/sessions/${session.id}/provider-attempts`, { body: momoBody(50000) });
      const first = await send();
      assert.equal(first.statusCode, 201, first.body);
      const again = await send();
      assert.equal(again.statusCode, 200, again.body);
      assert.equal(again.json().replayed, true);
      assert.equal(again.json().attempt_reference, first.json().attempt_reference);
      assert.equal(
        await count(t, 'SELECT count(*)::int AS n FROM payment_attempts WHERE session_id = $1', [session.id])(),
        '1',
      );
    },
  },
  'POST /api/v1/checkout/sessions/{reference}/provider-attempts/{attempt_reference}/authorize': {
    says: /once a code was accepted a repeat is 409 VERIFICATION_NOT_REQUIRED/,
    async prove({ t }) {
      const session = await createSession(t, await t.merchant());
      const attempt = await startAttempt(t, session.id, momoBody(50000, TELECEL_PHONE, 'telecel'));
      const send = () =>
        call(
          t,
          'POST',
          `/api/v1/checkout/sessions/${session.id}/provider-attempts/${attempt.attempt_reference}/authorize`,
          { body: { code: '123456' } },
        );
      const first = await send();
      assert.equal(first.statusCode, 200, first.body);
      const row = versions(t, 'payment_attempts', 'id = $1', [attempt.attempt_reference]);
      const afterFirst = await row();
      assertErrorEnvelope(await send(), 409, 'VERIFICATION_NOT_REQUIRED');
      assert.equal(await row(), afterFirst, 'the repeat changed nothing');
    },
  },
  'POST /api/v1/checkout/sessions/{reference}/provider-attempts/{attempt_reference}/resend': {
    says: /deliberately not deduplicated: each call is the payer asking for one more prompt, counted in resends_left/,
    async prove({ t }) {
      const session = await createSession(t, await t.merchant());
      const attempt = await startAttempt(t, session.id, momoBody(50000));
      const send = () =>
        call(
          t,
          'POST',
          `/api/v1/checkout/sessions/${session.id}/provider-attempts/${attempt.attempt_reference}/resend`,
        );
      for (let left = RESENDS_MAX - 1; left >= 0; left--) {
        const res = await send();
        assert.equal(res.statusCode, 200, res.body);
        assert.equal(res.json().resends_left, left, 'each repeat is one more prompt, counted');
      }
      assertErrorEnvelope(await send(), 409, 'RESEND_LIMIT_REACHED');
    },
  },
  'POST /api/v1/checkout/cash-slips': {
    says: /a repeat returns that slip \(200, replayed true\)/,
    async prove({ t }) {
      const session = await createSession(t, await t.merchant());
      const send = () =>
        call(t, 'POST', '/api/v1/checkout/cash-slips', {
          body: { session_id: session.id, amount_minor: totalOf('cash', 50000) },
        });
      const first = await send();
      assert.equal(first.statusCode, 201, first.body);
      const again = await send();
      assert.equal(again.statusCode, 200, again.body);
      assert.equal(again.json().replayed, true);
      assert.equal(again.json().reference, first.json().reference);
      assert.equal(
        await count(t, 'SELECT count(*)::int AS n FROM cash_slips WHERE session_id = $1', [session.id])(),
        '1',
      );
    },
  },
  'POST /api/v1/providers/paystack/webhook': {
    says: /a repeat of one already handled is answered 200 with result duplicate/,
    async prove({ t }) {
      const reference = `walk-${randomUUID()}`;
      const raw = JSON.stringify({ event: 'charge.success', data: { id: 7, reference } });
      const signature = createHmac('sha512', PAYSTACK_SECRET).update(raw).digest('hex');
      const send = () =>
        t.app.inject({
          method: 'POST',
          url: '/api/v1/providers/paystack/webhook',
          headers: { 'content-type': 'application/json', 'x-paystack-signature': signature },
          payload: raw,
        });
      const first = await send();
      assert.equal(first.statusCode, 200, first.body);
      assert.equal(first.json().result, 'ignored', 'no transaction of ours: handled, nothing to apply');
      const again = await send();
      assert.equal(again.statusCode, 200, again.body);
      assert.equal(again.json().result, 'duplicate');
      assert.equal(
        await count(t, 'SELECT count(*)::int AS n FROM provider_events WHERE reference = $1', [reference])(),
        '1',
      );
    },
  },
  'POST /api/v1/providers/mtn-momo/callback': {
    says: /a repeat only asks again, and an answer already applied changes nothing/,
    async prove({ t }) {
      const referenceId = randomUUID();
      const events = count(t, 'SELECT count(*)::int AS n FROM provider_events', []);
      const before = await events();
      for (let i = 0; i < 2; i++) {
        const res = await t.app.inject({
          method: 'POST',
          url: '/api/v1/providers/mtn-momo/callback',
          headers: { 'content-type': 'application/json' },
          payload: JSON.stringify({ referenceId, status: 'SUCCESSFUL' }),
        });
        assert.equal(res.statusCode, 200, res.body);
        assert.deepEqual(res.json(), { received: true, result: 'ignored' });
      }
      assert.equal(await events(), before, 'a callback records nothing: it is only a reason to ask');
    },
  },
};

function send(t: TestContext, c: KeyedCase, sent: Sent, idempotencyKey: string): Promise<LightMyRequestResponse> {
  const headers: Record<string, string> = { authorization: `Bearer ${c.key}`, 'idempotency-key': idempotencyKey };
  const url = sent.path ?? c.path;
  if (sent.file) {
    const { payload, contentType } = multipartFile('file', 'evidence.png', 'image/png', sent.file);
    return t.app.inject({ method: 'POST', url, headers: { ...headers, 'content-type': contentType }, payload });
  }
  if (sent.body === undefined) return t.app.inject({ method: 'POST', url, headers });
  return t.app.inject({
    method: 'POST',
    url,
    headers: { ...headers, 'content-type': 'application/json' },
    payload: JSON.stringify(sent.body),
  });
}

describe(`every POST honours Idempotency-Key or documents its own replay rule (${storageKind})`, () => {
  let t: TestContext;
  let posts: [string, Operation][];
  before(async () => {
    // Both providers configured, so their notification routes answer (they call out to nothing here).
    t = await startTestApp({
      PAYSTACK_SECRET_KEY: PAYSTACK_SECRET,
      PAYSTACK_BASE_URL: NO_PROVIDER,
      MTN_MOMO_BASE_URL: NO_PROVIDER,
      MTN_MOMO_COLLECTION_SUBSCRIPTION_KEY: 'walk',
      MTN_MOMO_COLLECTION_USER_ID: randomUUID(),
      MTN_MOMO_COLLECTION_API_KEY: 'walk',
    });
    const paths: Record<string, Record<string, Operation>> = (
      await t.app.inject({ method: 'GET', url: '/openapi.json' })
    ).json().paths;
    posts = Object.entries(paths).flatMap(([path, operations]) =>
      operations.post ? [[`POST ${path}`, operations.post] as [string, Operation]] : [],
    );
  });
  after(() => t.close());

  const takesApiKey = (operation: Operation) =>
    (operation.security ?? []).some((requirement) => 'apiKey' in requirement);
  const documentsKey = (operation: Operation) =>
    operation.parameters?.find((p) => p.in === 'header' && p.name === 'idempotency-key');

  it('the document lists the POST operations, each either keyed (API key and Idempotency-Key) or public (neither), each with a fixture here', () => {
    assert.ok(posts.length >= 20, `found ${posts.length} POST operations`);
    for (const [name, operation] of posts) {
      if (takesApiKey(operation)) {
        assert.ok(
          documentsKey(operation),
          `${name} takes an API key but does not honour Idempotency-Key: declare config: { idempotent: true }`,
        );
        assert.equal(
          documentsKey(operation)!.description,
          IdempotencyHeaders.properties['idempotency-key'].description,
        );
        assert.ok(KEYED[name], `${name}: add a fixture to KEYED in this file`);
      } else {
        assert.ok(
          PUBLIC[name],
          `${name} is public: add its replay rule to PUBLIC in this file (and to its description)`,
        );
        if (PUBLIC[name]!.keyed)
          assert.equal(
            documentsKey(operation)!.description,
            IdempotencyHeaders.properties['idempotency-key'].description,
          );
        else
          assert.equal(
            documentsKey(operation),
            undefined,
            `${name} is public: an Idempotency-Key would have no merchant to be scoped to`,
          );
        assert.match(operation.description ?? '', PUBLIC[name]!.says, `${name}'s description states its replay rule`);
      }
    }
    const documented = new Set(posts.map(([name]) => name));
    for (const name of [...Object.keys(KEYED), ...Object.keys(PUBLIC)])
      assert.ok(documented.has(name), `${name} has a fixture but is not in the document`);
  });

  it('keyed: the same key and request replay the first answer and its effect happens once; a changed request is 422 IDEMPOTENCY_KEY_REUSED and changes nothing', async () => {
    const keyed = posts.filter(([, operation]) => takesApiKey(operation));
    assert.ok(keyed.length >= 14);
    for (const [name] of keyed) {
      const c = await KEYED[name]!({ t });
      const key = `walk-${randomUUID()}`;
      const before = await c.effect?.();
      const first = await send(t, c, c.same, key);
      assert.ok(first.statusCode >= 200 && first.statusCode < 300, `${name}: ${first.statusCode} ${first.body}`);
      assert.equal(first.headers['idempotent-replayed'], undefined, name);
      const afterFirst = await c.effect?.();
      if (c.effect) assert.notEqual(afterFirst, before, `${name}: the first request had its effect`);

      const again = await send(t, c, c.same, key);
      assert.equal(again.statusCode, first.statusCode, `${name}: ${again.body}`);
      assert.equal(again.headers['idempotent-replayed'], 'true', name);
      assert.equal(again.body, first.body, `${name}: the first answer, byte for byte`);
      assert.equal(await c.effect?.(), afterFirst, `${name}: the repeat had no effect`);

      assertErrorEnvelope(await send(t, c, c.changed, key), 422, 'IDEMPOTENCY_KEY_REUSED');
      assert.equal(await c.effect?.(), afterFirst, `${name}: the changed request had no effect`);
    }
  });

  it("an upload's request is its parts: the same key and file under another filename, or with another text field value, is 422 IDEMPOTENCY_KEY_REUSED; the identical upload is replayed", async () => {
    const { m, recipient } = await fundedPayoutMerchant(t);
    const payout = await createPayout(t, m.test_api_key, recipient.id, 100);
    const attached = count(t, 'SELECT count(*)::int AS n FROM payout_evidence WHERE payout_id = $1', [payout.id]);
    const key = `upload-${randomUUID()}`;
    const file = PNG('one file');
    const upload = (filename: string, fields: Record<string, string>) => {
      const { payload, contentType } = multipartFile('file', filename, 'image/png', file, fields);
      return t.app.inject({
        method: 'POST',
        url: `/api/v1/payouts/${payout.id}/evidence`,
        headers: { authorization: `Bearer ${m.test_api_key}`, 'idempotency-key': key, 'content-type': contentType },
        payload,
      });
    };
    const first = await upload('receipt.png', { note: 'bank slip' });
    assert.equal(first.statusCode, 201, first.body);
    assert.equal(await attached(), '1');

    // The same bytes and text fields, another filename.
    assertErrorEnvelope(await upload('other-name.png', { note: 'bank slip' }), 422, 'IDEMPOTENCY_KEY_REUSED');
    // The same file and filename, another value of a text field; and a text field more.
    assertErrorEnvelope(await upload('receipt.png', { note: 'teller slip' }), 422, 'IDEMPOTENCY_KEY_REUSED');
    assertErrorEnvelope(await upload('receipt.png', { note: 'bank slip', extra: 'x' }), 422, 'IDEMPOTENCY_KEY_REUSED');
    assert.equal(await attached(), '1', 'a changed upload attaches nothing');

    // The identical upload (a new multipart boundary, the same parts): the first answer, byte for byte.
    const again = await upload('receipt.png', { note: 'bank slip' });
    assert.equal(again.statusCode, 201, again.body);
    assert.equal(again.headers['idempotent-replayed'], 'true');
    assert.equal(again.body, first.body);
    assert.equal(await attached(), '1', 'a replay attaches nothing more');
  });

  it('public: each proves its own replay rule', async () => {
    for (const [name, operation] of posts.filter(([, op]) => !takesApiKey(op))) {
      await PUBLIC[name]!.prove({ t });
      assert.ok(operation.description, name);
    }
  });

  it("README's Idempotency paragraph names each public POST that honours Idempotency-Key, and says resend is not deduplicated", () => {
    const readme = readFileSync(new URL('../../README.md', import.meta.url), 'utf8');
    const paragraph = /\*\*Idempotency\*\*:[\s\S]*?(?=\n\n)/.exec(readme)?.[0].replace(/\s+/g, ' ');
    assert.ok(paragraph, 'README.md has an **Idempotency** paragraph');
    const publicKeyed = posts.filter(([, operation]) => !takesApiKey(operation) && documentsKey(operation));
    assert.ok(publicKeyed.length >= 1);
    for (const [name] of publicKeyed) assert.ok(paragraph.includes(`\`${name}\``), `README names ${name}`);
    assert.doesNotMatch(paragraph, /POSTs take no API key and so no `Idempotency-Key`/);
    assert.match(paragraph, /`resend` is deliberately not deduplicated/);
  });

  it('a declared route refuses a malformed key with 400 INVALID_ARGUMENT; a GET ignores the header and stores nothing', async () => {
    const m = await t.merchant();
    const malformed = 'k'.repeat(256);
    const requests: [string, Record<string, Json>][] = [
      ['/api/v1/sessions', { amount_minor: 100, invoice_ref: 'INV-D' }],
      ['/api/v1/revenue-lines', { lines: [{ code: 'A', name: 'Alpha' }] }],
    ];
    for (const [path, body] of requests) {
      assertErrorEnvelope(
        await call(t, 'POST', path, { key: m.test_api_key, body, idempotencyKey: malformed }),
        400,
        'INVALID_ARGUMENT',
      );
    }
    const read = await call(t, 'GET', '/api/v1/revenue-lines', { key: m.test_api_key, idempotencyKey: malformed });
    assert.equal(read.statusCode, 200, read.body);
    const stored = await t.db.query<{ n: number }>(
      'select count(*)::int as n from idempotency_keys where merchant_id = $1',
      [m.merchant_id],
    );
    assert.equal(stored[0]!.n, 0, 'no key is stored for a refused or a read request');
  });

  it('the routes declaring the option are exactly the POSTs that document the header', () => {
    const declared = t.app.registeredRoutes
      .filter((r) => r.idempotent)
      .map((r) => `${r.method} ${r.url.replace(/:(\w+)/g, '{$1}')}`);
    const documented = posts.filter(([, operation]) => documentsKey(operation)).map(([name]) => name);
    assert.deepEqual(declared.sort(), documented.sort());
    for (const route of t.app.registeredRoutes.filter((r) => r.idempotent)) {
      const headers = (route.schema as { headers?: { properties?: Record<string, unknown> } }).headers;
      assert.equal(
        headers?.properties?.['idempotency-key'],
        IdempotencyHeaders.properties['idempotency-key'],
        `${route.method} ${route.url} schema`,
      );
    }
  });

  it("the hook adds the header to a declared route's own headers schema and leaves undeclared routes alone", async () => {
    const app = Fastify({ logger: false });
    registerIdempotentRoutes(app, t.db);
    const own = { type: 'object', properties: { 'x-trace': { type: 'string' } } };
    const plain = { type: 'object', properties: { 'x-trace': { type: 'string' } } };
    const schemas: Record<string, { headers?: { properties?: Record<string, unknown> } } | undefined> = {};
    app.addHook('onRoute', (route) => {
      schemas[route.url] = route.schema as (typeof schemas)[string];
    });
    app.post('/declared', { config: { idempotent: true }, schema: { headers: own } }, async () => ({
      run: async () => ({ status: 200, body: {} }),
    }));
    app.post('/bare', { config: { idempotent: true } }, async () => ({ run: async () => ({ status: 200, body: {} }) }));
    app.post('/plain', { schema: { headers: plain } }, async () => ({}));
    await app.ready();
    assert.deepEqual(Object.keys(schemas['/declared']!.headers!.properties!).sort(), ['idempotency-key', 'x-trace']);
    assert.equal(schemas['/bare']!.headers, IdempotencyHeaders);
    assert.deepEqual(schemas['/plain']!.headers, { type: 'object', properties: { 'x-trace': { type: 'string' } } });
    await app.close();
  });

  it('no routes file under src calls the idempotency plumbing by hand', () => {
    const files = routesFiles(SRC);
    const named = files.map((file) => relative(SRC, file));
    for (const expected of [
      'http/routes/checkout/merchant-routes.ts',
      'http/routes/checkout/simulate-routes.ts',
      'http/routes/invoicing/routes.ts',
      'http/routes/payouts/routes.ts',
    ])
      assert.ok(named.includes(expected), expected);
    for (const file of files) {
      const source = readFileSync(file, 'utf8');
      for (const name of BY_HAND)
        assert.doesNotMatch(source, new RegExp(`\\b${name}\\b`), `${relative(SRC, file)} uses ${name}`);
    }
  });
});
