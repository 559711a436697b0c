// Self-service sign-up (issue 33): a business owner fills in a form, gets a link by e-mail, and only when the
// link is used are the merchant (pending activation: Test at once, no Live key) and its owner user made, and
// the owner signed in. Until then a sign-up is not a user: it signs in to nothing. Nothing the form answers
// tells whether an address has an account: an address already a user gets a mail saying so instead of a link,
// the password is hashed in every case (the same time), and the per-e-mail limit only stops mails quietly.
// Only the per-address limit answers differently (a 429), and it says nothing about the e-mail.
import { randomBytes } from 'node:crypto';
import { auditMerchant } from '../audit/log.ts';
import { DbError, type Db, type Queryable } from '../db/index.ts';
import { sha256Hex } from '../lib/canonical-json.ts';
import { EMAIL_PATTERN } from '../lib/email-address.ts';
import { SikaError } from '../lib/errors.ts';
import { newUuid } from '../lib/ids.ts';
import { absoluteUrl, plainMailBodies } from '../mail/compose.ts';
import { enqueueMail } from '../mail/outbox.ts';
import { PASSWORD_LENGTH_MAX } from './console-accounts.ts';
import * as sessions from './console-session-store.ts';
import { SESSION_LIFETIME_S } from './console-sessions.ts';
import { hashPassword } from './password-hash.ts';
import { createMerchantIn, EMAIL_LENGTH_MAX, MERCHANT_NAME_LENGTH_MAX, PASSWORD_LENGTH_MIN } from './service.ts';
import * as store from './signup-store.ts';

/** How long a verification link works. */
export const SIGNUP_LINK_LIFETIME_S = 24 * 3_600;
/** The window both sign-up limits count in. */
export const SIGNUP_RATE_WINDOW_S = 3_600;
/** Sign-up forms accepted from one client address per window; beyond, a 429. */
export const SIGNUPS_PER_ADDRESS_MAX = 10;
/** Sign-up mails (a link, or "you have an account") to one e-mail per window; beyond, the same answer and no mail. */
export const SIGNUP_MAILS_PER_EMAIL_MAX = 3;
/** An unverified sign-up is deleted this long after its link expired. */
export const SIGNUP_PURGE_AFTER_EXPIRY_S = 24 * 3_600;
/** The rate limits' rows are kept this long (longer than their window). */
export const SIGNUP_REQUESTS_KEPT_S = 24 * 3_600;
/** The owner's name, as long as a business name may be. */
export const OWNER_NAME_LENGTH_MAX = MERCHANT_NAME_LENGTH_MAX;
/** The path a link's token is appended to (src/web/signup.ts). */
export const SIGNUP_VERIFY_PATH = '/signup/verify';
/** Tokens are 32 random bytes in base64url. */
export const SIGNUP_TOKEN_PATTERN = /^[A-Za-z0-9_-]{43}$/;

export const signupLinkUrl = (baseUrl: string, token: string) => absoluteUrl(baseUrl, `${SIGNUP_VERIFY_PATH}/${token}`);

export interface SignupForm {
  business_name: string;
  name: string;
  email: string;
  password: string;
}

/** Each field's problem, in the words the form shows beside it; empty when the form is fine. */
export type SignupProblems = Partial<Record<keyof SignupForm, string>>;

export function signupProblems(form: SignupForm): SignupProblems {
  const problems: SignupProblems = {};
  const business = form.business_name.trim();
  if (business.length === 0) problems.business_name = 'Enter the name of your business.';
  else if (business.length > MERCHANT_NAME_LENGTH_MAX)
    problems.business_name = `The business name must be at most ${MERCHANT_NAME_LENGTH_MAX} characters.`;
  const name = form.name.trim();
  if (name.length === 0) problems.name = 'Enter your name.';
  else if (name.length > OWNER_NAME_LENGTH_MAX)
    problems.name = `Your name must be at most ${OWNER_NAME_LENGTH_MAX} characters.`;
  const email = form.email.trim();
  if (email.length === 0) problems.email = 'Enter your e-mail address.';
  else if (email.length > EMAIL_LENGTH_MAX || !EMAIL_PATTERN.test(email))
    problems.email = 'Enter an e-mail address like name@example.com.';
  if (form.password.length < PASSWORD_LENGTH_MIN)
    problems.password = `The password must be at least ${PASSWORD_LENGTH_MIN} characters.`;
  else if (form.password.length > PASSWORD_LENGTH_MAX)
    problems.password = `The password must be at most ${PASSWORD_LENGTH_MAX} characters.`;
  return problems;
}

export type SignupAnswer = { ok: true } | { ok: false; reason: 'throttled'; retryAfterS: number };

/**
 * A sign-up form that passed signupProblems, from a client address. The password is hashed first, whatever
 * the address turns out to be. Then, in one transaction: the per-address limit (else 'throttled'), and, within
 * the per-e-mail limit, a pending sign-up written (or the pending one replaced) with its link mailed, or, for
 * an address that is already a user's, a mail saying so. The caller answers every ok alike.
 */
export async function requestSignup(db: Db, form: SignupForm, address: string, baseUrl: string): Promise<SignupAnswer> {
  const email = form.email.trim();
  const passwordHash = await hashPassword(form.password);
  const token = randomBytes(32).toString('base64url');
  const emailHash = sha256Hex(email.toLowerCase());
  const clientAddress = address.slice(0, 64);
  return db.transaction(async (tx) => {
    await store.lockSignupKey(tx, `address:${clientAddress}`);
    const fromAddress = await store.countAddressRequests(tx, clientAddress, SIGNUP_RATE_WINDOW_S);
    if (fromAddress && fromAddress.count >= SIGNUPS_PER_ADDRESS_MAX)
      return {
        ok: false as const,
        reason: 'throttled' as const,
        retryAfterS: Math.max(1, fromAddress.retry_after_s ?? 1),
      };
    await store.lockSignupKey(tx, `email:${emailHash}`);
    const mailed = (await store.countMailedRequests(tx, emailHash, SIGNUP_RATE_WINDOW_S)) < SIGNUP_MAILS_PER_EMAIL_MAX;
    await store.insertRequest(tx, { address: clientAddress, emailHash, mailed });
    if (!mailed) return { ok: true as const };
    if (await store.userHasEmail(tx, email)) {
      await enqueueMail(tx, accountExistsMail(email, baseUrl));
      return { ok: true as const };
    }
    await store.upsertPendingSignup(tx, {
      id: newUuid(),
      businessName: form.business_name.trim(),
      ownerName: form.name.trim(),
      email,
      passwordHash,
      tokenHash: sha256Hex(token),
      address: clientAddress,
      lifetimeS: SIGNUP_LINK_LIFETIME_S,
    });
    await enqueueMail(tx, verifyMail(email, form.name.trim(), signupLinkUrl(baseUrl, token)));
    return { ok: true as const };
  });
}

export type VerifyAnswer =
  /** session: the dashboard session token to set (the owner is signed in, in Test). */
  | { ok: true; session: string; merchantId: string }
  /** invalid: unknown, used or expired (the pages say the same for all three); email_taken: a user got the address meanwhile. */
  | { ok: false; reason: 'invalid' | 'email_taken' };

/** Whether a token opens a sign-up still to verify (the confirmation page shows its button only then). */
export const signupLinkOpen = async (db: Queryable, token: string): Promise<boolean> =>
  SIGNUP_TOKEN_PATTERN.test(token) && store.openSignupExists(db, sha256Hex(token));

/**
 * Uses a link: in one transaction the sign-up is locked (a second use, even a concurrent one, finds it verified),
 * the merchant made pending activation with its owner (named) and a Test key, the sign-up marked verified,
 * audited as the owner's 'merchant.signup', and a dashboard session opened for the owner.
 */
export async function verifySignup(db: Db, token: string): Promise<VerifyAnswer> {
  if (!SIGNUP_TOKEN_PATTERN.test(token)) return { ok: false, reason: 'invalid' };
  try {
    return await db.transaction(async (tx): Promise<VerifyAnswer> => {
      const signup = await store.lockOpenSignup(tx, sha256Hex(token));
      if (!signup) return { ok: false, reason: 'invalid' };
      if (await store.userHasEmail(tx, signup.email)) return { ok: false, reason: 'email_taken' };
      const merchant = await createMerchantIn(tx, {
        name: signup.business_name,
        email: signup.email,
        passwordHash: signup.password_hash,
        payoutApproval: false,
        pendingActivation: true,
        webhookUrls: { test: null, live: null },
        warnings: [],
        actor: null,
      });
      await store.setUserName(tx, merchant.owner_user_id, signup.owner_name);
      await store.markVerified(tx, signup.id, merchant.merchant_id);
      await auditMerchant(tx, { type: 'user', id: merchant.owner_user_id, email: signup.email }, merchant.merchant_id, {
        action: 'merchant.signup',
        before: null,
        after: {
          name: signup.business_name,
          owner_name: signup.owner_name,
          owner_email: signup.email,
          owner_user_id: merchant.owner_user_id,
          signup_id: signup.id,
          activation_status: 'not_submitted',
        },
      });
      const session = randomBytes(32).toString('base64url');
      await sessions.insertSession(tx, {
        tokenHash: sha256Hex(session),
        kind: 'merchant',
        accountId: merchant.owner_user_id,
        csrfToken: randomBytes(24).toString('base64url'),
        stage: 'active',
        lifetimeS: SESSION_LIFETIME_S,
      });
      return { ok: true, session, merchantId: merchant.merchant_id };
    });
  } catch (error) {
    // Another way in (the CLI, an invitation) took the address while this transaction ran.
    if (
      (error instanceof SikaError && error.code === 'EMAIL_TAKEN') ||
      (error instanceof DbError && error.isUniqueViolation)
    )
      return { ok: false, reason: 'email_taken' };
    throw error;
  }
}

/** The purge job: unverified sign-ups a day past their expiry, and the limits' old rows. Verified sign-ups stay. */
export const purgeExpiredSignups = (db: Queryable) =>
  store.deleteExpired(db, SIGNUP_PURGE_AFTER_EXPIRY_S, SIGNUP_REQUESTS_KEPT_S);

// ---- the mails ----

function verifyMail(to: string, ownerName: string, link: string) {
  return {
    kind: 'signup.verify',
    to,
    subject: 'Confirm your e-mail to open your Sika account',
    ...plainMailBodies({
      paragraphs: [`Hello ${ownerName},`, 'Open this link to confirm your e-mail address and open your Sika account.'],
      link: { url: link, label: 'Confirm my e-mail' },
      after: [
        `The link works once, for ${SIGNUP_LINK_LIFETIME_S / 3_600} hours.`,
        'If you did not sign up for Sika, ignore this mail: no account is opened without it.',
      ],
    }),
  };
}

function accountExistsMail(to: string, baseUrl: string) {
  return {
    kind: 'signup.account_exists',
    to,
    subject: 'Someone tried to sign up for Sika with your e-mail',
    ...plainMailBodies({
      paragraphs: [
        'Someone tried to sign up for Sika with this e-mail address, which already has a Sika account.',
        'If it was you, sign in instead.',
      ],
      link: { url: absoluteUrl(baseUrl, '/dashboard/login'), label: 'Sign in' },
      after: ['If it was not you, you can ignore this mail: nothing was changed.'],
    }),
  };
}
