// Idempotency-Key handling (DESIGN §3): scope merchant + environment + key, kept 24 hours. The first
// request claims the key; its result is stored in the same transaction as its effect, so a replay
// always matches what happened. Validation failures and 5xx store nothing.
// Every POST that takes an API key declares it (`config: { idempotent: true }`; issue 29, over SPEC 4.3 rules 4
// and 6; test/http/idempotency-declared.test.ts walks the API document) and its handler returns WHAT to run
// (IdempotentWork); the hook registered once by registerIdempotentRoutes does the rest. The SQL is in
// idempotency-store.ts.
import { createHash } from 'node:crypto';
import type {
  FastifyInstance,
  FastifyRequest,
  RouteGenericInterface,
  RouteOptions,
  RouteShorthandOptions,
} from 'fastify';
import { DbError, type Db, type Queryable } from '../db/index.ts';
import { canonicalJson, sha256Hex } from '../lib/canonical-json.ts';
import type { ApiPrincipal } from '../lib/environment.ts';
import { principalOf } from './auth.ts';
import {
  claimKey,
  completeKey,
  deleteAbandonedClaim,
  deleteExpiredKey,
  deleteExpiredKeys,
  findStoredKey,
  insertClaimed,
  type KeyScope,
  type OneStatementInsert,
} from './idempotency-store.ts';
import { sendOutcome } from './replies.ts';
import { IdempotencyHeaders } from './schemas.ts';
import { errors } from '../lib/errors.ts';

export const IDEMPOTENCY_KEY_TTL_HOURS = 24;
export const IDEMPOTENCY_KEY_LENGTH_MAX = 255;
/** A claim older than this belongs to a process that died mid-request; a retry may take it over. */
export const IDEMPOTENCY_IN_FLIGHT_LEASE_S = 60;

/** The status and body an idempotent route answers with: stored with the key, replayed to identical retries. */
export interface IdempotentResult<Body> {
  status: number;
  body: Body;
}

export interface Outcome<Body> extends IdempotentResult<Body> {
  replayed: boolean;
}

/** A use case whose whole effect is one insert guarded by the key's claim (idempotency-store.ts, insertClaimed). */
export type { OneStatementInsert };

/**
 * What the handler of a route with `config: { idempotent: true }` returns: what to run, at most once per
 * Idempotency-Key. `run` is the effect, in one transaction, and the result to send; `withoutKey`, when
 * given, replaces it for a request without a key (a use case with a faster path of its own that needs no
 * transaction, e.g. a payout's one-statement write). `insert` is the one-round-trip form for an effect that
 * is one statement whose result is known before it runs.
 */
export type IdempotentWork<Body = unknown> =
  | { run: (tx: Queryable) => Promise<IdempotentResult<Body>>; withoutKey?: () => Promise<IdempotentResult<Body>> }
  | { insert: { outcome: IdempotentResult<Body>; effect: OneStatementInsert } };

/** The work of most idempotent routes: `effect` in the key's transaction, answered with `status` and what it returns. */
export function transactionWork<Body>(status: number, effect: (tx: Queryable) => Promise<Body>): IdempotentWork<Body> {
  return { run: async (tx) => ({ status, body: await effect(tx) }) };
}

/**
 * transactionWork for an API-key route: `effect` acts as the calling key's principal, which the handler reads
 * before the key is claimed (`principalOf`, or a Test simulator's `simulatorPrincipalOf`, whose 403 comes first).
 */
export function workAs<Body>(
  principal: ApiPrincipal,
  status: number,
  effect: (tx: Queryable, principal: ApiPrincipal) => Promise<Body>,
): IdempotentWork<Body> {
  return transactionWork(status, (tx) => effect(tx, principal));
}

/**
 * Whose keys a request's Idempotency-Key is one of. An API-key route: the key's merchant and environment. A
 * public payer route (no API key; issue 31's cancel) sets its own before returning its work: the session's
 * merchant and environment, with the session id as `prefix`, so one payer's key never meets another's.
 */
export interface IdempotencyScope {
  merchantId: string;
  environment: string;
  prefix?: string;
}

/** Where a key is stored: its merchant and environment, and the key (behind the payer scope's prefix, when it has one). */
const keyScope = (principal: IdempotencyScope, key: string): KeyScope => [
  principal.merchantId,
  principal.environment,
  principal.prefix ? `${principal.prefix}:${key}` : key,
];

declare module 'fastify' {
  interface FastifyContextConfig {
    /**
     * Idempotent by Idempotency-Key (DESIGN §3): the handler returns an IdempotentWork, the app runs and answers it.
     * 'public': a payer route without an API key, whose handler sets request.idempotencyScope.
     */
    idempotent?: boolean | 'public';
  }
  interface FastifyRequest {
    /** Set by a public route's handler (see IdempotencyScope); an API-key route leaves it to the principal. */
    idempotencyScope?: IdempotencyScope;
  }
}

/**
 * Registers an API-key POST that honours Idempotency-Key (`config: { idempotent: true }`, the usual case): its
 * handler only says what to run, an IdempotentWork (typed here, so a handler answering by itself does not compile),
 * and registerIdempotentRoutes's hook runs it at most once per key and answers.
 */
export function idempotentPost<Route extends RouteGenericInterface>(
  app: FastifyInstance,
  path: string,
  schema: RouteShorthandOptions['schema'],
  handler: (request: FastifyRequest<Route>) => Promise<IdempotentWork> | IdempotentWork,
): void {
  // Fastify types a handler's return as the route's reply; this one returns the work, which the hook turns into it.
  app.post(path, { config: { idempotent: true }, schema }, handler as never);
}

/**
 * Registered once, before any route: every route declaring `config: { idempotent: true }` documents (and
 * validates) the Idempotency-Key header, and its handler is wrapped: the key is checked (400) before the
 * handler runs, the request is hashed after it (a body the handler normalised is hashed as normalised), the
 * work it returns runs at most once per key, and the outcome is sent (a replay with Idempotent-Replayed).
 * A route without the option is left as it is: the header means nothing to it.
 */
export function registerIdempotentRoutes(app: FastifyInstance, db: Db): void {
  app.addHook('onRoute', (route) => {
    const mode = route.config?.idempotent;
    if (mode !== true && mode !== 'public') return;
    documentIdempotencyKey(route);
    const handler = route.handler;
    const where = `${[route.method].flat().join(',')} ${route.url}`;
    route.handler = async function idempotentRoute(this: FastifyInstance, request, reply) {
      const key = idempotencyKeyOf(request);
      if (mode === true) principalOf(request); // an API-key route without its key is refused before it runs
      const work: unknown = await handler.call(this, request, reply);
      if (!isWork(work))
        throw new Error(`${where} declares config.idempotent, so its handler must return { run } or { insert }`);
      const principal = mode === 'public' ? request.idempotencyScope : principalOf(request);
      if (!principal)
        throw new Error(`${where} is idempotent for payers, so its handler must set request.idempotencyScope`);
      // Without a key nothing is stored or compared: no hash to compute on that (the common) path.
      const hash = key === null ? '' : requestHash(request);
      return sendOutcome(reply, await perform(db, principal, key, hash, work));
    };
  });
}

function isWork(value: unknown): value is IdempotentWork {
  return typeof value === 'object' && value !== null && ('run' in value || 'insert' in value);
}

/** The Idempotency-Key header in the route's schema (validated, and documented in /openapi.json), unless it is there. */
function documentIdempotencyKey(route: RouteOptions): void {
  route.schema ??= {};
  const schema = route.schema as { headers?: { properties?: Record<string, unknown> } };
  if (!schema.headers) {
    schema.headers = IdempotencyHeaders;
  } else if (!schema.headers.properties?.['idempotency-key']) {
    schema.headers = {
      ...schema.headers,
      properties: { ...schema.headers.properties, ...IdempotencyHeaders.properties },
    };
  }
}

async function perform<Body>(
  db: Db,
  principal: IdempotencyScope,
  key: string | null,
  hash: string,
  work: IdempotentWork<Body>,
): Promise<Outcome<Body>> {
  if ('run' in work) {
    if (key === null && work.withoutKey) return { ...(await work.withoutKey()), replayed: false };
    return runIdempotent(db, principal, key, hash, work.run);
  }
  const { outcome, effect } = work.insert;
  // One statement in the common case; a key that is already taken goes the general way (wait, replay or refuse).
  return (
    (await insertOnce(db, principal, key, hash, outcome, effect)) ??
    (await runIdempotent(db, principal, key, hash, async (tx) => {
      await insertOnce(tx, principal, null, hash, outcome, effect);
      return outcome;
    }))
  );
}

function idempotencyKeyOf(request: FastifyRequest): string | null {
  const raw = request.headers['idempotency-key'];
  if (raw === undefined) return null;
  const key = Array.isArray(raw) ? raw[0]! : raw;
  if (key.length < 1 || key.length > IDEMPOTENCY_KEY_LENGTH_MAX || !/^[\x20-\x7e]+$/.test(key)) {
    throw errors.invalidArgument(
      `Idempotency-Key must be 1 to ${IDEMPOTENCY_KEY_LENGTH_MAX} printable ASCII characters.`,
      [{ field: 'Idempotency-Key', message: `must be 1 to ${IDEMPOTENCY_KEY_LENGTH_MAX} printable ASCII characters` }],
    );
  }
  return key;
}

/**
 * What a key's request is compared by: method, path and parsed body, and for a multipart upload each file
 * part's field, filename and a digest of its bytes (the same key with another file is another request).
 */
function requestHash(request: FastifyRequest): string {
  const path = request.url.split('?')[0];
  const files = request.uploads?.map((upload) => ({
    field: upload.fieldname,
    filename: upload.filename,
    sha256: createHash('sha256').update(upload.data).digest('hex'),
  }));
  return sha256Hex(
    canonicalJson({ method: request.method, path, body: request.body ?? null, ...(files ? { files } : {}) }),
  );
}

/**
 * Runs `execute` in one transaction, at most once per Idempotency-Key. `execute` returns the status
 * and body to send; with a key they are stored with the effect and replayed to identical retries.
 */
async function runIdempotent<Body>(
  db: Db,
  principal: IdempotencyScope,
  key: string | null,
  hash: string,
  execute: (tx: Queryable) => Promise<IdempotentResult<Body>>,
): Promise<Outcome<Body>> {
  if (key === null) {
    const result = await db.transaction(execute);
    return { ...result, replayed: false };
  }
  const scope = keyScope(principal, key);

  for (let round = 0; round < 3; round++) {
    // Claim, effect and stored result in ONE transaction (one commit): a concurrent request with the
    // same key waits on the key's unique index until this one commits (then replays) or rolls back
    // (then runs itself). A failure rolls the claim back with everything else, so nothing is stored.
    const result = await db.transaction(async (tx) => {
      if (!(await claimKey(tx, scope, hash))) return null;
      const outcome = await execute(tx);
      await completeKey(tx, scope, outcome.status, outcome.body);
      return outcome;
    });
    if (result) return { ...result, replayed: false };

    const stored = await findStoredKey(db, scope, IDEMPOTENCY_IN_FLIGHT_LEASE_S, IDEMPOTENCY_KEY_TTL_HOURS);
    if (!stored) continue; // rolled back meanwhile: claim again
    if (stored.expired) {
      await deleteExpiredKey(db, scope, IDEMPOTENCY_KEY_TTL_HOURS);
      continue;
    }
    if (stored.request_hash !== hash) throw errors.idempotencyKeyReused();
    if (stored.state === 'completed') {
      return {
        status: stored.response_status!,
        body: JSON.parse(stored.response_body as string) as Body,
        replayed: true,
      };
    }
    // An in_flight row is only ever visible if written by an older version that claimed in its own
    // transaction; after the lease it is abandoned and may be taken over.
    if (!stored.stale) throw errors.idempotencyKeyInFlight();
    await deleteAbandonedClaim(db, scope, IDEMPOTENCY_IN_FLIGHT_LEASE_S);
  }
  throw errors.idempotencyKeyInFlight();
}

/**
 * The one-round-trip form of runIdempotent, for a use case whose whole effect is one insert guarded by
 * the key's claim (a OneStatementInsert) and whose response is known before it runs: the key's claim,
 * its stored response already in place, is a CTE of that statement (idempotency-store.ts, insertClaimed),
 * so claim, effect and result commit together with no BEGIN/COMMIT round trips. Without a key the claim
 * is a constant row. Returns null when the key is already taken (an earlier or a concurrent request with
 * it): the caller then goes through runIdempotent, which waits, replays or refuses, exactly as for any
 * other use case.
 */
async function insertOnce<Body>(
  db: Queryable,
  principal: IdempotencyScope,
  key: string | null,
  hash: string,
  outcome: IdempotentResult<Body>,
  effect: OneStatementInsert,
): Promise<Outcome<Body> | null> {
  const completed =
    key === null
      ? null
      : { scope: keyScope(principal, key), requestHash: hash, status: outcome.status, body: outcome.body };
  try {
    const rows = await insertClaimed(db, completed, effect);
    return rows.length > 0 ? { ...outcome, replayed: false } : null;
  } catch (error) {
    // The claim would wait on a concurrent request with the same key: the general way waits for it.
    if (error instanceof DbError && error.isLockTimeout) return null;
    throw error;
  }
}

export const purgeExpiredIdempotencyKeys = (db: Queryable) => deleteExpiredKeys(db, IDEMPOTENCY_KEY_TTL_HOURS);
