// Issue 19: the document at GET /openapi.json is what code generators read. It must be valid OpenAPI 3.1
// (@readme/openapi-parser), name every operation and resource, type every closed set as an enum read from
// its source, document the headers, content types and webhooks the server really uses, and describe real
// answers. A client generated from it with openapi-typescript must compile under strict tsc without casts
// (the @ts-expect-error lines prove wrong values are refused) and work against the running server.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { after, before, describe, it } from 'node:test';
import { validate, compileErrors } from '@readme/openapi-parser';
import { Ajv } from 'ajv';
import addFormatsModule from 'ajv-formats';
import openapiTS, { astToString } from 'openapi-typescript';
import { ATTEMPT_STATUSES, SESSION_STATUSES } from '../../src/checkout/model.ts';
import { EVENT_TYPES, eventSchemaId } from '../../src/events/event-schemas.ts';
import { ERROR_CATALOGUE } from '../../src/lib/errors.ts';
import { MOMO_NETWORKS } from '../../src/lib/ghana.ts';
import { ACCOUNT_TYPES, EVIDENCE_CONTENT_TYPES, PAYOUT_STATUSES } from '../../src/payouts/model.ts';
import { railIds } from '../../src/rails/registry.ts';
import { REFUND_STATUSES } from '../../src/refunds/model.ts';
import { createSession, momoBody, simulate, startAttempt } from '../support/checkout.ts';
import { startTestApp, storageKind, type TestContext } from '../support/helpers.ts';
import { call } from '../support/http.ts';

const addFormats = addFormatsModule as unknown as (ajv: Ajv) => Ajv;

type Json = Record<string, unknown>;
interface Response {
  description: string;
  headers?: Record<string, unknown>;
  content?: Record<string, { schema?: Json; example?: unknown; examples?: unknown }>;
}
interface Operation {
  operationId?: string;
  parameters?: Json[];
  requestBody?: { content: Record<string, { schema?: Json; example?: unknown; examples?: unknown }> };
  responses: Record<string, Response>;
}
interface Document {
  openapi: string;
  paths: Record<string, Record<string, Operation>>;
  components: { schemas: Record<string, Json>; headers: Json; parameters: Json };
  webhooks: Record<string, { post: Operation }>;
}

const METHODS = ['get', 'put', 'post', 'delete', 'patch'];
const apiOperations = (doc: Document) =>
  Object.entries(doc.paths)
    .filter(([path]) => path.startsWith('/api/'))
    .flatMap(([path, item]) =>
      METHODS.filter((method) => item[method]).map((method) => ({
        path,
        method,
        operation: item[method]!,
        where: `${method.toUpperCase()} ${path}`,
      })),
    );

/** The resources, lists and events a generator needs by name. */
const NAMED = [
  'ErrorEnvelope',
  'CheckoutSession',
  'CheckoutSessionList',
  'Payment',
  'PaymentAttempt',
  'PaymentAttemptInitiation',
  'CashDepositSlip',
  'Payout',
  'PayoutList',
  'PayoutRecipient',
  'PayoutQuote',
  'PayoutBalance',
  'PayoutCapabilities',
  'Recipient',
  'RecipientList',
  'Evidence',
  'EvidenceUpload',
  'Refund',
  'RefundList',
  'BalanceTransaction',
  'BalanceTransactionList',
  'BalanceSummary',
  'RevenueLine',
  'RevenueLineList',
  'InvoiceLineList',
];

/** Objects that are free-form by design: the merchant's own metadata, and the events API's `data` (each type's is in its webhook's body). */
// A map (patternProperties, or additionalProperties with a schema) has typed values, so it is not empty.
const FREE_FORM = [/\.metadata$/, /^Event\w*\.data$/];

describe(`OpenAPI document (${storageKind})`, () => {
  let t: TestContext;
  let doc: Document;
  const schemaOf = (name: string) => doc.components.schemas[name]!;
  const deref = (schema: Json): Json =>
    typeof schema.$ref === 'string' ? deref(schemaOf(schema.$ref.replace('#/components/schemas/', ''))) : schema;
  const property = (name: string, path: string): Json =>
    path
      .split('.')
      .reduce<Json>((schema, key) => deref((deref(schema).properties as Record<string, Json>)[key]!), schemaOf(name));
  const enumOf = (schema: Json): unknown[] => {
    const resolved = deref(schema);
    if (resolved.enum) return resolved.enum as unknown[];
    const branches = (resolved.anyOf ?? resolved.oneOf) as Json[] | undefined;
    return (branches ?? []).flatMap((branch) => (deref(branch).type === 'null' ? [] : enumOf(branch)));
  };
  let ajv: Ajv;
  const check = (name: string, value: unknown) => {
    const validateValue = ajv.getSchema(`doc#/components/schemas/${name}`)!;
    assert.ok(
      validateValue(value),
      `${name}: ${JSON.stringify(validateValue.errors)} in ${JSON.stringify(value).slice(0, 500)}`,
    );
  };

  before(async () => {
    t = await startTestApp();
    const response = await t.app.inject({ method: 'GET', url: '/openapi.json' });
    assert.equal(response.statusCode, 200);
    doc = response.json();
    ajv = addFormats(new Ajv({ strict: false, allErrors: true }));
    ajv.addSchema({ $id: 'doc', components: doc.components });
  });
  after(() => t.close());

  it('is a valid OpenAPI 3.1 document (@readme/openapi-parser)', async () => {
    assert.equal(doc.openapi, '3.1.0');
    const result = await validate(structuredClone(doc) as never);
    assert.ok(result.valid, result.valid ? '' : compileErrors(result));
  });

  it('every /api operation has a unique camelCase operationId and a real description on every answer', () => {
    const operations = apiOperations(doc);
    assert.ok(operations.length >= 40, `${operations.length} operations`);
    const ids = new Map<string, string>();
    for (const { operation, where } of operations) {
      assert.match(operation.operationId ?? '', /^[a-z][a-zA-Z0-9]+$/, `${where} operationId`);
      assert.ok(
        !ids.has(operation.operationId!),
        `${where} and ${ids.get(operation.operationId!)} share ${operation.operationId}`,
      );
      ids.set(operation.operationId!, where);
      for (const [status, response] of Object.entries(operation.responses)) {
        assert.ok(
          response.description && response.description !== 'Default Response',
          `${where} ${status} has no description`,
        );
      }
    }
    // The documented routes are the registered ones: a new /api route cannot go undocumented.
    const registered = t.app.registeredRoutes.filter(
      (r) => r.url.startsWith('/api/') && r.method !== 'HEAD' && !(r.schema as { hide?: boolean } | undefined)?.hide,
    );
    for (const route of registered) {
      const path = route.url.replace(/:(\w+)/g, '{$1}');
      assert.ok(doc.paths[path]?.[route.method.toLowerCase()], `${route.method} ${route.url} is not in the document`);
    }
    for (const id of [
      'createSession',
      'retrieveSession',
      'listSessions',
      'createPayout',
      'retrievePayout',
      'listPayouts',
      'createRefund',
      'createRecipient',
      'retrievePayoutCapabilities',
    ]) {
      assert.ok(ids.has(id), id);
    }
  });

  it('names a schema for every resource, and every closed set is an enum read from its source', () => {
    for (const name of NAMED) assert.ok(doc.components.schemas[name], `components.schemas.${name}`);
    assert.deepEqual(enumOf(property('ErrorEnvelope', 'error.code')), Object.keys(ERROR_CATALOGUE));
    assert.deepEqual(enumOf(property('CheckoutSession', 'status')), [...SESSION_STATUSES]);
    assert.deepEqual(enumOf(property('Payment', 'rail')), railIds());
    assert.deepEqual(enumOf(property('PaymentAttempt', 'status')), [...ATTEMPT_STATUSES]);
    assert.deepEqual(enumOf(property('Recipient', 'account_type')), [...ACCOUNT_TYPES]);
    assert.deepEqual(enumOf(property('Recipient', 'network')), [...MOMO_NETWORKS]);
    assert.deepEqual(enumOf(property('Payout', 'status')), [...PAYOUT_STATUSES]);
    assert.deepEqual(enumOf(property('Refund', 'status')), [...REFUND_STATUSES]);
    const recipientBody = deref(
      doc.paths['/api/v1/payouts/recipients']!.post!.requestBody!.content['application/json']!.schema!,
    );
    const bodyProperties = recipientBody.properties as Record<string, Json>;
    assert.deepEqual(enumOf(bodyProperties.account_type!), [...ACCOUNT_TYPES]);
    assert.deepEqual(enumOf(bodyProperties.network!), [...MOMO_NETWORKS]);
    // The attempt's rail: an enum of the registry's rails as they were when the app was built.
    const attemptBody = deref(
      doc.paths['/api/v1/checkout/sessions/{reference}/provider-attempts']!.post!.requestBody!.content[
        'application/json'
      ]!.schema!,
    );
    assert.deepEqual(enumOf((attemptBody.properties as Record<string, Json>).rail!), railIds());
  });

  it('no answer with fields is typed as an empty object', () => {
    const empty: string[] = [];
    const seen = new Set<Json>();
    const walk = (schema: Json | undefined, where: string) => {
      if (!schema || typeof schema !== 'object') return;
      if (typeof schema.$ref === 'string') {
        const name = schema.$ref.replace('#/components/schemas/', '');
        const target = schemaOf(name);
        if (seen.has(target)) return;
        seen.add(target);
        return walk(target, name);
      }
      const properties = schema.properties as Record<string, Json> | undefined;
      const typedMap =
        Boolean(schema.patternProperties) ||
        (typeof schema.additionalProperties === 'object' && schema.additionalProperties !== null);
      if (
        schema.type === 'object' &&
        Object.keys(properties ?? {}).length === 0 &&
        !typedMap &&
        !FREE_FORM.some((pattern) => pattern.test(where))
      )
        empty.push(where);
      for (const value of Object.values((schema.patternProperties as Record<string, Json> | undefined) ?? {}))
        walk(value, `${where}{}`);
      for (const [key, value] of Object.entries(properties ?? {})) walk(value, `${where}.${key}`);
      for (const key of ['items', 'additionalProperties'] as const)
        if (schema[key] && typeof schema[key] === 'object') walk(schema[key] as Json, `${where}[]`);
      for (const key of ['anyOf', 'oneOf', 'allOf'] as const)
        for (const branch of (schema[key] as Json[] | undefined) ?? []) walk(branch, where);
    };
    for (const { operation, where } of apiOperations(doc)) {
      for (const [status, response] of Object.entries(operation.responses)) {
        if (!status.startsWith('2')) continue;
        walk(response.content?.['application/json']?.schema, `${where} ${status}`);
      }
    }
    for (const { post } of Object.values(doc.webhooks))
      walk(post.requestBody!.content['application/json']!.schema, 'webhook');
    assert.deepEqual(empty, []);
  });

  it('documents Idempotency-Key, Idempotent-Replayed, Retry-After and x-request-id where the server uses them', () => {
    const idempotent = new Set(
      t.app.registeredRoutes.filter((r) => r.idempotent).map((r) => `${r.method} ${r.url.replace(/:(\w+)/g, '{$1}')}`),
    );
    assert.ok(idempotent.has('POST /api/v1/sessions'));
    for (const { operation, where } of apiOperations(doc)) {
      const key = operation.parameters?.find(
        (p) => p.in === 'header' && String(p.name).toLowerCase() === 'idempotency-key',
      );
      assert.equal(Boolean(key), idempotent.has(where), `${where} Idempotency-Key`);
      if (key) assert.equal((key.schema as Json).maxLength, 255);
      for (const [status, response] of Object.entries(operation.responses)) {
        assert.ok(response.headers?.['x-request-id'], `${where} ${status} x-request-id`);
        assert.equal(
          Boolean(response.headers?.['Retry-After']),
          status === '429' || status === '503',
          `${where} ${status} Retry-After`,
        );
        assert.equal(
          Boolean(response.headers?.['Idempotent-Replayed']),
          Boolean(key) && status.startsWith('2'),
          `${where} ${status} Idempotent-Replayed`,
        );
      }
    }
    assert.ok(
      doc.components.headers.RetryAfter &&
        doc.components.headers.IdempotentReplayed &&
        doc.components.headers.XRequestId,
    );
  });

  it('gives every answer and body its real content type', () => {
    const receipt = doc.paths['/api/v1/payouts/{payout_id}/receipt']!.get!.responses;
    assert.deepEqual(Object.keys(receipt['200']!.content!), ['application/pdf']);
    for (const [status, response] of Object.entries(receipt))
      if (status !== '200') assert.deepEqual(Object.keys(response.content!), ['application/json'], `receipt ${status}`);
    // Lists answer JSON only in the document (a generator types them as the list); each CSV file is an export operation of its own.
    const exports = {
      sessions: '/api/v1/sessions',
      payouts: '/api/v1/payouts',
      refunds: '/api/v1/refunds',
      'balance-transactions': '/api/v1/balance/transactions',
      'balance-summary': '/api/v1/balance/summary',
    };
    for (const [file, path] of Object.entries(exports)) {
      const list = doc.paths[path]!.get!.responses['200']!;
      assert.deepEqual(Object.keys(list.content!), ['application/json'], path);
      assert.match(
        list.description,
        new RegExp(`GET /api/v1/exports/${file} \\(or this path with \`Accept: text/csv\`\\)`),
        path,
      );
      const exported = doc.paths[`/api/v1/exports/${file}`]!.get!;
      assert.deepEqual(Object.keys(exported.responses['200']!.content!), ['text/csv'], file);
      for (const [status, response] of Object.entries(exported.responses))
        if (status !== '200')
          assert.deepEqual(Object.keys(response.content!), ['application/json'], `${file} ${status}`);
    }
    const texts = apiOperations(doc).filter(({ operation }) =>
      Object.values(operation.responses).some((response) => response.content?.['text/csv']),
    );
    assert.deepEqual(
      texts.map(({ where }) => where).sort(),
      Object.keys(exports)
        .map((file) => `GET /api/v1/exports/${file}`)
        .sort(),
    );
    assert.deepEqual(
      Object.keys(doc.paths['/api/v1/payouts/{payout_id}/evidence/{evidence_id}']!.get!.responses['200']!.content!),
      [...EVIDENCE_CONTENT_TYPES],
    );
    const evidence = doc.paths['/api/v1/payouts/{payout_id}/evidence']!.post!.requestBody!.content;
    assert.deepEqual(Object.keys(evidence), ['multipart/form-data']);
    assert.deepEqual((evidence['multipart/form-data']!.schema!.properties as Record<string, Json>).file, {
      ...(evidence['multipart/form-data']!.schema!.properties as Record<string, Json>).file,
      type: 'string',
      format: 'binary',
    });
    for (const { path, operation, where } of apiOperations(doc)) {
      const content = operation.requestBody?.content;
      if (!content?.['application/json'] || path.startsWith('/api/v1/providers/')) continue;
      assert.deepEqual(
        Object.keys(content).sort(),
        ['application/json', 'application/x-www-form-urlencoded', 'multipart/form-data'],
        where,
      );
    }
  });

  it('shows examples of the main bodies and resources, and they match their schemas', () => {
    for (const [path, method] of [
      ['/api/v1/sessions', 'post'],
      ['/api/v1/refunds', 'post'],
      ['/api/v1/payouts', 'post'],
      ['/api/v1/payouts/quote', 'post'],
      ['/api/v1/payouts/recipients', 'post'],
      ['/api/v1/invoice-lines', 'post'],
      ['/api/v1/checkout/sessions/{reference}/provider-attempts', 'post'],
    ] as const) {
      const media = doc.paths[path]![method]!.requestBody!.content['application/json']!;
      assert.ok(media.example ?? media.examples, `${method} ${path} body example`);
      const validateBody = new Ajv({ strict: false, allErrors: true });
      addFormats(validateBody);
      const example = media.example ?? Object.values(media.examples as Record<string, { value: unknown }>)[0]!.value;
      assert.ok(validateBody.validate(media.schema!, example), `${path}: ${JSON.stringify(validateBody.errors)}`);
    }
    for (const name of ['CheckoutSession', 'Refund', 'Payout', 'Recipient', 'ErrorEnvelope']) {
      const examples = schemaOf(name).examples as unknown[] | undefined;
      assert.ok(examples?.length, `${name} examples`);
      for (const example of examples!) check(name, example);
    }
  });

  it('has a webhook per event type with its signed payload, and real events and answers match their schemas', async () => {
    assert.deepEqual(Object.keys(doc.webhooks), [...EVENT_TYPES]);
    for (const type of [
      'checkout.session.completed',
      'checkout.session.reopened',
      'payout.paid',
      'payout.returned',
      'refund.created',
      'refund.succeeded',
    ])
      assert.ok(doc.webhooks[type], type);
    for (const [type, { post }] of Object.entries(doc.webhooks)) {
      assert.deepEqual(
        post.parameters!.map((p) => p.name),
        ['webhook-id', 'webhook-timestamp', 'webhook-signature'],
      );
      const schema = post.requestBody!.content['application/json']!.schema!;
      assert.equal(schema.$ref, `#/components/schemas/${eventSchemaId(type)}`);
      const event = schemaOf(eventSchemaId(type));
      assert.deepEqual(((event.properties as Record<string, Json>).type as Json).enum, [type]);
      for (const field of ['id', 'type', 'created_at', 'environment', 'livemode', 'version', 'data'])
        assert.ok((event.required as string[]).includes(field), `${type} ${field}`);
    }

    // Real answers and events, through the API: a paid session, its refund, a recipient and a Test payout.
    // Payouts need a webhook endpoint paired with the key (nothing is delivered: workers are off).
    const m = await t.merchant({ webhookUrl: 'http://127.0.0.1:9/webhooks' });
    const key = m.test_api_key;
    const session = await createSession(t, m);
    const attempt = await startAttempt(t, session.id, momoBody(50000));
    check('PaymentAttemptInitiation', attempt);
    check('PaymentAttempt', await simulate(t, m, attempt.attempt_reference, 'paid'));
    const paid = await call(t, 'GET', `/api/v1/sessions/${session.id}`, { key });
    check('CheckoutSession', paid.json());
    const refund = await call(t, 'POST', '/api/v1/refunds', {
      key,
      body: { session_id: session.id, amount_minor: 1000 },
    });
    assert.equal(refund.statusCode, 201, refund.body);
    check('Refund', refund.json());
    const capabilities = await call(t, 'GET', '/api/v1/payouts/capabilities', { key });
    check('PayoutCapabilities', capabilities.json());
    const recipient = await call(t, 'POST', '/api/v1/payouts/recipients', {
      key,
      body: { account_type: 'momo', network: 'mtn', phone: '0241234567', account_name: 'Kofi Boateng' },
    });
    assert.equal(recipient.statusCode, 201, recipient.body);
    check('Recipient', recipient.json());
    const payout = await call(t, 'POST', '/api/v1/payouts', {
      key,
      body: { recipient_id: recipient.json().id, amount_minor: 1000, client_reference: 'openapi-doc-1' },
    });
    assert.equal(payout.statusCode, 201, payout.body);
    check('Payout', payout.json());
    const link = await call(t, 'POST', '/api/v1/payment-links', {
      key,
      body: { name: 'School fees', custom_fields: [{ key: 'student', label: 'Student', type: 'text' }] },
    });
    assert.equal(link.statusCode, 201, link.body);
    check('PaymentLink', link.json());
    const changed = await call(t, 'POST', `/api/v1/payment-links/${link.json().id}`, { key, body: { active: false } });
    assert.equal(changed.statusCode, 200, changed.body);
    check('PaymentLink', changed.json());
    const refused = await call(t, 'POST', '/api/v1/payouts/recipients', {
      key,
      body: { account_type: 'mobile-money', account_name: 'Kofi Boateng' },
    });
    assert.equal(refused.statusCode, 400);
    check('ErrorEnvelope', refused.json());

    const events = await call(t, 'GET', '/api/v1/events', { key, query: { limit: '100' } });
    assert.equal(events.statusCode, 200, events.body);
    const types = new Set<string>();
    for (const event of events.json().data as { type: string }[]) {
      assert.ok(EVENT_TYPES.includes(event.type), `${event.type} is not documented`);
      check(eventSchemaId(event.type), event);
      types.add(event.type);
    }
    for (const type of [
      'checkout.session.pending',
      'checkout.session.completed',
      'refund.created',
      'refund.succeeded',
      'payout.paid',
      'payment_link.created',
      'payment_link.updated',
    ])
      assert.ok(types.has(type), `${type} among ${[...types]}`);
  });

  it('generates a client (openapi-typescript, openapi-fetch) that compiles under strict tsc without casts and works against the server', async () => {
    // Under node_modules so the generated program resolves openapi-fetch as an application would.
    const cache = resolve('node_modules/.cache');
    mkdirSync(cache, { recursive: true });
    const dir = mkdtempSync(join(cache, 'sika-openapi-client-'));
    try {
      writeFileSync(join(dir, 'schema.ts'), astToString(await openapiTS(structuredClone(doc) as never)));
      writeFileSync(join(dir, 'client.ts'), CLIENT_PROGRAM);
      writeFileSync(
        join(dir, 'tsconfig.json'),
        JSON.stringify({
          compilerOptions: {
            strict: true,
            noEmit: true,
            target: 'ES2022',
            module: 'ESNext',
            moduleResolution: 'Bundler',
            lib: ['ES2022', 'DOM'],
            skipLibCheck: true,
            types: [],
          },
          files: ['client.ts'],
        }),
      );
      try {
        execFileSync(process.execPath, [resolve('node_modules/typescript/bin/tsc'), '-p', join(dir, 'tsconfig.json')], {
          encoding: 'utf8',
          stdio: 'pipe',
        });
      } catch (error) {
        const { stdout, stderr } = error as { stdout?: string; stderr?: string };
        assert.fail(`the generated client does not compile:\n${stdout}${stderr}`);
      }

      // The same program against the server over HTTP: the wire matches the types it was compiled with.
      const baseUrl = await t.listen();
      const m = await t.merchant();
      // Through tsx's API: npm test runs its files compiled (scripts/test-bundle.mjs), with no TypeScript loader.
      const { tsImport } = await import('tsx/esm/api');
      const client = (await tsImport(pathToFileURL(join(dir, 'client.ts')).href, import.meta.url)) as {
        run(baseUrl: string, apiKey: string): Promise<Record<string, unknown>>;
      };
      const result = await client.run(baseUrl, m.test_api_key);
      assert.equal(result.status, 'open');
      assert.equal(result.accountType, 'momo');
      assert.equal(result.code, 'INVALID_ARGUMENT');
      assert.equal(typeof result.bankCode, 'string');
      assert.equal(result.listed, 1);
      assert.deepEqual(result.payoutIds, []);
      assert.match(String(result.csvHeader), /^id,created_at,status,invoice_ref,/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

/** A merchant's program, written as a developer would against the generated types: no casts, no any. */
const CLIENT_PROGRAM = `import createClient from 'openapi-fetch';
import type { components, paths, webhooks } from './schema';

type Schemas = components['schemas'];

export async function run(baseUrl: string, apiKey: string) {
  const client = createClient<paths>({ baseUrl, headers: { authorization: \`Bearer \${apiKey}\` } });
  const created = await client.POST('/api/v1/sessions', {
    params: { header: { 'idempotency-key': \`client-\${Date.now()}\` } },
    body: { amount_minor: 50000, invoice_ref: 'INV-CLIENT-1', customer: { name: 'Ama Mensah' } },
  });
  if (created.error) throw new Error(\`createSession: \${created.error.error.code}\`);
  const session: Schemas['CheckoutSession'] = created.data;
  const status: 'open' | 'pending' | 'success' | 'failed' | 'expired' = session.status;

  const again = await client.GET('/api/v1/sessions/{reference}', { params: { path: { reference: session.id } } });
  if (!again.data) throw new Error('retrieveSession');
  const rail: string | undefined = again.data.payment?.rail;

  const caps = await client.GET('/api/v1/payouts/capabilities');
  if (!caps.data) throw new Error('capabilities');
  const bankCode: string = caps.data.banks[0].code;
  const network: 'mtn' | 'telecel' | 'at' = caps.data.mobile_money_networks[0].value;
  const approval: boolean = caps.data.settings.approval_required;

  const recipient = await client.POST('/api/v1/payouts/recipients', {
    body: { account_type: 'momo', network, phone: '0241234567', account_name: 'Kofi Boateng' },
  });
  if (!recipient.data) throw new Error(\`createRecipient: \${recipient.error?.error.code}\`);
  const accountType: 'bank' | 'momo' = recipient.data.account_type;

  const refused = await client.POST('/api/v1/payouts/recipients', {
    // @ts-expect-error account_type is bank or momo, nothing else
    body: { account_type: 'mobile-money', network: 'mtn', phone: '0241234567', account_name: 'Kofi Boateng' },
  });
  const code: Schemas['ErrorEnvelope']['error']['code'] | undefined = refused.error?.error.code;
  // @ts-expect-error the Mobile Money networks are a closed set
  const wrongNetwork: Schemas['Recipient']['network'] = 'vodafone';
  // @ts-expect-error error codes are a closed set
  const wrongCode: Schemas['ErrorEnvelope']['error']['code'] = 'NOT_A_CODE';

  // A list answer is the JSON list, with no CSV string to narrow away; the CSV is an export operation's text.
  const list = await client.GET('/api/v1/sessions', { params: { query: { limit: 5 } } });
  const listed: Schemas['CheckoutSession'][] | undefined = list.data?.data;
  const payouts = await client.GET('/api/v1/payouts');
  const payoutIds: string[] | undefined = payouts.data?.payouts.map((payout) => payout.id);
  const file = await client.GET('/api/v1/exports/sessions', { params: { query: { from: '2026-01-01', to: '2026-01-02' } }, parseAs: 'text' });
  const csv: string | undefined = file.data;

  return { status, rail, bankCode, approval, accountType, code, sessionId: again.data.id, wrongNetwork, wrongCode, listed: listed?.length, payoutIds, csvHeader: csv?.split('\\r\\n')[0] };
}

/** A webhook receiver narrows an event by its type: the union of the documented webhook bodies. */
type WebhookEvent = { [K in keyof webhooks]: webhooks[K]['post']['requestBody']['content']['application/json'] }[keyof webhooks];
export function describeEvent(event: WebhookEvent): string {
  switch (event.type) {
    case 'checkout.session.completed':
      return \`\${event.data.session.id} paid \${event.data.session.amount_minor}\`;
    case 'checkout.session.reopened':
      return \`\${event.data.session.id} reopened after \${event.data.reopened.attempt_status}\`;
    case 'payout.paid':
      return \`\${event.data.payout.reference} \${event.data.payout.status}\`;
    case 'refund.succeeded':
      return \`\${event.data.refund.id} \${event.data.refund.amount_minor}\`;
    default:
      return event.type;
  }
}
`;
