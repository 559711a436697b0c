// The ledger's storage backstops (DESIGN §3 "Money and ids"): the database itself refuses an unbalanced entry, any
// change to the journal and a negative merchant balance, and checkInvariants reports a drifted cached balance.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { describe, it } from 'node:test';
import type { Queryable } from '../../src/db/index.ts';
import { DbError } from '../../src/db/index.ts';
import {
  checkInvariants,
  InsufficientFundsError,
  type AccountKind,
  applyPendingCredits,
} from '../../src/ledger/service.ts';
import * as store from '../../src/ledger/store.ts';
import { paymentId, payoutId } from '../support/ledger.ts';
import { storageKind } from '../support/helpers.ts';
import { useLedgerApp } from '../support/ledger-app.ts';

describe(`ledger (${storageKind})`, () => {
  const { t, inTx, newMerchant, balanceOf, entryCount, assertHealthy, fund } = useLedgerApp();

  describe('storage backstops', () => {
    it('an unbalanced entry written past the code is refused by the database at commit', async () => {
      // This test commits raw rows: on a storage without the triggers they would stick, so check first.
      const triggers = await t.db.query(
        `SELECT tgname FROM pg_trigger WHERE tgname IN ('journal_entry_balanced', 'journal_lines_balanced')`,
      );
      assert.equal(
        triggers.length,
        2,
        'the storage lacks the balance triggers of 002_ledger.sql (its schema predates the migration); nothing was written',
      );
      const m = await newMerchant();
      await fund(m, 100); // creates the accounts
      const accounts = await t.db.query<{ id: string; kind: string }>(
        'SELECT id, kind FROM ledger_accounts WHERE merchant_id = $1 AND environment = $2',
        [m, 'test'],
      );
      const idOf = (kind: string) => accounts.find((a) => a.kind === kind)!.id;
      const insertEntry = (tx: Queryable, id: string) =>
        tx.query(
          `INSERT INTO journal_entries (id, merchant_id, environment, kind, reference_type, reference_id) VALUES ($1, $2, 'test', 'payment_credit', 'payment', $3)`,
          [id, m, paymentId()],
        );
      await assert.rejects(
        inTx(async (tx) => {
          const id = randomUUID();
          await insertEntry(tx, id);
          await tx.query(
            'INSERT INTO journal_lines (entry_id, account_id, amount_minor) VALUES ($1, $2, 100), ($1, $3, -99)',
            [id, idOf('provider_clearing'), idOf('merchant_available')],
          );
        }),
        /unbalanced/,
      );
      await assert.rejects(
        inTx((tx) => insertEntry(tx, randomUUID())),
        /unbalanced/,
        'an entry without lines',
      );
      assert.equal(await entryCount(m), 1);
      await assertHealthy(m);
    });

    it('journal entries and lines refuse UPDATE, DELETE and TRUNCATE', async () => {
      const m = await newMerchant();
      const { entryId } = await fund(m, 100);
      const refused = [
        ['UPDATE journal_entries SET kind = $2 WHERE id = $1', [entryId, 'payment_reversal']],
        ['DELETE FROM journal_entries WHERE id = $1', [entryId]],
        ['UPDATE journal_lines SET amount_minor = amount_minor * 2 WHERE entry_id = $1', [entryId]],
        ['DELETE FROM journal_lines WHERE entry_id = $1', [entryId]],
        ['TRUNCATE journal_lines', []],
        ['TRUNCATE journal_entries CASCADE', []],
      ] as const;
      for (const [sql, params] of refused) {
        // Always rolled back, so a storage without the trigger could not lose the shared journal.
        const notRefused = new Error(`not refused: ${sql}`);
        await assert.rejects(
          inTx(async (tx) => {
            await tx.query(sql, params);
            throw notRefused;
          }),
          (error) => error !== notRefused && /immutable/.test((error as Error).message),
          sql,
        );
      }
      assert.equal(await entryCount(m), 1);
      await assertHealthy(m);
    });

    it('a merchant balance going negative in SQL fails the CHECK, and the store maps it to InsufficientFundsError', async () => {
      const m = await newMerchant();
      await fund(m, 100);
      await assert.rejects(
        inTx((tx) =>
          tx.query(
            `UPDATE ledger_accounts SET balance_minor = 1 WHERE merchant_id = $1 AND environment = 'test' AND kind = 'merchant_available'`,
            [m],
          ),
        ),
        (error) => error instanceof DbError && error.sqlState === '23514',
      );
      // Past the service's own funds check, straight to the store: the CHECK still refuses.
      await assert.rejects(
        inTx(async (tx) => {
          const accounts = await store.lockAccounts(tx, m, 'test', ['merchant_available', 'merchant_held']);
          const id = (kind: AccountKind) => accounts.find((a) => a.kind === kind)!.id;
          const entryId = randomUUID();
          await store.writeEntries(
            tx,
            [
              {
                id: entryId,
                merchantId: m,
                environment: 'test',
                kind: 'payout_hold',
                referenceType: 'payout',
                referenceId: payoutId(),
                reversesEntryId: null,
              },
            ],
            [
              { entryId, accountId: id('merchant_available'), amountMinor: 101 },
              { entryId, accountId: id('merchant_held'), amountMinor: -101 },
            ],
          );
        }),
        InsufficientFundsError,
      );
      assert.equal((await balanceOf(m)).available_minor, 100);
      assert.equal(await entryCount(m), 1);
    });

    it('checkInvariants reports a cached balance that drifted from its lines', async () => {
      const m = await newMerchant();
      await fund(m, 100);
      await applyPendingCredits(t.db, m, 'test'); // the credit in the cached balance and its balance transaction
      const rolledBack = new Error('roll back');
      await assert.rejects(
        inTx(async (tx) => {
          await tx.query(
            `UPDATE ledger_accounts SET balance_minor = balance_minor - 1 WHERE merchant_id = $1 AND kind = 'merchant_available'`,
            [m],
          );
          const problems = await checkInvariants(tx, m);
          // The cache drifted from the lines and from the balance transactions (which end at 100).
          assert.equal(problems.length, 2, problems.join('; '));
          assert.match(problems[0]!, /merchant_available\) caches -101 but its lines sum to -100/);
          assert.match(problems[1]!, /holds 101 but its 1 balance transactions \(of 1 lines\) move 100 and end at 100/);
          throw rolledBack;
        }),
        (error) => error === rolledBack,
      );
      await assertHealthy(m);
      assert.ok(Array.isArray(await checkInvariants(t.db)), 'runs across every merchant');
    });
  });
});
