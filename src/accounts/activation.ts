// A merchant's activation and suspension, the one way they change (issue 33): the Go-Live review's
// decisions, the CLI's activate/suspend/reinstate and a submitted application all come through here, so
// every change is locked, checked against the table (activation-model.ts), audited, announced to the
// merchant (an account.updated event) and e-mailed to its owner in the same transaction.
import { auditMerchant, type Actor } from '../audit/log.ts';
import type { Db, Queryable } from '../db/index.ts';
import { emitMerchantEvent } from '../events/outbox.ts';
import { ENVIRONMENTS } from '../lib/environment.ts';
import { SikaError } from '../lib/errors.ts';
import { plainMailBodies } from '../mail/compose.ts';
import { enqueueMail } from '../mail/outbox.ts';
import { activationMachine, type ActivationStatus } from './activation-model.ts';
import * as store from './activation-store.ts';
import { findApplication, listDocuments } from './activation-application-store.ts';
import { applicationRequirements, draftOf } from './activation-fields.ts';

export interface ActivationChange {
  merchantId: string;
  to: ActivationStatus;
  actor: Actor;
  /** Shown to the merchant: why it was rejected, or what to change. */
  reason?: string | null;
  /**
   * The status the deciding person saw; when the merchant has moved on since (another operator decided
   * first), the change is refused with ACTIVATION_DECIDED rather than applied over theirs.
   */
  expectedFrom?: ActivationStatus;
}

/**
 * Changes a merchant's activation status in tx (the merchant row locked first). Answers the status before.
 * NOT_FOUND for no such merchant; ACTIVATION_DECIDED when expectedFrom no longer holds or the table does not allow it.
 */
export async function changeActivation(tx: Queryable, change: ActivationChange): Promise<ActivationStatus> {
  const row = await store.lockActivation(tx, change.merchantId);
  if (!row) throw new SikaError('NOT_FOUND', 'No such merchant.');
  const from = row.activation_status;
  if (change.expectedFrom !== undefined && change.expectedFrom !== from)
    throw new SikaError('ACTIVATION_DECIDED', `The merchant's activation is now ${from}; nothing was changed.`);
  if (!activationMachine.canTransition(from, change.to))
    throw new SikaError('ACTIVATION_DECIDED', `The merchant's activation cannot move from ${from} to ${change.to}.`);
  await store.updateActivationStatus(tx, change.merchantId, activationMachine.transition(from, change.to));
  await auditMerchant(tx, change.actor, change.merchantId, {
    action: `merchant.activation.${change.to}`,
    before: { activation_status: from },
    after: { activation_status: change.to, reason: change.reason ?? null },
  });
  const after = { ...row, activation_status: change.to };
  await announce(tx, after);
  const mail = decisionMail(after, change.reason ?? null);
  if (mail) await enqueueMail(tx, mail);
  return from;
}

// ---- the account as the API shows it ----

export interface Account {
  object: 'account';
  id: string;
  business_name: string;
  activation: { status: ActivationStatus; requirements: string[] };
  suspended: boolean;
  /** Approved and not suspended: Live calls are accepted. */
  live_enabled: boolean;
  created_at: string;
}

/**
 * What is still missing before the merchant can be approved, as field paths the dashboard and the API name
 * (activation-fields.ts applicationRequirements: `legal_name`, `directors[0][ghana_card_pin]`,
 * `documents.proof_of_address`, ...), and `activation_application` once it is complete but not submitted;
 * empty once approved, rejected or under review.
 */
export async function activationRequirements(merchantId: string, db: Queryable): Promise<string[]> {
  const row = await store.findActivation(db, merchantId);
  if (!row || (row.activation_status !== 'not_submitted' && row.activation_status !== 'changes_requested')) return [];
  const [application, documents] = await Promise.all([findApplication(db, merchantId), listDocuments(db, merchantId)]);
  const missing = applicationRequirements(draftOf(application?.draft), documents);
  return missing.length > 0 ? missing : ['activation_application'];
}

async function accountOfRow(db: Queryable, row: store.ActivationRow): Promise<Account> {
  const suspended = row.suspended_at !== null;
  return {
    object: 'account',
    id: row.id,
    business_name: row.name,
    activation: { status: row.activation_status, requirements: await activationRequirements(row.id, db) },
    suspended,
    live_enabled: row.activation_status === 'approved' && !suspended,
    created_at: row.created_at.toISOString(),
  };
}

/** GET /api/v1/account: the merchant's account; null for no such merchant. */
export async function findAccount(db: Queryable, merchantId: string): Promise<Account | null> {
  const row = await store.findActivation(db, merchantId);
  return row ? accountOfRow(db, row) : null;
}

/** account.updated, with the account as it now is, to every endpoint of the merchant in Test and in Live. */
async function announce(tx: Queryable, row: store.ActivationRow): Promise<void> {
  const account = await accountOfRow(tx, row);
  for (const environment of ENVIRONMENTS)
    await emitMerchantEvent(tx, {
      merchantId: row.id,
      environment,
      type: 'account.updated',
      objectType: 'account',
      objectId: row.id,
      data: { account },
    });
}

// ---- suspension ----

/** The longest suspension reason migration 036 stores. */
export const SUSPENSION_REASON_LENGTH_MAX = 500;

/**
 * Suspends a merchant: new Live work is refused by every process within a second (live-access.ts), Test keeps
 * working, work already at a provider finishes. Audited, announced (account.updated) and e-mailed to the owner.
 * Suspending a suspended merchant changes nothing. NOT_FOUND for no such merchant; INVALID_ARGUMENT for a bad reason.
 */
export async function suspendMerchant(db: Db, merchantId: string, reason: string, actor: Actor): Promise<Account> {
  const why = reason.trim();
  if (why.length < 1 || why.length > SUSPENSION_REASON_LENGTH_MAX)
    throw new SikaError('INVALID_ARGUMENT', `The reason must be 1 to ${SUSPENSION_REASON_LENGTH_MAX} characters.`);
  return db.transaction(async (tx) => {
    const row = await store.lockActivation(tx, merchantId);
    if (!row) throw new SikaError('NOT_FOUND', 'No such merchant.');
    if (row.suspended_at !== null) return accountOfRow(tx, row);
    await store.updateSuspension(tx, merchantId, { reason: why });
    await auditMerchant(tx, actor, merchantId, {
      action: 'merchant.suspended',
      before: { suspended: false },
      after: { suspended: true, reason: why },
    });
    const after = { ...row, suspended_at: new Date(), suspension_reason: why };
    await announce(tx, after);
    await enqueueMail(tx, suspensionMail(after, why));
    return accountOfRow(tx, after);
  });
}

/** Lifts a suspension, audited, announced and e-mailed; a merchant not suspended is left as it is. */
export async function reinstateMerchant(db: Db, merchantId: string, actor: Actor): Promise<Account> {
  return db.transaction(async (tx) => {
    const row = await store.lockActivation(tx, merchantId);
    if (!row) throw new SikaError('NOT_FOUND', 'No such merchant.');
    if (row.suspended_at === null) return accountOfRow(tx, row);
    await store.updateSuspension(tx, merchantId, null);
    await auditMerchant(tx, actor, merchantId, {
      action: 'merchant.reinstated',
      before: { suspended: true, reason: row.suspension_reason },
      after: { suspended: false },
    });
    const after = { ...row, suspended_at: null, suspension_reason: null };
    await announce(tx, after);
    await enqueueMail(tx, reinstatementMail(after));
    return accountOfRow(tx, after);
  });
}

// ---- the owner's mails ----

/**
 * The deployment's BASE_URL, for the dashboard link in the mails. Set once at start by whoever runs these
 * changes with its configuration at hand (buildApp, the CLI): src/accounts does not import src/config. Unset,
 * a mail names the dashboard without a link.
 */
let mailBaseUrl: string | null = null;
export function setAccountMailBaseUrl(baseUrl: string | null): void {
  mailBaseUrl = baseUrl ? baseUrl.replace(/\/+$/, '') : null;
}

/** A mail of a few paragraphs, as text and as HTML (src/mail/compose.ts), with the dashboard link at the end. */
function ownerMail(row: store.ActivationRow, kind: string, subject: string, paragraphs: string[]) {
  const bodies = plainMailBodies({
    paragraphs: [
      `Hello ${row.name},`,
      ...paragraphs,
      ...(mailBaseUrl ? [] : ['Sign in to your Sika dashboard to see it.']),
    ],
    ...(mailBaseUrl ? { link: { url: `${mailBaseUrl}/dashboard`, label: 'Your dashboard' } } : {}),
  });
  return { kind, to: row.email, subject, ...bodies, merchantId: row.id };
}

/** The mail a decision sends the owner; none for a submission (the application's own page confirms it). */
function decisionMail(row: store.ActivationRow, reason: string | null) {
  switch (row.activation_status) {
    case 'approved':
      return ownerMail(row, 'activation.approved', 'You can now take Live payments', [
        'Your business is verified: your account is activated for Live.',
        'Create your Live API key in the dashboard (Developers); it is shown once.',
      ]);
    case 'rejected':
      return ownerMail(row, 'activation.rejected', 'Your Go-Live application was not approved', [
        'We could not approve your Go-Live application.',
        `Reason: ${reason ?? 'not given'}`,
        'Test keeps working.',
      ]);
    case 'changes_requested':
      return ownerMail(row, 'activation.changes_requested', 'Your Go-Live application needs changes', [
        'Please change your Go-Live application and submit it again.',
        `What to change: ${reason ?? 'see the application in the dashboard'}`,
      ]);
    default:
      return null;
  }
}

const suspensionMail = (row: store.ActivationRow, reason: string) =>
  ownerMail(row, 'account.suspended', 'Your Sika account is suspended', [
    'Your account is suspended: new Live payments and payouts are refused. Payments already under way finish, and Test keeps working.',
    `Reason: ${reason}`,
  ]);

const reinstatementMail = (row: store.ActivationRow) =>
  ownerMail(row, 'account.reinstated', 'Your Sika account is reinstated', [
    'Your suspension is lifted: Live payments and payouts are accepted again.',
  ]);
