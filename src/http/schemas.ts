// Shared TypeBox schemas: the same objects validate requests, serialise responses and feed /openapi.json.
// Closed value sets are enums read from their source of truth (the error catalogue, the rails registry,
// the state machines' tables, src/lib/ghana.ts), never copied lists.
import { Type, type TSchema, type TUnsafe } from '@sinclair/typebox';
import { ENVIRONMENTS } from '../lib/environment.ts';
import { ERROR_CATALOGUE, LINE_ERROR_CATALOGUE, type ErrorCode, type LineErrorCode } from '../lib/errors.ts';
import { HTTP_STATUS_OF } from './errors.ts';

/**
 * A string that is one of `values`: `{type: 'string', enum}` in the schema (what validators, form coercion
 * and code generators read best) and the union of the values in TypeScript.
 */
export const StringEnum = <const T extends readonly string[]>(values: T, options: { description?: string; default?: T[number]; examples?: unknown[] } = {}): TUnsafe<T[number]> =>
  Type.Unsafe<T[number]>({ type: 'string', enum: [...values], ...options });

const ERROR_CODES = Object.keys(ERROR_CATALOGUE) as ErrorCode[];
const LINE_ERROR_CODES = Object.keys(LINE_ERROR_CATALOGUE) as LineErrorCode[];

export const ErrorCodeSchema = StringEnum(ERROR_CODES, {
  description: `Stable machine-readable code (SPEC 7); src/lib/errors.ts says what each means and whether a retry can help: ${ERROR_CODES.map((code) => `${code} (${HTTP_STATUS_OF[code]})`).join(', ')}.`,
});

/** A refused line of a partly accepted batch (a 207's `errors`). */
export const LineErrorCodeSchema = StringEnum(LINE_ERROR_CODES, { description: 'Why this line was refused.' });

export const ErrorEnvelope = Type.Object(
  {
    error: Type.Object({
      code: ErrorCodeSchema,
      message: Type.String({ description: 'Human-readable explanation.' }),
      retry_after_seconds: Type.Optional(Type.Integer({ description: 'When a retry can succeed: wait this long (also the Retry-After header).' })),
      fields: Type.Optional(Type.Array(Type.Object({ field: Type.String(), message: Type.String() }), { description: 'The fields at fault, for INVALID_ARGUMENT.' })),
      detail: Type.Optional(Type.String()),
    }),
  },
  {
    $id: 'ErrorEnvelope',
    title: 'Error envelope',
    description: 'Every error, whatever the route: {error: {code, message, retry_after_seconds?, fields?}}.',
    examples: [{ error: { code: 'INVALID_ARGUMENT', message: 'body/amount_minor must be >= 1', fields: [{ field: 'amount_minor', message: 'must be >= 1' }] } }],
  },
);

/** What each error status means, as the API document describes it. */
export const ERROR_STATUS_DESCRIPTIONS: Record<number, string> = {
  400: 'Invalid input (INVALID_ARGUMENT, with the fields at fault) or a payment detail the provider refused.',
  401: 'No API key, or one that is unknown, revoked or malformed (UNAUTHORIZED).',
  403: 'The key may not do this (FORBIDDEN), e.g. a Live key on a Test-only route or payouts not enabled.',
  404: 'No such object for this key\'s merchant and environment (NOT_FOUND).',
  409: 'Refused because of the current state of an object or the account: the code says which.',
  413: 'The body is too large (PAYLOAD_TOO_LARGE).',
  414: 'A path parameter is too long (URI_TOO_LONG).',
  415: 'The body\'s content type is not one the route reads (UNSUPPORTED_MEDIA_TYPE).',
  422: 'The Idempotency-Key was used before with a different request (IDEMPOTENCY_KEY_REUSED).',
  429: 'Too many requests (RATE_LIMITED): wait Retry-After seconds.',
  500: 'Unexpected failure (INTERNAL).',
  503: 'Storage or a provider is unavailable for now: retry after Retry-After seconds.',
};

/** The error answers of a route: the envelope, described by status (the document adds Retry-After to 429 and 503). */
export const errorResponses = (...statuses: number[]): Record<number, TSchema> =>
  Object.fromEntries(statuses.map((status) => [status, Type.Ref('ErrorEnvelope', { description: ERROR_STATUS_DESCRIPTIONS[status] ?? 'An error (see the code).' })]));

/**
 * A success answer with its description in the API document: a named schema (with an $id) by reference,
 * any other as it is.
 */
export function described<T extends TSchema>(schema: T, description: string): TSchema {
  if (schema.$id) return Type.Ref(schema.$id, { description });
  return { ...schema, description };
}

/** A file download in the OpenAPI document (the payload is a Buffer, sent as it is), in one of its content types. */
export const fileResponse = (contentTypes: string | readonly string[], description: string) => ({
  description,
  content: Object.fromEntries([contentTypes].flat().map((type) => [type, { schema: { type: 'string', format: 'binary' } }])),
});

export const IdempotencyHeaders = Type.Object({
  'idempotency-key': Type.Optional(
    Type.String({ description: 'Makes retries safe: the same key and body replay the first result for 24 hours (1-255 printable characters).' }),
  ),
});

export const DateTime = Type.String({ format: 'date-time' });
export const Currency = Type.String({ maxLength: 3, default: 'GHS', description: 'Currency; only GHS is supported.' });
export const Environment = StringEnum(ENVIRONMENTS, { description: 'test or live: the environment of the key.' });
