// What a console page says when a form or an address is refused by its schema: a sentence a person reads,
// naming the field by its label ("Payer account can be at most 120 characters.", "The payout id is not
// valid."), never the validator's own text (`must match format "uuid"`, `must NOT have more than`). A field's
// label is its schema's `title`, else its name in words; an id in the path is named by what the path holds.
// The sentence per validation keyword is SENTENCES below; a keyword without one says the field is not valid.

export interface ValidationIssue {
  keyword?: string;
  instancePath?: string;
  message?: string;
  params?: Record<string, unknown>;
}

export interface FieldSchema {
  title?: string;
  pattern?: string;
  enum?: unknown[];
  description?: string;
  format?: string;
}

/** Words a field name holds that are written otherwise in a sentence. */
const WORDS: Record<string, string> = {
  api: 'API',
  url: 'URL',
  id: 'id',
  totp: 'TOTP',
  csrf: 'security',
  _csrf: 'security token',
  q: 'search',
};

/** What an id in a console path names, by the path segment before it. */
const PATH_NOUNS: Record<string, string> = {
  events: 'event',
  keys: 'API key',
  payouts: 'payout',
  recipients: 'recipient',
  refunds: 'refund',
  sessions: 'checkout session',
  webhooks: 'webhook endpoint',
  banks: 'bank',
  merchants: 'merchant',
  operators: 'operator',
  review: 'payment attempt',
  imports: 'statement import',
  lines: 'statement line',
};

const capitalise = (text: string) => (text ? text[0]!.toUpperCase() + text.slice(1) : text);

/** A field name in words: `payer_account` → "Payer account", `api_key_id` → "API key id". */
export function fieldWords(name: string): string {
  if (WORDS[name]) return capitalise(WORDS[name]!);
  return capitalise(
    name
      .split(/[_.]+/)
      .filter(Boolean)
      .map((word) => WORDS[word.toLowerCase()] ?? word.toLowerCase())
      .join(' '),
  );
}

/** A path parameter's label, from the route's path: `/ops/payouts/:id/return` → "The payout id". */
export function pathParamLabel(url: string | undefined, param: string): string {
  const segments = (url ?? '').split('/');
  const at = segments.indexOf(`:${param}`);
  const before = at > 0 ? segments[at - 1]! : '';
  if (param === 'id') {
    const noun = before.startsWith(':')
      ? 'bank or branch'
      : (PATH_NOUNS[before] ?? (before ? fieldWords(before.replace(/s$/, '')).toLowerCase() : ''));
    return `The ${noun ? `${noun} ` : ''}id`;
  }
  if (param === 'table') return 'The list in the address';
  if (param === 'action') return 'The action in the address';
  return `The ${fieldWords(param).toLowerCase()} in the address`;
}

/** "test, live" → "test or live"; longer sets as "one of a, b, c". */
function choices(values: readonly unknown[]): string {
  const listed = values.filter((value) => value !== '').map(String);
  const any = values.includes('') ? ' (or empty for any)' : '';
  if (listed.length === 1) return `${listed[0]}${any}`;
  if (listed.length === 2) return `${listed[0]} or ${listed[1]}${any}`;
  return `one of ${listed.join(', ')}${any}`;
}

/** "Limit" stays; "API key id" reads "The API key id" where a sentence names a thing that is not valid. */
const thing = (label: string) =>
  label.startsWith('The ')
    ? label
    : /^[A-Z]{2}/.test(label)
      ? `The ${label}`
      : `The ${label[0]!.toLowerCase()}${label.slice(1)}`;

type Sentence = (label: string, schema: FieldSchema | undefined, params: Record<string, unknown>) => string;

/** The sentence for each validation keyword Ajv reports on a console field. */
const SENTENCES: Record<string, Sentence> = {
  required: (label, schema) => `${label} is required.${hint(schema)}`,
  minLength: (label, schema, params) =>
    Number(params.limit) <= 1
      ? `${label} is required.${hint(schema)}`
      : `${label} must be at least ${Number(params.limit)} characters.`,
  // A field with a shape (a set, a pattern, a format) says the shape: "at most 10 characters" tells nothing of a date.
  maxLength: (label, schema, params) =>
    schema?.enum
      ? SENTENCES.enum!(label, schema, params)
      : schema?.format
        ? SENTENCES.format!(label, schema, params)
        : schema?.description
          ? SENTENCES.pattern!(label, schema, params)
          : `${label} can be at most ${Number(params.limit)} characters.`,
  enum: (label, schema, params) =>
    `${label} must be ${choices(schema?.enum ?? (params.allowedValues as unknown[] | undefined) ?? [])}.`,
  format: (label) => `${thing(label)} is not valid.`,
  pattern: (label, schema) =>
    schema?.description ? `${label} is not valid: enter ${schema.description}.` : `${thing(label)} is not valid.`,
  type: (label) => `${label} must be sent once, as plain text.`,
  additionalProperties: () => 'The address has a part this page does not take.',
};

function hint(schema: FieldSchema | undefined): string {
  if (schema?.enum) return ` Choose ${choices(schema.enum)}.`;
  if (schema?.description && !schema.format) return ` Enter ${schema.description}.`;
  return '';
}

/**
 * One refused field as a sentence. `part` is the route's schema of the input that failed (body, querystring or
 * params), `context` which one it is, `url` the route's path (it names what a path id is).
 */
export function refusalSentence(
  issue: ValidationIssue,
  part: { properties?: Record<string, FieldSchema> } | undefined,
  context: string,
  url: string | undefined,
): { field: string; message: string } {
  const missing =
    issue.keyword === 'required' && typeof issue.params?.missingProperty === 'string'
      ? issue.params.missingProperty
      : null;
  const field = missing ?? ((issue.instancePath ?? '').replace(/^\//, '').split('/')[0] || context);
  const schema = part?.properties?.[field];
  const label = context === 'params' ? pathParamLabel(url, field) : (schema?.title ?? fieldWords(field));
  const sentence = SENTENCES[issue.keyword ?? ''] ?? ((l: string) => `${thing(l)} is not valid.`);
  return { field, message: sentence(label, schema, issue.params ?? {}) };
}

/**
 * A service's refusal as a console page says it: a message that begins with an API field name
 * (`account_number must be 13 digits.`) names the field in words ("Account number must be 13 digits.").
 * Messages written for people pass unchanged.
 */
export const consoleSentence = (message: string): string =>
  message.replace(/^([a-z][a-z0-9]*(?:_[a-z0-9]+)+)(?=\s)/, (name) => fieldWords(name));
