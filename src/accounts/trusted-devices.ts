// Trusted devices: OWASP's "device cookies" (Slow Down Online Guessing Attacks with Device Cookies). A
// browser that completed a sign-in (the password, and the code when a second factor is on) keeps a
// long-lived random token bound to that account. Attempts presenting it back off on the device's own key
// only (sign-in-throttle.ts), so strangers who keep the account-wide or an address's key backing off
// never keep the owner out of a browser they have used before. The token is opaque (it names no account)
// and only its SHA-256 is stored (its SQL: trusted-device-store.ts). A leaf module: callers pass the
// account key (sign-in-throttle.ts).
import { randomBytes } from 'node:crypto';
import type { Db, Queryable } from '../db/index.ts';
import { sha256Hex } from '../lib/canonical-json.ts';
import {
  deleteAccountDevices,
  deleteExpiredDevices,
  findLiveDevice,
  insertDevice,
  keepRecentDevices,
  lockAccountDevices,
  renewDevice,
} from './trusted-device-store.ts';

/** How long a device stays trusted without a sign-in; each complete sign-in on it starts the time again. */
export const TRUSTED_DEVICE_LIFETIME_S = 180 * 24 * 3_600;
/** An account keeps at most this many devices: the most recently used; older ones lose their trust. */
export const TRUSTED_DEVICES_PER_ACCOUNT_MAX = 20;
const DEVICE_TOKEN_BYTES = 32;
// 32 random bytes in base64url; anything else in the cookie is not looked up at all.
const DEVICE_TOKEN_PATTERN = /^[A-Za-z0-9_-]{43}$/;

export const deviceTokenHash = (token: string): string => sha256Hex(token);

const wellFormed = (token: string | null | undefined): token is string =>
  typeof token === 'string' && DEVICE_TOKEN_PATTERN.test(token);

/** The stored hash of the presented token when it is a live device of this account; null otherwise (no token, another account's, revoked, expired). */
export async function trustedDeviceHash(
  db: Queryable,
  token: string | null | undefined,
  accountKey: string,
): Promise<string | null> {
  if (!wellFormed(token)) return null;
  return findLiveDevice(db, deviceTokenHash(token), accountKey);
}

/**
 * After a complete sign-in: the presented token when it is already a live device of this account (its
 * time starts again), else a new one. The account keeps only its most recently used devices.
 */
export async function rememberDevice(
  db: Db,
  accountKey: string,
  presented: string | null | undefined,
): Promise<string> {
  return db.transaction(async (tx) => {
    // One account's devices change one at a time, so concurrent sign-ins cannot leave more than the bound.
    await lockAccountDevices(tx, accountKey);
    if (wellFormed(presented)) {
      const renewed = await renewDevice(tx, deviceTokenHash(presented), accountKey, TRUSTED_DEVICE_LIFETIME_S);
      if (renewed) return presented;
    }
    const token = randomBytes(DEVICE_TOKEN_BYTES).toString('base64url');
    await insertDevice(tx, deviceTokenHash(token), accountKey, TRUSTED_DEVICE_LIFETIME_S);
    await keepRecentDevices(tx, accountKey, TRUSTED_DEVICES_PER_ACCOUNT_MAX);
    return token;
  });
}

/** Revokes an account's devices (its password was set or changed), but the one kept: the browser that changed its own password. */
export const revokeDevices = (tx: Queryable, accountKey: string, keepToken: string | null = null) =>
  deleteAccountDevices(tx, accountKey, wellFormed(keepToken) ? deviceTokenHash(keepToken) : null);

/** Expired devices trust nothing any more: purged by the background job with the idle throttle rows. */
export const purgeExpiredDevices = (db: Queryable) => deleteExpiredDevices(db);
