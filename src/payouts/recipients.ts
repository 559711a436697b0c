// Recipients (SPEC 4.3): create, replace, read and delete, and the Test verifier.
import type { ApiPrincipal } from '../lib/environment.ts';
import type { Db, Queryable } from '../db/index.ts';
import { DbError } from '../db/index.ts';
import { errors } from '../lib/errors.ts';
import { checkPhoneForNetwork, MOMO_NETWORKS, type MomoNetwork } from '../lib/ghana.ts';
import { isUuid, newId } from '../lib/ids.ts';
import { bankIsActive } from './bank-store.ts';
import {
  ACCOUNT_NAME_LENGTH_MAX,
  ACCOUNT_NUMBER_DIGITS_MAX,
  ACCOUNT_NUMBER_DIGITS_MIN,
  ACCOUNT_NUMBER_PATTERN,
  TEST_REJECTED_ACCOUNT_NUMBERS,
  TEST_REJECTED_PHONES,
} from './model.ts';
import { hasOpenPayouts } from './payout-store.ts';
import {
  deactivateRecipient,
  findRecipient,
  insertRecipient,
  pendingRecipients,
  setRecipientVerification,
  type RecipientRow,
} from './recipient-store.ts';

const { conflict } = errors;

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
    throw errors.invalidArgument('merchant_id conflicts with the API key; omit it: the key fixes the merchant.', [
      { field: 'merchant_id', message: 'conflicts with the API key' },
    ]);
  }
  if (body.environment !== undefined && body.environment !== principal.environment) {
    throw errors.invalidArgument(
      `environment ${String(body.environment)} conflicts with this ${principal.environment === 'live' ? 'Live' : 'Test'} key; omit it: the key fixes the environment.`,
      [{ field: 'environment', message: 'conflicts with the API key' }],
    );
  }
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
    throw errors.invalidArgument('account_type must be bank or momo.', [
      { field: 'account_type', message: 'must be bank or momo' },
    ]);
  }
  const accountName = input.account_name?.trim() ?? '';
  if (accountName.length < 1 || accountName.length > ACCOUNT_NAME_LENGTH_MAX) {
    throw errors.invalidArgument(`account_name is required (1 to ${ACCOUNT_NAME_LENGTH_MAX} characters).`, [
      { field: 'account_name', message: 'is required' },
    ]);
  }
  if (accountType === 'bank') {
    const mixed = (['network', 'phone'] as const).filter((field) => input[field] !== undefined);
    if (mixed.length)
      throw errors.invalidArgument(
        `A bank recipient takes no wallet fields (${mixed.join(', ')}).`,
        mixed.map((field) => ({ field, message: 'is a wallet field' })),
      );
    if (!input.bank_id || !isUuid(input.bank_id))
      throw errors.invalidArgument('bank_id must be a bank id from GET /api/v1/payouts/capabilities.', [
        { field: 'bank_id', message: 'is not a bank id' },
      ]);
    if (!(await bankIsActive(db, input.bank_id)))
      throw errors.invalidArgument('bank_id is not a supported bank.', [
        { field: 'bank_id', message: 'is not a supported bank' },
      ]);
    if (!input.account_number || !ACCOUNT_NUMBER_PATTERN.test(input.account_number)) {
      const digits = `${ACCOUNT_NUMBER_DIGITS_MIN} to ${ACCOUNT_NUMBER_DIGITS_MAX} digits`;
      throw errors.invalidArgument(`account_number must be ${digits}.`, [
        { field: 'account_number', message: `must be ${digits}` },
      ]);
    }
    return {
      account_type: 'bank',
      bank_id: input.bank_id,
      account_number: input.account_number,
      network: null,
      phone: null,
      account_name: accountName,
    };
  }
  const mixed = (['bank_id', 'account_number'] as const).filter((field) => input[field] !== undefined);
  if (mixed.length)
    throw errors.invalidArgument(
      `A Mobile Money recipient takes no bank fields (${mixed.join(', ')}).`,
      mixed.map((field) => ({ field, message: 'is a bank field' })),
    );
  if (!input.network || !(MOMO_NETWORKS as readonly string[]).includes(input.network)) {
    throw errors.invalidArgument('network must be mtn, telecel or at.', [
      { field: 'network', message: 'must be mtn, telecel or at' },
    ]);
  }
  if (!input.phone)
    throw errors.invalidArgument('phone is required for a Mobile Money recipient.', [
      { field: 'phone', message: 'is required' },
    ]);
  const check = checkPhoneForNetwork(input.phone, input.network as MomoNetwork);
  if (!check.ok) throw errors.invalidArgument(check.message, [{ field: 'phone', message: check.message }]);
  return {
    account_type: 'momo',
    bank_id: null,
    account_number: null,
    network: input.network as MomoNetwork,
    phone: check.phone,
    account_name: accountName,
  };
}

/** A new recipient, in its own transaction. With previous_version_id the old version becomes inactive. */
export const createRecipient = (db: Db, principal: ApiPrincipal, input: RecipientInput) =>
  db.transaction((tx) => createRecipientIn(tx, principal, input));

/**
 * A new recipient in the caller's transaction (the API's: an Idempotency-Key's claim and stored answer commit
 * with it, so a retry with the key makes no second recipient). Nothing here calls a provider: a Live
 * recipient is checked by payout processing.
 */
export async function createRecipientIn(tx: Queryable, principal: ApiPrincipal, input: RecipientInput) {
  checkKeyScope(principal, input);
  const checked = await checkRecipientInput(tx, input);
  try {
    if (input.previous_version_id !== undefined) {
      const previous = await findRecipient(
        tx,
        principal.merchantId,
        principal.environment,
        input.previous_version_id,
        true,
      );
      if (!previous) throw errors.notFound('Recipient');
      if (!previous.active)
        throw conflict('RECIPIENT_UNAVAILABLE', 'The previous version is inactive (already replaced or deleted).');
      if (await hasOpenPayouts(tx, previous.id))
        throw conflict(
          'RECIPIENT_HAS_OPEN_PAYOUTS',
          'The recipient has payouts in progress; wait for them or cancel them first.',
        );
      await deactivateRecipient(tx, previous.id);
    }
    const id = newId('rcp');
    await insertRecipient(tx, {
      id,
      merchant_id: principal.merchantId,
      environment: principal.environment,
      ...checked,
      previous_version_id: input.previous_version_id ?? null,
      apiKeyId: principal.apiKeyId || null,
    });
    return (await findRecipient(tx, principal.merchantId, principal.environment, id))!;
  } catch (error) {
    if (error instanceof DbError && error.isUniqueViolation)
      throw conflict('RECIPIENT_UNAVAILABLE', 'The previous version was already replaced.');
    throw error;
  }
}

export async function getRecipient(db: Queryable, principal: ApiPrincipal, id: string) {
  const recipient = await findRecipient(db, principal.merchantId, principal.environment, id);
  if (!recipient) throw errors.notFound('Recipient');
  return recipient;
}

export async function deleteRecipient(db: Db, principal: ApiPrincipal, id: string): Promise<void> {
  await db.transaction(async (tx) => {
    const recipient = await findRecipient(tx, principal.merchantId, principal.environment, id, true);
    if (!recipient) throw errors.notFound('Recipient');
    if (await hasOpenPayouts(tx, id))
      throw conflict(
        'RECIPIENT_HAS_OPEN_PAYOUTS',
        'The recipient has payouts in progress; wait for them or cancel them first.',
      );
    if (recipient.active) await deactivateRecipient(tx, id);
  });
}

/** The Test verifier: magic account numbers and phones are rejected, everything else verified. */
export function testVerification(recipient: Pick<RecipientRow, 'account_number' | 'phone'>): {
  status: 'verified' | 'rejected';
  reason: string | null;
} {
  const reason =
    (recipient.account_number && TEST_REJECTED_ACCOUNT_NUMBERS[recipient.account_number]) ||
    (recipient.phone && TEST_REJECTED_PHONES[recipient.phone]) ||
    null;
  return reason ? { status: 'rejected', reason } : { status: 'verified', reason: null };
}

export const TEST_VERIFY_DELAY_S = 2;
/** Test recipients a verifier pass takes at most. */
const TEST_RECIPIENTS_PER_PASS_MAX = 100;

/** Worker: verifies Test recipients shortly after creation. */
export async function verifyTestRecipients(db: Db): Promise<number> {
  const due = await pendingRecipients(db, TEST_VERIFY_DELAY_S, TEST_RECIPIENTS_PER_PASS_MAX);
  for (const { id, merchant_id, environment } of due) {
    await db.transaction(async (tx) => {
      const recipient = await findRecipient(tx, merchant_id, environment, id, true);
      if (recipient?.verification_status !== 'pending_verification') return;
      const decision = testVerification(recipient);
      await setRecipientVerification(tx, id, decision.status, decision.reason);
    });
  }
  return due.length;
}
