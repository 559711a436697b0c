// Sign-in backoff (DESIGN §4 "Hosting"), in storage every process shares. Each password or code check
// first reserves its attempt: one transaction locks the attempt's three keys, refuses when any of them
// is still backing off, and otherwise counts the attempt as a failure and moves the next allowed time.
// Only then is the secret verified; a success takes the failure back. So concurrent guesses cannot
// slip past the count (no check-then-act), and the number of verifications is bounded by the policy.
//
// Three keys per attempt: the (account, address) pair backs off fast, so one stranger gets a handful
// of guesses; the account alone backs off later and only up to a minute, so guessing from many
// addresses is slowed without letting a stranger lock the owner out; the address alone limits one
// address spraying many accounts. Keys hash the email, so an unknown email is throttled the same way
// as a real one (nothing tells them apart).
//
// An attempt from a trusted device of the account (trusted-devices.ts: a browser that signed in before)
// has one key instead, the device's, with the pair's policy: failures from strangers never hold it up,
// and its own failures hold up only itself (it never falls back to the three keys).
//
// The rows' SQL is in sign-in-throttle-store.ts; the keys, the policies and the arithmetic are here.
import type { Db, Queryable } from '../db/index.ts';
import { sha256Hex } from '../lib/canonical-json.ts';
import {
  bumpThrottleVersions,
  clearFailuresAtVersion,
  deleteAccountThrottles,
  deleteIdleThrottles,
  ensureThrottles,
  lockThrottles,
  recordFailures,
  takeBackFailure,
  type ThrottleVersion,
} from './sign-in-throttle-store.ts';
import { trustedDeviceHash } from './trusted-devices.ts';

export type ConsoleKind = 'merchant' | 'operator';

export interface BackoffPolicy {
  /** Failures allowed before any delay. */
  failuresFree: number;
  /** The delay after the first failure past the free ones; it doubles with each further failure. */
  delayFirstS: number;
  delayMaxS: number;
}

export const PAIR_BACKOFF: BackoffPolicy = { failuresFree: 5, delayFirstS: 15, delayMaxS: 15 * 60 };
export const ACCOUNT_BACKOFF: BackoffPolicy = { failuresFree: 20, delayFirstS: 5, delayMaxS: 60 };
export const ADDRESS_BACKOFF: BackoffPolicy = { failuresFree: 50, delayFirstS: 5, delayMaxS: 5 * 60 };
/** A key with no attempt for this long starts again from zero failures (and its row may be purged). */
export const FAILURES_FORGOTTEN_AFTER_S = 24 * 3_600;

/** A trusted device backs off like one stranger at one address: its holder is one person too. */
export const DEVICE_BACKOFF: BackoffPolicy = PAIR_BACKOFF;

type Scope = 'pair' | 'account' | 'address' | 'device';
const POLICIES: Record<Scope, BackoffPolicy> = {
  pair: PAIR_BACKOFF,
  account: ACCOUNT_BACKOFF,
  address: ADDRESS_BACKOFF,
  device: DEVICE_BACKOFF,
};

/** Seconds to wait after the given number of failures (counting the one just made). */
export function backoffDelayS(policy: BackoffPolicy, failures: number): number {
  if (failures < policy.failuresFree) return 0;
  // Bounded exponent: past 2^20 the cap has long been reached.
  return Math.min(policy.delayMaxS, policy.delayFirstS * 2 ** Math.min(20, failures - policy.failuresFree));
}

const normalEmail = (email: string) => email.trim().toLowerCase();

/** The key that finds an account's throttle rows (pair and account), e.g. to clear them when its password is set. */
export const accountKey = (kind: ConsoleKind, email: string) => `${kind}:${sha256Hex(`email:${normalEmail(email)}`)}`;

/** The key of an address across accounts. */
export const addressKey = (kind: ConsoleKind, address: string) => `${kind}:address:${sha256Hex(address)}`;

/** The key of a trusted device (by its stored token hash); its rows carry the account key, so setting the password clears them too. */
export const deviceKey = (kind: ConsoleKind, tokenHash: string) => `${kind}:device:${tokenHash}`;

type ThrottleKey = { key: string; scope: Scope; accountKey: string | null };

function keysFor(kind: ConsoleKind, email: string, address: string): ThrottleKey[] {
  const account = accountKey(kind, email);
  return [
    {
      key: `${kind}:pair:${sha256Hex(`${normalEmail(email)}\n${address}`)}`,
      scope: 'pair' as const,
      accountKey: account,
    },
    { key: `${kind}:account:${sha256Hex(normalEmail(email))}`, scope: 'account' as const, accountKey: account },
    { key: addressKey(kind, address), scope: 'address' as const, accountKey: null },
  ].sort((a, b) => (a.key < b.key ? -1 : 1));
}

export type Reservation =
  | { allowed: false; retryAfterS: number }
  | {
      allowed: true;
      /** The secret was right: forgive the failures counted up to this attempt (see succeed()). */
      succeeded(): Promise<void>;
    };

/**
 * Reserves one sign-in attempt (a password or a second-factor code) for an account from an address.
 * Refused while any of the three keys backs off; otherwise the attempt counts as a failure until
 * succeeded() is called. With `device` (the browser's device cookie) a live trusted device of this
 * account, the device's key is the only one.
 */
export async function reserveAttempt(
  db: Db,
  who: { kind: ConsoleKind; email: string; address: string; device?: string | null },
): Promise<Reservation> {
  const outcome = await db.transaction(async (tx) => {
    const account = accountKey(who.kind, who.email);
    const trusted = await trustedDeviceHash(tx, who.device, account);
    const keys: ThrottleKey[] = trusted
      ? [{ key: deviceKey(who.kind, trusted), scope: 'device', accountKey: account }]
      : keysFor(who.kind, who.email, who.address);
    // Rows are created, then locked, in key order, so concurrent reservations never deadlock.
    await ensureThrottles(tx, keys);
    const rows = await lockThrottles(
      tx,
      keys.map((k) => k.key),
      FAILURES_FORGOTTEN_AFTER_S,
    );
    const waiting = rows.filter((row) => row.wait_s > 0);
    if (waiting.length > 0) {
      // A refusal moves the version of the keys that refused it: a success reserved earlier then leaves
      // their delay alone (see succeed()), as someone has already been told to wait.
      await bumpThrottleVersions(
        tx,
        waiting.map((row) => row.key),
      );
      return { allowed: false as const, retryAfterS: Math.max(...waiting.map((row) => row.wait_s)) };
    }
    const updates = keys.map((k) => {
      const row = rows.find((r) => r.key === k.key)!;
      const failures = (row.forgotten ? 0 : row.failures) + 1;
      return { key: k.key, failures, delayS: backoffDelayS(POLICIES[k.scope], failures) };
    });
    const versions = await recordFailures(tx, updates);
    return { allowed: true as const, versions, keys };
  });
  if (!outcome.allowed) return { allowed: false, retryAfterS: outcome.retryAfterS };
  return {
    allowed: true,
    succeeded: () => succeed(db, outcome.keys, outcome.versions),
  };
}

/**
 * A right secret clears the pair's and the account's (or the device's) failures and delay, but only
 * where no other attempt came after this one, allowed or refused (same version): attempts racing a
 * success keep counting and keep their wait, so a burst gets no more verifications than the policy
 * allows. The address keeps the failures of other accounts: only this attempt is taken back.
 */
async function succeed(db: Queryable, keys: ThrottleKey[], versions: ThrottleVersion[]): Promise<void> {
  const versionOf = (key: string) => versions.find((v) => v.key === key)!.version;
  const accountScoped = keys.filter((k) => k.scope !== 'address');
  await clearFailuresAtVersion(
    db,
    accountScoped.map((k) => ({ key: k.key, version: versionOf(k.key) })),
  );
  const address = keys.find((k) => k.scope === 'address');
  if (!address) return;
  await takeBackFailure(db, address.key, versionOf(address.key));
}

/** Forgets an account's failures and backoff (its password was just set by an operator). */
export const clearAccountThrottles = (tx: Queryable, kind: ConsoleKind, email: string) =>
  deleteAccountThrottles(tx, accountKey(kind, email));

/** Rows idle past the forgetting time count nothing any more: purged by the background job. */
export const purgeIdleThrottles = (db: Queryable) => deleteIdleThrottles(db, FAILURES_FORGOTTEN_AFTER_S);
