// Payout use cases (SPEC 4.3): recipients, quotes, payouts, cancel, approval, Live processing, returns.
// Money moves only through the ledger, in the transaction of the status change that causes it.
import type { ApiPrincipal, Environment } from '../accounts/model.ts';
import { audit, type Actor } from '../audit/log.ts';
import type { Db, Queryable } from '../db/index.ts';
import { DbError, TRANSACTION_ATTEMPTS_MAX } from '../db/index.ts';
import { emitEvent, eventPayload, type EventInput } from '../events/outbox.ts';
import { SikaError, errors } from '../lib/errors.ts';
import { canonicalJson, sha256Hex } from '../lib/canonical-json.ts';
import { checkPhoneForNetwork, MOMO_NETWORKS, NETWORK_LABELS, type MomoNetwork } from '../lib/ghana.ts';
import { isUuid, newId, randomToken } from '../lib/ids.ts';
import type { AccountRow } from '../ledger/store.ts';
import { balance, completeAccounts, InsufficientFundsError, newPayoutAccountKinds, planNewPayout, postPayout, returnPayout, voidPayout } from '../ledger/service.ts';
import type { PayoutForRail, PayoutRail, TransferOutcome } from '../rails/payouts.ts';
import {
  ACCOUNT_NAME_LENGTH_MAX,
  ACCOUNT_NUMBER_PATTERN,
  CLIENT_REFERENCE_PATTERN,
  NOTES_LENGTH_MAX,
  PAYOUT_LIST_LIMIT_DEFAULT,
  PAYOUT_LIST_LIMIT_MAX,
  QUOTE_LIFETIME_S,
  STATUS_LABELS,
  TEST_REJECTED_ACCOUNT_NUMBERS,
  TEST_REJECTED_PHONES,
  canCancel,
  payoutFeeMinor,
  payoutMachine,
  type PayoutStatus,
} from './model.ts';
import type { PayoutBatchWriter } from './batch-writer.ts';
import type { PayoutDecisionCache } from './decision-cache.ts';
import * as evidenceStore from './evidence-store.ts';
import * as newPayoutStore from './new-payout-store.ts';
import * as payoutStore from './payout-store.ts';
import * as recipientStore from './recipient-store.ts';
import * as settingsStore from './settings-store.ts';
import * as accountsStore from '../accounts/store.ts';
import * as banksStore from '../ops/store.ts';

const CURRENCY = 'GHS';
const { conflict } = errors;

// ---------- recipients ----------

export interface RecipientInput {
  account_type?: string;
  bank_id?: string;
  account_number?: string;
  account_name?: string;
  network?: string;
  phone?: string;
  previous_version_id?: string;
  merchant_id?: string;
  environment?: string;
}

export function checkKeyScope(principal: ApiPrincipal, body: { merchant_id?: unknown; environment?: unknown }): void {
  if (body.merchant_id !== undefined && body.merchant_id !== principal.merchantId) {
    throw errors.invalidArgument('merchant_id conflicts with the API key; omit it: the key fixes the merchant.', [{ field: 'merchant_id', message: 'conflicts with the API key' }]);
  }
  if (body.environment !== undefined && body.environment !== principal.environment) {
    throw errors.invalidArgument(`environment ${String(body.environment)} conflicts with this ${principal.environment === 'live' ? 'Live' : 'Test'} key; omit it: the key fixes the environment.`, [
      { field: 'environment', message: 'conflicts with the API key' },
    ]);
  }
}

export function toRecipientResponse(r: recipientStore.RecipientRow) {
  return {
    id: r.id,
    object: 'recipient' as const,
    account_type: r.account_type,
    bank_id: r.bank_id,
    bank_name: r.bank_name,
    account_number: r.account_number,
    network: r.network,
    phone: r.phone,
    account_name: r.account_name,
    verified: r.verification_status === 'verified',
    verification_status: r.verification_status,
    ...(r.rejection_reason ? { rejection_reason: r.rejection_reason } : {}),
    active: r.active,
    previous_version_id: r.previous_version_id,
    created_at: r.created_at.toISOString(),
  };
}

interface CheckedRecipient {
  account_type: 'bank' | 'momo';
  bank_id: string | null;
  account_number: string | null;
  network: MomoNetwork | null;
  phone: string | null;
  account_name: string;
}

async function checkRecipientInput(db: Queryable, input: RecipientInput): Promise<CheckedRecipient> {
  const accountType = input.account_type ?? 'bank';
  if (accountType !== 'bank' && accountType !== 'momo') {
    throw errors.invalidArgument('account_type must be bank or momo.', [{ field: 'account_type', message: 'must be bank or momo' }]);
  }
  const accountName = input.account_name?.trim() ?? '';
  if (accountName.length < 1 || accountName.length > ACCOUNT_NAME_LENGTH_MAX) {
    throw errors.invalidArgument(`account_name is required (1 to ${ACCOUNT_NAME_LENGTH_MAX} characters).`, [{ field: 'account_name', message: 'is required' }]);
  }
  if (accountType === 'bank') {
    const mixed = (['network', 'phone'] as const).filter((field) => input[field] !== undefined);
    if (mixed.length) throw errors.invalidArgument(`A bank recipient takes no wallet fields (${mixed.join(', ')}).`, mixed.map((field) => ({ field, message: 'is a wallet field' })));
    if (!input.bank_id || !isUuid(input.bank_id)) throw errors.invalidArgument('bank_id must be a bank id from GET /api/v1/payouts/capabilities.', [{ field: 'bank_id', message: 'is not a bank id' }]);
    if (!(await banksStore.bankIsActive(db, input.bank_id))) throw errors.invalidArgument('bank_id is not a supported bank.', [{ field: 'bank_id', message: 'is not a supported bank' }]);
    if (!input.account_number || !ACCOUNT_NUMBER_PATTERN.test(input.account_number)) {
      throw errors.invalidArgument('account_number must be 4 to 34 digits.', [{ field: 'account_number', message: 'must be 4 to 34 digits' }]);
    }
    return { account_type: 'bank', bank_id: input.bank_id, account_number: input.account_number, network: null, phone: null, account_name: accountName };
  }
  const mixed = (['bank_id', 'account_number'] as const).filter((field) => input[field] !== undefined);
  if (mixed.length) throw errors.invalidArgument(`A Mobile Money recipient takes no bank fields (${mixed.join(', ')}).`, mixed.map((field) => ({ field, message: 'is a bank field' })));
  if (!input.network || !(MOMO_NETWORKS as readonly string[]).includes(input.network)) {
    throw errors.invalidArgument('network must be mtn, telecel or at.', [{ field: 'network', message: 'must be mtn, telecel or at' }]);
  }
  if (!input.phone) throw errors.invalidArgument('phone is required for a Mobile Money recipient.', [{ field: 'phone', message: 'is required' }]);
  const check = checkPhoneForNetwork(input.phone, input.network as MomoNetwork);
  if (!check.ok) throw errors.invalidArgument(check.message, [{ field: 'phone', message: check.message }]);
  return { account_type: 'momo', bank_id: null, account_number: null, network: input.network as MomoNetwork, phone: check.phone, account_name: accountName };
}

/** Not idempotent (SPEC 4.3 rule 6). With previous_version_id the old version becomes inactive. */
export async function createRecipient(db: Db, principal: ApiPrincipal, input: RecipientInput) {
  checkKeyScope(principal, input);
  const checked = await checkRecipientInput(db, input);
  try {
    return await db.transaction(async (tx) => {
      if (input.previous_version_id !== undefined) {
        const previous = await recipientStore.findRecipient(tx, principal.merchantId, principal.environment, input.previous_version_id, true);
        if (!previous) throw errors.notFound('Recipient');
        if (!previous.active) throw conflict('RECIPIENT_UNAVAILABLE', 'The previous version is inactive (already replaced or deleted).');
        if (await payoutStore.hasOpenPayouts(tx, previous.id)) throw conflict('RECIPIENT_HAS_OPEN_PAYOUTS', 'The recipient has payouts in progress; wait for them or cancel them first.');
        await recipientStore.deactivateRecipient(tx, previous.id);
      }
      const id = newId('rcp');
      await recipientStore.insertRecipient(tx, { id, merchant_id: principal.merchantId, environment: principal.environment, ...checked, previous_version_id: input.previous_version_id ?? null, apiKeyId: principal.apiKeyId || null });
      return (await recipientStore.findRecipient(tx, principal.merchantId, principal.environment, id))!;
    });
  } catch (error) {
    if (error instanceof DbError && error.isUniqueViolation) throw conflict('RECIPIENT_UNAVAILABLE', 'The previous version was already replaced.');
    throw error;
  }
}

export async function getRecipient(db: Queryable, principal: ApiPrincipal, id: string) {
  const recipient = await recipientStore.findRecipient(db, principal.merchantId, principal.environment, id);
  if (!recipient) throw errors.notFound('Recipient');
  return recipient;
}

export async function deleteRecipient(db: Db, principal: ApiPrincipal, id: string): Promise<void> {
  await db.transaction(async (tx) => {
    const recipient = await recipientStore.findRecipient(tx, principal.merchantId, principal.environment, id, true);
    if (!recipient) throw errors.notFound('Recipient');
    if (await payoutStore.hasOpenPayouts(tx, id)) throw conflict('RECIPIENT_HAS_OPEN_PAYOUTS', 'The recipient has payouts in progress; wait for them or cancel them first.');
    if (recipient.active) await recipientStore.deactivateRecipient(tx, id);
  });
}

/** The Test verifier: magic account numbers and phones are rejected, everything else verified. */
export function testVerification(recipient: Pick<recipientStore.RecipientRow, 'account_number' | 'phone'>): { status: 'verified' | 'rejected'; reason: string | null } {
  const reason = (recipient.account_number && TEST_REJECTED_ACCOUNT_NUMBERS[recipient.account_number]) || (recipient.phone && TEST_REJECTED_PHONES[recipient.phone]) || null;
  return reason ? { status: 'rejected', reason } : { status: 'verified', reason: null };
}

export const TEST_VERIFY_DELAY_S = 2;

/** Worker: verifies Test recipients shortly after creation. */
export async function verifyTestRecipients(db: Db): Promise<number> {
  const due = await recipientStore.pendingRecipients(db, TEST_VERIFY_DELAY_S, 100);
  for (const { id, merchant_id, environment } of due) {
    await db.transaction(async (tx) => {
      const recipient = await recipientStore.findRecipient(tx, merchant_id, environment, id, true);
      if (recipient?.verification_status !== 'pending_verification') return;
      const decision = testVerification(recipient);
      await recipientStore.setRecipientVerification(tx, id, decision.status, decision.reason);
    });
  }
  return due.length;
}

// ---------- capabilities, balance, quote ----------

export async function capabilities(db: Queryable, principal: ApiPrincipal) {
  const settings = await settingsStore.settingsFor(db, principal.merchantId, principal.environment);
  const banks = await banksStore.listActiveBanksWithCode(db);
  const merchant = await accountsStore.findPayoutApprovalRequired(db, principal.merchantId);
  return {
    account_types: [
      { value: 'bank', label: 'Bank account' },
      { value: 'momo', label: 'Mobile Money wallet' },
    ],
    banks,
    mobile_money_networks: MOMO_NETWORKS.map((value) => ({ value, label: NETWORK_LABELS[value] })),
    settings: {
      environment: principal.environment,
      currency: CURRENCY,
      payout_access: settings.payout_access,
      paused: settings.paused,
      approval_required: principal.environment === 'live' && (merchant?.payout_approval_required ?? false),
      payout_limit_minor: settings.payout_limit_minor,
      daily_limit_minor: settings.daily_limit_minor,
      fees: { bank: { flat_minor: 100 }, momo: { percent_bps: 100, min_minor: 50, max_minor: 1_000 } },
    },
  };
}

export const getBalance = (db: Queryable, principal: ApiPrincipal) => balance(db, principal.merchantId, principal.environment);

export async function quote(db: Queryable, principal: ApiPrincipal, input: { recipient_id: string; amount_minor: number }) {
  const recipient = await getRecipient(db, principal, input.recipient_id);
  const feeMinor = payoutFeeMinor(recipient.account_type, input.amount_minor);
  return {
    quote_id: newId('quo'),
    recipient_id: recipient.id,
    amount_minor: input.amount_minor,
    fee_minor: feeMinor,
    total_debit_minor: input.amount_minor + feeMinor,
    currency: CURRENCY,
    expires_at: new Date(Date.now() + QUOTE_LIFETIME_S * 1000).toISOString(),
  };
}

// ---------- payouts ----------

export interface PayoutInput {
  recipient_id: string;
  amount_minor: number;
  currency?: string;
  max_fee_minor?: number;
  client_reference: string;
  notes?: string;
  merchant_id?: string;
  environment?: string;
}

export function toPayoutPayload(p: Pick<payoutStore.PayoutRow, 'id' | 'reference' | 'status' | 'amount_minor' | 'fee_minor' | 'currency' | 'bank_reference' | 'return_reference' | 'reconciliation_status'>) {
  return {
    id: p.id,
    reference: p.reference,
    status: p.status,
    amount_minor: p.amount_minor,
    fee_minor: p.fee_minor,
    currency: p.currency,
    bank_reference: p.bank_reference,
    return_reference: p.return_reference,
    reconciliation_status: p.reconciliation_status,
  };
}

/** known: what the caller already has (a payout just created has its recipient and no evidence yet). */
export async function toPayoutResponse(db: Queryable, p: payoutStore.PayoutRow, known: { recipient?: recipientStore.RecipientRow; evidence?: evidenceStore.EvidenceRow[] } = {}) {
  const recipient = known.recipient ?? (await recipientStore.findRecipient(db, p.merchant_id, p.environment, p.recipient_id));
  const evidence = known.evidence ?? (await evidenceStore.listEvidence(db, p.id));
  return {
    ...toPayoutPayload(p),
    object: 'payout' as const,
    client_reference: p.client_reference,
    recipient: recipient
      ? {
          id: recipient.id,
          account_type: recipient.account_type,
          account_name: recipient.account_name,
          bank_id: recipient.bank_id,
          bank_name: recipient.bank_name,
          account_number: recipient.account_number,
          network: recipient.network,
          phone: recipient.phone,
        }
      : null,
    status_label: STATUS_LABELS[p.status],
    total_debit_minor: p.total_debit_minor,
    notes: p.notes ?? '',
    can_cancel: canCancel(p.status, p.processing_step),
    failure_reason: p.failure_reason,
    livemode: p.environment === 'live',
    evidence: evidence.map((e) => ({ id: e.id, content_type: e.content_type, size_bytes: e.size_bytes, filename: e.filename, created_at: e.created_at.toISOString() })),
    created_at: p.created_at.toISOString(),
    updated_at: p.updated_at.toISOString(),
    paid_at: p.paid_at ? p.paid_at.toISOString() : null,
  };
}

type PayoutEventFields = Parameters<typeof toPayoutPayload>[0] & Pick<payoutStore.PayoutRow, 'merchant_id' | 'environment' | 'api_key_id' | 'version'>;

const payoutEventInput = (p: PayoutEventFields, type: string): EventInput => ({
  merchantId: p.merchant_id,
  environment: p.environment,
  apiKeyId: p.api_key_id,
  type,
  objectType: 'payout',
  objectId: p.id,
  objectVersion: p.version,
  data: { payout: toPayoutPayload(p) },
});

const emitPayoutEvent = (tx: Queryable, p: payoutStore.PayoutRow, type: string) => emitEvent(tx, payoutEventInput(p, type));

function newPayoutReference(): string {
  const date = new Date().toISOString().slice(2, 10).replace(/-/g, '');
  return `PO-${date}-${randomToken(6).toUpperCase()}`;
}

const payoutRequestHash = (input: PayoutInput, currency: string) =>
  sha256Hex(canonicalJson({ recipient_id: input.recipient_id, amount_minor: input.amount_minor, currency, max_fee_minor: input.max_fee_minor ?? null, notes: input.notes ?? null }));

export interface PayoutDeps {
  db: Db;
  payoutRail: PayoutRail | null;
  /** Recent decisions per API key and recipient (decision-cache.ts); none: every payout reads. */
  decisions?: PayoutDecisionCache;
  /** Writes a merchant's payouts that arrive together in one statement (batch-writer.ts); none: one each. */
  writer?: PayoutBatchWriter;
}

/** Creates a payout (SPEC 4.3 rules 1-8). Returns the payout and whether it already existed (200 retry). */
/** requestedByUserId: the dashboard user who asked; for API calls the key's creator is the requester (DESIGN). */
export async function createPayout(
  deps: PayoutDeps,
  principal: ApiPrincipal,
  input: PayoutInput,
  options: { requestedByUserId?: string } = {},
): Promise<{ payout: payoutStore.PayoutRow; existing: boolean; recipient: recipientStore.RecipientRow | null }> {
  checkKeyScope(principal, input);
  const currency = (input.currency ?? CURRENCY).toUpperCase();
  if (currency !== CURRENCY) throw errors.invalidArgument(`currency must be ${CURRENCY}.`, [{ field: 'currency', message: `must be ${CURRENCY}` }]);
  if (!CLIENT_REFERENCE_PATTERN.test(input.client_reference)) {
    throw errors.invalidArgument('client_reference must start with a letter or digit, use letters, digits, _ . : - only, at most 80 characters.', [
      { field: 'client_reference', message: 'has a bad format' },
    ]);
  }
  if (input.notes !== undefined && input.notes.length > NOTES_LENGTH_MAX) throw errors.invalidArgument(`notes must be at most ${NOTES_LENGTH_MAX} characters.`, [{ field: 'notes', message: 'is too long' }]);
  const hash = payoutRequestHash(input, currency);
  const { db } = deps;

  const isTest = principal.environment === 'test';
  const accountKinds = newPayoutAccountKinds(isTest);

  // No transaction: one read (or what a recent read of this key and recipient found: decision-cache.ts),
  // then one statement that writes the payout and enforces again every rule that concurrent requests or
  // a change since could break (see newPayoutStore.readPayoutDecision and newPayoutStore.insertNewPayout).
  const remembered = deps.decisions?.get(principal.apiKeyId, input.recipient_id) ?? null;
  const decide = async (fresh: boolean): Promise<{ payout: payoutStore.PayoutRow; existing: boolean; recipient: recipientStore.RecipientRow | null } | null> => {
    const ask = { merchantId: principal.merchantId, environment: principal.environment, apiKeyId: principal.apiKeyId, clientReference: input.client_reference, recipientId: input.recipient_id, accountKinds };
    let decision: newPayoutStore.PayoutDecision | null = fresh ? await newPayoutStore.readPayoutDecision(db, ask) : { ...remembered!, existing_id: null, has_active_endpoint: true, paid_out_today_minor: 0 };
    if (!decision) {
      await settingsStore.settingsFor(db, principal.merchantId, principal.environment); // first payout: the settings row with its defaults
      decision = (await newPayoutStore.readPayoutDecision(db, ask))!;
    }
    const { settings } = decision;
    if (decision.existing_id) {
      const existing = (await payoutStore.findPayoutById(db, decision.existing_id))!;
      if (existing.api_key_id === principal.apiKeyId && existing.request_hash === hash) return { payout: existing, existing: true, recipient: null };
      throw conflict('REFERENCE_CONFLICT', 'client_reference was already used with a different request or another API key; use a new client_reference.');
    }
    if (!settings.payout_access) throw errors.forbidden(`Payout access is not enabled for ${principal.environment === 'live' ? 'Live' : 'Test'}; ask Sika to turn it on.`);
    if (!decision.has_active_endpoint) {
      throw errors.forbidden('This API key has no active webhook endpoint paired with it; add one in the dashboard before creating payouts.');
    }
    if (settings.paused) throw conflict('PAYOUTS_PAUSED', 'Payouts are paused for this account right now; try again later.');
    if (principal.environment === 'live' && !deps.payoutRail) {
      throw new SikaError('PROVIDER_RAIL_UNAVAILABLE', 'Live payouts have no payout provider configured yet; nothing was held. Try again later.');
    }
    const { recipient } = decision;
    if (!recipient || recipient.merchant_id !== principal.merchantId || recipient.environment !== principal.environment) throw errors.notFound('Recipient');
    if (isTest && recipient.verification_status === 'pending_verification') {
      const verdict = testVerification(recipient);
      await recipientStore.setRecipientVerification(db, recipient.id, verdict.status, verdict.reason);
      recipient.verification_status = verdict.status;
    }
    if (!recipient.active || recipient.verification_status === 'rejected') {
      throw conflict('RECIPIENT_UNAVAILABLE', `The recipient is ${recipient.active ? 'rejected' : 'inactive'}; create or replace it first.`);
    }
    const feeMinor = payoutFeeMinor(recipient.account_type, input.amount_minor);
    if (input.max_fee_minor !== undefined && feeMinor > input.max_fee_minor) {
      throw conflict('FEE_LIMIT_EXCEEDED', `The fee is ${feeMinor} pesewas, above max_fee_minor ${input.max_fee_minor}; nothing was created or held.`);
    }
    if (input.amount_minor > settings.payout_limit_minor) {
      throw conflict('PAYOUT_LIMIT', `The amount is above the per-payout limit of ${settings.payout_limit_minor} pesewas.`);
    }
    // Remembered decisions leave the day's total to the CHECK on it (the figure would be stale).
    if (fresh && decision.paid_out_today_minor + input.amount_minor > settings.daily_limit_minor) throw dailyLimit(settings.daily_limit_minor);
    const status: PayoutStatus = isTest ? 'paid' : decision.approval_required ? 'requested' : 'processing';
    const id = newId('po');
    const money = { merchantId: principal.merchantId, environment: principal.environment, payoutId: id, amountMinor: input.amount_minor, feeMinor };
    let ledger;
    let accounts: AccountRow[];
    try {
      accounts = await completeAccounts(db, principal.merchantId, principal.environment, accountKinds, decision.accounts);
      // Test: paid at once, no money sent (SPEC 3.3): its payment entry is written with the row, inserted as paid.
      // Remembered balances would be stale: the merchant balance CHECK alone refuses a shortfall then.
      ledger = planNewPayout(money, accounts, isTest, fresh ? 'balances read' : 'balances unknown');
    } catch (error) {
      if (error instanceof InsufficientFundsError) throw insufficientFunds(input.amount_minor + feeMinor);
      throw error;
    }
    const row: newPayoutStore.NewPayoutRow = {
      id,
      reference: newPayoutReference(),
      merchant_id: principal.merchantId,
      environment: principal.environment,
      api_key_id: principal.apiKeyId,
      requested_by_user_id: options.requestedByUserId ?? decision.key_creator_user_id,
      client_reference: input.client_reference,
      request_hash: hash,
      recipient_id: recipient.id,
      status,
      processing_step: status === 'processing' ? 'recipient_check' : null,
      amount_minor: input.amount_minor,
      fee_minor: feeMinor,
      total_debit_minor: input.amount_minor + feeMinor,
      currency,
      notes: input.notes ?? null,
      bank_reference: isTest ? `TEST-${randomToken(12).toUpperCase()}` : '',
      reconciliation_status: isTest ? 'not_required' : 'unreconciled',
      next_step_at: status === 'processing' ? new Date() : null,
    };
    const event = payoutEventInput({ ...row, return_reference: '', version: 1 }, `payout.${status}`);
    let payout;
    try {
      const write: newPayoutStore.NewPayoutWrite = {
        row,
        decidedOn: { settings, approvalRequired: decision.approval_required, endpointKeyId: principal.apiKeyId },
        ledger,
        event: { input: event, payload: eventPayload(event) },
      };
      payout = await (deps.writer ? deps.writer.write(write) : newPayoutStore.insertNewPayout(db, write));
    } catch (error) {
      // What was read before is enforced by the write whatever ran since (see readPayoutDecision).
      if (error instanceof InsufficientFundsError) throw insufficientFunds(input.amount_minor + feeMinor);
      if (error instanceof newPayoutStore.DayLimitExceededError) throw dailyLimit(settings.daily_limit_minor);
      throw error;
    }
    if (!payout) return null; // something the decision saw changed before the write (nothing was written)
    // Remembered for this key's next payouts to the recipient: only what the write re-checks (a Test
    // recipient waiting for the verifier was verified above, so none is remembered waiting).
    if (fresh) {
      deps.decisions?.remember(principal.apiKeyId, recipient.id, {
        settings,
        approval_required: decision.approval_required,
        key_creator_user_id: decision.key_creator_user_id,
        recipient,
        accounts: accounts.map(({ id, kind }) => ({ id, kind, balance_minor: 0 })),
      });
    }
    return { payout, existing: false, recipient };
  };

  // A remembered decision first: whatever stops it, a refusal included, is decided again from a fresh
  // read, so nothing is refused on what the cache remembers. Then fresh reads: once more when the same
  // client_reference was written after this request read (it is then seen, and this request is replayed
  // or refused as a conflict) or when the write found the recipient or settings changed; and again when
  // a deadlock or serialization failure aborted the write (nothing was written: it simply runs again).
  let useRemembered = remembered !== null;
  const forgetRemembered = () => {
    deps.decisions?.forget(principal.apiKeyId, input.recipient_id);
    useRemembered = false;
  };
  let referenceRetried = false;
  let changeRetried = false;
  for (let aborted = 0; ; ) {
    const fresh = !useRemembered;
    let created;
    try {
      created = await decide(fresh);
    } catch (error) {
      if (!fresh) {
        forgetRemembered();
        continue;
      }
      if (error instanceof DbError && error.isRetryable && ++aborted < TRANSACTION_ATTEMPTS_MAX) continue;
      if (!referenceRetried && error instanceof DbError && error.isUniqueViolation && error.constraint === CLIENT_REFERENCE_CONSTRAINT) {
        referenceRetried = true;
        continue;
      }
      throw error;
    }
    if (created) return created;
    if (!fresh) forgetRemembered();
    else if (changeRetried) {
      throw conflict('RECIPIENT_UNAVAILABLE', 'The recipient or the payout settings changed while this payout was being made; nothing was created or held. Try again.');
    } else changeRetried = true;
  }
}

const CLIENT_REFERENCE_CONSTRAINT = 'payouts_merchant_id_environment_client_reference_key';
const dailyLimit = (limitMinor: number) => conflict('PAYOUT_DAILY_LIMIT', `This payout would pass today's limit of ${limitMinor} pesewas (Africa/Accra day).`);

const insufficientFunds = (totalMinor: number) => conflict('INSUFFICIENT_FUNDS', `The available balance does not cover the amount plus the fee (${totalMinor} pesewas).`);

export async function getPayout(db: Queryable, principal: ApiPrincipal, id: string) {
  const payout = await payoutStore.findPayout(db, principal.merchantId, principal.environment, id);
  if (!payout) throw errors.notFound('Payout');
  return payout;
}

export function clampListParams(query: { page?: number; limit?: number }) {
  const page = Math.max(1, Math.min(1_000_000, Math.trunc(query.page ?? 1) || 1));
  const limit = Math.max(1, Math.min(PAYOUT_LIST_LIMIT_MAX, Math.trunc(query.limit ?? PAYOUT_LIST_LIMIT_DEFAULT)));
  return { page, limit };
}

export async function listPayouts(db: Queryable, principal: ApiPrincipal, query: { page?: number; limit?: number; reference?: string }) {
  const { page, limit } = clampListParams(query);
  const { rows, total } = await payoutStore.listPayouts(db, principal.merchantId, principal.environment, page, limit, query.reference ?? null);
  return { payouts: await Promise.all(rows.map((row) => toPayoutResponse(db, row))), page, limit, total };
}

async function movePayout(tx: Queryable, payout: payoutStore.PayoutRow, to: PayoutStatus, change: Parameters<typeof payoutStore.updatePayout>[2] = {}): Promise<payoutStore.PayoutRow> {
  const updated = await payoutStore.updatePayout(tx, payout.id, change, payoutMachine.transition(payout.status, to));
  const money = { merchantId: payout.merchant_id, environment: payout.environment, payoutId: payout.id, amountMinor: payout.amount_minor, feeMinor: payout.fee_minor };
  if (to === 'paid') await postPayout(tx, money);
  else if (to === 'failed' || to === 'cancelled') {
    await payoutStore.releaseDayTotal(tx, payout);
    await voidPayout(tx, money);
  }
  else if (to === 'returned') await returnPayout(tx, money);
  if (to !== 'requested') await emitPayoutEvent(tx, updated, `payout.${to}`);
  return updated;
}

/** SPEC 3.3 cancel: repeating a successful cancel returns the cancelled record; otherwise 409 once money may have moved. */
export async function cancelPayout(db: Db, principal: ApiPrincipal, id: string, reason: string | null) {
  return db.transaction(async (tx) => {
    const payout = await payoutStore.findPayout(tx, principal.merchantId, principal.environment, id, true);
    if (!payout) throw errors.notFound('Payout');
    if (payout.status === 'cancelled') return payout;
    if (!canCancel(payout.status, payout.processing_step)) {
      throw conflict('PAYOUT_NOT_CANCELLABLE', `The payout is ${payout.status}${payout.processing_step ? ` (${payout.processing_step})` : ''} and can no longer be cancelled.`);
    }
    return movePayout(tx, payout, 'cancelled', { cancel_reason: reason?.slice(0, 500) ?? 'cancelled by the merchant', processing_step: null, next_step_at: null });
  });
}

/** Four eyes: an approver who is not the requester approves (-> processing) or rejects (-> cancelled). API keys cannot call this. */
export async function decidePayout(db: Db, input: { payoutId: string; userId: string; decision: 'approve' | 'reject'; reason?: string }) {
  return db.transaction(async (tx) => {
    const payout = await payoutStore.findPayoutById(tx, input.payoutId, true);
    const user = await accountsStore.findActiveUser(tx, input.userId);
    if (!payout || !user || user.merchant_id !== payout.merchant_id) throw errors.notFound('Payout');
    if (user.role !== 'approver') throw errors.forbidden('Only a user with the approver role can approve or reject payouts.');
    if (payout.requested_by_user_id === input.userId) throw errors.forbidden('The requester of a payout cannot approve or reject it; another approver must.');
    if (payout.status !== 'requested') throw conflict('PAYOUT_NOT_REQUESTED', `The payout is ${payout.status}; only requested payouts await a decision.`);
    const after =
      input.decision === 'approve'
        ? await movePayout(tx, payout, 'processing', { processing_step: 'recipient_check', next_step_at: new Date(), decided_by_user_id: input.userId, decided: true })
        : await movePayout(tx, payout, 'cancelled', { decided_by_user_id: input.userId, decided: true, cancel_reason: input.reason?.slice(0, 500) ?? 'rejected by an approver' });
    await audit(tx, {
      actor: { type: 'user', id: input.userId, email: user.email },
      merchantId: payout.merchant_id,
      action: `payout.${input.decision}`,
      objectType: 'payout',
      objectId: payout.id,
      before: { status: payout.status },
      after: { status: after.status, reason: input.reason ?? null },
    });
    return after;
  });
}

/** An operator reconciles a Live payout with the bank statement. */
export async function reconcilePayout(db: Db, payoutId: string, result: 'matched' | 'exception', actor: Actor | null = null) {
  return db.transaction(async (tx) => {
    const payout = await payoutStore.findPayoutById(tx, payoutId, true);
    if (!payout) throw errors.notFound('Payout');
    if (payout.environment !== 'live' || (payout.status !== 'paid' && payout.status !== 'returned')) {
      throw conflict('PAYOUT_NOT_RECONCILABLE', 'Only paid or returned Live payouts are reconciled.');
    }
    if (payout.reconciliation_status !== 'unreconciled' && payout.reconciliation_status !== result) {
      throw conflict('PAYOUT_ALREADY_RECONCILED', `The payout is already ${payout.reconciliation_status}.`);
    }
    const after = await payoutStore.updatePayout(tx, payoutId, { reconciliation_status: result });
    if (actor) {
      await audit(tx, { actor, merchantId: payout.merchant_id, action: `payout.reconcile_${result}`, objectType: 'payout', objectId: payoutId, before: { reconciliation_status: payout.reconciliation_status }, after: { reconciliation_status: result } });
    }
    return after;
  });
}

// ---------- Live processing ----------

export const PAYOUT_RETRY_DELAY_S = [5, 30, 120, 600, 1_800];
const CLAIM_HOLD_S = 60;

async function railPayout(db: Queryable, payout: payoutStore.PayoutRow): Promise<PayoutForRail> {
  const recipient = (await recipientStore.findRecipient(db, payout.merchant_id, payout.environment, payout.recipient_id))!;
  return {
    payoutId: payout.id,
    reference: payout.reference,
    amountMinor: payout.amount_minor,
    currency: payout.currency,
    recipient: {
      accountType: recipient.account_type,
      bankCode: recipient.bank_code,
      accountNumber: recipient.account_number,
      network: recipient.network,
      phone: recipient.phone,
      accountName: recipient.account_name,
    },
  };
}

async function applyTransferOutcome(db: Db, payoutId: string, outcome: TransferOutcome): Promise<void> {
  await db.transaction(async (tx) => {
    const payout = (await payoutStore.findPayoutById(tx, payoutId, true))!;
    if (payout.status !== 'processing') return;
    switch (outcome.outcome) {
      case 'paid':
        await movePayout(tx, payout, 'paid', { bank_reference: outcome.bankReference, processing_step: null, next_step_at: null, paid: true });
        return;
      case 'returned':
        await movePayout(tx, payout, 'paid', { bank_reference: outcome.bankReference, processing_step: null, next_step_at: null, paid: true });
        await movePayout(tx, (await payoutStore.findPayoutById(tx, payoutId))!, 'returned', { return_reference: outcome.returnReference });
        return;
      case 'failed':
        await movePayout(tx, payout, 'failed', { failure_reason: outcome.reason, processing_step: null, next_step_at: null });
        return;
      case 'pending':
        await payoutStore.updatePayout(tx, payoutId, { bank_reference: outcome.bankReference, next_step_at: new Date(Date.now() + 5_000) });
        return;
      case 'unknown':
        // The provider never saw the transfer (lost before it arrived): send it again; transfer() is idempotent by payout id.
        await payoutStore.updatePayout(tx, payoutId, { processing_step: 'transfer', next_step_at: new Date() });
    }
  });
}

/** One step of one Live payout: recipient check, then transfer, then waiting for the result. No transaction spans a provider call. */
async function processPayout(db: Db, rail: PayoutRail, payoutId: string): Promise<void> {
  const payout = await payoutStore.findPayoutById(db, payoutId);
  if (!payout || payout.status !== 'processing') return;
  const forRail = await railPayout(db, payout);
  if (payout.processing_step === 'recipient_check') {
    const check = await rail.checkRecipient(forRail);
    await db.transaction(async (tx) => {
      const current = (await payoutStore.findPayoutById(tx, payoutId, true))!;
      if (current.status !== 'processing' || current.processing_step !== 'recipient_check') return; // cancelled meanwhile
      if (!check.ok) {
        await recipientStore.setRecipientVerification(tx, current.recipient_id, 'rejected', check.reason);
        await movePayout(tx, current, 'failed', { failure_reason: `recipient rejected: ${check.reason}`, processing_step: null, next_step_at: null });
        return;
      }
      await recipientStore.setRecipientVerification(tx, current.recipient_id, 'verified', null);
      // The intent to transfer is recorded before the call: from here the payout can no longer be cancelled.
      await payoutStore.updatePayout(tx, payoutId, { processing_step: 'transfer', next_step_at: new Date() });
    });
    return;
  }
  if (payout.processing_step === 'transfer') {
    // Only one processor sends the transfer: the step moves on before the call, if it is still at transfer.
    if (!(await payoutStore.advanceProcessingStep(db, payoutId, 'transfer', 'awaiting_result', new Date(Date.now() + CLAIM_HOLD_S * 1000)))) return;
    await applyTransferOutcome(db, payoutId, await rail.transfer(forRail));
    return;
  }
  await applyTransferOutcome(db, payoutId, await rail.status(forRail));
}

/** Worker pass: claims due Live payouts (SKIP LOCKED, pushed back while worked on) and advances each one step. */
export async function processDuePayouts(db: Db, rail: PayoutRail | null, log?: { warn(obj: object, msg: string): void }): Promise<number> {
  if (!rail) return 0;
  const ids = await db.transaction(async (tx) => {
    const due = await payoutStore.duePayoutIds(tx, 20);
    for (const { id } of due) await payoutStore.holdForClaim(tx, id, CLAIM_HOLD_S);
    return due.map((row) => row.id);
  });
  for (const id of ids) {
    try {
      await processPayout(db, rail, id);
    } catch (error) {
      log?.warn({ err: error, payout_id: id }, 'payout step failed; it will be retried');
    }
  }
  return ids.length;
}

/** A paid transfer came back (provider notice or operator): the payout is returned and the money goes back to the balance. */
export async function markPayoutReturned(db: Db, payoutId: string, returnReference: string, actor: Actor | null = null) {
  return db.transaction(async (tx) => {
    const payout = await payoutStore.findPayoutById(tx, payoutId, true);
    if (!payout) throw errors.notFound('Payout');
    if (payout.status === 'returned') return payout;
    if (payout.status !== 'paid') throw conflict('PAYOUT_NOT_RETURNABLE', `The payout is ${payout.status}; only paid payouts can be returned.`);
    const after = await movePayout(tx, payout, 'returned', { return_reference: returnReference });
    if (actor) await audit(tx, { actor, merchantId: payout.merchant_id, action: 'payout.returned', objectType: 'payout', objectId: payoutId, before: { status: 'paid' }, after: { status: 'returned', return_reference: returnReference } });
    return after;
  });
}

export async function setPayoutAccess(db: Db, merchantId: string, environment: Environment, change: Parameters<typeof settingsStore.updateSettings>[3]) {
  return db.transaction(async (tx) => {
    await settingsStore.settingsFor(tx, merchantId, environment, true);
    await settingsStore.updateSettings(tx, merchantId, environment, change);
    return settingsStore.settingsFor(tx, merchantId, environment);
  });
}
