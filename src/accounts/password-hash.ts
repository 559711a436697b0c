// Password hashes: argon2id with parameters written here, not left to the library's defaults, so an upgrade of
// the library never changes them silently. A hash carries its own parameters, so hashes made with other ones
// (older, or a test run's) still verify.
//
// Under NODE_ENV=test (npm test sets it for every test process and what they start) hashes are made with the
// smallest parameters, as Rails' has_secure_password uses bcrypt's minimum cost in tests: a test suite signs in
// hundreds of times, and each full-cost hash takes about 120 ms on both cores of a 2-core machine. The rule is in
// passwordHashOptions, tested for both cases in test/accounts/password-hash.test.ts.
import { randomBytes } from 'node:crypto';

/** What a hash costs: OWASP's argon2id guidance is at least 19 MiB and 2 passes; this is 64 MiB, 3 passes, 4 lanes. */
export const PASSWORD_HASH_PARAMS = { memoryCost: 65_536, timeCost: 3, parallelism: 4 } as const;
/** The smallest parameters argon2 takes (8 KiB per lane), for test runs only. */
export const TEST_PASSWORD_HASH_PARAMS = { memoryCost: 8, timeCost: 1, parallelism: 1 } as const;

export function passwordHashOptions(env: NodeJS.ProcessEnv = process.env) {
  return env.NODE_ENV === 'test' ? TEST_PASSWORD_HASH_PARAMS : PASSWORD_HASH_PARAMS;
}

// argon2 (a native addon) loads on the first console sign-in or new password, not at start.
const loadArgon2 = async () => (await import('argon2')).default;

export async function hashPassword(password: string): Promise<string> {
  const argon2 = await loadArgon2();
  return argon2.hash(password, { type: argon2.argon2id, ...passwordHashOptions() });
}

export const verifyPassword = async (hash: string, password: string): Promise<boolean> =>
  (await loadArgon2()).verify(hash, password).catch(() => false);

let dummy: Promise<string> | null = null;

/**
 * Verifies against a hash of a random string nobody knows, made once per process with the current parameters:
 * an unknown e-mail costs what a known one costs, so timing does not tell which e-mails have accounts. Always false.
 */
export async function verifyNothing(password: string): Promise<false> {
  dummy ??= hashPassword(randomBytes(24).toString('base64url'));
  await verifyPassword(await dummy, password);
  return false;
}
