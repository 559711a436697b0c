// Every object with a status has one transition table (src/lib/state-machine.ts), enumerated here:
// 1. each table is the lifecycle written out below (independently of the source): every listed move is
//    allowed, every other pair refused with IllegalTransitionError, final statuses have no way out, and
//    only the listed initial statuses may be inserted;
// 2. each table's statuses are the values the migrations' CHECK constraint allows for that column, read
//    from the storage under test (pg_constraint);
// 3. stores refuse a status that did not come through a table;
// 4. a fast-check property: random walks through each machine pass only listed edges;
// 5. the two status re-writes the tables do not list are gone, with the same effect (a reversal after
//    success, a teller's deposit).
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import fc from 'fast-check';
import { webhookEndpointMachine } from '../../src/accounts/model.ts';
import { setEndpointStatus } from '../../src/accounts/store.ts';
import { attemptMachine, cashSlipMachine, sessionMachine } from '../../src/checkout/model.ts';
import { recordCashDeposit } from '../../src/checkout/cash-slips.ts';
import * as checkoutStore from '../../src/checkout/store.ts';
import type { Queryable } from '../../src/db/index.ts';
import { deliveryMachine } from '../../src/events/model.ts';
import { IllegalTransitionError, type StateMachine, type Transition } from '../../src/lib/state-machine.ts';
import {
  payoutMachine,
  reconciliationMachine,
  recipientMachine,
  type PayoutStatus,
  type ReconciliationStatus,
} from '../../src/payouts/model.ts';
import * as newPayoutStore from '../../src/payouts/new-payout-store.ts';
import * as payoutStore from '../../src/payouts/payout-store.ts';
import * as eventStore from '../../src/events/store.ts';
import { statementLineMachine } from '../../src/statements/model.ts';
import { refundMachine } from '../../src/refunds/model.ts';
import { approvalMachine } from '../../src/ops/approvals-model.ts';
import { mailMachine } from '../../src/mail/model.ts';
import { smsMachine } from '../../src/sms/model.ts';
import { startTestApp, type TestContext } from '../support/helpers.ts';
import { attemptsOf, deliveryOf, emitTestEvent } from '../support/webhooks.ts';
import { call } from '../support/http.ts';
import {
  createSession,
  eventTypes,
  sessionRow,
  simulate,
  startAttempt,
  momoBody,
  totalOf,
} from '../support/checkout.ts';

interface Expected {
  machine: StateMachine<string>;
  table: string;
  column: string;
  transitions: Record<string, string[]>;
  initial: string[];
  final: string[];
}

// The lifecycles (DESIGN §3, "Webhooks", "Payouts"), written out here, not imported.
const EXPECTED: Expected[] = [
  {
    machine: sessionMachine,
    table: 'checkout_sessions',
    column: 'status',
    transitions: {
      open: ['pending', 'expired', 'success'],
      pending: ['open', 'success', 'failed', 'expired'],
      success: [],
      failed: ['success'],
      expired: ['success'],
    },
    initial: ['open'],
    final: ['success'],
  },
  {
    machine: attemptMachine,
    table: 'payment_attempts',
    column: 'status',
    transitions: {
      pending: ['paid', 'failed', 'expired', 'cancelled', 'manual_review', 'amount_mismatch'],
      manual_review: ['paid', 'failed'],
      amount_mismatch: ['paid', 'failed'],
      // A late answer on an attempt that expired or that the payer left (issue 31) is applied: paid, or held.
      expired: ['paid', 'manual_review', 'amount_mismatch'],
      paid: ['reversed'],
      failed: [],
      cancelled: ['paid', 'manual_review', 'amount_mismatch'],
      reversed: [],
    },
    initial: ['pending'],
    final: ['failed', 'reversed'],
  },
  {
    machine: cashSlipMachine,
    table: 'cash_slips',
    column: 'status',
    transitions: { active: ['used', 'expired', 'cancelled'], used: [], expired: [], cancelled: [] },
    initial: ['active'],
    final: ['used', 'expired', 'cancelled'],
  },
  {
    machine: payoutMachine,
    table: 'payouts',
    column: 'status',
    transitions: {
      requested: ['processing', 'cancelled'],
      processing: ['paid', 'failed', 'cancelled'],
      paid: ['returned'],
      failed: [],
      cancelled: [],
      returned: [],
    },
    // A Test payout is written paid at once.
    initial: ['requested', 'processing', 'paid'],
    final: ['failed', 'cancelled', 'returned'],
  },
  {
    machine: reconciliationMachine,
    table: 'payouts',
    column: 'reconciliation_status',
    // A Test payout needs none; a Live one is settled once, never flipped; settling it again with the same result is written again.
    transitions: {
      not_required: [],
      unreconciled: ['matched', 'exception'],
      matched: ['matched'],
      exception: ['exception'],
    },
    initial: ['not_required', 'unreconciled'],
    final: ['not_required'],
  },
  {
    machine: recipientMachine,
    table: 'recipients',
    column: 'verification_status',
    transitions: { pending_verification: ['verified', 'rejected'], verified: [], rejected: [] },
    initial: ['pending_verification'],
    final: ['verified', 'rejected'],
  },
  {
    machine: webhookEndpointMachine,
    table: 'webhook_endpoints',
    column: 'status',
    transitions: { active: ['disabled', 'active'], disabled: ['active', 'disabled'] },
    initial: ['active'],
    final: [],
  },
  {
    machine: deliveryMachine,
    table: 'webhook_deliveries',
    column: 'status',
    transitions: {
      pending: ['delivered', 'failed', 'skipped', 'pending'],
      delivered: ['pending'],
      failed: ['pending'],
      skipped: ['pending'],
    },
    initial: ['pending', 'skipped'],
    final: [],
  },
  {
    machine: statementLineMachine,
    table: 'statement_lines',
    column: 'status',
    // Stored unmatched, matched in the same transaction or later by an operator; a mismatched credit goes back when its payment is settled without it,
    // or is matched (credited) or resolved (returned to the payer) by an operator's approved decision on its payment. An unmatched line is
    // voided with its whole import (only while every line of it is unmatched).
    transitions: {
      unmatched: ['matched', 'amount_mismatch', 'resolved', 'voided'],
      amount_mismatch: ['unmatched', 'matched', 'resolved'],
      matched: [],
      resolved: [],
      voided: [],
    },
    initial: ['unmatched'],
    final: ['matched', 'resolved', 'voided'],
  },
  {
    machine: refundMachine,
    table: 'refunds',
    column: 'status',
    // Created pending (or awaiting a second person's approval in Live); settled once by its provider, an operator or the Test simulator.
    transitions: {
      awaiting_approval: ['pending', 'cancelled'],
      pending: ['succeeded', 'failed'],
      succeeded: [],
      failed: [],
      cancelled: [],
    },
    initial: ['awaiting_approval', 'pending'],
    final: ['succeeded', 'failed', 'cancelled'],
  },
  {
    machine: approvalMachine,
    table: 'operator_approvals',
    column: 'status',
    // Filed pending by one operator; a second approves (the action runs) or rejects it (a stale one is withdrawn as rejected).
    transitions: { pending: ['approved', 'rejected'], approved: [], rejected: [] },
    initial: ['pending'],
    final: ['approved', 'rejected'],
  },
  {
    machine: mailMachine,
    table: 'mail_outbox',
    column: 'status',
    // Queued pending, sent (or logged with no SMTP server) by the send-mail worker, pending again after a failed
    // try on its schedule, failed when it is spent; an operator may send a logged or failed mail again.
    transitions: {
      pending: ['sent', 'logged', 'failed', 'pending'],
      sent: [],
      logged: ['pending'],
      failed: ['pending'],
    },
    initial: ['pending'],
    final: ['sent'],
  },
  {
    machine: smsMachine,
    table: 'sms_outbox',
    column: 'status',
    // As mail, but nothing sends an SMS again: a lost answer may have been delivered (issue 35).
    transitions: { pending: ['sent', 'logged', 'failed', 'pending'], sent: [], logged: [], failed: [] },
    initial: ['pending'],
    final: ['sent', 'logged', 'failed'],
  },
];

const sorted = (values: readonly string[]) => [...values].sort();
const isIllegal = (machine: string, from: string, to: string) => (e: unknown) =>
  e instanceof IllegalTransitionError && e.message === `illegal ${machine} transition ${from} -> ${to}`;

describe('transition tables', () => {
  for (const x of EXPECTED) {
    const m = x.machine;
    describe(`the ${m.name} table (${x.table}.${x.column})`, () => {
      it('lists exactly the lifecycle: its statuses, their moves, its initial and final statuses', () => {
        assert.deepEqual(sorted(m.statuses), sorted(Object.keys(x.transitions)));
        for (const from of m.statuses)
          assert.deepEqual(sorted(m.transitions[from]!), sorted(x.transitions[from]!), `moves from ${from}`);
        assert.deepEqual(sorted(m.initial), sorted(x.initial));
        assert.deepEqual(sorted(m.final), sorted(x.final));
      });

      it('allows every listed move (staying put only where listed) and refuses every other pair of statuses with IllegalTransitionError', () => {
        let allowed = 0;
        let refused = 0;
        for (const from of m.statuses) {
          for (const to of m.statuses) {
            if (x.transitions[from]!.includes(to)) {
              assert.equal(m.canTransition(from, to), true, `${from} -> ${to}`);
              const move = m.transition(from, to);
              assert.deepEqual({ ...move }, { machine: m.name, from, to });
              assert.equal(m.check(move), move);
              allowed++;
            } else {
              assert.equal(m.canTransition(from, to), false, `${from} -> ${to}`);
              assert.throws(() => m.transition(from, to), isIllegal(m.name, from, to), `${from} -> ${to}`);
              refused++;
            }
          }
        }
        assert.equal(allowed + refused, m.statuses.length ** 2);
        assert.equal(allowed, Object.values(x.transitions).flat().length);
      });

      it('gives a final status no way out', () => {
        for (const from of x.final) {
          for (const to of m.statuses)
            assert.throws(() => m.transition(from, to), IllegalTransitionError, `${from} -> ${to}`);
        }
      });

      it('lets a new row have only an initial status', () => {
        for (const status of m.statuses) {
          if (x.initial.includes(status)) assert.equal(m.initialStatus(status), status);
          else assert.throws(() => m.initialStatus(status), isIllegal(m.name, '(new)', status));
        }
      });

      it('names, for each status, exactly the statuses that may move to it', () => {
        for (const to of m.statuses) {
          assert.deepEqual(
            sorted(m.fromStatusesTo(to)),
            sorted(m.statuses.filter((from) => x.transitions[from]!.includes(to))),
            `to ${to}`,
          );
        }
      });

      it('refuses a transition it did not issue: a look-alike object or one from another table', () => {
        const [from, to] = Object.entries(x.transitions).flatMap(([f, tos]) => tos.map((t) => [f, t] as const))[0]!;
        assert.throws(() => m.check({ machine: m.name, from, to }), IllegalTransitionError);
        const other = EXPECTED.find((y) => y.machine !== m)!.machine;
        const [otherFrom, otherTo] = Object.entries(other.transitions).flatMap(([f, tos]) =>
          tos.map((t) => [f, t] as const),
        )[0]!;
        assert.throws(() => m.check(other.transition(otherFrom, otherTo)), IllegalTransitionError);
      });
    });
  }

  it('random walks through each machine pass only listed edges, and a refused move leaves the status as it was', () => {
    fc.assert(
      fc.property(
        fc.nat({ max: EXPECTED.length - 1 }),
        fc.nat(),
        fc.array(fc.nat(), { maxLength: 40 }),
        (which, start, picks) => {
          const x = EXPECTED[which]!;
          const m = x.machine;
          let status = m.initialStatus(x.initial[start % x.initial.length]!);
          for (const pick of picks) {
            const to = m.statuses[pick % m.statuses.length]!;
            let move: Transition<string> | null = null;
            try {
              move = m.transition(status, to);
            } catch (error) {
              assert.ok(error instanceof IllegalTransitionError);
            }
            if (move) {
              assert.ok(
                x.transitions[status]!.includes(to),
                `${m.name}: ${status} -> ${to} passed, which the lifecycle does not list`,
              );
              status = move.to;
            } else {
              assert.ok(
                !x.transitions[status]!.includes(to),
                `${m.name}: ${status} -> ${to} refused, which the lifecycle lists`,
              );
            }
            assert.ok(m.statuses.includes(status));
          }
        },
      ),
      { numRuns: 500 },
    );
  });
});

// A Queryable that fails the test if a store reaches the database.
const noDatabase: Queryable = new Proxy({} as Queryable, {
  get: () => () => Promise.reject(new Error('the store reached the database')),
});

describe('stores refuse a status that did not come through a table', () => {
  it('store.updatePayout refuses a status in its change and a transition the payout table did not issue, before any SQL', async () => {
    const change = { status: 'paid' } as unknown as Parameters<typeof payoutStore.updatePayout>[2];
    await assert.rejects(payoutStore.updatePayout(noDatabase, 'po_x', change), /only through its transition/);
    const forged = { machine: 'payout', from: 'processing', to: 'paid' } as Transition<PayoutStatus>;
    await assert.rejects(
      payoutStore.updatePayout(noDatabase, 'po_x', {}, forged),
      isIllegal('payout', 'processing', 'paid'),
    );
    const sessionMove = sessionMachine.transition('pending', 'success') as unknown as Transition<PayoutStatus>;
    await assert.rejects(payoutStore.updatePayout(noDatabase, 'po_x', {}, sessionMove), IllegalTransitionError);
  });

  it('a payout inserted in a status that is not initial (returned) is refused before any SQL', async () => {
    const write = {
      row: { merchant_id: 'm', environment: 'test', status: 'returned' },
    } as unknown as newPayoutStore.NewPayoutWrite;
    await assert.rejects(
      newPayoutStore.insertNewPayouts(noDatabase, [write]),
      isIllegal('payout', '(new)', 'returned'),
    );
  });

  it('store.updateReconciliation refuses a transition the reconciliation table did not issue, and updatePayout a reconciliation status in its change, before any SQL', async () => {
    const forged = {
      machine: 'payout reconciliation',
      from: 'unreconciled',
      to: 'matched',
    } as Transition<ReconciliationStatus>;
    await assert.rejects(
      payoutStore.updateReconciliation(noDatabase, 'po_x', forged),
      isIllegal('payout reconciliation', 'unreconciled', 'matched'),
    );
    const payoutMove = payoutMachine.transition('paid', 'returned') as unknown as Transition<ReconciliationStatus>;
    await assert.rejects(payoutStore.updateReconciliation(noDatabase, 'po_x', payoutMove), IllegalTransitionError);
    const change = { reconciliation_status: 'matched' } as unknown as Parameters<typeof payoutStore.updatePayout>[2];
    await assert.rejects(
      payoutStore.updatePayout(noDatabase, 'po_x', change),
      /reconciliation status is written only through its transition/,
    );
  });

  it('a payout inserted with a reconciliation status that is not initial (matched) is refused before any SQL', async () => {
    const write = {
      row: { merchant_id: 'm', environment: 'live', status: 'processing', reconciliation_status: 'matched' },
    } as unknown as newPayoutStore.NewPayoutWrite;
    await assert.rejects(
      newPayoutStore.insertNewPayouts(noDatabase, [write]),
      isIllegal('payout reconciliation', '(new)', 'matched'),
    );
  });

  it('the checkout stores refuse forged session, attempt and cash slip transitions, and a session inserted other than open', async () => {
    await assert.rejects(
      checkoutStore.updateSessionStatus(
        noDatabase,
        'cs_x',
        { machine: 'session', from: 'pending', to: 'success' },
        true,
      ),
      IllegalTransitionError,
    );
    await assert.rejects(
      checkoutStore.updateAttemptStatus(
        noDatabase,
        'att_x',
        { machine: 'attempt', from: 'pending', to: 'paid' },
        'X',
        true,
      ),
      IllegalTransitionError,
    );
    assert.throws(
      () => checkoutStore.updateSlipStatus(noDatabase, 'slip_x', { machine: 'cash slip', from: 'active', to: 'used' }),
      IllegalTransitionError,
    );
    const row = { status: 'success' } as Parameters<typeof checkoutStore.sessionInsert>[0];
    assert.throws(() => checkoutStore.sessionInsert(row), isIllegal('session', '(new)', 'success'));
  });
});

describe('status tables and storage', () => {
  let t: TestContext;
  before(async () => {
    t = await startTestApp();
  });
  after(async () => t.close());

  /** The values the CHECK constraint on table.column allows, read from the catalog of the storage under test. */
  async function checkValues(table: string, column: string): Promise<string[]> {
    const rows = await t.db.query<{ definition: string }>(
      `SELECT pg_get_constraintdef(c.oid) AS definition
         FROM pg_constraint c JOIN pg_attribute a ON a.attrelid = c.conrelid AND a.attnum = ANY (c.conkey)
        WHERE c.conrelid = to_regclass($1) AND c.contype = 'c' AND a.attname = $2 AND cardinality(c.conkey) = 1`,
      [table, column],
    );
    assert.equal(rows.length, 1, `one CHECK on ${table}.${column}`);
    return [...rows[0]!.definition.matchAll(/'([^']*)'::text/g)].map((match) => match[1]!);
  }

  it('the first answer recorded for a delivery wins: a late failure never turns delivered into failed, nor a late success failed into delivered', async () => {
    const m = await t.merchant({ webhookUrl: 'http://127.0.0.1:9/hook' });
    const record = (deliveryId: string, tryNumber: number) => ({
      deliveryId,
      tryNumber,
      latencyMs: 1,
      responseExcerpt: null,
      workerId: 'w_test',
    });
    const delivered = await emitTestEvent(t.db, m);
    const first = await deliveryOf(t.db, delivered.id);
    await eventStore.recordDelivered(t.db, { ...record(first.id, 1), httpStatus: 200 });
    await t.db.transaction((tx) => eventStore.markFailed(tx, first.id, 'failed', 500, 'HTTP 500'));
    assert.equal((await deliveryOf(t.db, delivered.id)).status, 'delivered');

    const failed = await emitTestEvent(t.db, m);
    const second = await deliveryOf(t.db, failed.id);
    await t.db.transaction((tx) => eventStore.markFailed(tx, second.id, 'failed', 500, 'HTTP 500'));
    await eventStore.recordDelivered(t.db, { ...record(second.id, 2), httpStatus: 200 });
    const after = await deliveryOf(t.db, failed.id);
    assert.equal(after.status, 'failed', 'a failed delivery changes only through a replay');
    assert.equal((await attemptsOf(t.db, failed.id)).length, 1, 'the late try is still logged');
  });

  for (const x of EXPECTED) {
    it(`the ${x.machine.name} table has exactly the statuses the CHECK on ${x.table}.${x.column} allows`, async () => {
      const values = await checkValues(x.table, x.column);
      assert.ok(values.length >= 2, `${x.table}.${x.column}: ${values.join(', ')}`);
      assert.deepEqual(sorted(x.machine.statuses), sorted(values));
    });
  }

  it('a reversal after success writes no status: the session stays success and finalized, its version grows by one for checkout.session.reversed', async () => {
    const m = await t.merchant();
    const session = await createSession(t, m);
    const { attempt_reference: ref } = await startAttempt(t, session.id, momoBody(50000));
    await simulate(t, m, ref, 'paid');
    const paid = await sessionRow(t, session.id);
    await simulate(t, m, ref, 'reversed');
    const reversed = await sessionRow(t, session.id);
    assert.equal(reversed.status, 'success');
    assert.equal(reversed.version, paid.version + 1);
    assert.equal(reversed.finalized_at?.getTime(), paid.finalized_at?.getTime());
    const events = await t.db.query<{ type: string; object_version: number }>(
      'SELECT type, object_version FROM events WHERE object_id = $1 AND type = $2',
      [session.id, 'checkout.session.reversed'],
    );
    assert.deepEqual(events, [{ type: 'checkout.session.reversed', object_version: reversed.version }]);
    assert.ok((await eventTypes(t, session.id)).includes('checkout.session.completed'));
  });

  it("a teller's deposit records the branch and the time on the slip as it becomes used", async () => {
    const m = await t.merchant();
    // A Live slip: a teller never records a Test one (Test deposits go through the simulator).
    const session = await createSession(t, m, {}, { live: true });
    const res = await call(t, 'POST', '/api/v1/checkout/cash-slips', {
      body: { session_id: session.id, amount_minor: totalOf('cash', 50000) },
    });
    assert.equal(res.statusCode, 201, res.body);
    const slip = res.json() as { reference: string };
    const [branch] = await t.db.query<{ id: string }>('SELECT id FROM bank_branches WHERE active ORDER BY id LIMIT 1');
    const applied = await recordCashDeposit(t.db, t.config.checkoutUrlHost, {
      reference: slip.reference,
      branchId: branch!.id,
      amountMinor: totalOf('cash', 50000),
    });
    assert.equal(applied.attempt.status, 'paid');
    const [stored] = await t.db.query<{ status: string; recorded_branch_id: string; recorded_at: Date | null }>(
      'SELECT status, recorded_branch_id, recorded_at FROM cash_slips WHERE reference = $1',
      [slip.reference],
    );
    assert.equal(stored!.status, 'used');
    assert.equal(stored!.recorded_branch_id, branch!.id);
    assert.ok(stored!.recorded_at instanceof Date);
  });

  it('enabling an active endpoint or disabling a disabled one is still written (the tables list both re-writes)', async () => {
    const m = await t.merchant({ webhookUrl: 'http://127.0.0.1:9/hook' });
    const [endpoint] = await t.db.query<{ id: string }>(
      'SELECT id FROM webhook_endpoints WHERE merchant_id = $1 ORDER BY created_at LIMIT 1',
      [m.merchant_id],
    );
    const read = async () =>
      (
        await t.db.query<{ status: string; disabled_reason: string | null }>(
          'SELECT status, disabled_reason FROM webhook_endpoints WHERE id = $1',
          [endpoint!.id],
        )
      )[0]!;
    await setEndpointStatus(t.db, endpoint!.id, 'disabled', 'first');
    await setEndpointStatus(t.db, endpoint!.id, 'disabled', 'second');
    assert.deepEqual(await read(), { status: 'disabled', disabled_reason: 'second' });
    await setEndpointStatus(t.db, endpoint!.id, 'active', null);
    await t.db.query('UPDATE webhook_endpoints SET failing_since = now() WHERE id = $1', [endpoint!.id]);
    await setEndpointStatus(t.db, endpoint!.id, 'active', null);
    assert.deepEqual(await read(), { status: 'active', disabled_reason: null });
    const [failing] = await t.db.query<{ failing_since: Date | null }>(
      'SELECT failing_since FROM webhook_endpoints WHERE id = $1',
      [endpoint!.id],
    );
    assert.equal(failing!.failing_since, null, 'enabling an active endpoint clears its failure record');
  });
});
