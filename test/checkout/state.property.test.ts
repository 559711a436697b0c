// The checkout state machines (DESIGN §3 "Checkout session lifecycle"; src/checkout/model.ts):
// 1. the transition tables themselves, enumerated: every listed move is allowed, every other refused;
// 2. a fast-check property: random sequences of new attempts (every rail), the eight simulated outcomes
//    (through the simulate endpoint or applyOutcome directly), the payer's cancel ("Use another number or
//    method", POST .../provider-attempts/{attempt_reference}/cancel, issue 31, retried with its
//    Idempotency-Key now and then) and expiry on one session. After every
//    step, every move the session and its attempts made is one the tables allow (session moves are
//    reconstructed from its version and events, so a move and its undo inside one step are caught too),
//    the step's result matches a small model of DESIGN §3, success stays success, and the journal is
//    balanced with the merchant credited exactly once per paid attempt, at an amount computed here, and a
//    session never keeps two payments (a late success of an attempt the payer left, once another attempt has
//    paid, is refunded in full).
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import fc from 'fast-check';
import type { CreatedMerchant } from '../../src/accounts/service.ts';
import {
  ATTEMPT_STATUSES,
  ATTEMPT_TRANSITIONS,
  SESSION_STATUSES,
  SESSION_TRANSITIONS,
  assertAttemptTransition,
  assertSessionTransition,
  type AttemptStatus,
  type SessionStatus,
} from '../../src/checkout/model.ts';
import { applyOutcome } from '../../src/checkout/payments.ts';
import { IllegalTransitionError } from '../../src/lib/state-machine.ts';
import { statusOf } from '../../src/http/errors.ts';
import { SikaError } from '../../src/lib/errors.ts';
import { balance, checkInvariants } from '../../src/ledger/service.ts';
import { startTestApp, storageKind, type TestContext } from '../support/helpers.ts';
import { call, type Json } from '../support/http.ts';
import {
  OUTCOMES,
  backdate,
  createSession,
  creditOf,
  feeOf,
  runExpiry,
  simulateRaw,
  totalOf,
  type Outcome,
  type RailName,
} from '../support/checkout.ts';

describe('checkout transition tables', () => {
  // DESIGN §3, written out independently of model.ts.
  const EXPECTED_SESSION: Record<SessionStatus, SessionStatus[]> = {
    open: ['pending', 'expired', 'success'],
    pending: ['open', 'success', 'failed', 'expired'],
    success: [],
    failed: ['success'],
    expired: ['success'],
  };
  const EXPECTED_ATTEMPT: Record<AttemptStatus, AttemptStatus[]> = {
    pending: ['paid', 'failed', 'expired', 'cancelled', 'manual_review', 'amount_mismatch'],
    manual_review: ['paid', 'failed'],
    amount_mismatch: ['paid', 'failed'],
    expired: ['paid', 'manual_review', 'amount_mismatch'],
    paid: ['reversed'],
    failed: [],
    cancelled: ['paid', 'manual_review', 'amount_mismatch'],
    reversed: [],
  };

  it('the session table is the lifecycle of DESIGN §3: success is final, only late success leaves failed or expired', () => {
    assert.deepEqual(Object.keys(SESSION_TRANSITIONS).sort(), [...SESSION_STATUSES].sort());
    for (const from of SESSION_STATUSES)
      assert.deepEqual([...SESSION_TRANSITIONS[from]].sort(), [...EXPECTED_SESSION[from]].sort(), `moves from ${from}`);
  });

  it('the attempt table is the lifecycle of DESIGN §3: paid leaves only by reversal, held attempts wait for paid or failed', () => {
    assert.deepEqual(Object.keys(ATTEMPT_TRANSITIONS).sort(), [...ATTEMPT_STATUSES].sort());
    for (const from of ATTEMPT_STATUSES)
      assert.deepEqual([...ATTEMPT_TRANSITIONS[from]].sort(), [...EXPECTED_ATTEMPT[from]].sort(), `moves from ${from}`);
  });

  it('assertSessionTransition allows every listed session move and refuses every other pair, including staying put', () => {
    let allowed = 0;
    let refused = 0;
    for (const from of SESSION_STATUSES) {
      for (const to of SESSION_STATUSES) {
        if (EXPECTED_SESSION[from].includes(to)) {
          assert.doesNotThrow(() => assertSessionTransition(from, to), `${from} -> ${to}`);
          allowed++;
        } else {
          assert.throws(
            () => assertSessionTransition(from, to),
            (e: unknown) => e instanceof IllegalTransitionError && e.message.includes(`${from} -> ${to}`),
            `${from} -> ${to}`,
          );
          refused++;
        }
      }
    }
    assert.equal(allowed + refused, 25);
    assert.equal(allowed, 9);
  });

  it('assertAttemptTransition allows every listed attempt move and refuses every other pair, including staying put', () => {
    let allowed = 0;
    let refused = 0;
    for (const from of ATTEMPT_STATUSES) {
      for (const to of ATTEMPT_STATUSES) {
        if (EXPECTED_ATTEMPT[from].includes(to)) {
          assert.doesNotThrow(() => assertAttemptTransition(from, to), `${from} -> ${to}`);
          allowed++;
        } else {
          assert.throws(
            () => assertAttemptTransition(from, to),
            (e: unknown) => e instanceof IllegalTransitionError && e.message.includes(`${from} -> ${to}`),
            `${from} -> ${to}`,
          );
          refused++;
        }
      }
    }
    assert.equal(allowed + refused, 64);
    assert.equal(allowed, 17);
  });
});

// ---------------------------------------------------------------------------------------------------

type AttemptKind = 'momo_mtn' | 'momo_at' | 'card' | 'bank_transfer' | 'cash';
type Command =
  | { kind: 'attempt'; attempt: AttemptKind }
  /** pick: below 5 the newest attempt, 8 the one the payer last cancelled (if any), else pick modulo the count. */
  | { kind: 'outcome'; pick: number; outcome: Outcome; via: 'simulate' | 'applyOutcome' }
  /** The payer's cancel of an attempt (mostly the newest); with replay, the previous cancel sent again with its Idempotency-Key. */
  | { kind: 'cancel'; pick: number; replay: boolean }
  /** The session's time passes (expires_at moves into the past); with sweep the expiry worker runs too. */
  | { kind: 'expire'; sweep: boolean };

const RAIL_OF: Record<AttemptKind, RailName> = {
  momo_mtn: 'momo',
  momo_at: 'momo',
  card: 'card',
  bank_transfer: 'bank_transfer',
  cash: 'cash',
};
const PHONE_OF: Partial<Record<AttemptKind, { operator: string; phone: string; e164: string }>> = {
  momo_mtn: { operator: 'mtn', phone: '024 555 0101', e164: '+233245550101' },
  momo_at: { operator: 'at', phone: '+233 26 555 0102', e164: '+233265550102' },
};

const commandArb: fc.Arbitrary<Command> = fc.oneof(
  {
    weight: 3,
    arbitrary: fc
      .constantFrom<AttemptKind>('momo_mtn', 'momo_at', 'card', 'bank_transfer', 'cash')
      .map((attempt) => ({ kind: 'attempt' as const, attempt })),
  },
  {
    weight: 5,
    arbitrary: fc
      .record({
        // 8: the attempt the payer last cancelled, when there is one (its late answer)
        pick: fc.nat({ max: 8 }),
        // every outcome, with paid and reversed twice as likely so reversals of paid attempts are common
        outcome: fc.constantFrom<Outcome>(...OUTCOMES, 'paid', 'reversed'),
        via: fc.constantFrom<'simulate' | 'applyOutcome'>('simulate', 'applyOutcome'),
      })
      .map((r) => ({ kind: 'outcome' as const, ...r })),
  },
  {
    weight: 2,
    arbitrary: fc
      .record({ pick: fc.nat({ max: 7 }), replay: fc.nat({ max: 4 }).map((n) => n === 0) })
      .map((r) => ({ kind: 'cancel' as const, ...r })),
  },
  { weight: 1, arbitrary: fc.constantFrom<Command>({ kind: 'expire', sweep: true }, { kind: 'expire', sweep: false }) },
);
/** A session's life: it starts with an attempt (else most outcomes have nothing to act on), then anything. */
const lifeArb = fc
  .tuple(
    commandArb.filter((c) => c.kind === 'attempt'),
    fc.array(commandArb, { minLength: 3, maxLength: 20, size: 'max' }),
  )
  .map(([first, rest]) => [first, ...rest]);

interface AttemptSnap {
  id: string;
  status: AttemptStatus;
  rail: RailName;
  phone: string | null;
  base_minor: number;
  fee_minor: number;
  bearer: string;
  amount_charged_minor: number;
  version: number;
}
interface Snap {
  status: SessionStatus;
  version: number;
  finalized: boolean;
  attempts: AttemptSnap[];
}

const HELD: AttemptStatus[] = ['manual_review', 'amount_mismatch'];
const EVENT_STATUS: Record<string, SessionStatus> = {
  'checkout.session.pending': 'pending',
  'checkout.session.completed': 'success',
  'checkout.session.failed': 'failed',
  'checkout.session.expired': 'expired',
  'checkout.session.reversed': 'success',
  'checkout.session.reopened': 'open',
  // A second payment refunded automatically (issue 31): the session stays paid by its first.
  'checkout.session.duplicate_payment_refunded': 'success',
};
const RUNS = Number(process.env.CHECKOUT_PROPERTY_RUNS ?? 50);

/**
 * The session once attempt `targetId` ended unpaid (`to`: failed, cancelled or expired) from `prev`: a pending
 * session with nothing else in play (pending, or held for an operator) is open again, or expired past its time,
 * or failed at its fifth failure; otherwise it stays as it was.
 */
function sessionAfterEnding(prev: Snap, targetId: string, to: AttemptStatus, pastExpiry: boolean): SessionStatus {
  if (prev.status !== 'pending') return prev.status;
  if (prev.attempts.some((a) => a.id !== targetId && (a.status === 'pending' || HELD.includes(a.status))))
    return prev.status;
  const failedCount = prev.attempts.filter((a) => (a.id === targetId ? to : a.status) === 'failed').length;
  return pastExpiry ? 'expired' : failedCount >= 5 ? 'failed' : 'open';
}

describe(`checkout state property (${storageKind})`, () => {
  let t: TestContext;
  before(async () => {
    t = await startTestApp();
  });
  after(() => t.close());

  async function snap(sessionId: string): Promise<Snap> {
    const s = (
      await t.db.query<{ status: SessionStatus; version: number; finalized_at: Date | null }>(
        'SELECT status, version, finalized_at FROM checkout_sessions WHERE id = $1',
        [sessionId],
      )
    )[0]!;
    const attempts = await t.db.query<AttemptSnap>(
      'SELECT id, status, rail, phone, base_minor, fee_minor, bearer, amount_charged_minor, version FROM payment_attempts WHERE session_id = $1 ORDER BY created_at, id',
      [sessionId],
    );
    return { status: s.status, version: s.version, finalized: s.finalized_at !== null, attempts };
  }

  /** The session's statuses at each version after `fromVersion`: from its events, 'open' where a move emitted none. */
  async function sessionPath(sessionId: string, fromVersion: number, toVersion: number): Promise<SessionStatus[]> {
    const events = await t.db.query<{ type: string; object_version: number; payload: string }>(
      'SELECT type, object_version, payload FROM events WHERE object_id = $1 AND object_version > $2 ORDER BY object_version',
      [sessionId, fromVersion],
    );
    const path: SessionStatus[] = [];
    for (let v = fromVersion + 1; v <= toVersion; v++) {
      const at = events.filter((e) => e.object_version === v);
      assert.ok(at.length <= 1, `two events for session version ${v}: ${at.map((e) => e.type)}`);
      if (at.length === 0) {
        path.push('open'); // the only status whose move announces nothing
        continue;
      }
      const e = at[0]!;
      const status = EVENT_STATUS[e.type];
      assert.ok(status, `unexpected event ${e.type}`);
      const payload = JSON.parse(e.payload) as { data: { session: { status: string } } };
      assert.equal(payload.data.session.status, status, `${e.type} carries the session status`);
      path.push(status);
    }
    return path;
  }

  it(`random sequences of attempts, outcomes, the payer's cancels and expiry never leave the transition tables, keep the journal exact and never keep two payments (${RUNS} runs)`, async () => {
    const seenSession = new Set<string>();
    const seenAttempt = new Set<string>();
    /** Late successes of attempts the payer had cancelled through the route, and those of them that were duplicates. */
    let lateAfterCancel = 0;
    let lateDuplicateAfterCancel = 0;
    let payerCancels = 0;

    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 1, max: 2_000_000 }), lifeArb, async (base, commands) => {
        const m: CreatedMerchant = await t.merchant();
        const session = await createSession(t, m, { amount_minor: base });
        let prev = await snap(session.id);
        let pastExpiry = false;
        let everSucceeded = false;
        let journalEntries = 0;
        /** Attempts paid after another had paid the session: refunded automatically, nothing kept (issue 31). */
        const duplicates = new Set<string>();
        /** Attempts the payer's cancel route cancelled (kept under watch: a late success is still applied). */
        const cancelledByPayer = new Set<string>();
        let lastCancel: { attemptId: string; key: string; answer: unknown } | undefined;
        let lastCancelledByPayer: string | undefined;

        for (const [index, command] of commands.entries()) {
          const where = `step ${index} ${JSON.stringify(command)}`;
          const expectedAttempts = new Map(prev.attempts.map((a) => [a.id, a.status]));
          let expectedSession: SessionStatus = prev.status;
          let expectNewAttempt = false;

          if (command.kind === 'attempt') {
            const rail = RAIL_OF[command.attempt];
            const phone = PHONE_OF[command.attempt];
            const amount = totalOf(rail, base);
            const body: Record<string, Json> = {
              rail,
              amount_minor: amount,
              ...(phone ? { operator: phone.operator, phone: phone.phone } : {}),
            };
            const res =
              rail === 'cash'
                ? await call(t, 'POST', '/api/v1/checkout/cash-slips', {
                    body: { session_id: session.id, amount_minor: amount },
                  })
                : await call(t, 'POST', `/api/v1/checkout/sessions/${session.id}/provider-attempts`, { body });
            const pending = prev.attempts.find((a) => a.status === 'pending');
            const same = pending && pending.rail === rail && pending.phone === (phone?.e164 ?? null);
            if (pending && same && !(rail === 'cash' && pastExpiry)) {
              assert.equal(res.statusCode, 200, `${where}: ${res.body}`); // replayed
            } else if (pending && same) {
              // the slip expired with the session: no replay, and no new slip either
              assert.equal(res.statusCode, 409, `${where}: ${res.body}`);
              assert.equal(res.json().error.code, 'SESSION_NOT_PAYABLE', where);
            } else if (pending && !(pending.rail === 'cash' && rail !== 'cash')) {
              assert.equal(res.statusCode, 409, `${where}: ${res.body}`);
              assert.equal(res.json().error.code, 'PAYMENT_ATTEMPT_PENDING', where);
            } else if ((prev.status === 'open' || (pending && pending.rail === 'cash')) && !pastExpiry) {
              assert.equal(res.statusCode, 201, `${where}: ${res.body}`);
              if (pending) expectedAttempts.set(pending.id, 'cancelled'); // the cash slip gives way
              expectNewAttempt = true;
              expectedSession = 'pending';
            } else {
              assert.equal(res.statusCode, 409, `${where}: ${res.body}`);
              assert.equal(res.json().error.code, 'SESSION_NOT_PAYABLE', where);
            }
          } else if (command.kind === 'outcome') {
            if (prev.attempts.length === 0) continue;
            // Mostly the newest attempt (the one in play); sometimes an older one (late outcomes).
            const target =
              (command.pick === 8 && prev.attempts.find((a) => a.id === lastCancelledByPayer)) ||
              prev.attempts[command.pick < 5 ? prev.attempts.length - 1 : command.pick % prev.attempts.length]!;
            const from = target.status;
            const to: AttemptStatus =
              command.outcome === 'reversed' && from !== 'paid' && from !== 'reversed'
                ? 'failed'
                : (command.outcome as AttemptStatus);
            const noop = command.outcome === 'pending' || from === to;
            // A duplicate's money went back to the payer already: its reversal is an operator's (409 REVERSAL_NOT_COVERED).
            const legal =
              noop || (ATTEMPT_TRANSITIONS[from].includes(to) && !(to === 'reversed' && duplicates.has(target.id)));

            let status: number;
            let body = '';
            if (command.via === 'simulate') {
              const res = await simulateRaw(t, m.test_api_key, target.id, command.outcome);
              status = res.statusCode;
              body = res.body;
            } else {
              try {
                await t.db.transaction((tx) =>
                  applyOutcome(tx, target.id, command.outcome, {
                    checkoutUrlHost: t.config.checkoutUrlHost,
                    source: 'property',
                  }),
                );
                status = 200;
              } catch (error) {
                if (!(error instanceof SikaError)) throw error;
                status = statusOf(error);
                body = error.code;
              }
            }
            if (!legal) {
              assert.equal(status, 409, `${where}: ${from} -> ${to} must be refused: ${body}`);
            } else {
              assert.equal(status, 200, `${where}: ${from} -> ${to}: ${body}`);
              if (!noop) {
                expectedAttempts.set(target.id, to);
                if (to === 'paid') {
                  if (prev.status === 'success' && prev.attempts.some((a) => a.id !== target.id && a.status === 'paid'))
                    duplicates.add(target.id);
                  expectedSession = 'success';
                  for (const other of prev.attempts)
                    if (other.id !== target.id && other.status === 'pending' && prev.status !== 'success')
                      expectedAttempts.set(other.id, 'cancelled');
                } else if (HELD.includes(to) && prev.status === 'open') {
                  expectedSession = 'pending'; // a late answer holding money for an operator: no other payment starts meanwhile
                } else if (to === 'failed' || to === 'cancelled' || to === 'expired') {
                  // Another attempt still in play (held for an operator, or pending) keeps the session waiting for it.
                  expectedSession = sessionAfterEnding(prev, target.id, to, pastExpiry);
                }
                if (to === 'paid' && cancelledByPayer.has(target.id)) {
                  lateAfterCancel++;
                  if (duplicates.has(target.id)) lateDuplicateAfterCancel++;
                }
              }
            }
          } else if (command.kind === 'cancel') {
            // The payer's "Use another number or method": the real route, which asks the provider (the simulator
            // has no news of its own) and cancels a pending attempt under watch; an attempt already ended keeps
            // its status. A retry with the same Idempotency-Key answers what the first call did and changes nothing.
            if (prev.attempts.length === 0) continue;
            const replay = command.replay ? lastCancel : undefined;
            const target = replay
              ? prev.attempts.find((a) => a.id === replay.attemptId)!
              : prev.attempts[command.pick < 5 ? prev.attempts.length - 1 : command.pick % prev.attempts.length]!;
            const key = replay?.key ?? `cancel-${index}`;
            const res = await call(
              t,
              'POST',
              `/api/v1/checkout/sessions/${session.id}/provider-attempts/${target.id}/cancel`,
              { idempotencyKey: key },
            );
            assert.equal(res.statusCode, 200, `${where}: ${res.body}`);
            const answer = res.json() as {
              status: AttemptStatus;
              failure_reason: string | null;
              session_status: string;
            };
            if (replay) {
              assert.deepEqual(answer, replay.answer, `${where}: a retry answers what the first call did`);
            } else if (target.status === 'pending') {
              expectedAttempts.set(target.id, 'cancelled');
              expectedSession = sessionAfterEnding(prev, target.id, 'cancelled', pastExpiry);
              assert.equal(answer.status, 'cancelled', where);
              assert.equal(answer.failure_reason, 'changed_course', where);
              cancelledByPayer.add(target.id);
              lastCancelledByPayer = target.id;
              payerCancels++;
            } else {
              assert.equal(answer.status, target.status, `${where}: an attempt already ended keeps its status`);
            }
            if (!replay) {
              assert.equal(
                answer.session_status,
                expectedSession === 'open' && pastExpiry ? 'expired' : expectedSession,
                where,
              );
              lastCancel = { attemptId: target.id, key, answer };
            }
          } else {
            // On a shared PostgreSQL another file's expiry worker may sweep any session past its time, so there
            // the sweep always follows; only the private embedded storage can hold a session unswept.
            const sweep = command.sweep || storageKind !== 'embedded';
            await backdate(t, session.id);
            pastExpiry = true;
            if (sweep) await runExpiry(t);
            const held = prev.attempts.some((a) => HELD.includes(a.status));
            if (sweep && (prev.status === 'open' || prev.status === 'pending') && !held) {
              expectedSession = 'expired';
              for (const a of prev.attempts) if (a.status === 'pending') expectedAttempts.set(a.id, 'expired');
            }
          }

          // ---- observe ----
          const now = await snap(session.id);
          const path = await sessionPath(session.id, prev.version, now.version);
          assert.equal(
            path.length === 0 ? prev.status : path[path.length - 1],
            now.status,
            `${where}: the events end at the stored status`,
          );
          let from = prev.status;
          for (const to of path) {
            if (to !== from) {
              seenSession.add(`${from}->${to}`);
              assert.ok(
                SESSION_TRANSITIONS[from].includes(to),
                `${where}: session moved ${from} -> ${to}, which the table forbids (path ${prev.status} ${path.join(' ')})`,
              );
            }
            from = to;
          }
          assert.equal(now.status, expectedSession, `${where}: session status`);
          if (everSucceeded) assert.equal(now.status, 'success', `${where}: success stays success`);
          everSucceeded ||= now.status === 'success';
          assert.equal(
            now.finalized,
            ['success', 'failed', 'expired'].includes(now.status),
            `${where}: finalized_at is set exactly on final statuses`,
          );

          assert.equal(
            now.attempts.length,
            prev.attempts.length + (expectNewAttempt ? 1 : 0),
            `${where}: attempt count`,
          );
          for (const a of now.attempts) {
            const before = prev.attempts.find((p) => p.id === a.id);
            if (!before) {
              assert.equal(a.status, 'pending', `${where}: a new attempt starts pending`);
              assert.equal(a.base_minor, base);
              assert.equal(a.fee_minor, feeOf(a.rail, base), `${where}: fee of ${a.rail} on ${base}`);
              assert.equal(a.amount_charged_minor, totalOf(a.rail, base));
              continue;
            }
            assert.equal(a.status, expectedAttempts.get(a.id), `${where}: attempt ${a.id} (${a.rail}) status`);
            if (a.status !== before.status) {
              seenAttempt.add(`${before.status}->${a.status}`);
              assert.ok(
                ATTEMPT_TRANSITIONS[before.status].includes(a.status),
                `${where}: attempt moved ${before.status} -> ${a.status}, which the table forbids`,
              );
              assert.equal(a.version, before.version + 1, `${where}: one move per attempt per step`);
            } else {
              assert.equal(a.version, before.version, `${where}: an attempt that did not move keeps its version`);
            }
          }
          assert.ok(
            now.attempts.filter((a) => a.status === 'pending').length <= 1,
            `${where}: at most one attempt in progress`,
          );
          const active = now.attempts.filter((a) => a.status === 'pending' || HELD.includes(a.status));
          if (now.status === 'pending')
            assert.ok(active.length > 0, `${where}: a pending session has an attempt in progress or held`);
          if (now.status === 'open')
            assert.equal(active.length, 0, `${where}: an open session has no attempt in progress`);

          // ---- money ----
          let expectedBalance = 0;
          const entries = await t.db.query<{ reference_id: string; kind: string }>(
            `SELECT reference_id, kind FROM journal_entries WHERE reference_type = 'payment' AND reference_id = ANY($1::text[]) ORDER BY kind`,
            [now.attempts.map((a) => a.id)],
          );
          for (const a of now.attempts) {
            const kinds = entries.filter((e) => e.reference_id === a.id).map((e) => e.kind);
            const expectedKinds =
              a.status === 'paid'
                ? ['payment_credit']
                : a.status === 'reversed'
                  ? ['payment_credit', 'payment_reversal']
                  : [];
            assert.deepEqual(kinds, expectedKinds, `${where}: journal of ${a.status} attempt ${a.id}`);
            if (a.status === 'paid' && !duplicates.has(a.id)) expectedBalance += creditOf(a.rail, base);
          }
          const kept = now.attempts.filter((a) => a.status === 'paid' && !duplicates.has(a.id));
          assert.ok(kept.length <= 1, `${where}: a session never keeps two payments (${kept.map((a) => a.id)})`);
          const refunded = await t.db.query<{ attempt_id: string; amount_minor: number }>(
            'SELECT attempt_id, amount_minor::int AS amount_minor FROM refunds WHERE session_id = $1 ORDER BY attempt_id',
            [session.id],
          );
          assert.deepEqual(
            refunded,
            now.attempts
              .filter((a) => duplicates.has(a.id))
              .map((a) => ({ attempt_id: a.id, amount_minor: a.amount_charged_minor }))
              .sort((x, y) => (x.attempt_id < y.attempt_id ? -1 : 1)),
            `${where}: every duplicate payment, and only those, refunded in full`,
          );
          const bal = await balance(t.db, m.merchant_id, 'test');
          assert.equal(bal.available_minor, expectedBalance, `${where}: balance`);
          assert.equal(bal.held_minor, 0);
          // The full journal check is the slow one: run it whenever this step wrote to the journal, and at the end.
          if (entries.length !== journalEntries || index === commands.length - 1) {
            assert.deepEqual(await checkInvariants(t.db, m.merchant_id), [], `${where}: ledger invariants`);
          }
          journalEntries = entries.length;
          prev = now;
        }
      }),
      {
        numRuns: RUNS,
        // Always, besides the random lives: MTN cancelled by the payer, the card pays, then the old prompt is
        // approved late (a duplicate, refunded); the first cancel retried; a cancel of the paid card.
        examples: [
          [
            10_000,
            [
              { kind: 'attempt', attempt: 'momo_mtn' },
              { kind: 'cancel', pick: 0, replay: false },
              { kind: 'attempt', attempt: 'card' },
              { kind: 'outcome', pick: 0, outcome: 'paid', via: 'simulate' },
              { kind: 'outcome', pick: 8, outcome: 'paid', via: 'applyOutcome' },
              { kind: 'cancel', pick: 0, replay: true },
              { kind: 'cancel', pick: 0, replay: false },
            ],
          ],
        ],
      },
    );

    // The generator must have exercised the machine, or the property says little.
    for (const pair of ['open->pending', 'pending->open', 'pending->success', 'pending->expired'])
      assert.ok(seenSession.has(pair), `session ${pair} never happened: ${[...seenSession]}`);
    for (const pair of ['pending->paid', 'pending->failed', 'paid->reversed', 'pending->manual_review'])
      assert.ok(seenAttempt.has(pair), `attempt ${pair} never happened: ${[...seenAttempt]}`);
    // The payer's cancel was exercised, and so were late successes of what it cancelled, a duplicate among them.
    assert.ok(payerCancels > 0, 'the cancel route never cancelled an attempt');
    assert.ok(lateAfterCancel > 0, 'no attempt the payer cancelled was paid late');
    assert.ok(lateDuplicateAfterCancel > 0, 'no late success after a cancel was a duplicate');
  });
});
