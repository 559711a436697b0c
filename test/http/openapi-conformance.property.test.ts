// Issue 29: the API document is exactly as strict as the server. Every operation of the served document
// (GET /openapi.json) is driven with requests generated from its own schemas (test/support/schema-arbitraries.ts):
// valid ones, and ones with one field made invalid. The document's schemas, run by Ajv, judge each request;
// the server must agree: a request the document accepts is never a 400 nor a 5xx, only a success or a
// business error the operation documents (404 for a random id, 409 SESSION_NOT_PAYABLE, ...); one it
// refuses is a 400 with the error envelope. Every answer, whatever it is, matches the schema its status
// and content type document.
//
// Skipped: GET /api/v1/events/stream (an SSE stream that stays open) and /api/v1/providers/* (provider
// notifications need bodies signed with the provider's secret; test/live-*.test.ts drive them).
//
// FC_RUNS sets the runs per operation (default 30); FC_SEED (and FC_PATH) replay a failure.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { Ajv, type ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';
import fc from 'fast-check';
import type { CreatedMerchant } from '../../src/accounts/service.ts';
import { createSession, momoBody, simulate, startAttempt } from '../support/checkout.ts';
import { bearer, startTestApp, storageKind, type TestContext } from '../support/helpers.ts';
import { checkEnvelope, multipartBody, multipartFile } from '../support/http.ts';
import {
  api,
  bankIds,
  bankRecipient,
  createPayout,
  fund,
  merchantWithHooks,
  momoRecipient,
} from '../support/payouts-fixtures.ts';
import { REMOVE, SchemaArbitraries, setAt, type Path, type Schema } from '../support/schema-arbitraries.ts';

const addFormats = addFormatsModule as unknown as (ajv: Ajv) => Ajv;

const RUNS = Number(process.env.FC_RUNS ?? 20);
const replay = process.env.FC_SEED ? { seed: Number(process.env.FC_SEED), path: process.env.FC_PATH } : {};
const SKIPPED = [/^\/api\/v1\/events\/stream$/, /^\/api\/v1\/providers\//];
const METHODS = ['get', 'post', 'put', 'patch', 'delete'] as const;
/** Fastify's maxParamLength: a longer path segment is refused by the router with 414 before any schema runs. */
const ROUTER_PARAM_LENGTH_MAX = 100;
/** An empty segment, `.` or `..` is no parameter at all (the URL names another path): not a schema question. */
const isPathSegment = (value: unknown) => !['', '.', '..'].includes(String(value));
/** A 1x1 PNG: evidence is judged by its content. */
/**
 * The 400s a valid request may get: rules no schema can say, each naming its field. What an id refers to
 * (a cursor, a bank of capabilities), how two fields compare (a range's order and length), what the key
 * fixes (merchant_id, environment: SPEC 4.3 rule 1) and metadata's size in bytes.
 */
const BEYOND_SCHEMAS: { field: RegExp; message: RegExp }[] = [
  { field: /^starting_after$/, message: /^is not an? [\w ]+ of this merchant and environment$/ },
  { field: /^bank_id$/, message: /^is not a supported bank$/ },
  {
    field: /^(created_lt|created_gte)$/,
    message: /^must be after created_gte$|^must be at most \d+ days after created_gte$/,
  },
  { field: /^(from|to)$/, message: /^must not be before from$|^must be at most \d+ days/ },
  { field: /^(merchant_id|environment)$/, message: /^conflicts with the API key$/ },
  { field: /^metadata$/, message: /^is too large$/ },
  // A payment link (issue 35): a fixed amount or a range, the range's order, unique custom field keys, a single-use
  // link's one payment, an expiry in the future, and a change that changes something.
  {
    field: /^amount_m(in|ax)_minor$/,
    message: /^must not be given with amount_minor$|^must be at (least|most) amount_m(in|ax)_minor/,
  },
  { field: /^custom_fields\.\d+\.key$/, message: /^repeats the key / },
  { field: /^max_payments$/, message: /^must be 1 \(or left out\) on a single_use link$/ },
  { field: /^expires_at$/, message: /^must be in the future$/ },
  { field: /^body$/, message: /^must change at least one of / },
  // A settlement schedule that is not manual needs a settlement account: the one given, or the one already saved.
  { field: /^recipient_id$/, message: /^is required for a (daily|weekly|monthly) schedule/ },
  // A rule of the JSON text, not of its values, in free-form values (metadata, a line reported in errors):
  // a number whose value is an integer beyond 2^53 - 1 is refused in any notation (1e300 too).
  { field: /./, message: /^must be an integer between -\d+ and \d+ \(a JSON number beyond them loses digits\)$/ },
];
const beyondSchemas = (body: { error?: { code?: string; fields?: { field: string; message: string }[] } }) =>
  body.error?.code === 'INVALID_ARGUMENT' &&
  (body.error.fields ?? []).length > 0 &&
  body.error.fields!.every((fault) =>
    BEYOND_SCHEMAS.some((rule) => rule.field.test(fault.field) && rule.message.test(fault.message)),
  );
const PNG = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==',
  'base64',
);

interface Parameter {
  name: string;
  in: 'path' | 'query' | 'header';
  required?: boolean;
  schema: Schema;
  $ref?: string;
}
interface Operation {
  operationId: string;
  parameters?: Parameter[];
  requestBody?: { required?: boolean; content: Record<string, { schema: Schema }> };
  responses: Record<string, { content?: Record<string, { schema: Schema }> }>;
  security?: unknown[];
}
interface Document {
  paths: Record<string, Record<string, Operation>>;
  components: { schemas: Record<string, Schema> };
}
interface Request {
  path: Record<string, unknown>;
  query: Record<string, unknown>;
  header: Record<string, unknown>;
  body: unknown;
  /** multipart operations: whether the file part is sent. */
  file: boolean;
}

describe(`the API document is exactly as strict as the server (${storageKind})`, () => {
  let t: TestContext;
  let doc: Document;
  let m: CreatedMerchant;
  const ids: Record<string, string[]> = {};
  const oracle = addFormats(new Ajv({ strict: false, allErrors: false }));
  const textOracle = addFormats(new Ajv({ strict: false, allErrors: false, coerceTypes: true }));
  const compiled = new Map<string, ValidateFunction>();
  /** A validator of `schema` whose $refs resolve in the document's components. */
  const validator = (key: string, schema: Schema, text = false): ValidateFunction => {
    let validate = compiled.get(key);
    if (!validate) {
      validate = (text ? textOracle : oracle).compile({
        $id: `https://sika.test/${compiled.size}`,
        components: doc.components,
        allOf: [schema],
      });
      compiled.set(key, validate);
    }
    return validate;
  };

  before(async () => {
    t = await startTestApp();
    const res = await t.app.inject({ method: 'GET', url: '/openapi.json' });
    assert.equal(res.statusCode, 200);
    doc = res.json();

    // Real objects, so that valid requests reach the business logic: sessions (one paid, with its attempt),
    // a refund, events, recipients, payouts (one held, one paid) and an evidence file.
    m = await merchantWithHooks(t);
    const key = m.test_api_key;
    await fund(t, m.merchant_id, 'test', 50_000_000);
    const open = await createSession(t, m);
    const paid = await createSession(t, m);
    const attempt = await startAttempt(t, paid.id, momoBody(paid.amount_minor));
    await simulate(t, m, attempt.attempt_reference, 'paid');
    const waiting = await createSession(t, m);
    const pendingAttempt = await startAttempt(t, waiting.id, momoBody(waiting.amount_minor));
    const refund = await api(t, key, 'POST', '/api/v1/refunds', {
      session_id: paid.id,
      amount_minor: 100,
      test_outcome: 'pending',
    });
    assert.equal(refund.statusCode, 201, refund.body);
    const events = (await api(t, key, 'GET', '/api/v1/events')).json().data as { id: string }[];
    const bank = await bankRecipient(t, key);
    const wallet = await momoRecipient(t, key);
    const held = await createPayout(t, key, bank.id, 1_000, { test_outcome: 'processing' });
    const done = await createPayout(t, key, wallet.id, 1_000);
    const link = await api(t, key, 'POST', '/api/v1/payment-links', { name: 'Fees', amount_minor: 1_000 });
    assert.equal(link.statusCode, 201, link.body);
    const upload = multipartFile('file', 'proof.png', 'image/png', PNG);
    const evidence = await t.app.inject({
      method: 'POST',
      url: `/api/v1/payouts/${done.id}/evidence`,
      headers: { ...bearer(key), 'content-type': upload.contentType },
      payload: upload.payload,
    });
    Object.assign(ids, {
      session: [open.id, paid.id, waiting.id],
      link: [link.json().id],
      attempt: [attempt.attempt_reference, pendingAttempt.attempt_reference],
      refund: [refund.json().id],
      event: events.map((event) => event.id).slice(0, 5),
      transaction: ((await api(t, key, 'GET', '/api/v1/balance/transactions')).json().data as { id: string }[])
        .map((row) => row.id)
        .slice(0, 5),
      recipient: [bank.id, wallet.id],
      payout: [held.id, done.id],
      bank: await bankIds(t, key),
    });
    // The upload's answer is read here, after its request: an evidence id when it worked.
    if (evidence.statusCode === 201) ids.evidence = [evidence.json().id];
    else assert.fail(`evidence upload: ${evidence.statusCode} ${evidence.body}`);
  });
  after(() => t.close());

  /** Values that reach real objects, by field or parameter name (as the operation's path means them). */
  function knownValues(path: string): Record<string, fc.Arbitrary<unknown>> {
    const some = (list: string[] | undefined) => fc.constantFrom(...(list?.length ? list : ['none']));
    return {
      reference: some(path.startsWith('/api/v1/test/payment-attempts/') ? ids.attempt : ids.session),
      attempt_reference: some(ids.attempt),
      id: some(
        path.startsWith('/api/v1/events')
          ? ids.event
          : path.includes('/refunds')
            ? ids.refund
            : path.startsWith('/api/v1/payment-links')
              ? ids.link
              : ids.session,
      ),
      payment_link_id: some(ids.link),
      session_id: some(ids.session),
      // A cursor names an object of the list (BEYOND_SCHEMAS: an unknown one is a 400).
      starting_after: some(
        path.includes('/events')
          ? ids.event
          : path.includes('/refunds')
            ? ids.refund
            : path.includes('/balance')
              ? ids.transaction
              : path.includes('/payment-links')
                ? ids.link
                : ids.session,
      ),
      payout_id: some(ids.payout),
      recipient_id: some(ids.recipient),
      evidence_id: some(ids.evidence),
      previous_version_id: some(ids.recipient),
      bank_id: some(ids.bank),
      // The key fixes these (SPEC 4.3 rule 1): the only values a request may repeat.
      merchant_id: fc.constant(m.merchant_id),
      environment: fc.constant('test'),
    };
  }

  const operations = () =>
    Object.entries(doc.paths).flatMap(([path, item]) =>
      METHODS.filter((method) => item[method]).map((method) => ({ path, method, operation: item[method]! })),
    );

  it('drives every operation of the served document but the stream and the provider notifications', async (ctx) => {
    const driven = operations().filter(
      ({ path }) => path.startsWith('/api/') && !SKIPPED.some((skip) => skip.test(path)),
    );
    assert.ok(driven.length >= 35, `only ${driven.length} operations`);
    for (const { path, method, operation } of driven) {
      await ctx.test(`${method.toUpperCase()} ${path}`, (opCtx) =>
        checkOperation(path, method, operation, opCtx.diagnostic.bind(opCtx)),
      );
    }
  });

  async function checkOperation(
    path: string,
    method: string,
    operation: Operation,
    diagnostic: (message: string) => void,
  ): Promise<void> {
    const seen = { valid: new Map<number, number>(), invalid: new Map<number, number>() };
    const arbitraries = new SchemaArbitraries(doc.components.schemas, knownValues(path));
    const parameters = (operation.parameters ?? []).filter(
      (parameter) => !parameter.$ref && parameter.name.toLowerCase() !== 'x-request-id',
    );
    const jsonBody = operation.requestBody?.content['application/json']?.schema;
    const multipart =
      !jsonBody && operation.requestBody?.content['multipart/form-data']
        ? operation.requestBody.content['multipart/form-data'].schema
        : null;

    const part = (where: Parameter['in']) => {
      const model: Record<string, fc.Arbitrary<unknown>> = {};
      const required: string[] = [];
      for (const parameter of parameters.filter((p) => p.in === where)) {
        const value = arbitraries.valid(parameter.schema, parameter.name);
        model[parameter.name] = where === 'path' ? value.filter(isPathSegment) : value;
        if (parameter.required) required.push(parameter.name);
      }
      return fc.record(model, { requiredKeys: required });
    };
    const valid: fc.Arbitrary<Request> = fc.record({
      path: part('path'),
      query: part('query'),
      header: part('header'),
      body: jsonBody ? arbitraries.valid(jsonBody) : fc.constant(undefined),
      file: fc.constant(Boolean(multipart)),
    });

    /** One field made invalid: a parameter, a body field (or a required one left out), or the file. */
    const invalid = valid.chain((request) => {
      const spots: fc.Arbitrary<Request>[] = [];
      for (const parameter of parameters) {
        const where = parameter.in;
        const bad = arbitraries.invalid(parameter.schema, 'text');
        if (bad)
          spots.push(
            bad
              .filter((value) => where !== 'path' || isPathSegment(value))
              .map((value) => ({ ...request, [where]: { ...request[where], [parameter.name]: value } })),
          );
        if (parameter.required && where !== 'path')
          spots.push(
            fc.constant({
              ...request,
              [where]: setAt(request[where], [parameter.name], REMOVE) as Record<string, unknown>,
            }),
          );
      }
      if (jsonBody) {
        for (const spot of arbitraries.spots(jsonBody, request.body)) {
          if (spot.required) spots.push(fc.constant({ ...request, body: setAt(request.body, spot.path, REMOVE) }));
          const bad = spot.schema && arbitraries.invalid(spot.schema, 'json');
          if (bad)
            spots.push(bad.map((value) => ({ ...request, body: setAt(request.body, spot.path as Path, value) })));
        }
      }
      if (multipart) spots.push(fc.constant({ ...request, file: false }));
      return spots.length ? fc.oneof(...spots) : fc.constant(request);
    });

    /** Sends one request and checks the answer against what the document says of it. */
    const tryRequest = async (request: Request) => {
      const verdict = judge(path, method, parameters, jsonBody, multipart, request);
      const res = await send(path, method, operation, request);
      const where = `${method.toUpperCase()} ${path} ${JSON.stringify(request)} -> ${res.statusCode} ${res.body.slice(0, 400)}`;
      const tally = verdict.valid ? seen.valid : seen.invalid;
      tally.set(res.statusCode, (tally.get(res.statusCode) ?? 0) + 1);
      assert.ok(res.statusCode < 500, `a server error: ${where}`);
      checkAnswer(operation, res, where);
      if (verdict.valid) {
        if (res.statusCode === 400 && beyondSchemas(res.json())) return;
        assert.notEqual(res.statusCode, 400, `the document accepts this request, the server refused it: ${where}`);
        // A rate limit (one range replay per key every 10 s) refuses a valid request for its timing, not its shape.
        const rateLimited =
          res.statusCode === 429 &&
          operation.responses['429'] !== undefined &&
          checkEnvelope(res, where).code === 'RATE_LIMITED';
        assert.ok(
          res.statusCode < 400 ||
            res.statusCode === 404 ||
            res.statusCode === 409 ||
            res.statusCode === 422 ||
            rateLimited,
          `a valid request refused with ${res.statusCode}: ${where}`,
        );
      } else {
        const tooLong = verdict.tooLongPathParameter;
        assert.ok(
          res.statusCode === 400 || (tooLong && res.statusCode === 414),
          `the document refuses this request (${verdict.why}), the server answered: ${where}`,
        );
        assert.equal(
          checkEnvelope(res, where).code,
          res.statusCode === 414 ? 'URI_TOO_LONG' : 'INVALID_ARGUMENT',
          where,
        );
      }
    };
    const run = await fc.check(fc.asyncProperty(fc.oneof(valid, invalid), tryRequest), { numRuns: RUNS, ...replay });
    // A short run may draw only one kind (an "invalid" draw can land on a value that is still valid): then a few of
    // the missing kind are drawn until the document judges them so, and every operation meets both kinds.
    const takesInput = parameters.length > 0 || Boolean(jsonBody || multipart);
    const topUp = async (kind: fc.Arbitrary<Request>, judgedValid: boolean) =>
      fc.check(
        fc.asyncProperty(
          kind.filter((request) => judge(path, method, parameters, jsonBody, multipart, request).valid === judgedValid),
          tryRequest,
        ),
        { numRuns: 3, ...replay },
      );
    const topUps = [
      !run.failed && seen.valid.size === 0 ? await topUp(valid, true) : null,
      !run.failed && takesInput && seen.invalid.size === 0 ? await topUp(invalid, false) : null,
    ];
    const summary = (tally: Map<number, number>) =>
      [...tally]
        .sort(([a], [b]) => a - b)
        .map(([status, n]) => `${status}x${n}`)
        .join(' ');
    diagnostic(`valid: ${summary(seen.valid) || 'none'}; invalid: ${summary(seen.invalid) || 'none'}`);
    // The assertion's own message says what disagreed; fast-check's report says how to replay it.
    for (const failed of [run, ...topUps])
      if (failed?.failed)
        assert.fail(
          `${(failed.errorInstance as Error | undefined)?.message ?? failed.errorInstance}\n${fc.defaultReportMessage(failed)}`,
        );
    // Both kinds were tried (an operation with no parameter and no body has no invalid request).
    assert.ok(
      seen.valid.size > 0 && (seen.invalid.size > 0 || !takesInput),
      `valid and invalid requests were both tried: ${JSON.stringify([...seen.valid, ...seen.invalid])}`,
    );
  }

  /** What the document says of a request: Ajv runs its schemas (parameters are text, so they are coerced as the wire carries them). */
  function judge(
    path: string,
    method: string,
    parameters: Parameter[],
    jsonBody: Schema | undefined,
    multipart: Schema | null,
    request: Request,
  ) {
    const tooLongPathParameter = Object.values(request.path).some(
      (value) => String(value).length > ROUTER_PARAM_LENGTH_MAX,
    );
    for (const where of ['path', 'query', 'header'] as const) {
      const own = parameters.filter((parameter) => parameter.in === where);
      const schema = {
        type: 'object',
        properties: Object.fromEntries(own.map((parameter) => [parameter.name, parameter.schema])),
        required: own.filter((parameter) => parameter.required).map((parameter) => parameter.name),
      };
      const values = Object.fromEntries(Object.entries(request[where]).map(([name, value]) => [name, String(value)]));
      const validate = validator(`${method} ${path} ${where}`, schema, true);
      if (!validate(values))
        return { valid: false, why: `${where}: ${textOracle.errorsText(validate.errors)}`, tooLongPathParameter };
    }
    if (jsonBody) {
      const validate = validator(`${method} ${path} body`, jsonBody);
      if (!validate(structuredClone(request.body)))
        return { valid: false, why: `body: ${oracle.errorsText(validate.errors)}`, tooLongPathParameter };
    }
    if (multipart && !request.file) return { valid: false, why: 'no file part', tooLongPathParameter };
    return { valid: true, why: '', tooLongPathParameter };
  }

  async function send(path: string, method: string, operation: Operation, request: Request) {
    const url = path.replace(/\{(\w+)\}/g, (_, name: string) => encodeURIComponent(String(request.path[name])));
    const headers: Record<string, string> = { accept: 'application/json' };
    if (operation.security?.length) headers.authorization = `Bearer ${m.test_api_key}`;
    for (const [name, value] of Object.entries(request.header)) {
      // A fresh key per request (when it stays valid), so that each reaches the route rather than a replay.
      const text = String(value);
      headers[name] =
        name === 'idempotency-key' && /^[\x20-\x7e]{1,200}$/.test(text) ? `${text}-${randomUUID()}` : text;
    }
    const query = Object.fromEntries(Object.entries(request.query).map(([name, value]) => [name, String(value)]));
    let payload: string | Buffer | undefined;
    if (request.body !== undefined) {
      payload = JSON.stringify(request.body);
      headers['content-type'] = 'application/json';
    } else if (operation.requestBody?.content['multipart/form-data']) {
      // Without the file: a text field only, so the body is still well-formed multipart.
      const upload = request.file
        ? multipartFile('file', 'proof.png', 'image/png', PNG)
        : multipartBody({ note: 'no file here' });
      payload = upload.payload;
      headers['content-type'] = upload.contentType;
    }
    return t.app.inject({ method: method.toUpperCase() as 'GET', url, query, headers, payload });
  }

  /** The answer's status is documented for the operation, and its body matches what that status and content type document. */
  function checkAnswer(
    operation: Operation,
    res: { statusCode: number; body: string; headers: Record<string, unknown> },
    where: string,
  ): void {
    const documented = operation.responses[String(res.statusCode)] ?? operation.responses.default;
    assert.ok(documented, `status ${res.statusCode} is not documented: ${where}`);
    if (!documented.content) {
      assert.equal(res.body, '', `no body is documented: ${where}`);
      return;
    }
    const type = String(res.headers['content-type'] ?? '')
      .split(';')[0]!
      .trim();
    const media = documented.content[type];
    assert.ok(
      media,
      `content type ${type} is not documented for ${res.statusCode} (${Object.keys(documented.content).join(', ')}): ${where}`,
    );
    if (type !== 'application/json') return;
    const validate = validator(`${operation.operationId} ${res.statusCode} ${type}`, media.schema);
    assert.ok(
      validate(JSON.parse(res.body)),
      `the answer does not match its schema (${oracle.errorsText(validate.errors)}): ${where}`,
    );
  }
});
