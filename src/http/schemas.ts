// Shared TypeBox schemas: the same objects validate requests, serialise responses and feed /openapi.json.
// Closed value sets are enums read from their source of truth (the error catalogue, the rails registry,
// the state machines' tables, src/lib/ghana.ts), never copied lists.
import { Type, type TSchema } from '@sinclair/typebox';
import { ghanaPhonePattern, MOMO_NETWORKS, NETWORK_LABELS, NETWORK_PREFIXES, type MomoNetwork } from '../lib/ghana.ts';
import { ERROR_CATALOGUE, LINE_ERROR_CATALOGUE, type ErrorCode, type LineErrorCode } from '../lib/errors.ts';
import { StringEnum } from '../lib/typebox.ts';
import { HTTP_STATUS_OF } from './errors.ts';

const PATTERN_MESSAGES = new Map<string, string>();
/** A schema pattern with what a refusal says instead of the regular expression (error-handler.ts reads it). */
export function explainedPattern(pattern: string, message: string): string {
  PATTERN_MESSAGES.set(pattern, message);
  return pattern;
}
export const patternMessage = (pattern: string): string | undefined => PATTERN_MESSAGES.get(pattern);

export { DateTime, Environment, StringEnum } from '../lib/typebox.ts';

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
      retry_after_seconds: Type.Optional(
        Type.Integer({ description: 'When a retry can succeed: wait this long (also the Retry-After header).' }),
      ),
      fields: Type.Optional(
        Type.Array(Type.Object({ field: Type.String(), message: Type.String() }), {
          description: 'The fields at fault, for INVALID_ARGUMENT.',
        }),
      ),
      detail: Type.Optional(Type.String()),
    }),
  },
  {
    $id: 'ErrorEnvelope',
    title: 'Error envelope',
    description: 'Every error, whatever the route: {error: {code, message, retry_after_seconds?, fields?}}.',
    examples: [
      {
        error: {
          code: 'INVALID_ARGUMENT',
          message: 'body/amount_minor must be >= 1',
          fields: [{ field: 'amount_minor', message: 'must be >= 1' }],
        },
      },
    ],
  },
);

/** What each error status means, as the API document describes it. */
export const ERROR_STATUS_DESCRIPTIONS: Record<number, string> = {
  400: 'Invalid input (INVALID_ARGUMENT, with the fields at fault) or a payment detail the provider refused.',
  401: 'No API key, or one that is unknown, revoked or malformed (UNAUTHORIZED).',
  403: 'The key may not do this (FORBIDDEN), e.g. a Live key on a Test-only route or payouts not enabled.',
  404: "No such object for this key's merchant and environment (NOT_FOUND).",
  409: 'Refused because of the current state of an object or the account: the code says which.',
  413: 'The body is too large (PAYLOAD_TOO_LARGE).',
  414: 'A path parameter is too long (URI_TOO_LONG).',
  415: "The body's content type is not one the route reads, its charset is not UTF-8, or it has a Content-Encoding other than identity (UNSUPPORTED_MEDIA_TYPE).",
  422: 'The Idempotency-Key was used before with a different request (IDEMPOTENCY_KEY_REUSED).',
  429: 'Too many requests (RATE_LIMITED): wait Retry-After seconds.',
  500: 'Unexpected failure (INTERNAL).',
  503: 'Storage or a provider is unavailable for now: retry after Retry-After seconds.',
};

/** The error answers of a route: the envelope, described by status (the document adds Retry-After to 429 and 503). */
export const errorResponses = (...statuses: number[]): Record<number, TSchema> =>
  Object.fromEntries(
    statuses.map((status) => [
      status,
      Type.Ref('ErrorEnvelope', { description: ERROR_STATUS_DESCRIPTIONS[status] ?? 'An error (see the code).' }),
    ]),
  );

/**
 * A success answer with its description in the API document: a named schema (with an $id) by reference,
 * any other as it is.
 */
export function described<T extends TSchema>(schema: T, description: string): TSchema {
  if (schema.$id) return Type.Ref(schema.$id, { description });
  return { ...schema, description };
}

/**
 * A page of a cursor-paged list (GET /api/v1/sessions, /refunds, /balance/transactions): the named schema
 * `item`'s objects, and whether to ask again with starting_after.
 */
export const CursorPage = (item: string, names: { $id: string; title: string }) =>
  Type.Object(
    {
      object: Type.Literal('list'),
      data: Type.Array(Type.Ref(item)),
      has_more: Type.Boolean({ description: 'Ask again with starting_after = the last id for the next page.' }),
    },
    names,
  );

/** A Test simulator's answers (POST /api/v1/test/.../simulate): the object moved on, or why not (a Live key: 403). */
export const simulatorResponses = (moved: TSchema, description: string): Record<number, TSchema> => ({
  200: described(moved, description),
  ...errorResponses(400, 401, 403, 404, 409, 422, 429),
});

/** A file download in the OpenAPI document (the payload is a Buffer, sent as it is), in one of its content types. */
export const fileResponse = (contentTypes: string | readonly string[], description: string) => ({
  description,
  content: Object.fromEntries(
    [contentTypes].flat().map((type) => [type, { schema: { type: 'string', format: 'binary' } }]),
  ),
});

export const IdempotencyHeaders = Type.Object({
  'idempotency-key': Type.Optional(
    Type.String({
      description:
        'Makes retries safe: the same key and body replay the first result for 24 hours (1-255 printable characters).',
    }),
  ),
});

/** GHS in any letter case (the services upper-case it): a pattern, so `ghs` stays valid and `ghſ` (U+017F upper-cases to S) does not. */
export const Currency = Type.String({
  maxLength: 3,
  pattern: explainedPattern('^[Gg][Hh][Ss]$', 'must be GHS'),
  default: 'GHS',
  description: 'Currency; only GHS is supported (any letter case).',
});
/** A calendar day, YYYY-MM-DD (ajv-formats' `date`: a real day, 2026-02-30 is refused). */
export const Day = (description: string) => Type.String({ format: 'date', description });

/** A Ghana mobile number of any network, and of one network (the services check the prefix against the network). */
export const ANY_NETWORK_PHONE_PATTERN = explainedPattern(
  ghanaPhonePattern(MOMO_NETWORKS.flatMap((network) => NETWORK_PREFIXES[network])),
  'must be a Ghana mobile number such as 024 123 4567 or +233 24 123 4567',
);
/** The phone pattern of one network. */
export const networkPhonePattern = (network: MomoNetwork) =>
  explainedPattern(
    ghanaPhonePattern(NETWORK_PREFIXES[network]),
    `must be a mobile number of ${NETWORK_LABELS[network]} (${NETWORK_PREFIXES[network].map((prefix) => `0${prefix}`).join(', ')})`,
  );

type Branch = { required?: string[]; properties?: Record<string, unknown> };
/**
 * A rule of a body's fields that its properties alone cannot say (which fields a choice requires, refuses or
 * narrows): JSON Schema's if/then/else, each part listing every property of the body (`{}` where it says
 * nothing of one), since linters check examples against each part as a closed object.
 */
export function fieldRule(
  properties: Record<string, unknown>,
  rule: { if: Branch; then: Branch; else?: Branch },
): JsonSchema {
  const whole = (part: Branch) => ({
    ...part,
    properties: Object.fromEntries(Object.keys(properties).map((key) => [key, part.properties?.[key] ?? {}])),
  });
  return { if: whole(rule.if), then: whole(rule.then), ...(rule.else ? { else: whole(rule.else) } : {}) };
}

/** Mobile Money: the phone of the chosen network, as checkPhoneForNetwork (src/lib/ghana.ts) checks it. */
export const phoneOfNetwork = (
  properties: Record<string, unknown>,
  networkField: string,
  when: { field: string; value: string },
) =>
  MOMO_NETWORKS.map((network) =>
    fieldRule(properties, {
      if: {
        properties: { [when.field]: { const: when.value }, [networkField]: { const: network } },
        required: [when.field, networkField],
      },
      then: { properties: { phone: { pattern: networkPhonePattern(network) } } },
    }),
  );

// Text the server refuses and the schemas must say so (body.ts refuses both before validation): U+0000,
// which PostgreSQL text cannot hold, and an unpaired UTF-16 surrogate (as code points, which Ajv's `u`
// patterns and other code-point regex engines read alike: a paired surrogate is one astral character).
const STORABLE_CHAR = '[^\\u0000\\uD800-\\uDFFF]';
/** Any storable text. */
export const STORABLE_TEXT_PATTERN = explainedPattern(
  `^${STORABLE_CHAR}*$`,
  'must not contain U+0000 or an unpaired surrogate',
);
/** Storable text with a character other than white space (the services trim and refuse blank values). */
export const NON_BLANK_TEXT_PATTERN = explainedPattern(
  `^\\s*[^\\s\\u0000\\uD800-\\uDFFF]${STORABLE_CHAR}*$`,
  'must not be blank',
);

const refusesUnstorable = (pattern: string) =>
  !['\u0000', '\uD800', '\uDC00'].some((text) => new RegExp(pattern, 'u').test(text));

type JsonSchema = Record<string, unknown>;
/**
 * A request schema with the rules body.ts applies before any schema, on every field (one place, so no
 * field forgets them): a string with no pattern, format or enum gets STORABLE_TEXT_PATTERN (a pattern of
 * its own must already refuse NUL and lone surrogates); an integer is bounded by ±(2^53 - 1), beyond which
 * a JSON body is refused. Applied to each API route's body, query and params when it is registered
 * (app.ts), so the validator and the document say the same. Returns a copy; $refs are left as they are.
 */
export function withParserRules<T>(schema: T): T {
  if (Array.isArray(schema)) return schema.map((item) => withParserRules(item)) as T;
  if (!schema || typeof schema !== 'object') return schema;
  const copy: JsonSchema = {};
  for (const [key, value] of Object.entries(schema as JsonSchema)) {
    // Literal data inside a schema is not a schema.
    copy[key] = ['enum', 'const', 'default', 'examples', 'example'].includes(key) ? value : withParserRules(value);
  }
  if (copy.type === 'integer') {
    copy.minimum = Math.max(Number(copy.minimum ?? -Number.MAX_SAFE_INTEGER), -Number.MAX_SAFE_INTEGER);
    copy.maximum = Math.min(Number(copy.maximum ?? Number.MAX_SAFE_INTEGER), Number.MAX_SAFE_INTEGER);
  }
  if (copy.type === 'string' && copy.enum === undefined && copy.const === undefined && copy.format === undefined) {
    if (typeof copy.pattern !== 'string') copy.pattern = STORABLE_TEXT_PATTERN;
    else if (!refusesUnstorable(copy.pattern))
      throw new Error(`pattern ${copy.pattern} must refuse U+0000 and lone surrogates`);
  }
  return copy as T;
}

/**
 * A request body schema as the document shows it: without `additionalProperties: false`, which the route
 * validator reads as "remove" (removeAdditional), not "refuse". Unknown fields are ignored, so a client or
 * a fuzzer reading the document may send them. Returns a copy.
 */
export function withUnknownPropertiesIgnored<T>(schema: T): T {
  if (Array.isArray(schema)) return schema.map((item) => withUnknownPropertiesIgnored(item)) as T;
  if (!schema || typeof schema !== 'object') return schema;
  const copy: JsonSchema = {};
  for (const [key, value] of Object.entries(schema as JsonSchema)) {
    if (key === 'additionalProperties' && value === false) continue;
    copy[key] = ['enum', 'const', 'default', 'examples', 'example'].includes(key)
      ? value
      : withUnknownPropertiesIgnored(value);
  }
  return copy as T;
}
