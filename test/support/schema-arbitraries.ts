// fast-check arbitraries from the JSON Schemas of an OpenAPI document: values a schema accepts, and the
// same values with one field made invalid (wrong type, out of bounds, off its pattern, enum or format, a
// required field missing). No maintained JSON-Schema-to-fast-check library is installed here, and the
// schemas Sika serves use a small subset (TypeBox output, $ref into components, anyOf, if/then in allOf),
// so this covers that subset. Whether a value is really valid is for the caller's validator to judge:
// a mutation that happens to stay valid is simply a valid request.
import fc from 'fast-check';

// biome-ignore lint/suspicious/noExplicitAny: a JSON Schema of any shape, walked keyword by keyword
export type Schema = Record<string, any>;
/** Where a value travels: JSON keeps types; a query string or path segment is text, so only its text can be wrong. */
export type Carrier = 'json' | 'text';
export type Path = (string | number)[];

const TEXT_LENGTH_CAP = 24;
const ARRAY_LENGTH_CAP = 4;

export class SchemaArbitraries {
  constructor(
    private readonly components: Record<string, Schema>,
    /** Values that reach the business logic (real ids, the key's environment), by property or parameter name. */
    private readonly known: Record<string, fc.Arbitrary<unknown>> = {},
  ) {}

  resolve(schema: Schema): Schema {
    let current = schema;
    while (current && typeof current.$ref === 'string') {
      const name = current.$ref.replace('#/components/schemas/', '');
      current = this.components[name]!;
    }
    return current ?? {};
  }

  /** A value the schema accepts; `name` picks a known value for that property some of the time. */
  valid(raw: Schema, name?: string): fc.Arbitrary<unknown> {
    const schema = this.resolve(raw);
    const generated = this.generate(schema);
    const known = name ? this.known[name] : undefined;
    return known ? fc.oneof({ arbitrary: known, weight: 3 }, { arbitrary: generated, weight: 1 }) : generated;
  }

  private generate(schema: Schema): fc.Arbitrary<unknown> {
    if ('const' in schema) return fc.constant(schema.const);
    if (Array.isArray(schema.enum)) return fc.constantFrom(...schema.enum);
    const union = schema.anyOf ?? schema.oneOf;
    if (Array.isArray(union)) return fc.oneof(...union.map((branch: Schema) => this.valid(branch)));
    const type = Array.isArray(schema.type) ? schema.type[0] : schema.type;
    switch (type) {
      case 'string':
        return this.text(schema);
      case 'integer': {
        const min = schema.minimum ?? -1_000_000;
        const max = schema.maximum ?? Math.max(min, 0) + 1_000_000_000_000;
        const small = fc.integer({ min, max: Math.min(max, min + 1_000) });
        return fc.oneof(
          small,
          fc.integer({ min: Math.max(min, Number.MIN_SAFE_INTEGER), max: Math.min(max, Number.MAX_SAFE_INTEGER) }),
        );
      }
      case 'number':
        return fc.double({ noNaN: true, noDefaultInfinity: true, min: schema.minimum, max: schema.maximum });
      case 'boolean':
        return fc.boolean();
      case 'null':
        return fc.constant(null);
      case 'array':
        return fc.array(this.valid(schema.items ?? {}), {
          minLength: schema.minItems ?? 0,
          maxLength: Math.min(schema.maxItems ?? ARRAY_LENGTH_CAP, ARRAY_LENGTH_CAP),
        });
      case 'object':
        return this.object(schema);
      default:
        return fc.jsonValue({ maxDepth: 2 });
    }
  }

  private text(schema: Schema): fc.Arbitrary<string> {
    const minLength = schema.minLength ?? 0;
    const maxLength = schema.maxLength ?? Number.MAX_SAFE_INTEGER;
    const fits = (s: string) => [...s].length >= minLength && [...s].length <= maxLength;
    switch (schema.format) {
      case 'date-time':
        // A few years, so that two of them often make a range the routes take (a year of days, 31 days of events).
        return fc
          .date({ min: new Date('2025-01-01T00:00:00Z'), max: new Date('2027-12-31T23:59:59Z'), noInvalidDate: true })
          .map((d) => d.toISOString());
      case 'date':
        return fc
          .date({ min: new Date('2025-01-01T00:00:00Z'), max: new Date('2027-12-31T00:00:00Z'), noInvalidDate: true })
          .map((d) => d.toISOString().slice(0, 10));
      case 'email':
        return fc.emailAddress().filter(fits);
      case 'uri':
        return fc.webUrl().filter(fits);
      case 'uuid':
        return fc.uuid();
    }
    if (typeof schema.pattern === 'string') return fc.stringMatching(new RegExp(schema.pattern, 'u')).filter(fits);
    return fc.string({
      minLength,
      maxLength: Math.min(maxLength, Math.max(minLength, TEXT_LENGTH_CAP)),
      unit: 'grapheme',
    });
  }

  private object(schema: Schema): fc.Arbitrary<Record<string, unknown>> {
    const properties: Record<string, Schema> = schema.properties ?? {};
    const required = new Set<string>(schema.required ?? []);
    const model: Record<string, fc.Arbitrary<unknown>> = {};
    // A `false` property (a field the route refuses, e.g. a payment link's amount on a change) is never sent.
    for (const [key, property] of Object.entries(properties))
      if ((property as unknown) !== false) model[key] = this.valid(property, key);
    const record = fc.record(model, { requiredKeys: [...required].filter((key) => key in model) });
    // A schema that does not close its properties takes unknown ones: send one now and then.
    const base =
      schema.additionalProperties === undefined && Object.keys(properties).length > 0
        ? fc
            .tuple(record, fc.boolean())
            .map(([value, extra]) => (extra ? { ...value, unknown_field_x: 'ignored' } : value))
        : record;
    // A map (metadata): some entries of its value schema.
    const extra = schema.additionalProperties;
    const withMap =
      extra && Object.keys(properties).length === 0
        ? fc.dictionary(fc.string({ minLength: 1, maxLength: 8 }), this.valid(extra === true ? {} : extra), {
            maxKeys: 3,
          })
        : base;
    const conditionals: Schema[] = (schema.allOf ?? []).filter((part: Schema) => part.if);
    if (conditionals.length === 0) return withMap as fc.Arbitrary<Record<string, unknown>>;
    // if/then: when the value meets a condition, add what its `then` asks for (in order: a later condition may read an earlier one's fields).
    return (withMap as fc.Arbitrary<Record<string, unknown>>).chain((value) =>
      this.applyConditionals(value, conditionals, properties),
    );
  }

  /** `own`: the object's properties, which a branch narrows. */
  private applyConditionals(
    value: Record<string, unknown>,
    conditionals: Schema[],
    own: Record<string, Schema>,
  ): fc.Arbitrary<Record<string, unknown>> {
    const [first, ...rest] = conditionals;
    if (!first) return fc.constant(value);
    const branch = matches(first.if, value) ? first.then : first.else;
    if (!branch) return this.applyConditionals(value, rest, own);
    const properties: Record<string, Schema> = branch.properties ?? {};
    const wanted = new Set<string>([
      ...(branch.required ?? []),
      ...Object.keys(properties).filter((key) => key in value),
    ]);
    const model: Record<string, fc.Arbitrary<unknown>> = {};
    // `false`: the field may not be there; otherwise the branch's schema of it, merged with the object's own.
    const forbidden = new Set<string>(
      Object.entries(properties)
        .filter(([, property]) => (property as unknown) === false)
        .map(([key]) => key),
    );
    for (const key of wanted) {
      if (forbidden.has(key)) continue;
      const base = own[key];
      model[key] = properties[key]
        ? this.valid({ ...base, ...properties[key] }, key)
        : base
          ? this.valid(base, key)
          : fc.constant(value[key] ?? 'x');
    }
    return fc.record(model).chain((added) => {
      const next = Object.fromEntries(Object.entries({ ...value, ...added }).filter(([key]) => !forbidden.has(key)));
      return this.applyConditionals(next, rest, own);
    });
  }

  /** The places one mutation can go in a valid value: each property present or absent, nested objects and first items too. */
  spots(raw: Schema, value: unknown, path: Path = []): { path: Path; schema: Schema | null; required: boolean }[] {
    const schema = this.resolve(raw);
    const out: { path: Path; schema: Schema | null; required: boolean }[] = [];
    if (schema.type === 'object' && schema.properties && value && typeof value === 'object' && !Array.isArray(value)) {
      const required = new Set<string>(schema.required ?? []);
      for (const [key, property] of Object.entries(schema.properties as Record<string, Schema>)) {
        out.push({ path: [...path, key], schema: property, required: false });
        if (required.has(key)) out.push({ path: [...path, key], schema: null, required: true });
        const child = (value as Record<string, unknown>)[key];
        if (child !== undefined)
          out.push(...this.spots(property, child, [...path, key]).filter((spot) => spot.path.length > path.length + 1));
      }
    }
    if (schema.type === 'array' && Array.isArray(value) && value.length > 0 && schema.items) {
      out.push(...this.spots(schema.items, value[0], [...path, 0]));
      if (schema.items.type || schema.items.$ref)
        out.push({ path: [...path, 0], schema: schema.items, required: false });
    }
    return out;
  }

  /** Values the schema refuses (none for a schema that takes anything). */
  invalid(raw: Schema, carrier: Carrier): fc.Arbitrary<unknown> | null {
    const schema = this.resolve(raw);
    const options: fc.Arbitrary<unknown>[] = [];
    const type = Array.isArray(schema.type) ? schema.type : schema.type ? [schema.type] : [];
    const union = schema.anyOf ?? schema.oneOf;
    const allowed = new Set<string>(
      union ? union.flatMap((branch: Schema) => [this.resolve(branch).type].flat()) : type,
    );
    if (carrier === 'json' && allowed.size > 0 && !allowed.has(undefined as never)) {
      const wrong: unknown[] = [];
      if (!allowed.has('string')) wrong.push('text');
      if (!allowed.has('integer') && !allowed.has('number')) wrong.push(7);
      if (allowed.has('integer') && !allowed.has('number')) wrong.push(1.5);
      if (!allowed.has('boolean')) wrong.push(true);
      if (!allowed.has('null')) wrong.push(null);
      if (!allowed.has('object')) wrong.push({ a: 1 });
      if (!allowed.has('array')) wrong.push([1]);
      options.push(fc.constantFrom(...wrong));
    }
    if (
      carrier === 'text' &&
      (allowed.has('integer') || allowed.has('number') || allowed.has('boolean')) &&
      !allowed.has('string')
    ) {
      options.push(fc.constantFrom('abc', '1.5e', 'yes', '0x10'));
    }
    if (Array.isArray(schema.enum)) options.push(fc.constantFrom('not_a_value', 'ZZZ', ''));
    if (union?.every((branch: Schema) => Array.isArray(this.resolve(branch).enum) || 'const' in this.resolve(branch))) {
      options.push(fc.constantFrom('not_a_value', 'ZZZ'));
    }
    if (typeof schema.maxLength === 'number') options.push(fc.constant('x'.repeat(schema.maxLength + 1)));
    if (typeof schema.minLength === 'number' && schema.minLength > 0) options.push(fc.constant(''));
    if (typeof schema.minimum === 'number') options.push(fc.constant(schema.minimum - 1));
    if (typeof schema.maximum === 'number') options.push(fc.constant(schema.maximum + 1));
    if (typeof schema.minItems === 'number' && schema.minItems > 0) options.push(fc.constant([]));
    if (typeof schema.maxItems === 'number')
      options.push(fc.constant(Array.from({ length: schema.maxItems + 1 }, () => ({}))));
    // A lone surrogate cannot travel in a URL (it is not UTF-8): text carriers leave it out.
    if (typeof schema.pattern === 'string')
      options.push(fc.constantFrom(...['bad value!', 'a\u0000b', '!', ...(carrier === 'json' ? ['\uD800'] : [])]));
    if (schema.format) options.push(fc.constantFrom(`not-a-${schema.format}`, '2026-02-30', '2026-13-01T00:00:00Z'));
    return options.length ? fc.oneof(...options) : null;
  }
}

/** A small judge of `if` conditions: `properties` with const/enum and `required` (all Sika's conditions use). */
function matches(condition: Schema, value: Record<string, unknown>): boolean {
  for (const key of condition.required ?? []) if (value[key] === undefined) return false;
  for (const [key, property] of Object.entries((condition.properties ?? {}) as Record<string, Schema>)) {
    if (value[key] === undefined) continue;
    if ('const' in property && value[key] !== property.const) return false;
    if (Array.isArray(property.enum) && !property.enum.includes(value[key])) return false;
  }
  return true;
}

/** A copy of `root` with the value at `path` replaced (or removed when `value` is `REMOVE`). */
export const REMOVE = Symbol('remove');
export function setAt(root: unknown, path: Path, value: unknown): unknown {
  if (path.length === 0) return value;
  const [head, ...rest] = path;
  const copy = (Array.isArray(root) ? [...root] : { ...(root as object) }) as Record<string | number, unknown>;
  if (rest.length === 0) {
    if (value === REMOVE) delete copy[head!];
    else copy[head!] = value;
    return copy;
  }
  copy[head!] = setAt(copy[head!] ?? (typeof rest[0] === 'number' ? [] : {}), rest, value);
  return copy;
}
