// The payout batch writer on a storage whose answers the test controls: payouts of one merchant that
// arrive while its statement runs are written in one statement; a failed batch is written one by one;
// unreachable storage fails the batch at once instead of once per payout.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { describe, it } from 'node:test';
import { DbError, type Db } from '../../src/db/index.ts';
import { eventPayload } from '../../src/events/outbox.ts';
import { PayoutBatchWriter, type BatchOutcome } from '../../src/payouts/batch-writer.ts';
import type { NewPayoutWrite } from '../../src/payouts/new-payout-store.ts';

/** A storage that records each statement's payout ids and answers as the test says, when the test says. */
function fakeDb(answer: (ids: string[], call: number) => Promise<unknown[]>) {
  const calls: string[][] = [];
  const query = async (_sql: string, params: readonly unknown[] = []) => {
    const ids =
      (params.find((p) => Array.isArray(p) && p.every((v) => typeof v === 'string' && v.startsWith('po_'))) as
        | string[]
        | undefined) ?? [];
    calls.push(ids);
    return answer(ids, calls.length);
  };
  const db = {
    kind: 'postgres',
    query,
    // Payout statements are pipelined writes (db.write); here they are answered like any statement.
    write: (_name: string, sql: string, params?: readonly unknown[]) => query(sql, params),
    exec: async () => {},
    signal: () => {},
    transaction: async () => {
      throw new Error('not used');
    },
    ping: async () => {},
    close: async () => {},
  } as unknown as Db;
  return { db, calls };
}

const merchantId = randomUUID();

function newWrite(merchant = merchantId): NewPayoutWrite {
  const id = `po_${randomUUID()}`;
  const entryId = randomUUID();
  const input = {
    merchantId: merchant,
    environment: 'test' as const,
    apiKeyId: randomUUID(),
    type: 'payout.paid',
    objectType: 'payout',
    objectId: id,
    objectVersion: 1,
    data: {},
  };
  return {
    row: {
      id,
      reference: `PO-${id.slice(3, 9)}`,
      merchant_id: merchant,
      environment: 'test',
      api_key_id: input.apiKeyId,
      requested_by_user_id: null,
      client_reference: `ref-${id}`,
      request_hash: 'h',
      recipient_id: 'rcp_1',
      status: 'paid',
      processing_step: null,
      amount_minor: 1_000,
      fee_minor: 100,
      total_debit_minor: 1_100,
      currency: 'GHS',
      notes: null,
      bank_reference: 'TEST-1',
      reconciliation_status: 'not_required',
      next_step_at: null,
    },
    decidedOn: {
      settings: {
        merchant_id: merchant,
        environment: 'test',
        payout_access: true,
        paused: false,
        payout_limit_minor: 10_000,
        daily_limit_minor: 100_000,
      },
      approvalRequired: false,
      endpointKeyId: input.apiKeyId,
    },
    ledger: {
      entries: [
        {
          id: entryId,
          merchantId: merchant,
          environment: 'test',
          kind: 'payout_paid',
          referenceType: 'payout',
          referenceId: id,
          reversesEntryId: null,
        },
      ],
      lines: [
        { entryId, accountId: randomUUID(), amountMinor: 1_100 },
        { entryId, accountId: randomUUID(), amountMinor: -1_100 },
      ],
    },
    event: { input, payload: eventPayload(input) },
  };
}

/** The rows a successful statement returns for the given payouts (the writer checks the counts). */
const rowsFor = (ids: string[]) =>
  ids.map((id) => ({ id, day_rows: 1, ledger_entries: ids.length, ledger_accounts: 2 * ids.length }));

describe('payout batch writer', () => {
  it('payouts of a merchant that arrive while its statement runs are written together in the next one; other merchants are not held up', async () => {
    let releaseFirst!: () => void;
    const firstDone = new Promise<void>((resolve) => (releaseFirst = resolve));
    const { db, calls } = fakeDb(async (ids, call) => {
      if (call === 1) await firstDone;
      return rowsFor(ids);
    });
    const outcomes: [number, BatchOutcome][] = [];
    const writer = new PayoutBatchWriter(db, (size, outcome) => outcomes.push([size, outcome]));
    const [first, ...rest] = [newWrite(), newWrite(), newWrite(), newWrite()];
    const answers = [writer.write(first!), ...rest.map((w) => writer.write(w))];
    const other = newWrite(randomUUID());
    assert.equal(
      (await writer.write(other))?.id,
      other.row.id,
      'another merchant is written while the first one waits',
    );
    releaseFirst();
    const written = await Promise.all(answers);
    assert.deepEqual(
      written.map((p) => p?.id),
      [first, ...rest].map((w) => w.row.id),
    );
    assert.deepEqual(calls, [[first!.row.id], [other.row.id], rest.map((w) => w.row.id)]);
    assert.deepEqual(outcomes, [
      [1, 'together'],
      [1, 'together'],
      [3, 'together'],
    ]);
  });

  it('a batch whose statement fails is written one by one, each payout getting its own answer', async () => {
    let releaseFirst!: () => void;
    const firstDone = new Promise<void>((resolve) => (releaseFirst = resolve));
    const refused = new DbError(
      'duplicate key value violates unique constraint',
      '23505',
      'payouts_merchant_id_environment_client_reference_key',
    );
    const [first, ok, taken, changed] = [newWrite(), newWrite(), newWrite(), newWrite()];
    const { db, calls } = fakeDb(async (ids, call) => {
      if (call === 1) await firstDone;
      if (ids.length > 1 || ids[0] === taken.row.id) throw refused;
      return ids[0] === changed.row.id ? [] : rowsFor(ids);
    });
    const outcomes: [number, BatchOutcome][] = [];
    const writer = new PayoutBatchWriter(db, (size, outcome) => outcomes.push([size, outcome]));
    const answers = [first, ok, taken, changed].map((w) =>
      writer.write(w).then(
        (p) => p?.id ?? null,
        (error: unknown) => error,
      ),
    );
    releaseFirst();
    assert.deepEqual(await Promise.all(answers), [first.row.id, ok.row.id, refused, null]);
    assert.deepEqual(calls, [
      [first.row.id],
      [ok.row.id, taken.row.id, changed.row.id],
      [ok.row.id],
      [taken.row.id],
      [changed.row.id],
    ]);
    assert.deepEqual(outcomes, [
      [1, 'together'],
      [3, 'one by one'],
    ]);
  });

  it('unreachable storage fails the whole batch at once, not once per payout', async () => {
    let releaseFirst!: () => void;
    const firstDone = new Promise<void>((resolve) => (releaseFirst = resolve));
    const down = new DbError('connection terminated', null, null);
    const { db, calls } = fakeDb(async (ids, call) => {
      if (call === 1) {
        await firstDone;
        return rowsFor(ids);
      }
      throw down;
    });
    const writer = new PayoutBatchWriter(db);
    const writes = [newWrite(), newWrite(), newWrite(), newWrite()];
    const answers = writes.map((w) =>
      writer.write(w).then(
        (p) => p?.id ?? null,
        (error: unknown) => error,
      ),
    );
    releaseFirst();
    assert.deepEqual(await Promise.all(answers), [writes[0]!.row.id, down, down, down]);
    assert.equal(calls.length, 2);
  });

  it('a retry waiting beside its original goes into the next statement, not the same one', async () => {
    let releaseFirst!: () => void;
    const firstDone = new Promise<void>((resolve) => (releaseFirst = resolve));
    const { db, calls } = fakeDb(async (ids, call) => {
      if (call === 1) await firstDone;
      return rowsFor(ids);
    });
    const writer = new PayoutBatchWriter(db);
    const [first, a, b] = [newWrite(), newWrite(), newWrite()];
    const base = newWrite();
    const retry = { ...base, row: { ...base.row, client_reference: a.row.client_reference } };
    const answers = [first, a, retry, b].map((w) => writer.write(w));
    releaseFirst();
    await Promise.all(answers);
    assert.deepEqual(calls, [[first.row.id], [a.row.id, b.row.id], [retry.row.id]]);
  });
});
