// How route schemas become validators and serialisers. Bodies are strict (wrong types are 400); query
// strings and paths are text, so they are coerced.
//
// Start-up cost is what shaped this module (issue 18): Fastify asks for a compiler in every plugin
// context, and two fresh Ajv instances per context compiled Ajv's meta-schema again each time (0.9 s of
// a 1.8 s start); a pool keyed on the shared schemas, as Fastify's own compiler keeps, builds them once.
// And each route's schemas compile when first used rather than at start: over 200 routes, most of them
// console pages, compiled eagerly took another 0.3 s and their code stayed in memory unused.
// `compileAll` compiles every one now, so a test can prove they all compile.
import { createRequire } from 'node:module';
import { Ajv, type ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';
import { ErrorEnvelope } from './schemas.ts';

const addFormats = addFormatsModule as unknown as (ajv: Ajv) => Ajv;

type Schemas = Record<string, unknown>;
interface RouteSchema {
  schema: object;
  httpPart?: string;
}
/** What Fastify calls: Ajv's validate function (it reads errors and schemaEnv from it), or a serialiser. */
type Validate = ValidateFunction;
type Serialize = (data: unknown) => string;
type SerializerFactory = (externalSchemas: Schemas, serializerOpts: unknown) => (route: object) => Serialize;

/** Fastify's default serialiser factory (fast-json-stringify), the version Fastify itself loads. */
function fastifyDefaultSerializers(): SerializerFactory {
  const requireFromFastify = createRequire(createRequire(import.meta.url).resolve('fastify'));
  const { SerializerSelector } = requireFromFastify('@fastify/fast-json-stringify-compiler') as {
    SerializerSelector: () => SerializerFactory;
  };
  return SerializerSelector();
}

function ajvPair(externalSchemas: Schemas) {
  const options = { removeAdditional: true, useDefaults: true, allErrors: false, strict: false } as const;
  const bodyAjv = addFormats(new Ajv({ ...options, coerceTypes: false }));
  const textAjv = addFormats(new Ajv({ ...options, coerceTypes: 'array' }));
  for (const ajv of [bodyAjv, textAjv]) {
    for (const schema of Object.values(externalSchemas)) ajv.addSchema(schema as object);
    if (!ajv.getSchema('ErrorEnvelope')) ajv.addSchema(ErrorEnvelope);
  }
  return ({ schema, httpPart }: RouteSchema): Validate =>
    httpPart === 'body' ? bodyAjv.compile(schema) : textAjv.compile(schema);
}

/** `compile`'s result, compiled on the first call; until then it waits in `pending` (compileAll). */
function onFirstUse<T>(compile: () => T, pending: Set<() => void>): () => T {
  let compiled: T | null = null;
  const get = (): T => {
    if (compiled === null) {
      compiled = compile();
      pending.delete(get);
    }
    return compiled;
  };
  pending.add(get);
  return get;
}

/** A validator that compiles on its first call; Fastify reads errors and schemaEnv from it as from Ajv's. */
function lazyValidator(compile: () => Validate, pending: Set<() => void>): Validate {
  const get = onFirstUse(compile, pending);
  const validate = ((data: unknown, context?: Parameters<Validate>[1]) => {
    const inner = get();
    const result = inner(data, context);
    validate.errors = inner.errors;
    return result;
  }) as Validate;
  // Fastify passes the parent object (so Ajv may replace a coerced root value) only when this is set.
  Object.defineProperty(validate, 'schemaEnv', { get: () => get().schemaEnv });
  return validate;
}

function lazySerializer(compile: () => Serialize, pending: Set<() => void>): Serialize {
  const get = onFirstUse(compile, pending);
  return (data) => get()(data);
}

/** One app's compilers: `compilersFactory` for Fastify's schemaController, and `compileAll`. */
export function schemaCompilers() {
  const validatorPool = new Map<string, (route: RouteSchema) => Validate>();
  const defaultSerializers = fastifyDefaultSerializers();
  const pending = new Set<() => void>();
  return {
    compilersFactory: {
      buildValidator(externalSchemas: Schemas = {}) {
        const key = JSON.stringify(externalSchemas);
        // The Ajv instances themselves are made on the first compile too.
        const pooled = (route: RouteSchema) => {
          let compile = validatorPool.get(key);
          if (!compile) {
            compile = ajvPair(externalSchemas);
            validatorPool.set(key, compile);
          }
          return compile(route);
        };
        return (route: RouteSchema) => lazyValidator(() => pooled(route), pending);
      },
      buildSerializer(externalSchemas: Schemas = {}, serializerOpts: unknown) {
        // Fastify's own factory per context (it is cheap: fast-json-stringify works per route).
        const compile = defaultSerializers(externalSchemas, serializerOpts);
        return (route: object) => lazySerializer(() => compile(route), pending);
      },
    },
    /** Compiles every schema not compiled yet (tests: a broken schema fails there, not at some request). */
    compileAll(): void {
      for (const compile of [...pending]) compile();
    },
  };
}
