// A new payout: the one read its decision needs and the one statement that writes it (with its day's
// total, journal entries and event), enforcing again whatever the decision read.
import type { Environment } from '../lib/environment.ts';
import { DbError, type Queryable } from '../db/index.ts';
import { Statement } from '../db/statement.ts';
import type { EventInput, EventPayload } from '../events/model.ts';
import { DELIVERIES_DUE_CHANNEL, eventCtes } from '../events/statement.ts';
import type { AccountKind } from '../ledger/model.ts';
import type { PlannedEntries } from '../ledger/service.ts';
import {
  accountsJsonItem,
  checkWritten,
  entriesCtes,
  ledgerWriteError,
  WRITTEN_COUNTS,
  type AccountRow,
  type WrittenCounts,
} from '../ledger/statement.ts';
import { payoutMachine, reconciliationMachine } from './model.ts';
import { PAYOUT_COLUMNS, type PayoutRow } from './payout-store.ts';
import { RECIPIENT_SELECT, type RecipientRow } from './recipient-store.ts';
import type { SettingsRow } from './settings-store.ts';

/**
 * Everything deciding a new payout needs, read in one statement, outside any transaction and unlocked:
 * the rules the values decide are enforced again by the statement that writes the payout
 * (insertNewPayout): the recipient, the unique client_reference, the merchant balance CHECK and the
 * day's limit CHECK. Null when the merchant has no settings row yet (settingsFor creates it).
 */
export interface PayoutDecision {
  settings: SettingsRow;
  /** The payout already made with this client_reference, if any. */
  existing_id: string | null;
  has_active_endpoint: boolean;
  /** Amounts of today's payouts not failed or cancelled (Africa/Accra day). */
  paid_out_today_minor: number;
  approval_required: boolean;
  key_creator_user_id: string | null;
  /** Not owner-checked here: compare merchant_id and environment. */
  recipient: RecipientRow | null;
  /** As read, not locked: a pre-check of the balance; the write is the guarantee. */
  accounts: AccountRow[];
}

export async function readPayoutDecision(
  db: Queryable,
  q: {
    merchantId: string;
    environment: Environment;
    apiKeyId: string;
    clientReference: string;
    recipientId: string;
    accountKinds: AccountKind[];
  },
): Promise<PayoutDecision | null> {
  const s = new Statement();
  const [m, e, key] = [s.p(q.merchantId), s.p(q.environment), s.p(q.apiKeyId)];
  // The recipient by primary key, owner checked by the caller (see src/db/owned-row.ts).
  const rows = await db.query<
    Omit<SettingsRow, 'merchant_id' | 'environment'> & Omit<PayoutDecision, 'settings' | 'recipient'> & RecipientRow
  >(
    `SELECT settings.payout_access, settings.paused, settings.payout_limit_minor, settings.daily_limit_minor, rcp.*,
            (SELECT id FROM payouts WHERE merchant_id = ${m} AND environment = ${e} AND client_reference = ${s.p(q.clientReference)}) AS existing_id,
            EXISTS (SELECT 1 FROM webhook_endpoints WHERE api_key_id = ${key} AND status = 'active') AS has_active_endpoint,
            coalesce((SELECT committed_minor FROM payout_day_totals
                       WHERE merchant_id = ${m} AND environment = ${e} AND day = (now() AT TIME ZONE 'Africa/Accra')::date), 0) AS paid_out_today_minor,
            (SELECT payout_approval_required FROM merchants WHERE id = ${m}) AS approval_required,
            (SELECT created_by_user_id FROM api_keys WHERE id = ${key}) AS key_creator_user_id,
            ${accountsJsonItem(s, m, e, q.accountKinds)} AS accounts
       FROM payout_settings settings
       LEFT JOIN LATERAL (${RECIPIENT_SELECT} WHERE r.id = ${s.p(q.recipientId)}) AS rcp ON true
      WHERE settings.merchant_id = ${m} AND settings.environment = ${e}`,
    s.params,
    'payout_decision',
  );
  const row = rows[0];
  if (!row) return null;
  // The recipient's columns are the row's rest (null when no recipient has the id).
  const [settings, afterSettings] = splitColumns(row, DECISION_SETTINGS_COLUMNS);
  const [decision, recipient] = splitColumns(afterSettings, DECISION_READ_COLUMNS);
  return {
    settings: { merchant_id: q.merchantId, environment: q.environment, ...settings },
    ...decision,
    recipient: recipient.id ? recipient : null,
  };
}

/** The settings' columns of readPayoutDecision's row. */
const DECISION_SETTINGS_COLUMNS = ['payout_access', 'paused', 'payout_limit_minor', 'daily_limit_minor'] as const;
/** The columns readPayoutDecision reads besides the settings and the recipient. */
const DECISION_READ_COLUMNS = [
  'existing_id',
  'has_active_endpoint',
  'paid_out_today_minor',
  'approval_required',
  'key_creator_user_id',
  'accounts',
] as const;

/** A row as its named columns and the rest. */
function splitColumns<Row extends object, Column extends keyof Row & string>(
  row: Row,
  columns: readonly Column[],
): [Pick<Row, Column>, Omit<Row, Column>] {
  const named = new Set<string>(columns);
  const cells = Object.entries(row);
  return [
    Object.fromEntries(cells.filter(([column]) => named.has(column))) as Pick<Row, Column>,
    Object.fromEntries(cells.filter(([column]) => !named.has(column))) as Omit<Row, Column>,
  ];
}

export type NewPayoutRow = Omit<
  PayoutRow,
  | 'version'
  | 'created_at'
  | 'updated_at'
  | 'paid_at'
  | 'failure_reason'
  | 'cancel_reason'
  | 'decided_by_user_id'
  | 'decided_at'
  | 'return_reference'
  | 'provider'
  | 'provider_reference'
  | 'status_checks'
  | 'held_at'
  | 'held_by'
  | 'hold_reason'
>;

/** The day's total would pass the daily limit (the CHECK on payout_day_totals). */
export class DayLimitExceededError extends Error {}

const DAY_LIMIT_CONSTRAINT = 'payout_day_totals_within_limit';

/** A new payout to write, with what its decision saw and planned (see insertNewPayouts). */
export interface NewPayoutWrite {
  row: NewPayoutRow;
  decidedOn: { settings: SettingsRow; approvalRequired: boolean; endpointKeyId: string };
  ledger: PlannedEntries;
  event: { input: EventInput; payload: EventPayload };
}

/**
 * New payouts of one merchant and environment in one statement, a transaction of its own: the rows,
 * their amounts added to the day's total under the daily limit, their journal entries (planned by the
 * ledger) and their events. What each decision read (perhaps seconds ago: see decision-cache.ts) is
 * enforced here whatever ran since: a payout is left out, with nothing written for it, when its recipient
 * is no longer the merchant's, active and not rejected (it is key-share locked, so deleting or replacing
 * it waits for this statement, and sees the payout), or when the payout settings, the key's active
 * endpoint or the approval setting are no longer what its decision saw. The statement fails as a whole,
 * writing nothing, when a client_reference is taken (DbError 23505, also between two of the payouts), a
 * merchant balance would go below zero (InsufficientFundsError: balances move once per account, by the
 * sum of the entries) or the day's total would pass the limit (DayLimitExceededError). Row locks (the
 * day's total, then the accounts, the order every writer takes them in: see releaseDayTotal) are held
 * only while the statement runs. Returns the payouts written.
 */
export async function insertNewPayouts(db: Queryable, writes: readonly NewPayoutWrite[]): Promise<PayoutRow[]> {
  const first = writes[0]?.row;
  if (
    !first ||
    writes.some((w) => w.row.merchant_id !== first.merchant_id || w.row.environment !== first.environment)
  ) {
    throw new Error('assertion failed: one statement writes payouts of one merchant and environment');
  }
  for (const w of writes) {
    payoutMachine.initialStatus(w.row.status);
    reconciliationMachine.initialStatus(w.row.reconciliation_status);
  }
  const s = new Statement();
  const [m, e] = [s.p(first.merchant_id, 'uuid'), s.p(first.environment, 'text')];
  const column = (value: (w: NewPayoutWrite) => unknown, cast: string) => s.p(writes.map(value), cast);
  const given = `unnest(${column((w) => w.row.id, 'text[]')}, ${column((w) => w.row.reference, 'text[]')}, ${column((w) => w.row.api_key_id, 'uuid[]')},
         ${column((w) => w.row.requested_by_user_id, 'uuid[]')}, ${column((w) => w.row.client_reference, 'text[]')}, ${column((w) => w.row.request_hash, 'text[]')},
         ${column((w) => w.row.recipient_id, 'text[]')}, ${column((w) => w.row.status, 'text[]')}, ${column((w) => w.row.processing_step, 'text[]')},
         ${column((w) => w.row.amount_minor, 'bigint[]')}, ${column((w) => w.row.fee_minor, 'bigint[]')}, ${column((w) => w.row.total_debit_minor, 'bigint[]')},
         ${column((w) => w.row.currency, 'text[]')}, ${column((w) => w.row.notes, 'text[]')}, ${column((w) => w.row.bank_reference, 'text[]')},
         ${column((w) => w.row.reconciliation_status, 'text[]')}, ${column((w) => w.row.next_step_at, 'timestamptz[]')},
         ${column((w) => w.decidedOn.settings.payout_limit_minor, 'bigint[]')}, ${column((w) => w.decidedOn.settings.daily_limit_minor, 'bigint[]')},
         ${column((w) => w.decidedOn.approvalRequired, 'boolean[]')}, ${column((w) => w.decidedOn.endpointKeyId, 'uuid[]')})
       AS given (id, reference, api_key_id, requested_by_user_id, client_reference, request_hash, recipient_id, status, processing_step,
                 amount_minor, fee_minor, total_debit_minor, currency, notes, bank_reference, reconciliation_status, next_step_at,
                 payout_limit_minor, daily_limit_minor, approval_required, endpoint_key_id)`;
  const entries = writes.flatMap((w) => w.ledger.entries);
  const lines = writes.flatMap((w) => w.ledger.lines);
  const sql = `WITH given_payout AS (SELECT * FROM ${given}
     ), payout AS (
       INSERT INTO payouts (id, reference, merchant_id, environment, api_key_id, requested_by_user_id, client_reference, request_hash,
         recipient_id, status, processing_step, amount_minor, fee_minor, total_debit_minor, currency, notes, bank_reference,
         reconciliation_status, next_step_at, paid_at)
       SELECT g.id, g.reference, ${m}, ${e}, g.api_key_id, g.requested_by_user_id, g.client_reference, g.request_hash, r.id, g.status,
              g.processing_step, g.amount_minor, g.fee_minor, g.total_debit_minor, g.currency, g.notes, g.bank_reference,
              g.reconciliation_status, g.next_step_at, CASE WHEN g.status = 'paid' THEN now() END
         FROM given_payout g
         -- By primary key, locked, then checked: the lock returns the row as it is after any concurrent change.
         CROSS JOIN LATERAL (SELECT id, merchant_id, environment, active, verification_status FROM recipients
                              WHERE id = g.recipient_id FOR KEY SHARE) AS r
        WHERE r.merchant_id = ${m} AND r.environment = ${e} AND r.active AND r.verification_status <> 'rejected'
          AND EXISTS (SELECT 1 FROM payout_settings settings WHERE settings.merchant_id = ${m} AND settings.environment = ${e}
                         AND settings.payout_access AND NOT settings.paused
                         AND settings.payout_limit_minor = g.payout_limit_minor AND settings.daily_limit_minor = g.daily_limit_minor)
          AND EXISTS (SELECT 1 FROM webhook_endpoints w WHERE w.api_key_id = g.endpoint_key_id AND w.status = 'active')
          AND EXISTS (SELECT 1 FROM merchants WHERE id = ${m} AND payout_approval_required = g.approval_required)
       RETURNING ${PAYOUT_COLUMNS}
     ), payout_day AS (
       -- Every payout written saw the limit as it is now (above), so they all carry the same one.
       INSERT INTO payout_day_totals AS total (merchant_id, environment, day, committed_minor, limit_minor)
       SELECT ${m}, ${e}, (now() AT TIME ZONE 'Africa/Accra')::date, sum(payout.amount_minor), max(g.daily_limit_minor)
         FROM payout JOIN given_payout g ON g.id = payout.id
       HAVING count(*) > 0
       ON CONFLICT (merchant_id, environment, day)
         DO UPDATE SET committed_minor = total.committed_minor + EXCLUDED.committed_minor, limit_minor = EXCLUDED.limit_minor
       RETURNING 1
     ), ${entriesCtes(s, entries, lines, { ifPosted: 'fail', onlyIf: 'given.reference_id IN (SELECT id FROM payout)' })},
     ${eventCtes(
       s,
       writes.map((w) => w.event),
       'given.object_id IN (SELECT id FROM payout)',
     )}
     SELECT payout.*, (SELECT count(*) FROM payout_day)::int AS day_rows, ${WRITTEN_COUNTS} FROM payout`;
  let rows: (PayoutRow & WrittenCounts & { day_rows: number })[];
  try {
    // Pipelined (db.write); a statement that would wait on a lock (a payment crediting the merchant, a
    // cancel, a recipient change in flight) gives up after the pipeline's lock_timeout, having written
    // nothing, and runs again on the pool, where it waits as long as it must.
    type Written = PayoutRow & WrittenCounts & { day_rows: number };
    rows = await db.write<Written>('payout_create', sql, s.params).catch((error: unknown) => {
      if (error instanceof DbError && error.isLockTimeout) return db.query<Written>(sql, s.params, 'payout_create');
      throw error;
    });
  } catch (error) {
    if (error instanceof DbError && error.violatesCheck(DAY_LIMIT_CONSTRAINT)) {
      throw new DayLimitExceededError();
    }
    throw ledgerWriteError(error);
  }
  if (rows.length === 0) return [];
  // The payouts' events: the delivery worker claims them now, not on its next poll.
  db.signal(DELIVERIES_DUE_CHANNEL);
  const written = new Set(rows.map((row) => row.id));
  // ifPosted 'fail' above: had an entry been posted before, the statement would have failed; these hold by construction.
  const writtenEntries = entries.filter((entry) => written.has(entry.referenceId));
  const writtenEntryIds = new Set(writtenEntries.map((entry) => entry.id));
  const counts = rows[0]!;
  if (
    counts.day_rows !== 1 ||
    !checkWritten(
      counts,
      writtenEntries,
      lines.filter((line) => writtenEntryIds.has(line.entryId)),
    )
  ) {
    throw new Error(
      `assertion failed: ${rows.length} new payouts wrote ${counts.day_rows} day totals and ${counts.ledger_entries} entries`,
    );
  }
  return rows.map(({ ledger_entries: _entries, ledger_accounts: _accounts, day_rows: _days, ...payout }) => payout);
}

/** One new payout (insertNewPayouts): null, with nothing written, when what its decision saw has changed. */
export async function insertNewPayout(db: Queryable, write: NewPayoutWrite): Promise<PayoutRow | null> {
  return (await insertNewPayouts(db, [write]))[0] ?? null;
}
