// Payment credits that wait to be applied (issue 18, migration 024): a credit locks none of the merchant's
// balance rows, its lines wait in ledger_unapplied_lines, and the next writer of the account, the worker or
// a read of the balance or the books applies them in the order they were written, with exact balance
// transactions. A balance is never shown higher than the journal, and a debit never spends money twice.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { describe, it } from 'node:test';
import type { Queryable } from '../../src/db/index.ts';
import {
  applyAllPendingCredits,
  applyPendingCredits,
  balance,
  checkInvariants,
  creditPayment,
  InsufficientFundsError,
  reversePayment,
} from '../../src/ledger/service.ts';
import { storageKind } from '../support/helpers.ts';
import { holdNewPayout } from '../support/ledger.ts';
import { useTestApp } from '../support/hooks.ts';

describe(`ledger: credits applied later (${storageKind})`, () => {
  const t = useTestApp();

  const env = 'test' as const;
  const credit = (
    tx: Queryable,
    merchantId: string,
    chargedMinor: number,
    merchantFeeMinor = 0,
    paymentId = `att_${randomUUID()}`,
  ) =>
    creditPayment(tx, {
      merchantId,
      environment: env,
      paymentId,
      chargedMinor,
      payerFeeMinor: 0,
      merchantFeeMinor,
    }).then(() => paymentId);
  /** Lines waiting on the merchant's available balance (kind: another account's, e.g. provider_clearing). */
  const pending = async (merchantId: string, kind = 'merchant_available') =>
    (
      await t.db.query<{ n: number }>(
        'SELECT count(*)::int AS n FROM ledger_unapplied_lines u JOIN ledger_accounts a ON a.id = u.account_id WHERE a.merchant_id = $1 AND a.kind = $2',
        [merchantId, kind],
      )
    )[0]!.n;
  const movements = (merchantId: string) =>
    t.db.query<{ net_minor: number; balance_after_minor: number }>(
      'SELECT net_minor, balance_after_minor FROM balance_transactions WHERE merchant_id = $1 ORDER BY seq',
      [merchantId],
    );
  const stored = async (merchantId: string) =>
    0 -
    (
      await t.db.query<{ balance_minor: number }>(
        "SELECT balance_minor FROM ledger_accounts WHERE merchant_id = $1 AND environment = 'test' AND kind = 'merchant_available'",
        [merchantId],
      )
    )[0]!.balance_minor;

  it('a credit waits unapplied, counts in the balance at once, and is applied in order with exact balance transactions', async () => {
    const m = (await t.merchant()).merchant_id;
    await t.db.transaction((tx) => credit(tx, m, 1_000, 10));
    await t.db.transaction((tx) => credit(tx, m, 2_000));
    assert.equal(await pending(m), 2, 'each credit waits on the available balance');
    assert.equal(await pending(m, 'provider_clearing'), 2, 'and on the provider clearing account');
    assert.equal(await stored(m), 0, 'the cached balance row was not touched');
    assert.deepEqual(await movements(m), [], 'no balance transaction before it is applied');
    assert.deepEqual(await checkInvariants(t.db, m), [], 'the journal is whole while lines wait');
    // Reading the balance applies them first: what it shows is where the balance transactions end.
    assert.equal((await balance(t.db, m, env)).available_minor, 2_990);
    assert.equal(await pending(m), 0);
    assert.equal(await stored(m), 2_990);
    assert.deepEqual(await movements(m), [
      { net_minor: 990, balance_after_minor: 990 },
      { net_minor: 2_000, balance_after_minor: 2_990 },
    ]);
    assert.deepEqual(await checkInvariants(t.db, m), []);
  });

  it('a debit applies the waiting credits first, in the same statement, and spends them once', async () => {
    const m = (await t.merchant()).merchant_id;
    await t.db.transaction((tx) => credit(tx, m, 5_000));
    await t.db.transaction((tx) =>
      holdNewPayout(tx, {
        merchantId: m,
        environment: env,
        payoutId: `po_${randomUUID()}`,
        amountMinor: 4_000,
        feeMinor: 500,
      }),
    );
    assert.equal(await pending(m), 0, 'the available balance took its waiting credit');
    assert.equal(
      await pending(m, 'provider_clearing'),
      1,
      'an account the payout does not touch keeps its line waiting',
    );
    assert.deepEqual(await movements(m), [
      { net_minor: 5_000, balance_after_minor: 5_000 },
      { net_minor: -4_500, balance_after_minor: 500 },
    ]);
    await assert.rejects(
      t.db.transaction((tx) =>
        holdNewPayout(tx, {
          merchantId: m,
          environment: env,
          payoutId: `po_${randomUUID()}`,
          amountMinor: 501,
          feeMinor: 0,
        }),
      ),
      InsufficientFundsError,
      'the applied credit is not counted a second time',
    );
    assert.deepEqual(await checkInvariants(t.db, m), []);
  });

  it('a reversal of a credit still waiting applies it, then takes it back', async () => {
    const m = (await t.merchant()).merchant_id;
    const paymentId = await t.db.transaction((tx) => credit(tx, m, 3_000));
    await t.db.transaction((tx) => reversePayment(tx, { merchantId: m, environment: env, paymentId }));
    assert.equal((await balance(t.db, m, env)).available_minor, 0);
    assert.deepEqual(await movements(m), [
      { net_minor: 3_000, balance_after_minor: 3_000 },
      { net_minor: -3_000, balance_after_minor: 0 },
    ]);
    assert.deepEqual(await checkInvariants(t.db, m), []);
  });

  it("the worker applies every merchant's waiting credits", async () => {
    const [a, b] = [(await t.merchant()).merchant_id, (await t.merchant()).merchant_id];
    await t.db.transaction((tx) => credit(tx, a, 100));
    await t.db.transaction((tx) => credit(tx, b, 200));
    const waiting = async () =>
      (await pending(a)) +
      (await pending(b)) +
      (await pending(a, 'provider_clearing')) +
      (await pending(b, 'provider_clearing'));
    if (storageKind === 'embedded') {
      // Nothing else runs on this database: one pass applies all four lines.
      assert.ok((await applyAllPendingCredits(t.db)) >= 4);
    } else {
      // A shared PostgreSQL also holds other files' merchants (a pass takes the first 100 owners) and their
      // workers, whose lines in progress a pass skips rather than waits for: passes until these two are applied,
      // as the worker's own loop does.
      for (let pass = 0; pass < 50 && (await waiting()) > 0; pass++) {
        await applyAllPendingCredits(t.db);
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    }
    assert.equal(await waiting(), 0);
    assert.equal(await stored(a), 100);
    assert.equal(await stored(b), 200);
    assert.equal(await applyPendingCredits(t.db, a, env), 0, 'nothing left to apply');
  });

  it('checkInvariants reports a waiting line that is not a line of the journal', async () => {
    const m = (await t.merchant()).merchant_id;
    await t.db.transaction((tx) => credit(tx, m, 700));
    const rolledBack = new Error('roll back');
    await assert.rejects(
      t.db.transaction(async (tx) => {
        await tx.query(
          'UPDATE ledger_unapplied_lines SET amount_minor = amount_minor - 1 WHERE seq = (SELECT max(u.seq) FROM ledger_unapplied_lines u JOIN ledger_accounts a ON a.id = u.account_id WHERE a.merchant_id = $1)',
          [m],
        );
        const problems = await checkInvariants(tx, m);
        assert.ok(
          problems.some((p) => /is not a line of the journal/.test(p)),
          problems.join('; '),
        );
        throw rolledBack;
      }),
      (error) => error === rolledBack,
    );
    assert.deepEqual(await checkInvariants(t.db, m), []);
  });

  it('a credit does not wait for a debit that holds the balance (PostgreSQL, real concurrency)', {
    skip: storageKind !== 'postgres' && 'needs DATABASE_URL',
  }, async () => {
    const m = (await t.merchant()).merchant_id;
    await t.db.transaction((tx) => credit(tx, m, 10_000));
    await applyPendingCredits(t.db, m, env);
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    let locked!: () => void;
    const isLocked = new Promise<void>((resolve) => (locked = resolve));
    // A payout hold that keeps the merchant's balance rows locked until released.
    const debit = t.db.transaction(async (tx) => {
      await holdNewPayout(tx, {
        merchantId: m,
        environment: env,
        payoutId: `po_${randomUUID()}`,
        amountMinor: 1_000,
        feeMinor: 0,
      });
      locked();
      await held;
    });
    await isLocked;
    // Twenty payments of the same merchant, concurrently, while the balance is held. Were they to wait for
    // the lock, they would wait for ever (the debit waits for them): give up after 5 s, then let go.
    const credits = Promise.all(Array.from({ length: 20 }, () => t.db.transaction((tx) => credit(tx, m, 50))));
    const waited = await Promise.race([
      credits.then(() => false),
      new Promise<boolean>((resolve) => setTimeout(() => resolve(true), 5_000)),
    ]);
    release();
    await debit;
    await credits;
    assert.equal(waited, false, 'the credits committed while the balance rows were locked');
    assert.equal((await balance(t.db, m, env)).available_minor, 10_000 - 1_000 + 20 * 50);
    const rows = await movements(m);
    assert.equal(rows.at(-1)!.balance_after_minor, 10_000);
    for (let i = 1; i < rows.length; i++)
      assert.equal(
        rows[i]!.balance_after_minor,
        rows[i - 1]!.balance_after_minor + rows[i]!.net_minor,
        `row ${i} chains`,
      );
    assert.deepEqual(await checkInvariants(t.db, m), []);
  });

  it('credits and debits racing on one balance never overdraw it and leave exact books (PostgreSQL)', {
    skip: storageKind !== 'postgres' && 'needs DATABASE_URL',
  }, async () => {
    const m = (await t.merchant()).merchant_id;
    const work = Array.from({ length: 60 }, (_, i) =>
      i % 3 === 0
        ? t.db
            .transaction((tx) =>
              holdNewPayout(tx, {
                merchantId: m,
                environment: env,
                payoutId: `po_${randomUUID()}`,
                amountMinor: 150,
                feeMinor: 0,
              }),
            )
            .then(() => 'held' as const)
            .catch((error: unknown) => {
              if (error instanceof InsufficientFundsError) return 'refused' as const;
              throw error;
            })
        : i % 7 === 0
          ? applyAllPendingCredits(t.db).then(() => 'applied' as const)
          : t.db.transaction((tx) => credit(tx, m, 100)).then(() => 'credited' as const),
    );
    const outcomes = await Promise.all(work);
    const credited = outcomes.filter((o) => o === 'credited').length;
    const held = outcomes.filter((o) => o === 'held').length;
    const shown = await balance(t.db, m, env);
    assert.equal(shown.available_minor, credited * 100 - held * 150, 'every credit counted once, every hold once');
    assert.ok(shown.available_minor >= 0);
    const rows = await movements(m);
    assert.equal(rows.length, credited + held);
    for (let i = 1; i < rows.length; i++)
      assert.equal(
        rows[i]!.balance_after_minor,
        rows[i - 1]!.balance_after_minor + rows[i]!.net_minor,
        `row ${i} chains`,
      );
    assert.ok(rows.every((r) => r.balance_after_minor >= 0));
    assert.deepEqual(await checkInvariants(t.db, m), []);
  });
});
