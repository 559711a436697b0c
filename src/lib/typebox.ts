// TypeBox helpers with no domain knowledge, for the HTTP schemas (src/http/schemas.ts re-exports them) and
// the webhook payloads (src/events/event-schemas.ts), which sit below src/http.
import { Type, type TUnsafe } from '@sinclair/typebox';
import { ENVIRONMENTS } from './environment.ts';

/**
 * A string that is one of `values`: `{type: 'string', enum}` in the schema (what validators, form coercion
 * and code generators read best) and the union of the values in TypeScript.
 */
export const StringEnum = <const T extends readonly string[]>(
  values: T,
  options: { description?: string; default?: T[number]; examples?: unknown[] } = {},
): TUnsafe<T[number]> => Type.Unsafe<T[number]>({ type: 'string', enum: [...values], ...options });

export const DateTime = Type.String({ format: 'date-time' });

export const Environment = StringEnum(ENVIRONMENTS, { description: 'test or live: the environment of the key.' });
