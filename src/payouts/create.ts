// Creating a payout (SPEC 4.3 rules 1-8), in named steps: the request's own checks, one read of what
// deciding needs (or what a recent read of this key and recipient found: decision-cache.ts), the checks
// of that decision, the hold the ledger plans, the new row, and one statement that writes the row, its
// hold, the day's total and its event. No transaction: the write enforces again every rule that
// concurrent requests or a change since could break (see readPayoutDecision and insertNewPayout). A
// request with an Idempotency-Key runs the same steps inside the key's transaction (PayoutDeps.inTransaction).
import type { ApiPrincipal } from '../lib/environment.ts';
import type { Queryable } from '../db/index.ts';
import { DbError, TRANSACTION_ATTEMPTS_MAX, withSavepoint } from '../db/index.ts';
import { eventPayload } from '../events/outbox.ts';
import { SikaError, errors } from '../lib/errors.ts';
import { canonicalJson, sha256Hex } from '../lib/canonical-json.ts';
import { newId, randomToken } from '../lib/ids.ts';
import type { AccountKind } from '../ledger/model.ts';
import {
  completeAccounts,
  InsufficientFundsError,
  newPayoutAccountKinds,
  planNewPayout,
  type AccountRow,
  type PlannedEntries,
} from '../ledger/service.ts';
import type { LiveProviders } from '../rails/live.ts';
import type { PayoutBatchWriter } from './batch-writer.ts';
import type { PayoutDecisionCache, RememberedDecision } from './decision-cache.ts';
import {
  CLIENT_REFERENCE_LENGTH_MAX,
  CLIENT_REFERENCE_PATTERN,
  NOTES_LENGTH_MAX,
  PAYOUT_CURRENCY,
  payoutFeeMinor,
  TEST_PAYOUT_OUTCOME_DEFAULT,
  testBankReference,
  type PayoutStatus,
  type TestPayoutOutcome,
} from './model.ts';
import {
  DayLimitExceededError,
  insertNewPayout,
  readPayoutDecision,
  type NewPayoutRow,
  type NewPayoutWrite,
  type PayoutDecision,
} from './new-payout-store.ts';
import { findPayoutById, type PayoutRow } from './payout-store.ts';
import { payoutEventInput } from './presenters.ts';
import { setRecipientVerification, type RecipientRow } from './recipient-store.ts';
import { checkKeyScope, testVerification } from './recipients.ts';
import { settingsFor } from './settings-store.ts';

const { conflict } = errors;

/** Random characters in a payout's reference (PO-yymmdd-XXXXXX) and in a Test payout's bank reference (TEST-...). */
const PAYOUT_REFERENCE_RANDOM_CHARS = 6;

export interface PayoutInput {
  recipient_id: string;
  amount_minor: number;
  currency?: string;
  max_fee_minor?: number;
  client_reference: string;
  notes?: string;
  merchant_id?: string;
  environment?: string;
  /** Test keys only: the status the Test payout is created in (default paid, SPEC 3.3). */
  test_outcome?: TestPayoutOutcome;
}

export interface PayoutDeps {
  /** The storage, or the transaction of the request's Idempotency-Key (then inTransaction is true). */
  db: Queryable;
  /**
   * db is a transaction (an Idempotency-Key's: its claim, the payout and the stored answer commit together):
   * each decision and write is a savepoint, so a step that fails (a client_reference written meanwhile, a
   * deadlock) is decided again as without a key. Give no decisions or writer with it.
   */
  inTransaction?: boolean;
  /** The Live providers: a Live payout is taken only when one pays its recipient. */
  providers: LiveProviders;
  /** Recent decisions per API key and recipient (decision-cache.ts); none: every payout reads. */
  decisions?: PayoutDecisionCache;
  /** Writes a merchant's payouts that arrive together in one statement (batch-writer.ts); none: one each. */
  writer?: PayoutBatchWriter;
}

export interface CreatedPayout {
  payout: PayoutRow;
  /** The payout was made before with this client_reference and the same request (a 200 retry). */
  existing: boolean;
  /** The recipient, when the payout is new (null for a retry). */
  recipient: RecipientRow | null;
}

/** One request to create a payout, once its own fields are checked. */
interface PayoutRequest {
  deps: PayoutDeps;
  principal: ApiPrincipal;
  input: PayoutInput;
  requestedByUserId: string | undefined;
  currency: string;
  hash: string;
  isTest: boolean;
  /** The status a Test payout is created in (test_outcome); null for Live. */
  testOutcome: TestPayoutOutcome | null;
  /** A Test payout created paid: its payment is written with the row, nothing is held (SPEC 3.3). */
  paidAtOnce: boolean;
  accountKinds: AccountKind[];
  /** What a recent decision of this key and recipient saw (decision-cache.ts), if any. */
  remembered: RememberedDecision | null;
}

/** Creates a payout (SPEC 4.3 rules 1-8). Returns the payout and whether it already existed (200 retry). */
/** requestedByUserId: the dashboard user who asked; for API calls the key's creator is the requester (DESIGN). */
export async function createPayout(
  deps: PayoutDeps,
  principal: ApiPrincipal,
  input: PayoutInput,
  options: { requestedByUserId?: string } = {},
): Promise<CreatedPayout> {
  const { currency, hash } = checkPayoutRequest(principal, input);
  const isTest = principal.environment === 'test';
  const testOutcome = isTest ? (input.test_outcome ?? TEST_PAYOUT_OUTCOME_DEFAULT) : null;
  const paidAtOnce = testOutcome === 'paid';
  const accountKinds = newPayoutAccountKinds(paidAtOnce);
  // A decision remembered for the default payouts holds the accounts of a payment at once, not of a hold.
  const remembered =
    paidAtOnce || !isTest ? (deps.decisions?.get(principal.apiKeyId, input.recipient_id) ?? null) : null;
  return decideUntilWritten({
    deps,
    principal,
    input,
    requestedByUserId: options.requestedByUserId,
    currency,
    hash,
    isTest,
    testOutcome,
    paidAtOnce,
    accountKinds,
    remembered,
  });
}

/** The request's own fields: the key's scope, the currency, the client_reference and notes; and the request's hash. */
function checkPayoutRequest(principal: ApiPrincipal, input: PayoutInput): { currency: string; hash: string } {
  checkKeyScope(principal, input);
  if (input.test_outcome !== undefined && principal.environment !== 'test') {
    throw errors.invalidArgument('test_outcome is for Test keys only.', [
      { field: 'test_outcome', message: 'is only accepted with a Test key' },
    ]);
  }
  const currency = (input.currency ?? PAYOUT_CURRENCY).toUpperCase();
  if (currency !== PAYOUT_CURRENCY)
    throw errors.invalidArgument(`currency must be ${PAYOUT_CURRENCY}.`, [
      { field: 'currency', message: `must be ${PAYOUT_CURRENCY}` },
    ]);
  if (!CLIENT_REFERENCE_PATTERN.test(input.client_reference)) {
    throw errors.invalidArgument(
      `client_reference must start with a letter or digit, use letters, digits, _ . : - only, at most ${CLIENT_REFERENCE_LENGTH_MAX} characters.`,
      [{ field: 'client_reference', message: 'has a bad format' }],
    );
  }
  if (input.notes !== undefined && input.notes.length > NOTES_LENGTH_MAX)
    throw errors.invalidArgument(`notes must be at most ${NOTES_LENGTH_MAX} characters.`, [
      { field: 'notes', message: 'is too long' },
    ]);
  return { currency, hash: payoutRequestHash(input, currency) };
}

/**
 * The fields a retry must repeat. test_outcome counts only when it is not the default (paid): a request
 * without it is the same request as one with paid, and hashes as payouts made before test_outcome did.
 */
const payoutRequestHash = (input: PayoutInput, currency: string) =>
  sha256Hex(
    canonicalJson({
      recipient_id: input.recipient_id,
      amount_minor: input.amount_minor,
      currency,
      max_fee_minor: input.max_fee_minor ?? null,
      notes: input.notes ?? null,
      ...(input.test_outcome !== undefined && input.test_outcome !== TEST_PAYOUT_OUTCOME_DEFAULT
        ? { test_outcome: input.test_outcome }
        : {}),
    }),
  );

/**
 * A remembered decision first: whatever stops it, a refusal included, is decided again from a fresh
 * read, so nothing is refused on what the cache remembers. Then fresh reads: once more when the same
 * client_reference was written after this request read (it is then seen, and this request is replayed
 * or refused as a conflict) or when the write found the recipient or settings changed; and again when
 * a deadlock or serialization failure aborted the write (nothing was written: it simply runs again).
 */
async function decideUntilWritten(r: PayoutRequest): Promise<CreatedPayout> {
  let useRemembered = r.remembered !== null;
  const forgetRemembered = () => {
    r.deps.decisions?.forget(r.principal.apiKeyId, r.input.recipient_id);
    useRemembered = false;
  };
  let referenceRetried = false;
  let changeRetried = false;
  for (let aborted = 0; ; ) {
    const fresh = !useRemembered;
    let created: Awaited<ReturnType<typeof decideAndWrite>>;
    try {
      created = r.deps.inTransaction
        ? await withSavepoint(r.deps.db, () => decideAndWrite(r, fresh))
        : await decideAndWrite(r, fresh);
    } catch (error) {
      if (!fresh) {
        forgetRemembered();
        continue;
      }
      if (error instanceof DbError && error.isRetryable && ++aborted < TRANSACTION_ATTEMPTS_MAX) continue;
      if (
        !referenceRetried &&
        error instanceof DbError &&
        error.isUniqueViolation &&
        error.constraint === CLIENT_REFERENCE_CONSTRAINT
      ) {
        referenceRetried = true;
        continue;
      }
      throw error;
    }
    if (created) return created;
    if (!fresh) forgetRemembered();
    else if (changeRetried) {
      throw conflict(
        'RECIPIENT_UNAVAILABLE',
        'The recipient or the payout settings changed while this payout was being made; nothing was created or held. Try again.',
      );
    } else changeRetried = true;
  }
}

const CLIENT_REFERENCE_CONSTRAINT = 'payouts_merchant_id_environment_client_reference_key';

/** One decision and its write: the payout, or null when something the decision saw changed before the write (nothing was written). */
async function decideAndWrite(r: PayoutRequest, fresh: boolean): Promise<CreatedPayout | null> {
  const decision = await readDecision(r, fresh);
  if (decision.existing_id) return replayOrConflict(r, decision.existing_id);
  checkPayoutAccess(r, decision);
  const recipient = await checkRecipient(r, decision);
  checkProvider(r, recipient);
  const feeMinor = checkAmount(r, decision, recipient, fresh);
  const status: PayoutStatus = r.testOutcome ?? (decision.approval_required ? 'requested' : 'processing');
  const id = newId('po');
  const { ledger, accounts } = await planHold(r, decision, id, feeMinor, fresh);
  const row = newPayoutRow(r, decision, { id, status, recipient, feeMinor });
  const payout = await writePayout(r, decision, row, ledger);
  if (!payout) return null; // something the decision saw changed before the write (nothing was written)
  if (fresh && (r.paidAtOnce || !r.isTest)) rememberDecision(r, decision, recipient, accounts);
  return { payout, existing: false, recipient };
}

/** The merchant and environment the request's payout is for, as the stores and the ledger take them. */
const ownerOf = ({ principal }: PayoutRequest) => ({
  merchantId: principal.merchantId,
  environment: principal.environment,
});

/** Everything deciding needs, read fresh (creating the settings row on the first payout), or as remembered. */
async function readDecision(r: PayoutRequest, fresh: boolean): Promise<PayoutDecision> {
  const { db } = r.deps;
  const owner = ownerOf(r);
  const ask = {
    ...owner,
    apiKeyId: r.principal.apiKeyId,
    clientReference: r.input.client_reference,
    recipientId: r.input.recipient_id,
    accountKinds: r.accountKinds,
  };
  let decision: PayoutDecision | null = fresh
    ? await readPayoutDecision(db, ask)
    : { ...r.remembered!, existing_id: null, has_active_endpoint: true, paid_out_today_minor: 0 };
  if (!decision) {
    await settingsFor(db, owner.merchantId, owner.environment); // first payout: the settings row with its defaults
    decision = (await readPayoutDecision(db, ask))!;
  }
  return decision;
}

/** The client_reference was used: the same request by the same key is a retry (200), anything else a conflict. */
async function replayOrConflict(r: PayoutRequest, existingId: string): Promise<CreatedPayout> {
  const existing = (await findPayoutById(r.deps.db, existingId))!;
  if (existing.api_key_id === r.principal.apiKeyId && existing.request_hash === r.hash)
    return { payout: existing, existing: true, recipient: null };
  throw conflict(
    'REFERENCE_CONFLICT',
    'client_reference was already used with a different request or another API key; use a new client_reference.',
  );
}

/** Payout access, the key's paired endpoint, a pause, and a provider for Live payouts. */
function checkPayoutAccess(r: PayoutRequest, decision: PayoutDecision): void {
  const { principal } = r;
  const { settings } = decision;
  if (!settings.payout_access)
    throw errors.forbidden(
      `Payout access is not enabled for ${principal.environment === 'live' ? 'Live' : 'Test'}; ask Sika to turn it on.`,
    );
  if (!decision.has_active_endpoint) {
    throw errors.forbidden(
      'This API key has no active webhook endpoint paired with it; add one in the dashboard before creating payouts.',
    );
  }
  if (settings.paused)
    throw conflict('PAYOUTS_PAUSED', 'Payouts are paused for this account right now; try again later.');
}

/** A Live payout needs a provider that pays this recipient (a bank account, or a wallet on its network). */
function checkProvider(r: PayoutRequest, recipient: RecipientRow): void {
  if (r.principal.environment !== 'live') return;
  if (!r.deps.providers.paysTo({ accountType: recipient.account_type, network: recipient.network })) {
    const what = recipient.account_type === 'bank' ? 'bank accounts' : `${recipient.network ?? 'Mobile Money'} wallets`;
    throw new SikaError(
      'PROVIDER_RAIL_UNAVAILABLE',
      `No payout provider pays ${what} in Live right now; nothing was held. Try again later.`,
    );
  }
}

/** The recipient is the merchant's, active and not rejected; a Test recipient still waiting is verified here first. */
async function checkRecipient(r: PayoutRequest, decision: PayoutDecision): Promise<RecipientRow> {
  const { principal } = r;
  const { recipient } = decision;
  if (!recipient || recipient.merchant_id !== principal.merchantId || recipient.environment !== principal.environment)
    throw errors.notFound('Recipient');
  if (r.isTest && recipient.verification_status === 'pending_verification') {
    const verdict = testVerification(recipient);
    await setRecipientVerification(r.deps.db, recipient.id, verdict.status, verdict.reason);
    recipient.verification_status = verdict.status;
  }
  if (!recipient.active || recipient.verification_status === 'rejected') {
    throw conflict(
      'RECIPIENT_UNAVAILABLE',
      `The recipient is ${recipient.active ? 'rejected' : 'inactive'}; create or replace it first.`,
    );
  }
  return recipient;
}

/** The fee (under max_fee_minor when sent), the per-payout limit and, on a fresh read, the day's limit. Returns the fee. */
function checkAmount(r: PayoutRequest, decision: PayoutDecision, recipient: RecipientRow, fresh: boolean): number {
  const { input } = r;
  const { settings } = decision;
  const feeMinor = payoutFeeMinor(recipient.account_type, input.amount_minor);
  if (input.max_fee_minor !== undefined && feeMinor > input.max_fee_minor) {
    throw conflict(
      'FEE_LIMIT_EXCEEDED',
      `The fee is ${feeMinor} pesewas, above max_fee_minor ${input.max_fee_minor}; nothing was created or held.`,
    );
  }
  if (input.amount_minor > settings.payout_limit_minor) {
    throw conflict(
      'PAYOUT_LIMIT',
      `The amount is above the per-payout limit of ${settings.payout_limit_minor} pesewas.`,
    );
  }
  // Remembered decisions leave the day's total to the CHECK on it (the figure would be stale).
  if (fresh && decision.paid_out_today_minor + input.amount_minor > settings.daily_limit_minor)
    throw dailyLimit(settings.daily_limit_minor);
  return feeMinor;
}

/** The hold (or, for a Test payout, the payment) the ledger plans: the journal entries written with the row. */
async function planHold(
  r: PayoutRequest,
  decision: PayoutDecision,
  id: string,
  feeMinor: number,
  fresh: boolean,
): Promise<{ ledger: PlannedEntries; accounts: AccountRow[] }> {
  const { db } = r.deps;
  const { input } = r;
  const owner = ownerOf(r);
  const money = { ...owner, payoutId: id, amountMinor: input.amount_minor, feeMinor };
  let ledger: ReturnType<typeof planNewPayout>;
  let accounts: AccountRow[];
  try {
    accounts = await completeAccounts(db, owner.merchantId, owner.environment, r.accountKinds, decision.accounts);
    // Test: paid at once, no money sent (SPEC 3.3): its payment entry is written with the row, inserted as paid.
    // A Test payout created requested or processing (test_outcome) takes the hold a Live one takes.
    // Remembered balances would be stale: the merchant balance CHECK alone refuses a shortfall then.
    ledger = planNewPayout(money, accounts, r.paidAtOnce, fresh ? 'balances read' : 'balances unknown');
  } catch (error) {
    if (error instanceof InsufficientFundsError) throw insufficientFunds(input.amount_minor + feeMinor);
    throw error;
  }
  return { ledger, accounts };
}

function newPayoutRow(
  r: PayoutRequest,
  decision: PayoutDecision,
  p: { id: string; status: PayoutStatus; recipient: RecipientRow; feeMinor: number },
): NewPayoutRow {
  const { principal, input, isTest } = r;
  const { id, status, recipient, feeMinor } = p;
  // A Test payout has no worker: it moves only by the simulator or a cancel (lifecycle.ts).
  const worked = status === 'processing' && !isTest;
  return {
    id,
    reference: newPayoutReference(),
    merchant_id: principal.merchantId,
    environment: principal.environment,
    api_key_id: principal.apiKeyId,
    requested_by_user_id: r.requestedByUserId ?? decision.key_creator_user_id,
    client_reference: input.client_reference,
    request_hash: r.hash,
    recipient_id: recipient.id,
    status,
    processing_step: status === 'processing' ? 'recipient_check' : null,
    amount_minor: input.amount_minor,
    fee_minor: feeMinor,
    total_debit_minor: input.amount_minor + feeMinor,
    currency: r.currency,
    notes: input.notes ?? null,
    bank_reference: isTest && status === 'paid' ? testBankReference() : '',
    reconciliation_status: isTest ? 'not_required' : 'unreconciled',
    next_step_at: worked ? new Date() : null,
  };
}

export function newPayoutReference(): string {
  const date = new Date().toISOString().slice(2, 10).replace(/-/g, '');
  return `PO-${date}-${randomToken(PAYOUT_REFERENCE_RANDOM_CHARS).toUpperCase()}`;
}

/** The row, its hold, the day's total and its event (payout.<status>) in one statement; null when the decision's facts changed. */
async function writePayout(
  r: PayoutRequest,
  decision: PayoutDecision,
  row: NewPayoutRow,
  ledger: PlannedEntries,
): Promise<PayoutRow | null> {
  const { deps } = r;
  const { settings } = decision;
  const event = payoutEventInput({ ...row, return_reference: '', version: 1 }, `payout.${row.status}`);
  try {
    const write: NewPayoutWrite = {
      row,
      decidedOn: { settings, approvalRequired: decision.approval_required, endpointKeyId: r.principal.apiKeyId },
      ledger,
      event: { input: event, payload: eventPayload(event) },
    };
    return await (deps.writer ? deps.writer.write(write) : insertNewPayout(deps.db, write));
  } catch (error) {
    // What was read before is enforced by the write whatever ran since (see readPayoutDecision).
    if (error instanceof InsufficientFundsError) throw insufficientFunds(row.amount_minor + row.fee_minor);
    if (error instanceof DayLimitExceededError) throw dailyLimit(settings.daily_limit_minor);
    throw error;
  }
}

/**
 * Remembered for this key's next payouts to the recipient: only what the write re-checks (a Test
 * recipient waiting for the verifier was verified above, so none is remembered waiting).
 */
function rememberDecision(
  r: PayoutRequest,
  decision: PayoutDecision,
  recipient: RecipientRow,
  accounts: AccountRow[],
): void {
  r.deps.decisions?.remember(r.principal.apiKeyId, recipient.id, {
    settings: decision.settings,
    approval_required: decision.approval_required,
    key_creator_user_id: decision.key_creator_user_id,
    recipient,
    accounts: accounts.map(({ id, kind }) => ({ id, kind, balance_minor: 0 })),
  });
}

const dailyLimit = (limitMinor: number) =>
  conflict('PAYOUT_DAILY_LIMIT', `This payout would pass today's limit of ${limitMinor} pesewas (Africa/Accra day).`);

const insufficientFunds = (totalMinor: number) =>
  conflict(
    'INSUFFICIENT_FUNDS',
    `The available balance does not cover the amount plus the fee (${totalMinor} pesewas); payments still clearing (pending_minor) and the reserve (reserved_minor) are not available yet.`,
  );
