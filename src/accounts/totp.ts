// TOTP second factor (RFC 6238) through otpauth, and recovery codes. Pure: storage is in console-accounts.ts.
import { randomInt } from 'node:crypto';
import { Secret, TOTP } from 'otpauth';
import { sha256Hex } from '../lib/canonical-json.ts';

export const TOTP_PERIOD_S = 30;
export const TOTP_DIGITS = 6;
/** Codes of the step before and after the current one are accepted too (clock drift of the phone). */
export const TOTP_WINDOW_STEPS = 1;
const TOTP_ALGORITHM = 'SHA1'; // what authenticator apps support everywhere
const TOTP_SECRET_BYTES = 20; // 160 bits, as RFC 4226 recommends
const TOTP_ISSUER = 'Sika';

export const RECOVERY_CODES_COUNT = 10;
/** 16 characters of a 32-letter alphabet: 80 random bits, so a SHA-256 of one cannot be searched. */
const RECOVERY_CODE_LENGTH = 16;
// Crockford's base32: no i, l, o or u to misread.
const RECOVERY_ALPHABET = '0123456789abcdefghjkmnpqrstvwxyz';

export const newTotpSecret = (): string => new Secret({ size: TOTP_SECRET_BYTES }).base32;

const totp = (secretBase32: string, label: string) =>
  new TOTP({
    issuer: TOTP_ISSUER,
    label,
    algorithm: TOTP_ALGORITHM,
    digits: TOTP_DIGITS,
    period: TOTP_PERIOD_S,
    secret: Secret.fromBase32(secretBase32),
  });

/** The otpauth:// URI an authenticator app reads (from the QR code or pasted). */
export const otpauthUri = (secretBase32: string, label: string): string => totp(secretBase32, label).toString();

/** The secret in groups of four, easier to type into an app by hand. */
export const groupedSecret = (secretBase32: string): string => secretBase32.replace(/(.{4})/g, '$1 ').trim();

export const totpStep = (nowMs: number): number => Math.floor(nowMs / 1000 / TOTP_PERIOD_S);

/** The code an authenticator shows at this time (tests, and nothing else, need to compute one). */
export const totpCode = (secretBase32: string, nowMs = Date.now()): string =>
  totp(secretBase32, 'x').generate({ timestamp: nowMs });

const TOTP_CODE_PATTERN = new RegExp(`^\\d{${TOTP_DIGITS}}$`);
/** Spaces do not matter (some apps show the code as 123 456). */
export const looksLikeTotpCode = (code: string): boolean => TOTP_CODE_PATTERN.test(code.replace(/\s+/g, ''));

/** The time step a code belongs to when it is right for the secret within the window, else null. */
export function matchingStep(secretBase32: string, code: string, nowMs = Date.now()): number | null {
  const token = code.replace(/\s+/g, '');
  if (!TOTP_CODE_PATTERN.test(token)) return null;
  const delta = totp(secretBase32, 'x').validate({ token, timestamp: nowMs, window: TOTP_WINDOW_STEPS });
  return delta === null ? null : totpStep(nowMs) + delta;
}

/** Ten fresh recovery codes as shown (xxxx-xxxx-xxxx-xxxx). */
export function newRecoveryCodes(): string[] {
  return Array.from({ length: RECOVERY_CODES_COUNT }, () => {
    let code = '';
    for (let i = 0; i < RECOVERY_CODE_LENGTH; i++) code += RECOVERY_ALPHABET[randomInt(RECOVERY_ALPHABET.length)];
    return code.replace(/(.{4})(?!$)/g, '$1-');
  });
}

/** Dashes, spaces and case do not matter when a recovery code is typed. */
export const recoveryCodeHash = (code: string): string => sha256Hex(code.replace(/[\s-]/g, '').toLowerCase());

export const looksLikeRecoveryCode = (code: string): boolean =>
  code.replace(/[\s-]/g, '').length === RECOVERY_CODE_LENGTH;
