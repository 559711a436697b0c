// POST /api/v1/sessions and GET /api/v1/sessions/{id}: SPEC 2.1, 4.1, 8 and DESIGN §3 (defaults, limits, errors).
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { CreatedMerchant } from '../../src/accounts/service.ts';
import { startTestApp, storageKind, type TestContext } from '../support/helpers.ts';
import { assertErrorEnvelope, call, sessionCount, type Json } from '../support/http.ts';

const ISO_UTC = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/;

describe(`checkout sessions API (${storageKind})`, () => {
  let t: TestContext;
  before(async () => {
    t = await startTestApp();
  });
  after(() => t.close());

  const create = (m: CreatedMerchant, body: Record<string, Json>) =>
    call(t, 'POST', '/api/v1/sessions', { key: m.test_api_key, body });

  /** Refused with 400 INVALID_ARGUMENT, naming the field, and nothing was stored. */
  async function assertRefused(body: Record<string, Json>, field: string) {
    const m = await t.merchant();
    const res = await create(m, body);
    const error = assertErrorEnvelope(res, 400, 'INVALID_ARGUMENT');
    assert.ok(
      error.fields?.some((f) => f.field === field || f.field.startsWith(`${field}.`)) || error.message.includes(field),
      `the error should name ${field}: ${res.body}`,
    );
    assert.equal(await sessionCount(t, m.merchant_id), 0);
    return error;
  }

  async function assertAccepted(body: Record<string, Json>) {
    const m = await t.merchant();
    const res = await create(m, body);
    assert.equal(res.statusCode, 201, res.body);
    assert.equal(await sessionCount(t, m.merchant_id), 1);
    return res.json();
  }

  describe('creation', () => {
    it('a session with every field is created with 201 and echoes each field of SPEC 2.1', async () => {
      const m = await t.merchant();
      const before = Date.now();
      const res = await create(m, {
        amount_minor: 50000,
        invoice_ref: 'INV-2026-0001',
        description: 'School fees, first term',
        currency: 'GHS',
        customer: { name: 'Ama Mensah', email: 'ama@example.com' },
        callback_url: 'https://shop.example.com/return?order=1',
        metadata: { order: 'A1' },
        expires_in_seconds: 3600,
      });
      assert.equal(res.statusCode, 201, res.body);
      assert.match(String(res.headers['content-type']), /^application\/json/);
      const s = res.json();
      assert.match(s.id, /^cs_\w+$/);
      assert.equal(s.object, 'checkout.session');
      assert.equal(s.status, 'open');
      assert.equal(s.amount_minor, 50000);
      assert.equal(s.currency, 'GHS');
      assert.equal(s.invoice_ref, 'INV-2026-0001');
      assert.equal(s.description, 'School fees, first term');
      assert.deepEqual(s.customer, { name: 'Ama Mensah', email: 'ama@example.com' });
      assert.equal(s.callback_url, 'https://shop.example.com/return?order=1');
      assert.deepEqual(s.metadata, { order: 'A1' });
      assert.equal(s.livemode, false);
      assert.equal(s.checkout_url, `${t.config.checkoutUrlHost}/pay/${s.id}`);
      assert.match(s.expires_at, ISO_UTC);
      assert.match(s.created_at, ISO_UTC);
      const lifetimeMs = Date.parse(s.expires_at) - Date.parse(s.created_at);
      assert.ok(Math.abs(lifetimeMs - 3600_000) < 2_000, `lifetime ${lifetimeMs} ms`);
      assert.ok(Math.abs(Date.parse(s.expires_at) - (before + 3600_000)) < 60_000);
    });

    it('a minimal session gets the defaults: currency GHS, a 24-hour lifetime, null optional fields and empty metadata', async () => {
      const m = await t.merchant();
      const before = Date.now();
      const res = await create(m, { amount_minor: 1250, invoice_ref: 'INV-MIN' });
      assert.equal(res.statusCode, 201, res.body);
      const s = res.json();
      assert.equal(s.currency, 'GHS');
      assert.equal(s.status, 'open');
      assert.equal(s.description, null);
      assert.deepEqual(s.customer, { name: null, email: null });
      assert.equal(s.callback_url, null);
      assert.deepEqual(s.metadata, {});
      const lifetimeMs = Date.parse(s.expires_at) - Date.parse(s.created_at);
      assert.ok(Math.abs(lifetimeMs - 86_400_000) < 2_000, `default lifetime ${lifetimeMs} ms`);
      const fromNow = Date.parse(s.expires_at) - before;
      assert.ok(fromNow > 86_400_000 - 60_000 && fromNow < 86_400_000 + 60_000, `expires ${fromNow} ms from now`);
    });

    it('checkout_url is the checkout host (BASE_URL by default) followed by /pay/ and the session id', async () => {
      const m = await t.merchant();
      const s = (await create(m, { amount_minor: 100, invoice_ref: 'INV-URL' })).json();
      if (!process.env.CHECKOUT_URL_HOST) assert.equal(t.config.checkoutUrlHost, 'http://sika.test');
      assert.equal(s.checkout_url, `${t.config.checkoutUrlHost}/pay/${s.id}`);
      assert.ok(s.checkout_url.endsWith(s.id));
    });

    it('two sessions of one merchant get distinct ids', async () => {
      const m = await t.merchant();
      const a = (await create(m, { amount_minor: 100, invoice_ref: 'INV-A' })).json();
      const b = (await create(m, { amount_minor: 100, invoice_ref: 'INV-A' })).json();
      assert.notEqual(a.id, b.id);
      assert.equal(await sessionCount(t, m.merchant_id), 2);
    });

    it('a session created with the Live key is livemode true', async () => {
      const m = await t.merchant();
      const res = await call(t, 'POST', '/api/v1/sessions', {
        key: m.live_api_key,
        body: { amount_minor: 100, invoice_ref: 'INV-LIVE' },
      });
      assert.equal(res.statusCode, 201, res.body);
      assert.equal(res.json().livemode, true);
    });

    it('metadata is returned exactly as given, nested values and types included', async () => {
      const metadata = {
        order: 'A-17',
        count: 3,
        ratio: 0.5,
        paid: false,
        nothing: null,
        tags: ['x', 'y'],
        nested: { deep: { level: 2 } },
      };
      const s = await assertAccepted({ amount_minor: 500, invoice_ref: 'INV-META', metadata });
      assert.deepEqual(s.metadata, metadata);
    });

    it('unknown top-level fields are ignored, not stored and not echoed', async () => {
      const s = await assertAccepted({ amount_minor: 500, invoice_ref: 'INV-EXTRA', surprise: 'x' });
      assert.equal('surprise' in s, false);
    });
  });

  describe('amount_minor limits', () => {
    it('a session with amount_minor 0 is refused with 400 INVALID_ARGUMENT', async () => {
      await assertRefused({ amount_minor: 0, invoice_ref: 'INV-1' }, 'amount_minor');
    });
    it('a session with a negative amount_minor is refused with 400 INVALID_ARGUMENT', async () => {
      await assertRefused({ amount_minor: -5, invoice_ref: 'INV-1' }, 'amount_minor');
    });
    it('a session with amount_minor 1 is accepted', async () => {
      assert.equal((await assertAccepted({ amount_minor: 1, invoice_ref: 'INV-1' })).amount_minor, 1);
    });
    it('a session with amount_minor 100000000 (GHS 1,000,000) is accepted', async () => {
      assert.equal(
        (await assertAccepted({ amount_minor: 100_000_000, invoice_ref: 'INV-1' })).amount_minor,
        100_000_000,
      );
    });
    it('a session with amount_minor 100000001 is refused with 400 INVALID_ARGUMENT', async () => {
      await assertRefused({ amount_minor: 100_000_001, invoice_ref: 'INV-1' }, 'amount_minor');
    });
    it('a session without amount_minor is refused with 400 INVALID_ARGUMENT naming amount_minor', async () => {
      await assertRefused({ invoice_ref: 'INV-1' }, 'amount_minor');
    });
  });

  describe('invoice_ref limits', () => {
    it('a session with invoice_ref of 120 characters is accepted', async () => {
      const ref = 'R'.repeat(120);
      assert.equal((await assertAccepted({ amount_minor: 100, invoice_ref: ref })).invoice_ref, ref);
    });
    it('a session with invoice_ref of 121 characters is refused with 400 INVALID_ARGUMENT', async () => {
      await assertRefused({ amount_minor: 100, invoice_ref: 'R'.repeat(121) }, 'invoice_ref');
    });
    it('a session without invoice_ref is refused with 400 INVALID_ARGUMENT naming invoice_ref', async () => {
      await assertRefused({ amount_minor: 100 }, 'invoice_ref');
    });
    it('a session with an empty or blank invoice_ref is refused with 400 INVALID_ARGUMENT', async () => {
      await assertRefused({ amount_minor: 100, invoice_ref: '' }, 'invoice_ref');
      await assertRefused({ amount_minor: 100, invoice_ref: '   ' }, 'invoice_ref');
    });
  });

  describe('description, customer and callback_url limits', () => {
    it('a session with description of 240 characters is accepted', async () => {
      const description = 'd'.repeat(240);
      assert.equal(
        (await assertAccepted({ amount_minor: 100, invoice_ref: 'INV-1', description })).description,
        description,
      );
    });
    it('a session with description of 241 characters is refused with 400 INVALID_ARGUMENT', async () => {
      await assertRefused({ amount_minor: 100, invoice_ref: 'INV-1', description: 'd'.repeat(241) }, 'description');
    });
    it('a session with customer.name of 200 characters is accepted', async () => {
      const name = 'n'.repeat(200);
      assert.equal(
        (await assertAccepted({ amount_minor: 100, invoice_ref: 'INV-1', customer: { name } })).customer.name,
        name,
      );
    });
    it('a session with customer.name of 201 characters is refused with 400 INVALID_ARGUMENT', async () => {
      await assertRefused({ amount_minor: 100, invoice_ref: 'INV-1', customer: { name: 'n'.repeat(201) } }, 'customer');
    });
    it('a session with an invalid customer.email is refused with 400 INVALID_ARGUMENT', async () => {
      for (const email of ['not-an-email', 'ama@', '@example.com', 'ama mensah@example.com']) {
        await assertRefused({ amount_minor: 100, invoice_ref: 'INV-1', customer: { email } }, 'customer');
      }
    });
    it('a session with a valid customer.email stores it', async () => {
      const s = await assertAccepted({
        amount_minor: 100,
        invoice_ref: 'INV-1',
        customer: { email: 'kofi.boateng@example.com.gh' },
      });
      assert.deepEqual(s.customer, { name: null, email: 'kofi.boateng@example.com.gh' });
    });
    it('a session with callback_url of exactly 500 characters is accepted', async () => {
      const base = 'https://shop.example.com/return/';
      const url = base + 'a'.repeat(500 - base.length);
      assert.equal(url.length, 500);
      assert.equal(
        (await assertAccepted({ amount_minor: 100, invoice_ref: 'INV-1', callback_url: url })).callback_url,
        url,
      );
    });
    it('a session with callback_url of 501 characters is refused with 400 INVALID_ARGUMENT', async () => {
      const base = 'https://shop.example.com/return/';
      await assertRefused(
        { amount_minor: 100, invoice_ref: 'INV-1', callback_url: base + 'a'.repeat(501 - base.length) },
        'callback_url',
      );
    });
    it('a session with a callback_url that is not a URL is refused with 400 INVALID_ARGUMENT', async () => {
      await assertRefused({ amount_minor: 100, invoice_ref: 'INV-1', callback_url: 'not a url' }, 'callback_url');
      await assertRefused(
        { amount_minor: 100, invoice_ref: 'INV-1', callback_url: 'shop.example.com/return' },
        'callback_url',
      );
    });
    it('a session with a non-http callback_url scheme is refused with 400 INVALID_ARGUMENT', async () => {
      await assertRefused(
        { amount_minor: 100, invoice_ref: 'INV-1', callback_url: 'javascript:alert(1)' },
        'callback_url',
      );
    });
  });

  describe('currency', () => {
    it('a session with currency "GHS" is accepted', async () => {
      assert.equal(
        (await assertAccepted({ amount_minor: 100, invoice_ref: 'INV-1', currency: 'GHS' })).currency,
        'GHS',
      );
    });
    it('a session with currency "ghs" is accepted and normalised to "GHS"', async () => {
      assert.equal(
        (await assertAccepted({ amount_minor: 100, invoice_ref: 'INV-1', currency: 'ghs' })).currency,
        'GHS',
      );
    });
    it('a session with currency "USD" is refused with 400 INVALID_ARGUMENT', async () => {
      await assertRefused({ amount_minor: 100, invoice_ref: 'INV-1', currency: 'USD' }, 'currency');
    });
    it('a session with a 4-character currency is refused with 400 INVALID_ARGUMENT', async () => {
      await assertRefused({ amount_minor: 100, invoice_ref: 'INV-1', currency: 'GHSS' }, 'currency');
    });
  });

  describe('expires_in_seconds', () => {
    it('a session with expires_in_seconds 59 is refused with 400 INVALID_ARGUMENT', async () => {
      await assertRefused({ amount_minor: 100, invoice_ref: 'INV-1', expires_in_seconds: 59 }, 'expires_in_seconds');
    });
    it('a session with expires_in_seconds 60 is accepted and expires a minute after creation', async () => {
      const s = await assertAccepted({ amount_minor: 100, invoice_ref: 'INV-1', expires_in_seconds: 60 });
      const lifetimeMs = Date.parse(s.expires_at) - Date.parse(s.created_at);
      assert.ok(Math.abs(lifetimeMs - 60_000) < 2_000, `lifetime ${lifetimeMs} ms`);
    });
    it('a session with expires_in_seconds 86400 is accepted and expires a day after creation', async () => {
      const s = await assertAccepted({ amount_minor: 100, invoice_ref: 'INV-1', expires_in_seconds: 86_400 });
      const lifetimeMs = Date.parse(s.expires_at) - Date.parse(s.created_at);
      assert.ok(Math.abs(lifetimeMs - 86_400_000) < 2_000, `lifetime ${lifetimeMs} ms`);
    });
    it('a session with expires_in_seconds 86401 is refused with 400 INVALID_ARGUMENT', async () => {
      await assertRefused(
        { amount_minor: 100, invoice_ref: 'INV-1', expires_in_seconds: 86_401 },
        'expires_in_seconds',
      );
    });
  });

  describe('wrong types', () => {
    it('amount_minor sent as the JSON string "500" is refused with 400 INVALID_ARGUMENT and error.fields', async () => {
      const error = await assertRefused({ amount_minor: '500', invoice_ref: 'INV-1' }, 'amount_minor');
      assert.ok(Array.isArray(error.fields) && error.fields.length > 0);
      assert.equal(error.fields[0]!.field, 'amount_minor');
      assert.equal(typeof error.fields[0]!.message, 'string');
    });
    it('amount_minor 12.5 is refused with 400 INVALID_ARGUMENT and error.fields naming amount_minor', async () => {
      const error = await assertRefused({ amount_minor: 12.5, invoice_ref: 'INV-1' }, 'amount_minor');
      assert.equal(error.fields?.[0]?.field, 'amount_minor');
    });
    it('invoice_ref sent as a number is refused with 400 INVALID_ARGUMENT naming invoice_ref', async () => {
      const error = await assertRefused({ amount_minor: 100, invoice_ref: 12345 }, 'invoice_ref');
      assert.equal(error.fields?.[0]?.field, 'invoice_ref');
    });
    it('expires_in_seconds sent as a string is refused with 400 INVALID_ARGUMENT', async () => {
      await assertRefused(
        { amount_minor: 100, invoice_ref: 'INV-1', expires_in_seconds: '3600' },
        'expires_in_seconds',
      );
    });
    it('metadata that is not an object is refused with 400 INVALID_ARGUMENT', async () => {
      await assertRefused({ amount_minor: 100, invoice_ref: 'INV-1', metadata: 'order=1' }, 'metadata');
      await assertRefused({ amount_minor: 100, invoice_ref: 'INV-1', metadata: ['order'] }, 'metadata');
    });
    it('a JSON body that is an array instead of an object is refused with 400 INVALID_ARGUMENT', async () => {
      const m = await t.merchant();
      const res = await t.app.inject({
        method: 'POST',
        url: '/api/v1/sessions',
        headers: { authorization: `Bearer ${m.test_api_key}`, 'content-type': 'application/json' },
        payload: JSON.stringify([{ amount_minor: 100, invoice_ref: 'INV-1' }]),
      });
      assertErrorEnvelope(res, 400, 'INVALID_ARGUMENT');
      assert.equal(await sessionCount(t, m.merchant_id), 0);
    });
  });

  describe('text that storage cannot hold', () => {
    it('a session with a NUL character in any text field or metadata key is refused with 400 INVALID_ARGUMENT, never a 500', async () => {
      const bodies: Record<string, Json>[] = [
        { amount_minor: 100, invoice_ref: 'INV\u0000-1' },
        { amount_minor: 100, invoice_ref: 'INV-1', description: 'a\u0000b' },
        { amount_minor: 100, invoice_ref: 'INV-1', customer: { name: 'Ama\u0000' } },
        { amount_minor: 100, invoice_ref: 'INV-1', metadata: { note: 'x\u0000y' } },
        { amount_minor: 100, invoice_ref: 'INV-1', metadata: { 'k\u0000': 'v' } },
        { amount_minor: 100, invoice_ref: 'INV-1', metadata: { list: ['ok', '\u0000'] } },
      ];
      for (const body of bodies) {
        const m = await t.merchant();
        assertErrorEnvelope(await create(m, body), 400, 'INVALID_ARGUMENT');
        assert.equal(await sessionCount(t, m.merchant_id), 0);
      }
    });

    it('a session with other control characters and non-Latin text keeps them exactly', async () => {
      const description = 'Tab\there, newline\nthere, Twi: Ɛyɛ, emoji: 🇬🇭';
      const s = await assertAccepted({
        amount_minor: 100,
        invoice_ref: 'INV-Ɔ',
        description,
        metadata: { ключ: 'значение' },
      });
      assert.equal(s.description, description);
      assert.equal(s.invoice_ref, 'INV-Ɔ');
      assert.deepEqual(s.metadata, { ключ: 'значение' });
    });

    it('GET with a NUL character in the session id is refused with 400 INVALID_ARGUMENT, never a 500', async () => {
      const m = await t.merchant();
      assertErrorEnvelope(
        await call(t, 'GET', '/api/v1/sessions/cs_%00', { key: m.test_api_key }),
        400,
        'INVALID_ARGUMENT',
      );
    });
  });

  describe('retrieval', () => {
    it('GET /api/v1/sessions/{id} returns 200 with the same session as the creation response', async () => {
      const m = await t.merchant();
      const created = (
        await create(m, {
          amount_minor: 7700,
          invoice_ref: 'INV-GET',
          description: 'x',
          customer: { name: 'Yaw' },
          metadata: { a: 1 },
        })
      ).json();
      const res = await call(t, 'GET', `/api/v1/sessions/${created.id}`, { key: m.test_api_key });
      assert.equal(res.statusCode, 200);
      assert.deepEqual(res.json(), created);
    });

    it('GET of an unknown session id is 404 NOT_FOUND in the error envelope', async () => {
      const m = await t.merchant();
      const res = await call(t, 'GET', '/api/v1/sessions/cs_doesnotexist000000000000', { key: m.test_api_key });
      const error = assertErrorEnvelope(res, 404, 'NOT_FOUND');
      assert.equal(typeof error.detail, 'string');
    });

    it('GET with a session id of 81 characters is refused with 400 INVALID_ARGUMENT', async () => {
      const m = await t.merchant();
      const res = await call(t, 'GET', `/api/v1/sessions/cs_${'x'.repeat(78)}`, { key: m.test_api_key });
      assertErrorEnvelope(res, 400, 'INVALID_ARGUMENT');
    });

    it("GET with a session id over the router's parameter limit is 414 in the error envelope, never the framework's own body", async () => {
      const m = await t.merchant();
      const res = await call(t, 'GET', `/api/v1/sessions/cs_${'x'.repeat(200)}`, { key: m.test_api_key });
      assertErrorEnvelope(res, 414, 'URI_TOO_LONG');
    });

    it('GET with a malformed percent-encoding in the session id is 400 INVALID_ARGUMENT in the error envelope', async () => {
      const m = await t.merchant();
      const res = await call(t, 'GET', '/api/v1/sessions/cs_%E0%A4%A', { key: m.test_api_key });
      assertErrorEnvelope(res, 400, 'INVALID_ARGUMENT');
    });
  });
});
