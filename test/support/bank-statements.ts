// Shared steps for the bank statement tests: the collection account's settings, a Live bank transfer
// through the payer API, a statement CSV in a Ghanaian bank's export layout, storage look-ups, and the check of a
// refusal's error code.
import assert from 'node:assert/strict';
import { randomInt, randomUUID } from 'node:crypto';
import type { CreatedMerchant } from '../../src/accounts/service.ts';
import type { Actor } from '../../src/audit/log.ts';
import { SikaError } from '../../src/lib/errors.ts';
import { createOperator } from '../../src/ops/service.ts';
import { collectionAccounts } from '../../src/rails/bank-transfer/accounts.ts';
import { ConsoleClient } from './console-client.ts';
import { startTestApp, type TestContext } from './helpers.ts';
import { createSession, postAttempt, totalOf } from './checkout.ts';

/** An assert.throws/rejects check: a SikaError with this code (and a message matching pattern, when given). */
export const rejects = (code: string, pattern?: RegExp) => (error: unknown) => {
  assert.ok(error instanceof SikaError, `a SikaError, not ${String(error)}`);
  assert.equal(error.code, code, error.message);
  if (pattern) assert.match(error.message, pattern);
  return true;
};

/** The collection account Live bank transfers are paid into (BANK_TRANSFER_* settings). */
export const BANK_ENV = {
  BANK_TRANSFER_BANK_CODE: 'GCB',
  BANK_TRANSFER_BANK_NAME: 'GCB Bank',
  BANK_TRANSFER_BRANCH: 'Accra Central',
  BANK_TRANSFER_ACCOUNT_NUMBER: '1011130012345',
  BANK_TRANSFER_ACCOUNT_NAME: 'Sika Collections Ltd',
};

export interface LiveTransfer {
  sessionId: string;
  attemptId: string;
  reference: string;
  chargedMinor: number;
  instructions: Record<string, unknown>;
}

/** A Live checkout of `baseMinor` and a bank transfer attempt on it, through the merchant and payer APIs. */
export async function liveTransfer(t: TestContext, m: CreatedMerchant, baseMinor = 50_000): Promise<LiveTransfer> {
  const session = await createSession(t, m, { amount_minor: baseMinor }, { live: true });
  const res = await postAttempt(t, session.id, {
    rail: 'bank_transfer',
    amount_minor: totalOf('bank_transfer', baseMinor),
  });
  assert.equal(res.statusCode, 201, res.body);
  const body = res.json() as {
    attempt_reference: string;
    provider_reference: string;
    amount_charged_minor: number;
    instructions: Record<string, unknown>;
  };
  return {
    sessionId: session.id,
    attemptId: body.attempt_reference,
    reference: body.provider_reference,
    chargedMinor: body.amount_charged_minor,
    instructions: body.instructions,
  };
}

export interface Row {
  date?: string;
  valueDate?: string;
  narration: string;
  debit?: string;
  credit?: string;
  balance?: string;
}

const field = (value: string) => (/[",\n]/.test(value) ? `"${value.replace(/"/g, '""')}"` : value);

/** "1,234.50" for 123450 pesewas, as banks print it. */
export const cedis = (minor: number) =>
  `${Math.floor(minor / 100)
    .toString()
    .replace(/\B(?=(\d{3})+(?!\d))/g, ',')}.${String(minor % 100).padStart(2, '0')}`;

/**
 * A statement as GCB's internet banking exports it: a title, the account and the period, a blank line,
 * then "Trans. Date,Value Date,Narration,Debit (GHS),Credit (GHS),Balance (GHS)". Rows without a balance
 * get a running one that starts at a random figure, so a statement is never a duplicate of another run's
 * on a shared database.
 */
export function gcbStatement(rows: Row[]): string {
  let balance = randomInt(1_000_000, 900_000_000);
  const lines = [
    'GCB BANK PLC - ACCOUNT STATEMENT',
    'Account:,1011130012345,SIKA COLLECTIONS LTD',
    'Period:,01/03/2026 - 31/03/2026',
    '',
    'Trans. Date,Value Date,Narration,Debit (GHS),Credit (GHS),Balance (GHS)',
  ];
  for (const row of rows) {
    const date = row.date ?? '02/03/2026';
    balance += row.credit ? Number(row.credit.replace(/,/g, '').replace('.', '')) || 0 : 0;
    lines.push(
      [date, row.valueDate ?? date, row.narration, row.debit ?? '', row.credit ?? '', row.balance ?? cedis(balance)]
        .map(field)
        .join(','),
    );
  }
  return `${lines.join('\r\n')}\r\n`;
}

/** A narration no other statement has (a shared database keeps every run's lines). */
// Ten characters, and hex (no S or K): never a payment reference's 8 characters, alone or with the word
// before it, so a narration made of these has no reference by chance (an 8-character word did, 1 in 31).
export const uniqueWords = () => `PAYMENT ${randomUUID().replace(/-/g, '').slice(0, 10).toUpperCase()}`;

export const attemptOf = async (t: TestContext, id: string) =>
  (
    await t.db.query<{ status: string; raw_status: string; amount_charged_minor: number }>(
      'SELECT status, raw_status, amount_charged_minor FROM payment_attempts WHERE id = $1',
      [id],
    )
  )[0]!;

export const sessionStatus = async (t: TestContext, id: string) =>
  (await t.db.query<{ status: string }>('SELECT status FROM checkout_sessions WHERE id = $1', [id]))[0]!.status;

export const linesOfImport = (t: TestContext, importId: string) =>
  t.db.query<{
    id: string;
    line_number: number;
    status: string;
    amount_minor: number;
    payment_reference: string | null;
    attempt_id: string | null;
    reason: string;
    resolution_note: string | null;
  }>(
    'SELECT id, line_number, status, amount_minor, payment_reference, attempt_id, reason, resolution_note FROM statement_lines WHERE import_id = $1 ORDER BY line_number',
    [importId],
  );

export const lineById = async (t: TestContext, id: string) =>
  (
    await t.db.query<{
      status: string;
      attempt_id: string | null;
      payment_reference: string | null;
      reason: string;
      resolution_note: string | null;
      resolved_by: string | null;
    }>(
      'SELECT status, attempt_id, payment_reference, reason, resolution_note, resolved_by FROM statement_lines WHERE id = $1',
      [id],
    )
  )[0]!;

/** The merchant's Live available balance, in pesewas (GET /api/v1/payouts/balance). */
export async function liveBalance(t: TestContext, m: CreatedMerchant): Promise<number> {
  const res = await t.app.inject({
    method: 'GET',
    url: '/api/v1/payouts/balance',
    headers: { authorization: `Bearer ${m.live_api_key}` },
  });
  assert.equal(res.statusCode, 200, res.body);
  return (res.json() as { available_minor: number }).available_minor;
}

/** An app with the bank transfer collection account, and an operator signed in to /ops (its actor for direct service calls). */
export async function statementsConsole(prefix: string, password: string) {
  const t = await startTestApp(BANK_ENV);
  const email = `${prefix}-${randomUUID()}@example.com`;
  const created = await createOperator(t.db, { email, password, role: 'operator' });
  const operator: Actor = { type: 'operator', id: created.operator_id, email };
  const ops = await new ConsoleClient(t, '/ops').signedIn(email, password);
  return { t, ops, operator, accounts: collectionAccounts(t.config.providers.bankTransfer) };
}
