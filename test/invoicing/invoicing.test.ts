// Revenue lines (service codes) and invoice lines: SPEC 2.6, 2.7, 4.1 and DESIGN §3 "Invoice and revenue lines".
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import type { CreatedMerchant } from '../../src/accounts/service.ts';
import {
  INVOICE_LINES_PER_REQUEST_MAX,
  LINE_CODE_LENGTH_MAX,
  LINE_NAME_LENGTH_MAX,
  REVENUE_LINES_PER_SYNC_MAX,
} from '../../src/invoicing/model.ts';
import { markInvoiceRemitted } from '../../src/invoicing/store.ts';
import { startTestApp, storageKind, type TestContext } from '../support/helpers.ts';
import { assertErrorEnvelope, call, syncCodes, type Json } from '../support/http.ts';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const ISO_UTC = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/;

interface SyncResponse {
  object: string;
  created: number;
  updated: number;
  reactivated: number;
  deactivated: number;
  unchanged: number;
  total: number;
  errors: { index: number; code: string; message: string }[];
}

const counts = (r: SyncResponse) => ({
  created: r.created,
  updated: r.updated,
  reactivated: r.reactivated,
  deactivated: r.deactivated,
  unchanged: r.unchanged,
  total: r.total,
});

describe(`invoice lines and revenue lines API (${storageKind})`, () => {
  let t: TestContext;
  before(async () => {
    t = await startTestApp();
  });
  after(() => t.close());

  const sync = (m: CreatedMerchant, body: Record<string, Json>) =>
    call(t, 'POST', '/api/v1/revenue-lines', { key: m.test_api_key, body });
  const listRevenue = (m: CreatedMerchant, includeInactive?: boolean) =>
    call(t, 'GET', '/api/v1/revenue-lines', {
      key: m.test_api_key,
      query: includeInactive === undefined ? {} : { include_inactive: String(includeInactive) },
    });
  const ingest = (m: CreatedMerchant, body: Record<string, Json>) =>
    call(t, 'POST', '/api/v1/invoice-lines', { key: m.test_api_key, body });
  const listLines = (m: CreatedMerchant, invoiceRef: string) =>
    call(t, 'GET', '/api/v1/invoice-lines', { key: m.test_api_key, query: { invoice_ref: invoiceRef } });

  /** A merchant with active codes TUITION, LIBRARY and EXAM. */
  async function merchantWithCodes() {
    const m = await t.merchant();
    await syncCodes(t, m.test_api_key, [
      { code: 'TUITION', name: 'Tuition' },
      { code: 'LIBRARY', name: 'Library fee' },
      { code: 'EXAM', name: 'Examination fee' },
    ]);
    return m;
  }

  describe('revenue lines sync', () => {
    it('a first sync creates every line and answers 200 revenue_lines.sync with created and total', async () => {
      const m = await t.merchant();
      const res = await sync(m, {
        lines: [
          { code: 'A', name: 'Alpha' },
          { code: 'B', name: 'Beta' },
          { code: 'C', name: 'Gamma' },
        ],
      });
      assert.equal(res.statusCode, 200, res.body);
      const body = res.json() as SyncResponse;
      assert.equal(body.object, 'revenue_lines.sync');
      assert.deepEqual(counts(body), {
        created: 3,
        updated: 0,
        reactivated: 0,
        deactivated: 0,
        unchanged: 0,
        total: 3,
      });
      assert.deepEqual(body.errors, []);
    });

    it('a second sync counts renamed lines as updated, identical ones as unchanged and new ones as created, without deactivating by default', async () => {
      const m = await t.merchant();
      await syncCodes(t, m.test_api_key, [
        { code: 'A', name: 'Alpha' },
        { code: 'B', name: 'Beta' },
        { code: 'C', name: 'Gamma' },
      ]);
      const res = await sync(m, {
        lines: [
          { code: 'A', name: 'Alpha' },
          { code: 'B', name: 'Beta renamed' },
          { code: 'D', name: 'Delta' },
        ],
      });
      assert.equal(res.statusCode, 200, res.body);
      assert.deepEqual(counts(res.json()), {
        created: 1,
        updated: 1,
        reactivated: 0,
        deactivated: 0,
        unchanged: 1,
        total: 4,
      });
      const list = (await listRevenue(m)).json();
      assert.deepEqual(list.counts, { total: 4, active: 4, inactive: 0 });
      assert.equal(list.lines.find((l: { code: string }) => l.code === 'B').name, 'Beta renamed');
      assert.equal(
        list.lines.find((l: { code: string }) => l.code === 'C').active,
        true,
        'C is kept when deactivate_missing is omitted',
      );
    });

    it('deactivate_missing false keeps lines that are not in the list active', async () => {
      const m = await t.merchant();
      await syncCodes(t, m.test_api_key, [
        { code: 'A', name: 'Alpha' },
        { code: 'B', name: 'Beta' },
      ]);
      const res = await sync(m, { lines: [{ code: 'A', name: 'Alpha' }], deactivate_missing: false });
      assert.deepEqual(counts(res.json()), {
        created: 0,
        updated: 0,
        reactivated: 0,
        deactivated: 0,
        unchanged: 1,
        total: 2,
      });
      assert.deepEqual((await listRevenue(m)).json().counts, { total: 2, active: 2, inactive: 0 });
    });

    it('deactivate_missing true deactivates the active lines that are not in the list, and they stay in total', async () => {
      const m = await t.merchant();
      await syncCodes(t, m.test_api_key, [
        { code: 'A', name: 'Alpha' },
        { code: 'B', name: 'Beta' },
        { code: 'C', name: 'Gamma' },
      ]);
      const res = await sync(m, { lines: [{ code: 'A', name: 'Alpha' }], deactivate_missing: true });
      assert.equal(res.statusCode, 200, res.body);
      assert.deepEqual(counts(res.json()), {
        created: 0,
        updated: 0,
        reactivated: 0,
        deactivated: 2,
        unchanged: 1,
        total: 3,
      });
      // Deactivating again is not counted twice.
      const again = await sync(m, { lines: [{ code: 'A', name: 'Alpha' }], deactivate_missing: true });
      assert.deepEqual(counts(again.json()), {
        created: 0,
        updated: 0,
        reactivated: 0,
        deactivated: 0,
        unchanged: 1,
        total: 3,
      });
    });

    it('a sync that lists an inactive line again reactivates it', async () => {
      const m = await t.merchant();
      await syncCodes(t, m.test_api_key, [
        { code: 'A', name: 'Alpha' },
        { code: 'B', name: 'Beta' },
      ]);
      await syncCodes(t, m.test_api_key, [{ code: 'A', name: 'Alpha' }], true);
      const res = await sync(m, { lines: [{ code: 'B', name: 'Beta' }] });
      assert.deepEqual(counts(res.json()), {
        created: 0,
        updated: 0,
        reactivated: 1,
        deactivated: 0,
        unchanged: 0,
        total: 2,
      });
      const list = (await listRevenue(m)).json();
      assert.deepEqual(list.counts, { total: 2, active: 2, inactive: 0 });
    });

    it('a sync with a bad code and a duplicate code answers 207 with {index, code, message} errors and stores the good lines', async () => {
      const m = await t.merchant();
      const res = await sync(m, {
        lines: [
          { code: 'GOOD-1', name: 'Good' },
          { code: '-starts-with-dash', name: 'Bad code' },
          { code: 'GOOD-1', name: 'Duplicate' },
          { code: 'has space', name: 'Bad code too' },
          { code: 'GOOD-2', name: 'Good too' },
        ],
      });
      assert.equal(res.statusCode, 207, res.body);
      const body = res.json() as SyncResponse;
      assert.equal(body.object, 'revenue_lines.sync');
      assert.deepEqual(counts(body), {
        created: 2,
        updated: 0,
        reactivated: 0,
        deactivated: 0,
        unchanged: 0,
        total: 2,
      });
      assert.deepEqual(
        body.errors.map((e) => ({ index: e.index, code: e.code })),
        [
          { index: 1, code: 'INVALID_ARGUMENT' },
          { index: 2, code: 'INVALID_ARGUMENT' },
          { index: 3, code: 'INVALID_ARGUMENT' },
        ],
      );
      for (const error of body.errors) {
        assert.deepEqual(Object.keys(error).sort(), ['code', 'index', 'message']);
        assert.ok(error.message.length > 0);
      }
      assert.match(body.errors[1]!.message, /more than once/);
      const list = (await listRevenue(m)).json();
      assert.deepEqual(
        list.lines.map((l: { code: string; name: string }) => [l.code, l.name]),
        [
          ['GOOD-1', 'Good'],
          ['GOOD-2', 'Good too'],
        ],
      );
    });

    it('a sync with a blank name reports that line in errors with 207', async () => {
      const m = await t.merchant();
      const res = await sync(m, {
        lines: [
          { code: 'OK', name: 'Fine' },
          { code: 'BLANK', name: '   ' },
        ],
      });
      assert.equal(res.statusCode, 207);
      assert.deepEqual(
        res.json().errors.map((e: { index: number }) => e.index),
        [1],
      );
    });

    it('a sync line with an empty code is reported in errors with 207 while the other lines are synced', async () => {
      const m = await t.merchant();
      const res = await sync(m, {
        lines: [
          { code: 'GOOD', name: 'Good' },
          { code: '', name: 'Empty code' },
        ],
      });
      assert.equal(res.statusCode, 207, res.body);
      const body = res.json() as SyncResponse;
      assert.deepEqual(counts(body), {
        created: 1,
        updated: 0,
        reactivated: 0,
        deactivated: 0,
        unchanged: 0,
        total: 1,
      });
      assert.deepEqual(body.errors, [
        { index: 1, code: 'INVALID_ARGUMENT', message: 'code must NOT have fewer than 1 characters' },
      ]);
      assert.deepEqual(
        (await listRevenue(m)).json().lines.map((l: { code: string }) => l.code),
        ['GOOD'],
      );
    });

    it('sync lines that are too long, miss a field, have a wrong type or are not objects each go to errors by index; the good lines are synced', async () => {
      const m = await t.merchant();
      const longest = { code: 'C'.repeat(LINE_CODE_LENGTH_MAX), name: 'N'.repeat(LINE_NAME_LENGTH_MAX) };
      const res = await sync(m, {
        lines: [
          { code: 'X'.repeat(LINE_CODE_LENGTH_MAX + 1), name: 'Long code' },
          { code: 'LONG-NAME', name: 'N'.repeat(LINE_NAME_LENGTH_MAX + 1) },
          { code: 'NO-NAME' },
          { code: 42, name: 'Number code' },
          { code: 'NULL-NAME', name: null },
          'not a line',
          null,
          [{ code: 'NESTED', name: 'In an array' }],
          longest,
          { code: 'EXTRA', name: 'Unknown fields are ignored', colour: 'blue' },
        ],
      });
      assert.equal(res.statusCode, 207, res.body);
      const body = res.json() as SyncResponse;
      assert.deepEqual(
        body.errors.map((e) => [e.index, e.code, e.message]),
        [
          [0, 'INVALID_ARGUMENT', `code must NOT have more than ${LINE_CODE_LENGTH_MAX} characters`],
          [1, 'INVALID_ARGUMENT', `name must NOT have more than ${LINE_NAME_LENGTH_MAX} characters`],
          [2, 'INVALID_ARGUMENT', 'name is required'],
          [3, 'INVALID_ARGUMENT', 'code must be string'],
          [4, 'INVALID_ARGUMENT', 'name must be string'],
          [5, 'INVALID_ARGUMENT', 'a line must be an object with code and name'],
          [6, 'INVALID_ARGUMENT', 'a line must be an object with code and name'],
          [7, 'INVALID_ARGUMENT', 'a line must be an object with code and name'],
        ],
      );
      assert.equal(body.created, 2);
      const listed = (await listRevenue(m)).json().lines.map((l: { code: string; name: string }) => [l.code, l.name]);
      assert.deepEqual(listed, [
        [longest.code, longest.name],
        ['EXTRA', 'Unknown fields are ignored'],
      ]);
    });

    it('with deactivate_missing, a code named by a line that failed stays active', async () => {
      const m = await t.merchant();
      await syncCodes(t, m.test_api_key, [
        { code: 'KEEP', name: 'Keep' },
        { code: 'DROP', name: 'Drop' },
      ]);
      const res = await sync(m, {
        lines: [{ code: 'KEEP', name: 'N'.repeat(LINE_NAME_LENGTH_MAX + 1) }],
        deactivate_missing: true,
      });
      assert.equal(res.statusCode, 207, res.body);
      assert.deepEqual(counts(res.json()), {
        created: 0,
        updated: 0,
        reactivated: 0,
        deactivated: 1,
        unchanged: 0,
        total: 2,
      });
      assert.deepEqual(
        (await listRevenue(m, true))
          .json()
          .lines.map((l: { code: string; name: string; active: boolean }) => [l.code, l.name, l.active]),
        [
          ['DROP', 'Drop', false],
          ['KEEP', 'Keep', true],
        ],
      );
    });

    it('a sync body without lines, with lines that are not an array, with more than 1,000 lines, or that is not an object is refused whole with 400 INVALID_ARGUMENT', async () => {
      const m = await t.merchant();
      assertErrorEnvelope(await sync(m, { deactivate_missing: true }), 400, 'INVALID_ARGUMENT');
      assertErrorEnvelope(await sync(m, { lines: { code: 'A', name: 'Alpha' } }), 400, 'INVALID_ARGUMENT');
      assertErrorEnvelope(await sync(m, { lines: 'A' }), 400, 'INVALID_ARGUMENT');
      const tooMany = Array.from({ length: REVENUE_LINES_PER_SYNC_MAX + 1 }, (_, i) => ({
        code: `C${i}`,
        name: `Code ${i}`,
      }));
      assertErrorEnvelope(await sync(m, { lines: tooMany }), 400, 'INVALID_ARGUMENT');
      const notAnObject = await t.app.inject({
        method: 'POST',
        url: '/api/v1/revenue-lines',
        headers: { authorization: `Bearer ${m.test_api_key}`, 'content-type': 'application/json' },
        payload: '[{"code":"A","name":"Alpha"}]',
      });
      assertErrorEnvelope(notAnObject, 400, 'INVALID_ARGUMENT');
      assert.deepEqual((await listRevenue(m, true)).json().counts, { total: 0, active: 0, inactive: 0 });
      // The limit itself is accepted.
      const atLimit = await sync(m, { lines: tooMany.slice(0, REVENUE_LINES_PER_SYNC_MAX) });
      assert.equal(atLimit.statusCode, 200, atLimit.body);
      assert.equal(atLimit.json().created, REVENUE_LINES_PER_SYNC_MAX);
    });

    it('an empty list with deactivate_missing true deactivates every line', async () => {
      const m = await t.merchant();
      await syncCodes(t, m.test_api_key, [
        { code: 'A', name: 'Alpha' },
        { code: 'B', name: 'Beta' },
      ]);
      const res = await sync(m, { lines: [], deactivate_missing: true });
      assert.equal(res.statusCode, 200);
      assert.deepEqual(counts(res.json()), {
        created: 0,
        updated: 0,
        reactivated: 0,
        deactivated: 2,
        unchanged: 0,
        total: 2,
      });
    });
  });

  describe('revenue lines list', () => {
    it('GET lists active lines only, with counts of all lines, and every field of SPEC 2.7', async () => {
      const m = await t.merchant();
      await syncCodes(t, m.test_api_key, [
        { code: 'A', name: 'Alpha' },
        { code: 'B', name: 'Beta' },
        { code: 'C', name: 'Gamma' },
      ]);
      await syncCodes(
        t,
        m.test_api_key,
        [
          { code: 'A', name: 'Alpha' },
          { code: 'C', name: 'Gamma' },
        ],
        true,
      );
      const res = await listRevenue(m);
      assert.equal(res.statusCode, 200);
      const body = res.json();
      assert.equal(body.object, 'list');
      assert.deepEqual(body.counts, { total: 3, active: 2, inactive: 1 });
      assert.deepEqual(
        body.lines.map((l: { code: string }) => l.code),
        ['A', 'C'],
      );
      for (const line of body.lines) {
        assert.match(line.id, UUID);
        assert.equal(line.merchant_id, m.merchant_id);
        assert.equal(line.active, true);
        assert.equal(line.source, 'sync');
        for (const field of ['last_synced_at', 'created_at', 'updated_at']) assert.match(line[field], ISO_UTC);
      }
      assert.deepEqual(body.lines[0].name, 'Alpha');
    });

    it('GET with include_inactive=true also lists the inactive lines, marked active false', async () => {
      const m = await t.merchant();
      await syncCodes(t, m.test_api_key, [
        { code: 'A', name: 'Alpha' },
        { code: 'B', name: 'Beta' },
      ]);
      await syncCodes(t, m.test_api_key, [{ code: 'A', name: 'Alpha' }], true);
      const body = (await listRevenue(m, true)).json();
      assert.deepEqual(
        body.lines.map((l: { code: string; active: boolean }) => [l.code, l.active]),
        [
          ['A', true],
          ['B', false],
        ],
      );
      assert.deepEqual(body.counts, { total: 2, active: 1, inactive: 1 });
      const without = (await listRevenue(m, false)).json();
      assert.deepEqual(
        without.lines.map((l: { code: string }) => l.code),
        ['A'],
      );
    });

    it('a rename bumps updated_at while an unchanged line keeps its updated_at', async () => {
      const m = await t.merchant();
      await syncCodes(t, m.test_api_key, [
        { code: 'A', name: 'Alpha' },
        { code: 'B', name: 'Beta' },
      ]);
      const first = (await listRevenue(m)).json().lines;
      await new Promise((resolve) => setTimeout(resolve, 20));
      await syncCodes(t, m.test_api_key, [
        { code: 'A', name: 'Alpha' },
        { code: 'B', name: 'Beta 2' },
      ]);
      const second = (await listRevenue(m)).json().lines;
      assert.equal(second[0].updated_at, first[0].updated_at);
      assert.notEqual(second[1].updated_at, first[1].updated_at);
      assert.equal(second[0].id, first[0].id);
    });

    it('a merchant without revenue lines gets an empty list with zero counts', async () => {
      const m = await t.merchant();
      const body = (await listRevenue(m, true)).json();
      assert.deepEqual(body, { object: 'list', lines: [], counts: { total: 0, active: 0, inactive: 0 } });
    });
  });

  describe('invoice lines ingest', () => {
    it('lines with active codes and positive amounts are stored with 200, counted in ingested and billed_minor', async () => {
      const m = await merchantWithCodes();
      const res = await ingest(m, {
        invoice_ref: 'INV-100',
        currency: 'GHS',
        lines: [
          { code: 'TUITION', name: 'Tuition, term 1', amount_minor: 150000 },
          { code: 'LIBRARY', name: 'Library', amount_minor: 2500 },
        ],
      });
      assert.equal(res.statusCode, 200, res.body);
      assert.deepEqual(res.json(), {
        object: 'invoice.line_items',
        invoice_ref: 'INV-100',
        ingested: 2,
        billed_minor: 152500,
        errors: [],
      });
    });

    it('GET lists the stored lines of the invoice with total_minor', async () => {
      const m = await merchantWithCodes();
      await ingest(m, {
        invoice_ref: 'INV-101',
        lines: [
          { code: 'TUITION', name: 'Tuition', amount_minor: 150000 },
          { code: 'EXAM', name: 'Exam', amount_minor: 4000 },
        ],
      });
      await ingest(m, { invoice_ref: 'INV-OTHER', lines: [{ code: 'LIBRARY', name: 'Library', amount_minor: 999 }] });
      const res = await listLines(m, 'INV-101');
      assert.equal(res.statusCode, 200);
      const body = res.json();
      assert.equal(body.object, 'invoice.line_items');
      assert.equal(body.invoice_ref, 'INV-101');
      assert.equal(body.total_minor, 154000);
      const byCode = Object.fromEntries(body.lines.map((l: { code: string }) => [l.code, l]));
      assert.deepEqual(Object.keys(byCode).sort(), ['EXAM', 'TUITION']);
      assert.deepEqual(byCode.TUITION, {
        code: 'TUITION',
        name: 'Tuition',
        amount_minor: 150000,
        currency: 'GHS',
        remitted: false,
      });
      assert.deepEqual(byCode.EXAM, {
        code: 'EXAM',
        name: 'Exam',
        amount_minor: 4000,
        currency: 'GHS',
        remitted: false,
      });
    });

    it('GET of an invoice without lines is 200 with no lines and total_minor 0', async () => {
      const m = await merchantWithCodes();
      assert.deepEqual((await listLines(m, 'INV-NONE')).json(), {
        object: 'invoice.line_items',
        invoice_ref: 'INV-NONE',
        lines: [],
        total_minor: 0,
      });
    });

    it('a partly bad ingest answers 207: unknown and inactive codes are INVALID_ARGUMENT, amount 0 is INVOICE_LINE_AMOUNT_INVALID, a duplicate is INVALID_ARGUMENT; the good lines are stored', async () => {
      const m = await merchantWithCodes();
      await syncCodes(
        t,
        m.test_api_key,
        [
          { code: 'TUITION', name: 'Tuition' },
          { code: 'LIBRARY', name: 'Library fee' },
        ],
        true,
      ); // EXAM inactive
      const res = await ingest(m, {
        invoice_ref: 'INV-207',
        lines: [
          { code: 'TUITION', name: 'Tuition', amount_minor: 100000 },
          { code: 'NOPE', name: 'Unknown code', amount_minor: 500 },
          { code: 'EXAM', name: 'Inactive code', amount_minor: 500 },
          { code: 'LIBRARY', name: 'Zero amount', amount_minor: 0 },
          { code: 'TUITION', name: 'Duplicate', amount_minor: 1 },
        ],
      });
      assert.equal(res.statusCode, 207, res.body);
      const body = res.json();
      assert.equal(body.object, 'invoice.line_items');
      assert.equal(body.invoice_ref, 'INV-207');
      assert.equal(body.ingested, 1);
      assert.equal(body.billed_minor, 100000);
      assert.deepEqual(
        body.errors.map((e: { index: number; code: string }) => [e.index, e.code]),
        [
          [1, 'INVALID_ARGUMENT'],
          [2, 'INVALID_ARGUMENT'],
          [3, 'INVOICE_LINE_AMOUNT_INVALID'],
          [4, 'INVALID_ARGUMENT'],
        ],
      );
      for (const error of body.errors) {
        assert.deepEqual(Object.keys(error).sort(), ['code', 'index', 'message']);
        assert.ok(error.message.length > 0);
      }
      const listed = (await listLines(m, 'INV-207')).json();
      assert.deepEqual(
        listed.lines.map((l: { code: string; name: string; amount_minor: number }) => [l.code, l.name, l.amount_minor]),
        [['TUITION', 'Tuition', 100000]],
      );
      assert.equal(listed.total_minor, 100000);
    });

    it('a negative amount and an amount above 100000000 are INVOICE_LINE_AMOUNT_INVALID for that line', async () => {
      const m = await merchantWithCodes();
      const res = await ingest(m, {
        invoice_ref: 'INV-AMT',
        lines: [
          { code: 'TUITION', name: 'Negative', amount_minor: -100 },
          { code: 'LIBRARY', name: 'Too much', amount_minor: 100_000_001 },
          { code: 'EXAM', name: 'Max', amount_minor: 100_000_000 },
        ],
      });
      assert.equal(res.statusCode, 207);
      assert.deepEqual(
        res.json().errors.map((e: { index: number; code: string }) => [e.index, e.code]),
        [
          [0, 'INVOICE_LINE_AMOUNT_INVALID'],
          [1, 'INVOICE_LINE_AMOUNT_INVALID'],
        ],
      );
      assert.equal(res.json().billed_minor, 100_000_000);
    });

    it('an ingest where every line fails is 207 with ingested 0 and stores nothing', async () => {
      const m = await t.merchant(); // no revenue lines synced
      const res = await ingest(m, {
        invoice_ref: 'INV-NOSYNC',
        lines: [{ code: 'TUITION', name: 'Tuition', amount_minor: 100 }],
      });
      assert.equal(res.statusCode, 207);
      assert.equal(res.json().ingested, 0);
      assert.equal(res.json().billed_minor, 0);
      assert.equal(res.json().errors[0].code, 'INVALID_ARGUMENT');
      assert.deepEqual((await listLines(m, 'INV-NOSYNC')).json().lines, []);
    });

    it('ingesting an existing code again upserts it: the line takes the new name and amount', async () => {
      const m = await merchantWithCodes();
      await ingest(m, {
        invoice_ref: 'INV-UP',
        lines: [
          { code: 'TUITION', name: 'Tuition', amount_minor: 1000 },
          { code: 'EXAM', name: 'Exam', amount_minor: 300 },
        ],
      });
      const res = await ingest(m, {
        invoice_ref: 'INV-UP',
        lines: [{ code: 'TUITION', name: 'Tuition (revised)', amount_minor: 1500 }],
      });
      assert.equal(res.statusCode, 200);
      assert.equal(res.json().billed_minor, 1500);
      const listed = (await listLines(m, 'INV-UP')).json();
      const byCode = Object.fromEntries(listed.lines.map((l: { code: string }) => [l.code, l]));
      assert.equal(listed.lines.length, 2);
      assert.equal(byCode.TUITION.name, 'Tuition (revised)');
      assert.equal(byCode.TUITION.amount_minor, 1500);
      assert.equal(byCode.EXAM.amount_minor, 300);
      assert.equal(listed.total_minor, 1800);
    });

    it('the same code on two invoices is two separate lines', async () => {
      const m = await merchantWithCodes();
      await ingest(m, { invoice_ref: 'INV-X', lines: [{ code: 'TUITION', name: 'T', amount_minor: 10 }] });
      await ingest(m, { invoice_ref: 'INV-Y', lines: [{ code: 'TUITION', name: 'T', amount_minor: 20 }] });
      assert.equal((await listLines(m, 'INV-X')).json().total_minor, 10);
      assert.equal((await listLines(m, 'INV-Y')).json().total_minor, 20);
    });

    it('a remitted line cannot be changed: a later ingest of it is INVOICE_LINE_REMITTED while other lines still go in', async () => {
      const m = await merchantWithCodes();
      await ingest(m, { invoice_ref: 'INV-PAID', lines: [{ code: 'TUITION', name: 'Tuition', amount_minor: 5000 }] });
      await markInvoiceRemitted(t.db, m.merchant_id, 'test', 'INV-PAID');
      const res = await ingest(m, {
        invoice_ref: 'INV-PAID',
        lines: [
          { code: 'LIBRARY', name: 'Library', amount_minor: 700 },
          { code: 'TUITION', name: 'Tuition changed', amount_minor: 9999 },
        ],
      });
      assert.equal(res.statusCode, 207, res.body);
      const body = res.json();
      assert.equal(body.ingested, 1);
      assert.equal(body.billed_minor, 700);
      assert.deepEqual(
        body.errors.map((e: { index: number; code: string }) => [e.index, e.code]),
        [[1, 'INVOICE_LINE_REMITTED']],
      );
      const byCode = Object.fromEntries(
        (await listLines(m, 'INV-PAID')).json().lines.map((l: { code: string }) => [l.code, l]),
      );
      assert.deepEqual(byCode.TUITION, {
        code: 'TUITION',
        name: 'Tuition',
        amount_minor: 5000,
        currency: 'GHS',
        remitted: true,
      });
      assert.equal(byCode.LIBRARY.remitted, false);
    });

    it('an ingest with currency USD is refused with 400 INVALID_ARGUMENT and stores nothing', async () => {
      const m = await merchantWithCodes();
      const res = await ingest(m, {
        invoice_ref: 'INV-USD',
        currency: 'USD',
        lines: [{ code: 'TUITION', name: 'T', amount_minor: 10 }],
      });
      assertErrorEnvelope(res, 400, 'INVALID_ARGUMENT');
      assert.deepEqual((await listLines(m, 'INV-USD')).json().lines, []);
    });

    it('what is not a line is refused whole with 400 INVALID_ARGUMENT: no invoice_ref, an over-long invoice_ref, no lines, lines not an array, more than 500 lines, a body that is not an object', async () => {
      const m = await merchantWithCodes();
      const line = { code: 'TUITION', name: 'T', amount_minor: 10 };
      assertErrorEnvelope(await ingest(m, { lines: [line] }), 400, 'INVALID_ARGUMENT');
      assertErrorEnvelope(await ingest(m, { invoice_ref: 'R'.repeat(121), lines: [line] }), 400, 'INVALID_ARGUMENT');
      assertErrorEnvelope(await ingest(m, { invoice_ref: 'INV-E', lines: [] }), 400, 'INVALID_ARGUMENT');
      assertErrorEnvelope(await ingest(m, { invoice_ref: 'INV-E', lines: line }), 400, 'INVALID_ARGUMENT');
      assertErrorEnvelope(
        await ingest(m, {
          invoice_ref: 'INV-E',
          lines: Array.from({ length: INVOICE_LINES_PER_REQUEST_MAX + 1 }, () => line),
        }),
        400,
        'INVALID_ARGUMENT',
      );
      const notAnObject = await t.app.inject({
        method: 'POST',
        url: '/api/v1/invoice-lines',
        headers: { authorization: `Bearer ${m.test_api_key}`, 'content-type': 'application/json' },
        payload: JSON.stringify([line]),
      });
      assertErrorEnvelope(notAnObject, 400, 'INVALID_ARGUMENT');
      assert.deepEqual((await listLines(m, 'INV-E')).json().lines, []);
    });

    it('an ingest line with an empty or over-long code or name, a missing or non-integer amount, a wrong type, or that is not an object goes to errors (207) while the good lines are stored', async () => {
      const m = await merchantWithCodes();
      const longCode = 'L'.repeat(LINE_CODE_LENGTH_MAX);
      await syncCodes(t, m.test_api_key, [
        { code: 'TUITION', name: 'Tuition' },
        { code: 'LIBRARY', name: 'Library fee' },
        { code: longCode, name: 'Longest code' },
      ]);
      const res = await ingest(m, {
        invoice_ref: 'INV-SHAPE',
        lines: [
          { code: 'TUITION', name: 'Tuition', amount_minor: 1000 },
          { code: '', name: 'Empty code', amount_minor: 10 },
          { code: 'X'.repeat(LINE_CODE_LENGTH_MAX + 1), name: 'Long code', amount_minor: 10 },
          { code: 'LIBRARY', name: 'N'.repeat(LINE_NAME_LENGTH_MAX + 1), amount_minor: 10 },
          { code: 'LIBRARY', name: '', amount_minor: 10 },
          { code: 'LIBRARY', name: 'No amount' },
          { code: 'LIBRARY', name: 'Fraction', amount_minor: 1.5 },
          { code: 'LIBRARY', name: 'Text amount', amount_minor: '10' },
          { code: 'LIBRARY', name: 'Null amount', amount_minor: null },
          { code: 7, name: 'Number code', amount_minor: 10 },
          'TUITION',
          null,
          {
            code: 'LIBRARY',
            name: 'N'.repeat(LINE_NAME_LENGTH_MAX),
            amount_minor: 250,
            note: 'unknown fields are ignored',
          },
          { code: longCode, name: 'Longest code', amount_minor: 5 },
        ],
      });
      assert.equal(res.statusCode, 207, res.body);
      const body = res.json();
      const amountMessage = 'amount_minor must be an integer from 1 to 100000000 pesewas';
      assert.deepEqual(
        body.errors.map((e: { index: number; code: string; message: string }) => [e.index, e.code, e.message]),
        [
          [1, 'INVALID_ARGUMENT', 'code must NOT have fewer than 1 characters'],
          [2, 'INVALID_ARGUMENT', `code must NOT have more than ${LINE_CODE_LENGTH_MAX} characters`],
          [3, 'INVALID_ARGUMENT', `name must NOT have more than ${LINE_NAME_LENGTH_MAX} characters`],
          [4, 'INVALID_ARGUMENT', 'name must NOT have fewer than 1 characters'],
          [5, 'INVOICE_LINE_AMOUNT_INVALID', amountMessage],
          [6, 'INVOICE_LINE_AMOUNT_INVALID', amountMessage],
          [7, 'INVOICE_LINE_AMOUNT_INVALID', amountMessage],
          [8, 'INVOICE_LINE_AMOUNT_INVALID', amountMessage],
          [9, 'INVALID_ARGUMENT', 'code must be string'],
          [10, 'INVALID_ARGUMENT', 'a line must be an object with code, name and amount_minor'],
          [11, 'INVALID_ARGUMENT', 'a line must be an object with code, name and amount_minor'],
        ],
      );
      assert.equal(body.ingested, 3);
      assert.equal(body.billed_minor, 1255);
      const listed = (await listLines(m, 'INV-SHAPE')).json();
      assert.deepEqual(
        listed.lines
          .map((l: { code: string; name: string; amount_minor: number }) => [l.code, l.name.length, l.amount_minor])
          .sort(),
        [
          [longCode, 'Longest code'.length, 5],
          ['LIBRARY', LINE_NAME_LENGTH_MAX, 250],
          ['TUITION', 'Tuition'.length, 1000],
        ].sort(),
      );
      assert.equal(listed.total_minor, 1255);
    });

    it('a line with a bad shape does not hide a later line with the same code, which is stored', async () => {
      const m = await merchantWithCodes();
      const res = await ingest(m, {
        invoice_ref: 'INV-ORDER',
        lines: [
          { code: 'EXAM', amount_minor: 10 },
          { code: 'EXAM', name: 'Exam', amount_minor: 400 },
        ],
      });
      assert.equal(res.statusCode, 207, res.body);
      assert.deepEqual(
        res.json().errors.map((e: { index: number }) => e.index),
        [0],
      );
      assert.equal((await listLines(m, 'INV-ORDER')).json().total_minor, 400);
    });

    it('a form ingest reads each line as a JSON one does: amount_minor "abc" in one line is reported for it, the other line is stored', async () => {
      for (const format of ['form', 'multipart'] as const) {
        const m = await merchantWithCodes();
        const invoiceRef = `INV-FORM-${format}`;
        const res = await call(t, 'POST', '/api/v1/invoice-lines', {
          key: m.test_api_key,
          format,
          body: {
            invoice_ref: invoiceRef,
            lines: [
              { code: 'TUITION', name: 'Tuition', amount_minor: '1500' },
              { code: 'EXAM', name: 'Exam', amount_minor: 'abc' },
            ],
          },
        });
        assert.equal(res.statusCode, 207, `${format}: ${res.body}`);
        assert.deepEqual(
          res.json().errors.map((e: { index: number; code: string }) => [e.index, e.code]),
          [[1, 'INVOICE_LINE_AMOUNT_INVALID']],
          format,
        );
        assert.equal((await listLines(m, invoiceRef)).json().total_minor, 1500, format);
      }
    });

    it('a 207 with per-line errors is stored under its Idempotency-Key and replayed; a whole-request 400 stores nothing, so the key still runs afresh', async () => {
      const m = await merchantWithCodes();
      const key = `lines-${randomUUID()}`;
      const body = {
        invoice_ref: 'INV-IDEM-207',
        lines: [
          { code: 'TUITION', name: 'Tuition', amount_minor: 700 },
          { code: '', name: 'Empty', amount_minor: 1 },
        ],
      };
      const refused = await call(t, 'POST', '/api/v1/invoice-lines', {
        key: m.test_api_key,
        idempotencyKey: key,
        body: { ...body, lines: 'not an array' },
      });
      assertErrorEnvelope(refused, 400, 'INVALID_ARGUMENT');
      const first = await call(t, 'POST', '/api/v1/invoice-lines', { key: m.test_api_key, idempotencyKey: key, body });
      assert.equal(first.statusCode, 207, first.body);
      assert.equal(first.headers['idempotent-replayed'], undefined);
      // The line changes in between: a replay answers from the store and does not ingest again.
      await ingest(m, {
        invoice_ref: 'INV-IDEM-207',
        lines: [{ code: 'TUITION', name: 'Tuition', amount_minor: 900 }],
      });
      const replay = await call(t, 'POST', '/api/v1/invoice-lines', { key: m.test_api_key, idempotencyKey: key, body });
      assert.equal(replay.statusCode, 207);
      assert.equal(replay.headers['idempotent-replayed'], 'true');
      assert.equal(replay.body, first.body);
      assert.equal((await listLines(m, 'INV-IDEM-207')).json().total_minor, 900);
      const changed = await call(t, 'POST', '/api/v1/invoice-lines', {
        key: m.test_api_key,
        idempotencyKey: key,
        body: { ...body, lines: [body.lines[0]!] },
      });
      assertErrorEnvelope(changed, 422, 'IDEMPOTENCY_KEY_REUSED');
    });

    it('unknown fields of a good line are ignored, by the Idempotency-Key too: the same lines with an extra field replay', async () => {
      const m = await merchantWithCodes();
      const key = `lines-${randomUUID()}`;
      const body = {
        invoice_ref: 'INV-IDEM-UNKNOWN',
        lines: [{ code: 'TUITION', name: 'Tuition', amount_minor: 700 }],
      };
      const first = await call(t, 'POST', '/api/v1/invoice-lines', { key: m.test_api_key, idempotencyKey: key, body });
      assert.equal(first.statusCode, 200, first.body);
      const withExtra = await call(t, 'POST', '/api/v1/invoice-lines', {
        key: m.test_api_key,
        idempotencyKey: key,
        body: { ...body, lines: [{ ...body.lines[0]!, note: 'ignored' }] },
      });
      assert.equal(withExtra.statusCode, 200, withExtra.body);
      assert.equal(withExtra.headers['idempotent-replayed'], 'true');
      assert.equal(withExtra.body, first.body);
    });

    it('the OpenAPI document shows each line as the documented line or any other value, checked per line with 207', async () => {
      const doc = (await t.app.inject({ method: 'GET', url: '/openapi.json' })).json();
      const lineSchemas = {
        '/api/v1/invoice-lines': ['code', 'name', 'amount_minor'],
        '/api/v1/revenue-lines': ['code', 'name'],
      };
      for (const [path, fields] of Object.entries(lineSchemas)) {
        const operation = doc.paths[path].post;
        const lines = operation.requestBody.content['application/json'].schema.properties.lines;
        assert.equal(lines.type, 'array', path);
        const [documented, anything] = lines.items.anyOf;
        assert.deepEqual(Object.keys(documented.properties), fields, path);
        assert.deepEqual([...documented.required].sort(), [...fields].sort(), path);
        assert.equal(documented.properties.code.maxLength, LINE_CODE_LENGTH_MAX, path);
        assert.equal(anything.type, undefined, `${path}: the second branch accepts any value`);
        assert.match(anything.description, /reported in errors/, path);
        assert.ok(operation.responses['207'], `${path} documents 207`);
      }
    });

    it('a NUL character in a line name, an invoice_ref or a revenue line name is refused with 400 INVALID_ARGUMENT, never a 500', async () => {
      const m = await merchantWithCodes();
      assertErrorEnvelope(
        await ingest(m, { invoice_ref: 'INV-N', lines: [{ code: 'TUITION', name: 'T\u0000', amount_minor: 10 }] }),
        400,
        'INVALID_ARGUMENT',
      );
      assertErrorEnvelope(
        await ingest(m, { invoice_ref: 'INV-\u0000', lines: [{ code: 'TUITION', name: 'T', amount_minor: 10 }] }),
        400,
        'INVALID_ARGUMENT',
      );
      assertErrorEnvelope(await listLines(m, 'INV-\u0000'), 400, 'INVALID_ARGUMENT');
      assertErrorEnvelope(await sync(m, { lines: [{ code: 'NEW', name: 'New\u0000' }] }), 400, 'INVALID_ARGUMENT');
      assert.deepEqual((await listLines(m, 'INV-N')).json().lines, []);
      assert.equal((await listRevenue(m, true)).json().counts.total, 3);
    });

    it('GET /api/v1/invoice-lines without invoice_ref is refused with 400 INVALID_ARGUMENT', async () => {
      const m = await merchantWithCodes();
      const error = assertErrorEnvelope(
        await call(t, 'GET', '/api/v1/invoice-lines', { key: m.test_api_key }),
        400,
        'INVALID_ARGUMENT',
      );
      assert.ok(
        error.fields?.some((f) => f.field.includes('invoice_ref')) || error.message.includes('invoice_ref'),
        JSON.stringify(error),
      );
      assertErrorEnvelope(await listLines(m, ''), 400, 'INVALID_ARGUMENT');
    });
  });
});
