import { randomFillSync, randomUUID } from 'node:crypto';

const CROCKFORD = '0123456789abcdefghjkmnpqrstvwxyz';

// Random bytes for ids and tokens, drawn from the CSPRNG 4 KiB at a time (as node's randomUUID caches
// its entropy): one call per few hundred ids instead of one per id. Each byte is handed out once.
const POOL_BYTES = 4096;
const pool = Buffer.alloc(POOL_BYTES);
let poolOffset = POOL_BYTES;

/** n random bytes as a view of the pool: read them before the next call, never keep them. */
function pooledRandomBytes(n: number): Buffer {
  if (n > POOL_BYTES) return randomFillSync(Buffer.alloc(n));
  if (poolOffset + n > POOL_BYTES) {
    randomFillSync(pool);
    poolOffset = 0;
  }
  const bytes = pool.subarray(poolOffset, poolOffset + n);
  poolOffset += n;
  return bytes;
}

/** The 10 characters of milliseconds that begin a sortable id made at `ms`. */
function timePart(ms: number): string {
  let time = '';
  for (let i = 0; i < 10; i++) {
    time = CROCKFORD[ms % 32] + time;
    ms = Math.floor(ms / 32);
  }
  return time;
}

/** Below every id of this prefix made at or after `at`, above every one made before it (ids sort by time). */
export const idTimeBound = (prefix: IdPrefix, at: Date): string => `${prefix}_${timePart(at.getTime())}`;

/** A ULID-shaped, time-sortable id: 10 characters of milliseconds, 16 of randomness. */
function sortableId(now = Date.now()): string {
  const time = timePart(now);
  const bytes = pooledRandomBytes(16);
  let random = '';
  for (const byte of bytes) random += CROCKFORD[byte % 32];
  return time + random;
}

export type IdPrefix =
  | 'cs'
  | 'att'
  | 'slip'
  | 'po'
  | 'rcp'
  | 'evt'
  | 'quo'
  | 'evd'
  | 'msg'
  | 're'
  | 'mail'
  | 'kyc'
  | 'kdoc'
  | 'pl'
  | 'sms';

export const newId = (prefix: IdPrefix): string => `${prefix}_${sortableId()}`;
export const newUuid = (): string => randomUUID();

const UUID_PATTERN = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
export const isUuid = (value: string): boolean => UUID_PATTERN.test(value);

const ALPHANUMERIC = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

/** Random base62 text, unbiased (rejection sampling). */
export function randomToken(length: number): string {
  let out = '';
  while (out.length < length) {
    for (const byte of pooledRandomBytes(length * 2)) {
      if (byte < 248 && out.length < length) out += ALPHANUMERIC[byte % 62];
    }
  }
  return out;
}
