// Issue 30 finding 6: the audit log was raw JSON in narrow columns, capped at 200 rows, with no filter. Over
// HTTP on both storages: each filter (actor by email or id, merchant by id or name, action or its family, object
// type and id, Accra days from and to) narrows the log to exactly the rows it names; a row's before and after
// read as the fields that changed (added and removed ones said so, unchanged ones folded away); the pages
// reach every row once; the CSV holds every matching row with its changes as text.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { audit } from '../../src/audit/log.ts';
import { auditDiff, changesText } from '../../src/audit/diff.ts';
import { createOperator } from '../../src/ops/service.ts';
import { ConsoleClient } from '../support/console-client.ts';
import { startTestApp, storageKind, type TestContext } from '../support/helpers.ts';

const PASSWORD = 'ops-audit-password-1';

/** The object ids of the rows a page shows, in its order. */
const objectIdsOn = (body: string, token: string): string[] =>
  [...body.matchAll(new RegExp(`<br>(${token}-[\\w-]+)</td>`, 'g'))].map((m) => m[1]!);
const nextOf = (body: string): string | null =>
  /<a class="button secondary" href="([^"]+)">Next page<\/a>/.exec(body)?.[1]?.replace(/&amp;/g, '&') ?? null;

describe(`ops audit page (${storageKind})`, () => {
  let t: TestContext;
  let ops: ConsoleClient;
  // Rows of this run carry the token in their object ids and actions (PostgreSQL keeps the log between runs).
  const token = `a${randomUUID().slice(0, 8)}`;
  let merchantA: { id: string; name: string };
  let merchantB: { id: string; name: string };
  const actorId = randomUUID();
  const actorEmail = `Auditor-${token}@Example.com`;
  const ROWS = 120;

  /** Writes one audit row in a transaction of its own, as an action would. */
  const row = (entry: Parameters<typeof audit>[1]) => t.db.transaction((tx) => audit(tx, entry));

  before(async () => {
    t = await startTestApp();
    const a = await t.merchant();
    const b = await t.merchant();
    merchantA = {
      id: a.merchant_id,
      name: (await t.db.query<{ name: string }>('SELECT name FROM merchants WHERE id = $1', [a.merchant_id]))[0]!.name,
    };
    merchantB = {
      id: b.merchant_id,
      name: (await t.db.query<{ name: string }>('SELECT name FROM merchants WHERE id = $1', [b.merchant_id]))[0]!.name,
    };
    for (let i = 0; i < ROWS; i++) {
      await row({
        actor:
          i % 3 === 0
            ? { type: 'operator', id: actorId, email: actorEmail }
            : { type: 'system', id: `worker-${token}`, email: null },
        merchantId: i % 2 === 0 ? merchantA.id : merchantB.id,
        action: i % 4 === 0 ? `${token}_settings.update` : `${token}_key.revoke`,
        objectType: i % 5 === 0 ? `${token}_settings` : `${token}_key`,
        objectId: `${token}-obj-${i}`,
        before: { paused: false, limit_minor: 1_000, name: 'Old', nested: { a: 1 } },
        after: { paused: i % 2 === 0, limit_minor: 1_000 + i, nested: { a: 1, b: 2 } },
      });
    }
    const operatorEmail = `operator-${randomUUID()}@example.com`;
    await createOperator(t.db, { email: operatorEmail, password: PASSWORD });
    ops = await new ConsoleClient(t, '/ops').signedIn(operatorEmail, PASSWORD);
  });
  after(() => t.close());

  const expected = (keep: (i: number) => boolean) =>
    Array.from({ length: ROWS }, (_, i) => i)
      .filter(keep)
      .map((i) => `${token}-obj-${i}`)
      .reverse();

  /** Every object id of this run the log shows for these parameters, following "Next page". */
  async function allRows(params: Record<string, string>): Promise<{ ids: string[]; pages: number }> {
    let url: string | null = `/ops/audit?${new URLSearchParams(params)}`;
    const ids: string[] = [];
    let pages = 0;
    while (url) {
      const res = await ops.get(url);
      assert.equal(res.statusCode, 200, `${url}: ${res.body.replace(/<style>[\s\S]*<\/style>/, '').slice(0, 400)}`);
      ids.push(...objectIdsOn(res.body, token));
      pages++;
      assert.ok(pages <= 20, 'the pages end');
      url = nextOf(res.body);
    }
    return { ids, pages };
  }

  it('pages through every row once, newest first, 50 a page', async () => {
    const { ids, pages } = await allRows({ q: token });
    assert.equal(pages, 3);
    assert.deepEqual(
      ids,
      expected(() => true),
    );
  });

  it('each filter narrows to exactly the rows it names', async () => {
    // Actor: by email (any case) or by id.
    assert.deepEqual(
      (await allRows({ q: token, actor: actorEmail.toLowerCase() })).ids,
      expected((i) => i % 3 === 0),
    );
    assert.deepEqual(
      (await allRows({ q: token, actor: actorId })).ids,
      expected((i) => i % 3 === 0),
    );
    assert.deepEqual(
      (await allRows({ q: token, actor: `worker-${token}` })).ids,
      expected((i) => i % 3 !== 0),
    );
    // Merchant: by id or by a fragment of its name.
    assert.deepEqual(
      (await allRows({ q: token, merchant: merchantB.id })).ids,
      expected((i) => i % 2 === 1),
    );
    assert.deepEqual(
      (await allRows({ q: token, merchant: merchantA.name.slice(-8) })).ids,
      expected((i) => i % 2 === 0),
    );
    // Action: exactly, or its family (the part before the dot).
    assert.deepEqual(
      (await allRows({ action: `${token}_settings.update` })).ids,
      expected((i) => i % 4 === 0),
    );
    assert.deepEqual(
      (await allRows({ action: `${token}_key` })).ids,
      expected((i) => i % 4 !== 0),
    );
    // Object type and id.
    assert.deepEqual(
      (await allRows({ object_type: `${token}_settings` })).ids,
      expected((i) => i % 5 === 0),
    );
    assert.deepEqual((await allRows({ object_type: `${token}_key`, object_id: `${token}-obj-7` })).ids, [
      `${token}-obj-7`,
    ]);
    // Together.
    assert.deepEqual(
      (await allRows({ actor: actorId, merchant: merchantA.id, object_type: `${token}_settings` })).ids,
      expected((i) => i % 30 === 0),
    );
    // The filters' choices name this run's actions and object types.
    const page = await ops.get('/ops/audit');
    assert.match(page.body, new RegExp(`<option value="${token}_settings.update">`));
    assert.match(page.body, new RegExp(`<option value="${token}_key">`));
  });

  it('the date range takes Africa/Accra days, both included, and refuses a day that is not one with a sentence', async () => {
    const today = new Date().toISOString().slice(0, 10);
    const yesterday = new Date(Date.now() - 86_400_000).toISOString().slice(0, 10);
    const tomorrow = new Date(Date.now() + 86_400_000).toISOString().slice(0, 10);
    assert.equal((await allRows({ q: token, from: today, to: today })).ids.length, ROWS);
    assert.equal((await allRows({ q: token, from: tomorrow })).ids.length, 0);
    assert.equal((await allRows({ q: token, to: yesterday })).ids.length, 0);
    const notADay = await ops.get('/ops/audit?from=2026-02-31');
    assert.equal(notADay.statusCode, 400);
    assert.match(notADay.body, /The &quot;From&quot; date is not a calendar day\./);
    const backwards = await ops.get(`/ops/audit?from=${today}&to=${yesterday}`);
    assert.equal(backwards.statusCode, 400);
    assert.match(backwards.body, /The &quot;To&quot; date is before the &quot;From&quot; date\./);
    const garbage = await ops.get('/ops/audit?to=last-week');
    assert.equal(garbage.statusCode, 400);
    assert.match(garbage.body, /To date is not valid: enter a date written YYYY-MM-DD\./);
  });

  it('shows before and after as the fields that changed; unchanged fields folded behind details', async () => {
    const res = await ops.get(`/ops/audit?object_id=${token}-obj-6`);
    const body = res.body;
    assert.match(
      body,
      /<th scope="row" class="mono">paused<\/th><td><span class="mono wrap">false<\/span><\/td><td><span class="mono wrap">true<\/span><\/td>/,
    );
    assert.match(
      body,
      /<th scope="row" class="mono">limit_minor<\/th><td><span class="mono wrap">1000<\/span><\/td><td><span class="mono wrap">1006<\/span><\/td>/,
    );
    assert.match(
      body,
      /<th scope="row" class="mono">nested\.b<\/th><td><span class="badge ok">added<\/span><\/td><td><span class="mono wrap">2<\/span><\/td>/,
    );
    assert.match(
      body,
      /<th scope="row" class="mono">name<\/th><td><span class="mono wrap">Old<\/span><\/td><td><span class="badge bad">removed<\/span><\/td>/,
    );
    assert.match(body, /<details><summary>1 unchanged field<\/summary>.*nested\.a/s);
    assert.doesNotMatch(body, /\{&quot;paused&quot;/, 'no raw JSON');
    // The diff itself: creation (no before) is every field added; nothing changed says so.
    assert.deepEqual(auditDiff(null, { a: 1 }), [{ field: 'a', kind: 'added', before: null, after: '1' }]);
    assert.deepEqual(auditDiff({ a: 'x' }, null), [{ field: 'a', kind: 'removed', before: 'x', after: null }]);
    assert.equal(
      changesText(auditDiff({ a: 1, b: 'k', c: 3 }, { a: 2, c: 3, d: [1] })),
      'a: 1 -> 2; b: removed (was k); d: added [1]',
    );
  });

  it('exports every matching row as CSV with the changes as text', async () => {
    const res = await ops.get(`/ops/audit?q=${token}&format=csv`);
    assert.equal(res.statusCode, 200);
    assert.match(String(res.headers['content-type']), /^text\/csv/);
    const lines = res.body
      .replace(/^\uFEFF/, '')
      .split('\r\n')
      .filter(Boolean);
    assert.equal(lines[0], 'when,actor_type,actor,merchant,action,object_type,object_id,changes');
    assert.equal(lines.length, ROWS + 1);
    const six = lines.find((line) => line.includes(`,${token}-obj-6,`))!;
    assert.ok(
      six.includes(
        `,operator,${actorEmail},${merchantA.name} (${merchantA.id}),${token}_key.revoke,${token}_key,${token}-obj-6,`,
      ),
      six,
    );
    assert.ok(
      six.endsWith(',limit_minor: 1000 -> 1006; name: removed (was Old); nested.b: added 2; paused: false -> true'),
      six,
    );
    const filtered = await ops.get(`/ops/audit?q=${token}&actor=${actorId}&format=csv`);
    assert.equal(filtered.body.split('\r\n').filter(Boolean).length, 1 + ROWS / 3);
  });
});
