// One-time dashboard sign-in links (issue 19): a random token, kept only as its SHA-256, that opens a
// dashboard session for one merchant user once, within SIGN_IN_LINK_LIFETIME_S. The first run's demo
// merchant gets one (it has no password yet); `sika user sign-in-link` makes another. A user with a
// second factor still enters the code: the link stands for the password, never for the code.
import { randomBytes } from 'node:crypto';
import { audit, type Actor } from '../audit/log.ts';
import type { Db, Queryable } from '../db/index.ts';
import { sha256Hex } from '../lib/canonical-json.ts';
import { SikaError } from '../lib/errors.ts';
import { passwordProblem } from './console-accounts.ts';
import * as sessions from './console-session-store.ts';
import { SECOND_FACTOR_WINDOW_S, SESSION_LIFETIME_S } from './console-sessions.ts';
import { hashPassword } from './service.ts';
import { enqueueMail } from '../mail/outbox.ts';
import { plainMailBodies } from '../mail/compose.ts';
import * as store from './sign-in-link-store.ts';

export const SIGN_IN_LINK_LIFETIME_S = 30 * 60;
/** The path a link's token is appended to (the dashboard's route, src/web/dashboard/sign-in-link.ts). */
export const SIGN_IN_LINK_PATH = '/dashboard/login/link';

export const signInLinkUrl = (baseUrl: string, token: string) => `${baseUrl}${SIGN_IN_LINK_PATH}/${token}`;

/** A new link for a merchant user; the token is returned once and stored only as its hash. */
export async function createSignInLink(db: Db, userId: string): Promise<string> {
  const token = randomBytes(32).toString('base64url');
  await store.insertSignInLink(db, { tokenHash: sha256Hex(token), userId, lifetimeS: SIGN_IN_LINK_LIFETIME_S });
  return token;
}

/** The mail carrying a sign-in link to its user. */
export function signInLinkMail(to: string, url: string) {
  return {
    kind: 'user.sign_in_link',
    to,
    subject: 'Your Sika dashboard sign-in link',
    ...plainMailBodies({
      paragraphs: ['Here is a link that signs you in to the Sika dashboard.'],
      link: { url, label: 'Sign in to the dashboard' },
      after: [
        `It works once, within ${SIGN_IN_LINK_LIFETIME_S / 60} minutes. If you did not ask for it, ignore this mail: nobody can use it without your inbox.`,
      ],
    }),
  };
}

/**
 * A new link for the active merchant user with this email (the CLI's `user sign-in-link`), audited as the
 * actor's (never the token). With `mailBaseUrl` the link is also e-mailed to the user, queued in the
 * transaction that creates it.
 */
export async function createSignInLinkForEmail(
  db: Db,
  email: string,
  actor: Actor,
  options: { mailBaseUrl?: string } = {},
): Promise<{ token: string; email: string; mailId: string | null }> {
  const account = await sessions.findSignInAccount(db, 'merchant', email.trim());
  if (!account) throw new SikaError('NOT_FOUND', `no active dashboard user with email ${email.trim()}`);
  const token = randomBytes(32).toString('base64url');
  const mailId = await db.transaction(async (tx) => {
    await store.insertSignInLink(tx, {
      tokenHash: sha256Hex(token),
      userId: account.id,
      lifetimeS: SIGN_IN_LINK_LIFETIME_S,
    });
    await audit(tx, {
      actor,
      merchantId: null,
      action: 'user.sign_in_link_create',
      objectType: 'user',
      objectId: account.id,
      before: null,
      after: { lifetime_s: SIGN_IN_LINK_LIFETIME_S, mailed: options.mailBaseUrl !== undefined },
    });
    return options.mailBaseUrl === undefined
      ? null
      : enqueueMail(tx, signInLinkMail(email.trim(), signInLinkUrl(options.mailBaseUrl, token)));
  });
  return { token, email: email.trim(), mailId };
}

export type RedeemResult =
  /** session: the dashboard session token to set; secondFactor: it opens at the code step only; hasPassword: false when the user has none yet. */
  | { ok: true; session: string; secondFactor: boolean; hasPassword: boolean }
  | { ok: false; reason: 'used' | 'expired' | 'unknown' };

/** Uses a link: once, before it expires, for a user still active. */
export async function redeemSignInLink(db: Db, token: string): Promise<RedeemResult> {
  const tokenHash = sha256Hex(token);
  const opened = await db.transaction(async (tx) => {
    const link = await store.useSignInLink(tx, tokenHash);
    if (!link) return null;
    const session = randomBytes(32).toString('base64url');
    await sessions.insertSession(tx, {
      tokenHash: sha256Hex(session),
      kind: 'merchant',
      accountId: link.user_id,
      csrfToken: randomBytes(24).toString('base64url'),
      stage: link.second_factor ? 'second_factor' : 'active',
      lifetimeS: link.second_factor ? SECOND_FACTOR_WINDOW_S : SESSION_LIFETIME_S,
    });
    return {
      ok: true as const,
      session,
      secondFactor: link.second_factor,
      hasPassword: await store.userHasPassword(tx, link.user_id),
    };
  });
  if (opened) return opened;
  return { ok: false, reason: (await store.findSignInLinkState(db, tokenHash)) ?? 'unknown' };
}

/** Whether a signed-in user still needs a first password (they came in by a link and have none). */
export const needsFirstPassword = async (db: Queryable, userId: string): Promise<boolean> =>
  !(await store.userHasPassword(db, userId));

export type FirstPasswordResult = { ok: true } | { ok: false; message: string };

/**
 * The first password of a user who has none (a merchant made without --password, in by a sign-in link).
 * Changing a password that exists asks for the current one: that is the account page's, not this.
 */
export async function setFirstPassword(
  db: Db,
  who: { userId: string; email: string },
  input: { next: string; confirm: string },
): Promise<FirstPasswordResult> {
  const problem = passwordProblem(input.next);
  if (problem) return { ok: false, message: problem };
  if (input.next !== input.confirm) return { ok: false, message: 'The two passwords differ.' };
  const passwordHash = await hashPassword(input.next);
  return db.transaction(async (tx) => {
    const user = await store.setPasswordWhereNone(tx, who.userId, passwordHash);
    if (!user) return { ok: false as const, message: 'You have a password already: change it under Account.' };
    await audit(tx, {
      actor: { type: 'user', id: who.userId, email: who.email },
      merchantId: user.merchant_id,
      action: 'user.password_set',
      objectType: 'user',
      objectId: who.userId,
      before: null,
      after: { first_password: true },
    });
    return { ok: true as const };
  });
}
