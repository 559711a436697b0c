// The payment links API (issue 35 item 1): create (a fixed amount, an amount the payer chooses, custom fields),
// every refusal a 400 naming its field with no link made, Idempotency-Key replays, read and cursor pages of the
// key's own links only, changes with their events, and a link's sessions found by ?payment_link_id= and in
// the sessions CSV. Also: a replay of an event no key caused reaches every endpoint of the merchant.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { describe, it } from 'node:test';
import type { CreatedMerchant } from '../../src/accounts/service.ts';
import { SESSION_AMOUNT_MAX_MINOR } from '../../src/checkout/model.ts';
import {
  CUSTOM_FIELDS_MAX,
  LINK_AMOUNT_MAX_DEFAULT_MINOR,
  LINK_AMOUNT_MIN_DEFAULT_MINOR,
  LINK_DESCRIPTION_LENGTH_MAX,
  LINK_NAME_LENGTH_MAX,
  LINK_SLUG_LENGTH,
} from '../../src/checkout/payment-link-model.ts';
import { createPaymentLink } from '../../src/checkout/payment-links.ts';
import { around, csvRows } from '../support/books.ts';
import { createSession } from '../support/checkout.ts';
import { storageKind } from '../support/helpers.ts';
import { useTestApp } from '../support/hooks.ts';
import { assertErrorEnvelope, call, type Json } from '../support/http.ts';
import { deliveriesOf } from '../support/webhooks.ts';

const HOUR_MS = 3_600_000;

describe(`payment links API (${storageKind})`, () => {
  const t = useTestApp();

  const create = (m: CreatedMerchant, body: Record<string, Json>, options: { key?: string; idem?: string } = {}) =>
    call(t, 'POST', '/api/v1/payment-links', {
      key: options.key ?? m.test_api_key,
      body,
      ...(options.idem ? { idempotencyKey: options.idem } : {}),
    });
  const created = async (m: CreatedMerchant, body: Record<string, Json>) => {
    const res = await create(m, body);
    assert.equal(res.statusCode, 201, res.body);
    return res.json();
  };
  const update = (m: CreatedMerchant, id: string, body: Record<string, Json>, key = m.test_api_key) =>
    call(t, 'POST', `/api/v1/payment-links/${id}`, { key, body });
  const eventsOf = async (m: CreatedMerchant, objectId: string) => {
    const res = await call(t, 'GET', '/api/v1/events', { key: m.test_api_key, query: { object_id: objectId } });
    assert.equal(res.statusCode, 200, res.body);
    return (res.json().data as { type: string; version: number; data: { payment_link: Record<string, Json> } }[])
      .slice()
      .reverse();
  };
  const linkCount = async (m: CreatedMerchant) =>
    (
      await t.db.query<{ n: number }>('SELECT count(*)::int AS n FROM payment_links WHERE merchant_id = $1', [
        m.merchant_id,
      ])
    )[0]!.n;

  it('creates a fixed-amount link: 201 with the fields of the issue, its url under CHECKOUT_URL_HOST/l/{slug}, and payment_link.created', async () => {
    const m = await t.merchant();
    const expiresAt = new Date(Date.now() + 24 * HOUR_MS).toISOString();
    const link = await created(m, {
      name: 'School fees, term 2',
      description: 'Basic 4',
      amount_minor: 50_000,
      max_payments: 30,
      expires_at: expiresAt,
      redirect_url: 'https://school.example.com/thanks',
      metadata: { term: '2' },
    });
    assert.match(link.id, /^pl_/);
    const url = new URL(link.url);
    assert.equal(`${url.protocol}//${url.host}`, t.config.checkoutUrlHost);
    assert.match(url.pathname, new RegExp(`^/l/[A-Za-z0-9]{${LINK_SLUG_LENGTH}}$`));
    assert.equal(link.qr_svg_url, `${link.url}/qr.svg`);
    assert.deepEqual(
      { ...link, id: null, url: null, qr_svg_url: null, created_at: null },
      {
        object: 'payment_link',
        id: null,
        url: null,
        qr_svg_url: null,
        active: true,
        name: 'School fees, term 2',
        description: 'Basic 4',
        amount_minor: 50_000,
        amount_min_minor: 50_000,
        amount_max_minor: 50_000,
        custom_fields: [],
        single_use: false,
        max_payments: 30,
        payments_count: 0,
        expires_at: expiresAt,
        created_at: null,
        livemode: false,
        metadata: { term: '2' },
      },
    );
    assert.ok(Math.abs(Date.parse(link.created_at) - Date.now()) < 60_000);

    const events = await eventsOf(m, link.id);
    assert.deepEqual(
      events.map((e) => [e.type, e.version]),
      [['payment_link.created', 1]],
    );
    assert.deepEqual(events[0]!.data.payment_link, link);
    const got = await call(t, 'GET', `/api/v1/payment-links/${link.id}`, { key: m.test_api_key });
    assert.equal(got.statusCode, 200, got.body);
    assert.deepEqual(got.json(), link);
  });

  it('an open-amount link takes 100 pesewas to the session maximum by default; custom fields are kept in order with required false by default', async () => {
    const m = await t.merchant();
    const open = await created(m, {
      name: 'Offering',
      custom_fields: [
        { key: 'member_no', label: 'Member number', type: 'number', required: true },
        { key: 'phone', label: 'Phone', type: 'phone' },
        { key: 'email', label: 'E-mail', type: 'email' },
        { key: 'note', label: 'Note', type: 'text' },
      ],
    });
    assert.equal(open.amount_minor, null);
    assert.equal(open.amount_min_minor, LINK_AMOUNT_MIN_DEFAULT_MINOR);
    assert.equal(open.amount_max_minor, LINK_AMOUNT_MAX_DEFAULT_MINOR);
    assert.deepEqual(open.custom_fields, [
      { key: 'member_no', label: 'Member number', type: 'number', required: true },
      { key: 'phone', label: 'Phone', type: 'phone', required: false },
      { key: 'email', label: 'E-mail', type: 'email', required: false },
      { key: 'note', label: 'Note', type: 'text', required: false },
    ]);
    const ranged = await created(m, { name: 'Donation', amount_min_minor: 500, amount_max_minor: 500 });
    assert.deepEqual([ranged.amount_minor, ranged.amount_min_minor, ranged.amount_max_minor], [null, 500, 500]);
    const singleUse = await created(m, { name: 'Invoice 7', amount_minor: 1_000, single_use: true, max_payments: 1 });
    assert.deepEqual([singleUse.single_use, singleUse.max_payments], [true, 1]);
    const singleUseAlone = await created(m, { name: 'Invoice 8', amount_minor: 1_000, single_use: true });
    assert.deepEqual([singleUseAlone.single_use, singleUseAlone.max_payments], [true, 1], 'one payment, said as 1');
    const slugs = await t.db.query<{ slug: string }>('SELECT slug FROM payment_links WHERE merchant_id = $1', [
      m.merchant_id,
    ]);
    assert.equal(new Set(slugs.map((r) => r.slug)).size, 4, 'a slug each');
  });

  it('every refusal is a 400 INVALID_ARGUMENT naming the field, and makes no link', async () => {
    const m = await t.merchant();
    const field = (key: string, type = 'text') => ({ key, label: key, type });
    const past = new Date(Date.now() - 60_000).toISOString();
    const cases: [string, Record<string, Json>, string][] = [
      ['no name', { amount_minor: 100 }, 'name'],
      ['an empty name', { name: '', amount_minor: 100 }, 'name'],
      ['a blank name', { name: '   ', amount_minor: 100 }, 'name'],
      ['a name too long', { name: 'n'.repeat(LINK_NAME_LENGTH_MAX + 1) }, 'name'],
      [
        'a description too long',
        { name: 'x', description: 'd'.repeat(LINK_DESCRIPTION_LENGTH_MAX + 1) },
        'description',
      ],
      ['a zero amount', { name: 'x', amount_minor: 0 }, 'amount_minor'],
      ['an amount over the session maximum', { name: 'x', amount_minor: SESSION_AMOUNT_MAX_MINOR + 1 }, 'amount_minor'],
      ['a fractional amount', { name: 'x', amount_minor: 10.5 }, 'amount_minor'],
      [
        'a minimum beside a fixed amount',
        { name: 'x', amount_minor: 1_000, amount_min_minor: 100 },
        'amount_min_minor',
      ],
      [
        'a maximum beside a fixed amount',
        { name: 'x', amount_minor: 1_000, amount_max_minor: 2_000 },
        'amount_max_minor',
      ],
      [
        'a minimum above the maximum',
        { name: 'x', amount_min_minor: 5_000, amount_max_minor: 4_000 },
        'amount_max_minor',
      ],
      [
        'a minimum above the default maximum',
        { name: 'x', amount_min_minor: SESSION_AMOUNT_MAX_MINOR + 1 },
        'amount_min_minor',
      ],
      [
        'a maximum below the default minimum',
        { name: 'x', amount_max_minor: LINK_AMOUNT_MIN_DEFAULT_MINOR - 1 },
        'amount_max_minor',
      ],
      [
        'too many custom fields',
        { name: 'x', custom_fields: Array.from({ length: CUSTOM_FIELDS_MAX + 1 }, (_, i) => field(`f${i}`)) },
        'custom_fields',
      ],
      ['a key with capitals and a dash', { name: 'x', custom_fields: [field('Bad-Key')] }, 'custom_fields.0.key'],
      ['a key too long', { name: 'x', custom_fields: [field('k'.repeat(41))] }, 'custom_fields.0.key'],
      ['a repeated key', { name: 'x', custom_fields: [field('pupil'), field('pupil')] }, 'custom_fields.1.key'],
      [
        'an empty label',
        { name: 'x', custom_fields: [{ key: 'a', label: '', type: 'text' }] },
        'custom_fields.0.label',
      ],
      [
        'a label too long',
        { name: 'x', custom_fields: [{ key: 'a', label: 'l'.repeat(81), type: 'text' }] },
        'custom_fields.0.label',
      ],
      ['an unknown field type', { name: 'x', custom_fields: [field('a', 'date')] }, 'custom_fields.0.type'],
      ['single_use with max_payments 2', { name: 'x', single_use: true, max_payments: 2 }, 'max_payments'],
      ['max_payments 0', { name: 'x', max_payments: 0 }, 'max_payments'],
      ['expires_at in the past', { name: 'x', expires_at: past }, 'expires_at'],
      ['expires_at not a date-time', { name: 'x', expires_at: 'next week' }, 'expires_at'],
      ['an ftp redirect_url', { name: 'x', redirect_url: 'ftp://files.example.com/x' }, 'redirect_url'],
      ['a javascript: redirect_url', { name: 'x', redirect_url: 'javascript:alert(1)' }, 'redirect_url'],
      ['metadata over its bytes', { name: 'x', metadata: { blob: 'b'.repeat(9_000) } }, 'metadata'],
    ];
    for (const [what, body, expected] of cases) {
      const error = assertErrorEnvelope(await create(m, body), 400, 'INVALID_ARGUMENT');
      assert.ok(
        error.fields?.some((f) => f.field === expected),
        `${what}: names ${expected}, not ${JSON.stringify(error.fields)}`,
      );
    }
    assert.equal(await linkCount(m), 0, 'no link made');
    // An unknown field is ignored, as on every route (removeAdditional), never stored.
    const ignored = await created(m, { name: 'x', colour: 'red', custom_fields: [{ ...field('a'), hint: 'no' }] });
    assert.deepEqual(ignored.custom_fields, [{ key: 'a', label: 'a', type: 'text', required: false }]);
  });

  it('an Idempotency-Key replays the first answer and makes one link; the same key with another body is 422', async () => {
    const m = await t.merchant();
    const idem = `link-${randomUUID()}`;
    const first = await create(m, { name: 'Fees', amount_minor: 2_000 }, { idem });
    assert.equal(first.statusCode, 201, first.body);
    const again = await create(m, { name: 'Fees', amount_minor: 2_000 }, { idem });
    assert.equal(again.statusCode, 201);
    assert.equal(again.headers['idempotent-replayed'], 'true');
    assert.deepEqual(again.json(), first.json());
    assertErrorEnvelope(
      await create(m, { name: 'Fees', amount_minor: 2_001 }, { idem }),
      422,
      'IDEMPOTENCY_KEY_REUSED',
    );
    assert.equal(await linkCount(m), 1);
    assert.equal((await eventsOf(m, first.json().id)).length, 1, 'one payment_link.created');
  });

  it("reads only the key's own links: another merchant's, the other environment's and an unknown id are 404", async () => {
    const m = await t.merchant();
    const other = await t.merchant();
    const link = await created(m, { name: 'Mine', amount_minor: 100 });
    for (const key of [other.test_api_key, other.live_api_key, m.live_api_key]) {
      const res = await call(t, 'GET', `/api/v1/payment-links/${link.id}`, { key });
      // The Live key of a merchant not approved is refused before any lookup (403); never the link.
      assert.ok([403, 404].includes(res.statusCode), `${res.statusCode} ${res.body}`);
      assert.ok(!res.body.includes(link.url), 'nothing of the link');
      assertErrorEnvelope(await update(m, link.id, { active: false }, key), res.statusCode, res.json().error.code);
    }
    assertErrorEnvelope(
      await call(t, 'GET', `/api/v1/payment-links/${link.id}`, { key: other.test_api_key }),
      404,
      'NOT_FOUND',
    );
    assertErrorEnvelope(await update(m, link.id, { active: false }, other.test_api_key), 404, 'NOT_FOUND');
    assertErrorEnvelope(
      await call(t, 'GET', '/api/v1/payment-links/pl_00000000000000000000000000', { key: m.test_api_key }),
      404,
      'NOT_FOUND',
    );
    const unchanged = await call(t, 'GET', `/api/v1/payment-links/${link.id}`, { key: m.test_api_key });
    assert.equal(unchanged.json().active, true, "another's change did nothing");
  });

  it('lists newest first in cursor pages that never skip or repeat a link while others are made; a foreign cursor is 400', async () => {
    const m = await t.merchant();
    const other = await t.merchant();
    const made: { id: string; created_at: string }[] = [];
    for (let i = 0; i < 7; i++) made.push(await created(m, { name: `Link ${i}`, amount_minor: 100 + i }));
    const foreign = await created(other, { name: 'Not yours', amount_minor: 100 });
    const newestFirst = [...made]
      .sort((a, b) => b.created_at.localeCompare(a.created_at) || b.id.localeCompare(a.id))
      .map((l) => l.id);
    const seen: string[] = [];
    const madeMeanwhile: string[] = [];
    let startingAfter: string | undefined;
    for (let page = 0; page < 20; page++) {
      const res = await call(t, 'GET', '/api/v1/payment-links', {
        key: m.test_api_key,
        query: { limit: '3', ...(startingAfter ? { starting_after: startingAfter } : {}) },
      });
      assert.equal(res.statusCode, 200, res.body);
      const body = res.json() as { object: string; data: { id: string; object: string }[]; has_more: boolean };
      assert.equal(body.object, 'list');
      assert.ok(body.data.length <= 3);
      assert.ok(body.data.every((l) => l.object === 'payment_link'));
      seen.push(...body.data.map((l) => l.id));
      if (!body.has_more) break;
      startingAfter = body.data.at(-1)!.id;
      madeMeanwhile.push((await created(m, { name: 'Meanwhile', amount_minor: 100 })).id);
    }
    assert.equal(new Set(seen).size, seen.length, 'no link twice');
    assert.deepEqual(
      seen.filter((id) => !madeMeanwhile.includes(id)),
      newestFirst,
    );
    assert.ok(!seen.includes(foreign.id));
    const cursor = assertErrorEnvelope(
      await call(t, 'GET', '/api/v1/payment-links', { key: m.test_api_key, query: { starting_after: foreign.id } }),
      400,
      'INVALID_ARGUMENT',
    );
    assert.equal(cursor.fields?.[0]?.field, 'starting_after');
    assertErrorEnvelope(
      await call(t, 'GET', '/api/v1/payment-links', { key: m.test_api_key, query: { limit: '101' } }),
      400,
      'INVALID_ARGUMENT',
    );
  });

  it('changes name, description, active and expires_at (null clears it) with payment_link.updated and a new version; nothing else changes', async () => {
    const m = await t.merchant();
    const link = await created(m, {
      name: 'Fees',
      description: 'Term 1',
      amount_minor: 5_000,
      expires_at: new Date(Date.now() + HOUR_MS).toISOString(),
    });
    const later = new Date(Date.now() + 48 * HOUR_MS).toISOString();
    const first = await update(m, link.id, { name: 'Fees, term 2', description: null, expires_at: later });
    assert.equal(first.statusCode, 200, first.body);
    assert.deepEqual(first.json(), { ...link, name: 'Fees, term 2', description: null, expires_at: later });
    const second = await update(m, link.id, { active: false, expires_at: null });
    assert.equal(second.statusCode, 200, second.body);
    assert.deepEqual(second.json(), { ...first.json(), active: false, expires_at: null });

    for (const [body, expected] of [
      [{ amount_minor: 1 }, 'amount_minor'],
      [{ custom_fields: [] }, 'custom_fields'],
      [{ expires_at: new Date(Date.now() - 1_000).toISOString() }, 'expires_at'],
      [{ name: ' ' }, 'name'],
      [{}, 'body'],
      [{ colour: 'red' }, 'body'],
    ] as [Record<string, Json>, string][]) {
      const error = assertErrorEnvelope(await update(m, link.id, body), 400, 'INVALID_ARGUMENT');
      assert.ok(
        error.fields?.some((f) => f.field === expected),
        `${expected}: ${JSON.stringify(error.fields)}`,
      );
    }
    const events = await eventsOf(m, link.id);
    assert.deepEqual(
      events.map((e) => [e.type, e.version]),
      [
        ['payment_link.created', 1],
        ['payment_link.updated', 2],
        ['payment_link.updated', 3],
      ],
    );
    assert.deepEqual(events[2]!.data.payment_link, second.json());
    const got = await call(t, 'GET', `/api/v1/payment-links/${link.id}`, { key: m.test_api_key });
    assert.deepEqual(got.json(), second.json(), 'the refused changes changed nothing');
  });

  it("finds a link's sessions with ?payment_link_id= (another's link is 404) and exports payment_link_id and custom_fields in the CSV", async () => {
    const m = await t.merchant();
    const other = await t.merchant();
    const link = await created(m, {
      name: 'Fees',
      custom_fields: [{ key: 'pupil', label: 'Pupil', type: 'text', required: true }],
    });
    const foreignLink = await created(other, { name: 'Theirs', amount_minor: 100 });
    const byLink = await createSession(t, m, { amount_minor: 2_550 });
    const plain = await createSession(t, m, { amount_minor: 1_000 });
    // As the payer's form makes it (H2's link checkout): a keyless session carrying the link and the answers.
    const answers = { pupil: 'Kofi "Junior" Mensah, Basic 4' };
    await t.db.query(
      'UPDATE checkout_sessions SET payment_link_id = $2, custom_fields = $3::jsonb, api_key_id = NULL WHERE id = $1',
      [byLink.id, link.id, JSON.stringify(answers)],
    );

    const listed = await call(t, 'GET', '/api/v1/sessions', {
      key: m.test_api_key,
      query: { payment_link_id: link.id },
    });
    assert.equal(listed.statusCode, 200, listed.body);
    const data = listed.json().data as { id: string; payment_link_id: string; custom_fields: unknown }[];
    assert.deepEqual(
      data.map((s) => [s.id, s.payment_link_id, s.custom_fields]),
      [[byLink.id, link.id, answers]],
    );
    const all = await call(t, 'GET', '/api/v1/sessions', { key: m.test_api_key });
    const plainOne = (all.json().data as { id: string; payment_link_id: unknown; custom_fields: unknown }[]).find(
      (s) => s.id === plain.id,
    )!;
    assert.deepEqual([plainOne.payment_link_id, plainOne.custom_fields], [null, null]);
    const single = await call(t, 'GET', `/api/v1/sessions/${byLink.id}`, { key: m.test_api_key });
    assert.deepEqual(single.json().custom_fields, answers);
    for (const id of [foreignLink.id, 'pl_00000000000000000000000000'])
      assertErrorEnvelope(
        await call(t, 'GET', '/api/v1/sessions', { key: m.test_api_key, query: { payment_link_id: id } }),
        404,
        'NOT_FOUND',
      );

    const csv = await call(t, 'GET', '/api/v1/sessions', {
      key: m.test_api_key,
      query: around(),
      headers: { accept: 'text/csv' },
    });
    assert.equal(csv.statusCode, 200, csv.body);
    const rows = csvRows(csv.body);
    const linked = rows.find((r) => r.id === byLink.id)!;
    assert.equal(linked.payment_link_id, link.id);
    assert.deepEqual(JSON.parse(linked.custom_fields!), answers);
    const unlinked = rows.find((r) => r.id === plain.id)!;
    assert.deepEqual([unlinked.payment_link_id, unlinked.custom_fields], ['', '']);
  });

  it('a replay of an event no key caused (a link made on the dashboard) queues it to every active endpoint of the merchant', async () => {
    const m = await t.merchant({ webhookUrl: 'https://hooks.example.com/sika' });
    const link = await createPaymentLink(
      t.db,
      { merchantId: m.merchant_id, environment: 'test', apiKeyId: null, userId: null },
      { name: 'Made on the dashboard', amount_minor: 100 },
      t.config.checkoutUrlHost,
    );
    const [event] = await t.db.query<{ id: string; api_key_id: string | null }>(
      'SELECT id, api_key_id FROM events WHERE object_id = $1',
      [link.id],
    );
    assert.equal(event!.api_key_id, null);
    const endpoints = await t.db.query<{ id: string }>(
      "SELECT id FROM webhook_endpoints WHERE merchant_id = $1 AND environment = 'test' AND status = 'active'",
      [m.merchant_id],
    );
    assert.ok(endpoints.length >= 1);
    assert.equal((await deliveriesOf(t.db, event!.id)).length, endpoints.length, 'sent to every endpoint');
    // An endpoint that came after the event: its delivery is not there yet, and a replay adds it.
    await t.db.query('DELETE FROM webhook_deliveries WHERE event_id = $1', [event!.id]);
    const replay = await call(t, 'POST', '/api/v1/events/replay', {
      key: m.test_api_key,
      body: {
        created_gte: new Date(Date.now() - HOUR_MS).toISOString(),
        created_lt: new Date(Date.now() + HOUR_MS).toISOString(),
        only_failed: false,
      },
    });
    assert.equal(replay.statusCode, 202, replay.body);
    assert.ok((replay.json().event_ids as string[]).includes(event!.id));
    assert.equal((await deliveriesOf(t.db, event!.id)).length, endpoints.length, 'queued again to every endpoint');
    // The one-event replay too.
    await t.db.query('DELETE FROM webhook_deliveries WHERE event_id = $1', [event!.id]);
    const one = await call(t, 'POST', `/api/v1/events/${event!.id}/replay`, { key: m.test_api_key });
    assert.ok(one.statusCode < 300, one.body);
    assert.equal(
      (await deliveriesOf(t.db, event!.id)).length,
      endpoints.length,
      'one event replayed to every endpoint',
    );
  });
});
