import { randomBytes } from 'node:crypto';
import { audit, auditMerchant, type Actor } from '../audit/log.ts';
import { DbError, type Db, type Queryable } from '../db/index.ts';
import { targetUrlProblem, type Resolver, type TargetPolicy } from '../lib/ssrf.ts';
import { SikaError } from '../lib/errors.ts';
import { EMAIL_PATTERN } from '../lib/email-address.ts';
import { newUuid } from '../lib/ids.ts';
import { issueApiKey } from './api-keys.ts';
import { ENVIRONMENTS, type Environment } from '../lib/environment.ts';
import * as store from './store.ts';

import { hashPassword } from './password-hash.ts';

export { hashPassword, verifyPassword } from './password-hash.ts';

export const newWebhookSecret = (): string => `whsec_${randomBytes(24).toString('base64')}`;

export const PASSWORD_LENGTH_MIN = 10;

export interface CreateMerchantInput {
  name: string;
  email: string;
  password?: string | null;
  webhookUrl?: string | null;
  payoutApproval?: boolean;
  /**
   * A merchant as sign-up makes it (issue 33): activation not_submitted and no Live key until an operator
   * approves its Go-Live application. Without it the operator vouches for the merchant: approved, Live key issued.
   */
  pendingActivation?: boolean;
  /** An argon2 hash already made (a sign-up stores the hash, never the password); instead of password. */
  passwordHash?: string | null;
}

export interface CreatedMerchant {
  merchant_id: string;
  test_api_key: string;
  live_api_key: string;
  test_webhook_secret: string | null;
  live_webhook_secret: string | null;
  owner_user_id: string;
  warnings: string[];
}

/** How a webhook URL is judged when an endpoint is stored: the deployment's policy and the DNS to ask. */
export interface WebhookTargetOptions extends TargetPolicy {
  resolver?: Resolver;
}

/**
 * Checks a webhook URL for storage by the one rule (src/lib/ssrf.ts): http(s), https for Live, no
 * credentials, and, unless private targets are allowed, a host that resolves only to public addresses.
 * The rule is applied again before every delivery, since DNS can change after the endpoint is saved.
 */
export const webhookUrlProblem = (
  url: string,
  environment: Environment,
  options: WebhookTargetOptions,
): Promise<string | null> => targetUrlProblem(url, environment, options, options.resolver);

/**
 * A merchant with an owner user, one integration per environment, a Test and a Live key, and, when a
 * URL is given, a webhook endpoint paired with each key (DESIGN §1). A Live endpoint needs HTTPS: with
 * an http URL only the Test endpoint is created and a warning says so. webhookTargets carries the
 * deployment's WEBHOOK_ALLOW_PRIVATE_TARGETS (strict when omitted): a URL it refuses for Test is an error,
 * not a warning.
 */
export const MERCHANT_NAME_LENGTH_MAX = 200;
/** RFC 5321's limit on a forward path, the longest address mail can be sent to. */
export const EMAIL_LENGTH_MAX = 254;

/** A merchant pending activation has no Live key: its owner creates one in the dashboard once approved. */
export type PendingMerchant = Omit<CreatedMerchant, 'live_api_key'> & { live_api_key: null };

export async function createMerchant(
  db: Db,
  input: CreateMerchantInput & { pendingActivation: true },
  webhookTargets?: WebhookTargetOptions,
  actor?: Actor | null,
): Promise<PendingMerchant>;
export async function createMerchant(
  db: Db,
  input: CreateMerchantInput,
  webhookTargets?: WebhookTargetOptions,
  actor?: Actor | null,
): Promise<CreatedMerchant>;
export async function createMerchant(
  db: Db,
  input: CreateMerchantInput,
  webhookTargets: WebhookTargetOptions = { allowPrivateTargets: false },
  actor: Actor | null = null,
): Promise<CreatedMerchant | PendingMerchant> {
  const name = input.name.trim();
  const email = input.email.trim();
  if (name.length < 1 || name.length > MERCHANT_NAME_LENGTH_MAX)
    throw new SikaError('INVALID_ARGUMENT', `name must be 1 to ${MERCHANT_NAME_LENGTH_MAX} characters`);
  if (!EMAIL_PATTERN.test(email) || email.length > EMAIL_LENGTH_MAX)
    throw new SikaError('INVALID_ARGUMENT', `email "${email}" is not an email address`);
  if (input.password != null && input.password.length < PASSWORD_LENGTH_MIN) {
    throw new SikaError('INVALID_ARGUMENT', `password must be at least ${PASSWORD_LENGTH_MIN} characters`);
  }
  const warnings: string[] = [];
  const webhookUrls: Record<Environment, string | null> = { test: null, live: null };
  if (input.webhookUrl) {
    const testProblem = await webhookUrlProblem(input.webhookUrl, 'test', webhookTargets);
    if (testProblem) throw new SikaError('INVALID_ARGUMENT', `webhook URL ${testProblem}`);
    webhookUrls.test = input.webhookUrl;
    const liveProblem = await webhookUrlProblem(input.webhookUrl, 'live', webhookTargets);
    if (liveProblem) warnings.push(`no Live webhook endpoint was created: the URL ${liveProblem}`);
    else webhookUrls.live = input.webhookUrl;
  }
  const passwordHash = input.passwordHash ?? (input.password ? await hashPassword(input.password) : null);

  return db.transaction((tx) =>
    createMerchantIn(tx, {
      name,
      email,
      passwordHash,
      payoutApproval: input.payoutApproval ?? false,
      pendingActivation: input.pendingActivation ?? false,
      webhookUrls,
      warnings,
      actor,
    }),
  );
}

/** What createMerchantIn writes: checked already (trimmed, within their limits), the password hashed. */
export interface CheckedMerchantInput {
  name: string;
  email: string;
  passwordHash: string | null;
  payoutApproval: boolean;
  pendingActivation: boolean;
  webhookUrls: Record<Environment, string | null>;
  warnings: string[];
  actor: Actor | null;
}

/**
 * createMerchant's writes in the caller's transaction, so a use case can make a merchant atomically with its
 * own rows (a verified sign-up, accounts/signups.ts). EMAIL_TAKEN when a user already has the e-mail.
 */
export async function createMerchantIn(
  tx: Queryable,
  input: CheckedMerchantInput,
): Promise<CreatedMerchant | PendingMerchant> {
  const { name, email, passwordHash, webhookUrls, warnings, actor } = input;
  if (await store.userEmailExists(tx, email))
    throw new SikaError('EMAIL_TAKEN', `a user with email ${email} already exists`);
  const merchantId = newUuid();
  const ownerId = newUuid();
  await store.insertMerchant(tx, {
    id: merchantId,
    name,
    email,
    payoutApprovalRequired: input.payoutApproval,
    activationStatus: input.pendingActivation ? 'not_submitted' : 'approved',
  });
  await store.insertUser(tx, { id: ownerId, merchantId, email, passwordHash, role: 'owner' });
  const keys: Record<Environment, string | null> = { test: null, live: null };
  const secrets: Record<Environment, string | null> = { test: null, live: null };
  for (const environment of ENVIRONMENTS) {
    const integrationId = newUuid();
    await store.insertIntegration(tx, {
      id: integrationId,
      merchantId,
      environment,
      name: `Default ${environment} integration`,
    });
    if (environment === 'live' && input.pendingActivation) continue;
    const key = await issueApiKey(tx, { merchantId, integrationId, environment, createdByUserId: ownerId });
    keys[environment] = key.key;
    const url = webhookUrls[environment];
    if (url) {
      secrets[environment] = newWebhookSecret();
      await store.insertWebhookEndpoint(tx, {
        id: newUuid(),
        merchantId,
        environment,
        apiKeyId: key.id,
        url,
        secret: secrets[environment],
      });
    }
  }
  // Made by someone (the CLI's user@host): audited with what was made, never a key or a secret.
  if (actor) {
    await auditMerchant(tx, actor, merchantId, {
      action: 'merchant.create',
      before: null,
      after: {
        name,
        owner_email: email,
        owner_user_id: ownerId,
        payout_approval_required: input.payoutApproval,
        owner_password_set: passwordHash !== null,
        webhook_endpoints: ENVIRONMENTS.filter((e) => webhookUrls[e]),
      },
    });
  }
  if (keys.test === null) throw new Error('assertion failed: every merchant gets a Test key');
  return {
    merchant_id: merchantId,
    test_api_key: keys.test,
    live_api_key: keys.live as string,
    test_webhook_secret: secrets.test,
    live_webhook_secret: secrets.live,
    owner_user_id: ownerId,
    warnings,
  };
}

export const INVITABLE_ROLES = ['admin', 'developer', 'approver', 'viewer'] as const;

/** The owner invites a user: a temporary password, shown once, hashed before the transaction opens, to be changed at the first sign-in. */
export async function inviteUser(
  db: Db,
  actor: Actor & { type: 'user' },
  merchantId: string,
  input: { email: string; role: string },
) {
  const email = input.email.trim();
  if (!EMAIL_PATTERN.test(email) || !(INVITABLE_ROLES as readonly string[]).includes(input.role)) {
    throw new SikaError('INVALID_ARGUMENT', 'Enter an email and choose a role.');
  }
  const password = randomBytes(12).toString('base64url');
  const passwordHash = await hashPassword(password);
  const id = newUuid();
  try {
    await db.transaction(async (tx) => {
      await store.insertInvitedUser(tx, {
        id,
        merchantId,
        email,
        passwordHash,
        role: input.role,
        invitedByUserId: actor.id,
      });
      await audit(tx, {
        actor,
        merchantId,
        action: 'user.invite',
        objectType: 'user',
        objectId: id,
        before: null,
        after: { email, role: input.role },
      });
    });
  } catch (error) {
    if (error instanceof DbError && error.isUniqueViolation)
      throw new SikaError('EMAIL_TAKEN', `A user with email ${email} already exists.`);
    throw error;
  }
  return { id, email, role: input.role, temporaryPassword: password };
}

export async function setPayoutApprovalRequired(db: Db, actor: Actor, merchantId: string, required: boolean) {
  await db.transaction(async (tx) => {
    const before = await store.lockPayoutApprovalRequired(tx, merchantId);
    await store.updatePayoutApprovalRequired(tx, merchantId, required);
    await auditMerchant(tx, actor, merchantId, {
      action: 'payout_approval.update',
      before,
      after: { payout_approval_required: required },
    });
  });
}

/** Whether Live payouts need approval and whether approvers and key managers need a second factor; null for an unknown merchant. */
export const merchantRules = (db: Queryable, merchantId: string) => store.findMerchantRules(db, merchantId);

export const listUsers = (db: Queryable, merchantId: string) => store.listUsers(db, merchantId);

/** An active user (deactivated users decide nothing); null otherwise. */
export const findActiveUser = (db: Queryable, id: string) => store.findActiveUser(db, id);

/** Whether the merchant's payouts need an approver; null when there is no such merchant. */
export const findPayoutApprovalRequired = (db: Queryable, merchantId: string) =>
  store.findPayoutApprovalRequired(db, merchantId);

/** A merchant by id; null when there is none. */
export const findMerchant = (db: Queryable, id: string) => store.findMerchant(db, id);

/** Whether a merchant has the id. */
export const merchantIdExists = (db: Queryable, id: string) => store.merchantIdExists(db, id);

/** The merchant's API keys of one environment. */
export const listApiKeys = (db: Queryable, merchantId: string, environment: Environment) =>
  store.listApiKeys(db, merchantId, environment);
