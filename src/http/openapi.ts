// The API document's finishing touches, applied to what @fastify/swagger builds from the route schemas
// (app.ts, transformObject): the headers every answer carries (x-request-id; Retry-After on 429 and 503;
// Idempotent-Replayed on the successes of a route that takes an Idempotency-Key), the request body
// alternatives body.ts parses (urlencoded and multipart give the same body as JSON), bodies a route
// documents without validating them (`x-request-body`: the evidence upload's file), and the `webhooks`
// section with each event's payload (src/events/event-schemas.ts). Every operation states its security: the API
// key where the route asks for one, `[]` on the public ones (payer, provider notifications, webhooks we send),
// so linters (redocly's security-defined, test/http/openapi-lint.test.ts) and generators need not guess.
import { webhooksDocument } from '../events/event-schemas.ts';
import { IDEMPOTENCY_KEY_LENGTH_MAX } from './idempotency.ts';
import { withUnknownPropertiesIgnored } from './schemas.ts';

declare module 'fastify' {
  interface FastifySchema {
    /** An OpenAPI requestBody for the document only (the route reads a body its schema cannot describe). */
    'x-request-body'?: Record<string, unknown>;
  }
}

/** The body types the API parses into the same body (src/http/body.ts); provider notifications read raw bytes. */
export const FORM_BODY_TYPES = ['application/x-www-form-urlencoded', 'multipart/form-data'] as const;
const RAW_BODY_PATHS = /^\/api\/v1\/providers\//;

type Json = Record<string, unknown>;
interface Operation {
  parameters?: Json[];
  requestBody?: { content?: Record<string, Json> };
  responses?: Record<string, Json & { headers?: Record<string, unknown> }>;
  [key: string]: unknown;
}
const METHODS = ['get', 'put', 'post', 'delete', 'patch', 'head', 'options'] as const;

const ref = (kind: 'headers' | 'parameters', name: string) => ({ $ref: `#/components/${kind}/${name}` });

export const COMPONENT_HEADERS = {
  XRequestId: {
    description:
      "The request's id (yours, from x-request-id, when it is 1-64 of [A-Za-z0-9_.:-]; a UUID otherwise): quote it to support.",
    schema: { type: 'string' },
  },
  RetryAfter: { description: 'Seconds to wait before trying again.', schema: { type: 'integer', minimum: 0 } },
  IdempotentReplayed: {
    description: 'true when this is the stored answer to an earlier request with the same Idempotency-Key.',
    schema: { type: 'string', enum: ['true'] },
  },
};

const IDEMPOTENCY_KEY_SCHEMA = {
  type: 'string',
  minLength: 1,
  maxLength: IDEMPOTENCY_KEY_LENGTH_MAX,
  pattern: '^[\\x20-\\x7e]+$',
};

export const COMPONENT_PARAMETERS = {
  XRequestId: {
    name: 'x-request-id',
    in: 'header',
    required: false,
    description: 'Your id for this request, echoed back (1-64 of [A-Za-z0-9_.:-]).',
    schema: { type: 'string', pattern: '^[\\w.:-]{1,64}$' },
  },
};

/** A webhook's operationId, stable while its event type is: `checkout.session.completed` -> `checkoutSessionCompletedWebhook`. */
export const webhookOperationId = (type: string): string =>
  `${type.replace(/[._]([a-z])/g, (_, letter: string) => letter.toUpperCase())}Webhook`;

function finishOperation(path: string, operation: Operation): void {
  operation.security ??= [];
  const documented = operation['x-request-body'];
  if (documented) {
    operation.requestBody = documented as Operation['requestBody'];
    delete operation['x-request-body'];
  }
  const content = operation.requestBody?.content;
  // Unknown body fields are ignored (DESIGN §3; the validator removes them): the document accepts them too.
  if (content?.['application/json']?.schema)
    content['application/json'].schema = withUnknownPropertiesIgnored(content['application/json'].schema);
  if (content && !RAW_BODY_PATHS.test(path) && Object.keys(content).length === 1 && content['application/json']) {
    for (const type of FORM_BODY_TYPES) content[type] = { schema: content['application/json'].schema };
  }
  let idempotent = false;
  const parameters = (operation.parameters ?? []).map((parameter) => {
    if (parameter.in !== 'header' || String(parameter.name).toLowerCase() !== 'idempotency-key') return parameter;
    idempotent = true;
    // The header as idempotency.ts validates it (1-255 printable ASCII characters), for generators.
    return { ...parameter, schema: IDEMPOTENCY_KEY_SCHEMA, example: 'order-42-attempt-1' };
  });
  operation.parameters = [...parameters, ref('parameters', 'XRequestId')];
  for (const [status, response] of Object.entries(operation.responses ?? {})) {
    const headers: Record<string, unknown> = { ...response.headers, 'x-request-id': ref('headers', 'XRequestId') };
    if (status === '429' || status === '503') headers['Retry-After'] = ref('headers', 'RetryAfter');
    if (idempotent && status.startsWith('2')) headers['Idempotent-Replayed'] = ref('headers', 'IdempotentReplayed');
    response.headers = headers;
  }
}

/** @fastify/swagger's transformObject: the document as served at /openapi.json. */
export function finishApiDocument<T extends object>(built: T): T {
  const document = built as Json & { paths?: Record<string, Record<string, Operation>>; components?: Json };
  for (const [path, item] of Object.entries(document.paths ?? {})) {
    if (!path.startsWith('/api/')) continue;
    for (const method of METHODS) if (item[method]) finishOperation(path, item[method]);
  }
  document.components = {
    ...document.components,
    headers: { ...(document.components?.headers as Json | undefined), ...COMPONENT_HEADERS },
    parameters: { ...(document.components?.parameters as Json | undefined), ...COMPONENT_PARAMETERS },
  };
  document.webhooks = { ...(document.webhooks as Json | undefined), ...webhooksDocument() };
  // Sika signs what it sends (webhook-signature); the receiver asks for no credential of ours.
  for (const [type, item] of Object.entries(document.webhooks as Record<string, { post: Operation }>)) {
    item.post.operationId ??= webhookOperationId(type);
    item.post.security ??= [];
  }
  return built;
}
