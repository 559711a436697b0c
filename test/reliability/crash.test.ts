// Crash consistency (DESIGN §2 "record the intent, commit, call out"; §3 idempotency, ledger, webhooks):
// the real server process runs a stream of payments (session create with an Idempotency-Key -> quote ->
// MoMo attempt -> simulate paid with an Idempotency-Key) and Test payouts (client_reference), and is
// SIGKILLed at a seeded random moment (0-1.5 s after the round's first answer), 10 rounds. After each restart the interrupted operations are
// resumed where they stopped, retried with the same keys (a client that got no answer does exactly that).
// After a final restart and delivery wait:
//   - every 2xx the client saw is in storage (sessions, attempts, paid outcomes, payouts by id and client_reference);
//   - one session per Idempotency-Key, one payout per client_reference, one payment credit per paid attempt,
//     one hold and one post per payout (never paid twice), each domain event written once;
//   - the ledger is healthy (checkInvariants) and the merchant balance equals paid credits less paid payouts;
//   - every committed event of the merchant reached the receiver at least once, validly signed.
// Storage: embedded in a temp DATA_DIR (a SIGKILL leaves the sika.pid lock behind; src/db/embedded.ts
// takes over a lock whose pid is gone), or with DATABASE_URL a private database on that server.
// CRASH_SEED=<n> replays the kill moments and the operation mix of a run (the interleaving of concurrent
// requests still varies).
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { CreatedMerchant } from '../../src/accounts/service.ts';
import { balance, checkInvariants } from '../../src/ledger/service.ts';
import { MTN_PHONE } from '../support/checkout.ts';
import { sleep, startCountingReceiver, waitFor } from '../support/webhooks.ts';
import {
  assertTestPayoutsPaidOnce,
  call,
  journalEntryCounter,
  storedTestPayouts,
  killAllServers,
  newMerchant,
  NoAnswer,
  reliabilityStorage,
  seededRandom,
  startServer,
  type Answer,
  type Server,
  type Storage,
} from './process-support.ts';

const ROUNDS = 10;
const WORKERS = 4;
const SEED = process.env.CRASH_SEED ? Number(process.env.CRASH_SEED) : Math.floor(Math.random() * 2 ** 31);
const KILL_AFTER_MIN_MS = 0;
const KILL_AFTER_SPAN_MS = 1_500;
const PAYOUT_SHARE = 0.3;
const PAYOUT_FEE_MAX = 1_000; // momo payout fee: 1%, at most GHS 10.00

type Step = 'create' | 'quote' | 'attempt' | 'simulate' | 'done';

interface PaymentJob {
  kind: 'payment';
  n: number;
  amount: number;
  invoiceRef: string;
  createKey: string;
  simulateKey: string;
  step: Step;
  sessionId?: string;
  total?: number;
  attemptRef?: string;
  /** Requests of this job that got no answer (a crash in between). */
  interrupted: number;
}

interface PayoutJob {
  kind: 'payout';
  n: number;
  amount: number;
  clientReference: string;
  step: 'create' | 'done';
  payoutId?: string;
  interrupted: number;
}

type Job = PaymentJob | PayoutJob;

describe(`crash consistency: SIGKILL during payments and payouts (${process.env.DATABASE_URL ? 'postgres' : 'embedded'})`, () => {
  let storage: Storage;
  before(async () => {
    storage = await reliabilityStorage('crash');
  });
  after(async () => {
    killAllServers();
    await storage?.drop();
  });

  it(`${ROUNDS} SIGKILLs at random moments lose no acknowledged write, pay no payout twice and deliver every event`, {
    timeout: 240_000,
  }, async (t) => {
    t.diagnostic(`CRASH_SEED=${SEED} (set it to replay the kill moments and operation mix)`);
    const random = seededRandom(SEED);
    const started = performance.now();

    // ---- receiver: counts each event id, checks every signature
    let merchant!: CreatedMerchant;
    const counting = await startCountingReceiver(() => merchant.test_webhook_secret!);
    const { receiver, arrivals } = counting;

    // ---- what the client was told (2xx only)
    const sessionsAcked = new Map<string, { id: string; amount: number }>(); // invoiceRef -> session
    const attemptsAcked = new Map<string, { sessionId: string; total: number }>(); // attempt ref -> session
    const paidAcked = new Set<string>(); // attempt refs the simulate endpoint answered paid/success for
    const payoutsAcked = new Map<string, { id: string; amount: number }>(); // client_reference -> payout
    const unexpected: string[] = [];
    const jobs: Job[] = [];
    const resume: Job[] = [];
    let nextN = 0;
    /** Retries after a crash that found their first request committed (the answer was lost): replays. */
    const replays = { session: 0, attempt: 0, simulate: 0, payout: 0 };
    const replayed = (answer: Answer) => answer.headers.get('idempotent-replayed') === 'true';
    const ackCount = () => sessionsAcked.size + attemptsAcked.size + paidAcked.size + payoutsAcked.size;
    let creditedAcked = 0; // merchant credit from acknowledged paid attempts (momo: payer-borne fee)
    let payoutReserve = 0; // amount + fee bound of every payout started (acknowledged or not)

    try {
      merchant = await storage.with((db) => newMerchant(db, 'Crash Shop', receiver.url));
      const key = merchant.test_api_key;

      const expect2xx = (job: Job, what: string, answer: Answer, allowed: number[]): boolean => {
        if (allowed.includes(answer.status)) return true;
        unexpected.push(`${job.kind} #${job.n} ${what}: ${answer.status} ${answer.text.slice(0, 300)}`);
        job.step = 'done';
        return false;
      };

      /** Runs a job's steps until done; NoAnswer propagates (the job keeps its step for a resume). */
      async function runJob(server: Server, job: Job): Promise<void> {
        const base = server.base;
        if (job.kind === 'payout') {
          const answer = await call(base, 'POST', '/api/v1/payouts', {
            key,
            body: { recipient_id: recipientId, amount_minor: job.amount, client_reference: job.clientReference },
          });
          if (!expect2xx(job, 'create', answer, [200, 201])) return;
          if (answer.status === 200) replays.payout++;
          assert.equal(answer.body.client_reference, job.clientReference);
          const known = payoutsAcked.get(job.clientReference);
          if (known)
            assert.equal(
              answer.body.id,
              known.id,
              `client_reference ${job.clientReference} answered with two payout ids`,
            );
          payoutsAcked.set(job.clientReference, { id: answer.body.id, amount: job.amount });
          assert.equal(answer.body.status, 'paid', 'a Test payout is paid at once');
          job.payoutId = answer.body.id;
          job.step = 'done';
          return;
        }
        while (job.step !== 'done') {
          switch (job.step) {
            case 'create': {
              const answer = await call(base, 'POST', '/api/v1/sessions', {
                key,
                idempotencyKey: job.createKey,
                body: { amount_minor: job.amount, invoice_ref: job.invoiceRef },
              });
              if (!expect2xx(job, 'session create', answer, [201])) return;
              if (replayed(answer)) replays.session++;
              const known = sessionsAcked.get(job.invoiceRef);
              if (known)
                assert.equal(
                  answer.body.id,
                  known.id,
                  `Idempotency-Key ${job.createKey} answered with two session ids`,
                );
              sessionsAcked.set(job.invoiceRef, { id: answer.body.id, amount: job.amount });
              job.sessionId = answer.body.id;
              job.step = 'quote';
              break;
            }
            case 'quote': {
              const answer = await call(base, 'GET', `/api/v1/checkout/sessions/${job.sessionId}/quote`);
              if (!expect2xx(job, 'quote', answer, [200])) return;
              job.total = answer.body.surcharges.momo.total_minor;
              job.step = 'attempt';
              break;
            }
            case 'attempt': {
              const answer = await call(base, 'POST', `/api/v1/checkout/sessions/${job.sessionId}/provider-attempts`, {
                body: { rail: 'momo', amount_minor: job.total, operator: 'mtn', phone: MTN_PHONE },
              });
              // 201 a new attempt; 200 the same pending attempt replayed (its first POST committed, the answer was lost).
              if (!expect2xx(job, 'attempt', answer, [200, 201])) return;
              if (answer.status === 200) replays.attempt++;
              if (job.attemptRef) assert.equal(answer.body.attempt_reference, job.attemptRef);
              job.attemptRef = answer.body.attempt_reference;
              attemptsAcked.set(job.attemptRef!, { sessionId: job.sessionId!, total: job.total! });
              job.step = 'simulate';
              break;
            }
            case 'simulate': {
              const answer = await call(base, 'POST', `/api/v1/test/payment-attempts/${job.attemptRef}/simulate`, {
                key,
                idempotencyKey: job.simulateKey,
                body: { outcome: 'paid' },
              });
              if (!expect2xx(job, 'simulate', answer, [200])) return;
              if (replayed(answer)) replays.simulate++;
              assert.equal(answer.body.status, 'paid');
              assert.equal(answer.body.session_status, 'success');
              if (!paidAcked.has(job.attemptRef!)) creditedAcked += job.amount;
              paidAcked.add(job.attemptRef!);
              job.step = 'done';
              break;
            }
          }
        }
      }

      function newJob(): Job {
        const n = nextN++;
        const payoutAmount = 500 + Math.floor(random() * 2_500);
        if (random() < PAYOUT_SHARE && creditedAcked - payoutReserve >= payoutAmount + PAYOUT_FEE_MAX) {
          payoutReserve += payoutAmount + PAYOUT_FEE_MAX;
          const job: PayoutJob = {
            kind: 'payout',
            n,
            amount: payoutAmount,
            clientReference: `crash-${SEED}-${n}-${randomUUID().slice(0, 8)}`,
            step: 'create',
            interrupted: 0,
          };
          jobs.push(job);
          return job;
        }
        const job: PaymentJob = {
          kind: 'payment',
          n,
          amount: 5_000 + Math.floor(random() * 20_000),
          invoiceRef: `INV-CRASH-${n}-${randomUUID().slice(0, 8)}`,
          createKey: `crash-create-${randomUUID()}`,
          simulateKey: `crash-simulate-${randomUUID()}`,
          step: 'create',
          interrupted: 0,
        };
        jobs.push(job);
        return job;
      }

      /** A client worker: resumed jobs first, then new ones, until the server stops answering. */
      async function worker(server: Server, state: { dead: boolean }, newJobs: boolean): Promise<void> {
        while (!state.dead) {
          const job = resume.shift() ?? (newJobs ? newJob() : null);
          if (!job) return;
          try {
            await runJob(server, job);
          } catch (error) {
            if (!(error instanceof NoAnswer)) throw error;
            job.interrupted++;
            resume.push(job);
            state.dead = true;
          }
        }
      }

      // ---- the recipient of every payout, through the API
      let recipientId = '';
      {
        const server = await startServer(storage.env());
        const answer = await call(server.base, 'POST', '/api/v1/payouts/recipients', {
          key,
          body: { account_type: 'momo', network: 'mtn', phone: MTN_PHONE, account_name: 'Ama Owusu' },
        });
        assert.equal(answer.status, 201, answer.text);
        recipientId = answer.body.id;
        await server.kill();
      }

      // ---- the rounds: start, stream, SIGKILL at a random moment
      const perRound: string[] = [];
      for (let round = 1; round <= ROUNDS; round++) {
        const server = await startServer(storage.env());
        const resumed = resume.length;
        const before = { jobs: jobs.length, acked: ackCount() };
        const state = { dead: false };
        const killAfter = KILL_AFTER_MIN_MS + Math.floor(random() * KILL_AFTER_SPAN_MS);
        const workers = Array.from({ length: WORKERS }, () => worker(server, state, true));
        // The kill clock starts once the stream flows (the round's first 2xx), not during a cold start.
        await waitFor(
          'the first answer of the round',
          () => ackCount() > before.acked || unexpected.length > 0,
          30_000,
          5,
        );
        await sleep(killAfter);
        await server.kill();
        state.dead = true;
        if (storage.dataDir) {
          // The killed process could not remove its lock: the next start must take over a stale sika.pid.
          const lock = join(storage.dataDir, 'sika.pid');
          assert.ok(existsSync(lock), 'a SIGKILL leaves the embedded lock file behind');
          assert.equal(Number(readFileSync(lock, 'utf8')), server.child.pid, 'the lock holds the dead pid');
        }
        await Promise.all(workers);
        const acked = ackCount() - before.acked;
        perRound.push(
          `round ${round}: kill after ${killAfter} ms, ${resumed} resumed, ${jobs.length - before.jobs} new jobs, ${acked} new acks, ${resume.length} interrupted`,
        );
      }
      for (const line of perRound) t.diagnostic(line);

      // ---- final restart: every interrupted job is finished with the same keys
      const final = await startServer(storage.env());
      const interruptedJobs = resume.length;
      const state = { dead: false };
      await Promise.all(Array.from({ length: WORKERS }, () => worker(final, state, false)));
      assert.equal(state.dead, false, `the final server stopped answering:\n${final.output.join('\n')}`);
      assert.deepEqual(unexpected, [], 'no request answered with an unexpected status');
      assert.ok(jobs.every((job) => job.step === 'done'));

      const payments = jobs.filter((job): job is PaymentJob => job.kind === 'payment');
      const payouts = jobs.filter((job): job is PayoutJob => job.kind === 'payout');
      // Each completed payment announced pending + completed, each payout payout.paid.
      const expectedEvents = payments.length * 2 + payouts.length;
      await waitFor(
        `${expectedEvents} distinct events at the receiver, then 2 s of quiet`,
        () =>
          arrivals.size >= expectedEvents &&
          receiver.inFlight() === 0 &&
          performance.now() - counting.lastArrivalMs() > 2_000,
        60_000,
        50,
      );
      assert.equal(await final.stop(), 0, `graceful stop; output:\n${final.output.join('\n')}`);

      // ---- storage checks
      await storage.with(async (db) => {
        const m = merchant.merchant_id;
        const sessions = await db.query<{ id: string; invoice_ref: string; amount_minor: number; status: string }>(
          `SELECT id, invoice_ref, amount_minor, status FROM checkout_sessions WHERE merchant_id = $1 AND environment = 'test'`,
          [m],
        );
        const byRef = new Map<string, typeof sessions>();
        for (const s of sessions) byRef.set(s.invoice_ref, [...(byRef.get(s.invoice_ref) ?? []), s]);
        for (const [ref, acked] of sessionsAcked) {
          const rows = byRef.get(ref) ?? [];
          assert.equal(rows.length, 1, `one session for invoice_ref ${ref} (one Idempotency-Key)`);
          assert.equal(rows[0]!.id, acked.id, `session ${acked.id} acknowledged with 201 is stored`);
          assert.equal(rows[0]!.amount_minor, acked.amount);
        }
        assert.equal(sessions.length, payments.length, 'one session per payment job, none extra');

        const attempts = await db.query<{
          id: string;
          session_id: string;
          status: string;
          base_minor: number;
          fee_minor: number;
          bearer: string;
          amount_charged_minor: number;
        }>(
          `SELECT id, session_id, status, base_minor, fee_minor, bearer, amount_charged_minor FROM payment_attempts WHERE merchant_id = $1`,
          [m],
        );
        const attemptById = new Map(attempts.map((a) => [a.id, a]));
        for (const [ref, acked] of attemptsAcked) {
          const row = attemptById.get(ref);
          assert.ok(row, `attempt ${ref} acknowledged with 2xx is stored`);
          assert.equal(row.session_id, acked.sessionId);
          assert.equal(row.amount_charged_minor, acked.total);
        }
        assert.equal(
          attempts.length,
          payments.length,
          'one attempt per payment (a lost answer is replayed, not doubled)',
        );
        for (const ref of paidAcked) {
          const row = attemptById.get(ref)!;
          assert.equal(row.status, 'paid', `attempt ${ref} answered paid is paid in storage`);
          const session = sessions.find((s) => s.id === row.session_id)!;
          assert.equal(session.status, 'success', `session ${session.id} of a paid attempt succeeded`);
        }

        const entryCount = await journalEntryCounter(db, m);
        for (const a of attempts)
          assert.equal(
            entryCount('payment_credit', a.id),
            a.status === 'paid' ? 1 : 0,
            `payment credits of attempt ${a.id} (${a.status})`,
          );

        const stored = await storedTestPayouts(db, m);
        assertTestPayoutsPaidOnce(stored, payoutsAcked, payouts.length, entryCount);

        assert.deepEqual(
          await checkInvariants(db, m),
          [],
          'ledger invariants (balanced entries, cached balances, no negative balance)',
        );
        const credits = attempts
          .filter((a) => a.status === 'paid')
          .reduce((sum, a) => sum + a.base_minor - (a.bearer === 'merchant' ? a.fee_minor : 0), 0);
        const debits = stored.reduce((sum, p) => sum + p.total_debit_minor, 0);
        const ledger = await balance(db, m, 'test');
        assert.deepEqual(
          { available: ledger.available_minor, held: ledger.held_minor },
          { available: credits - debits, held: 0 },
          'balance = paid credits - paid payouts, each counted once',
        );

        // Each state change wrote its event exactly once, and every committed event reached the receiver.
        const events = await db.query<{ id: string; type: string; object_id: string }>(
          'SELECT id, type, object_id FROM events WHERE merchant_id = $1',
          [m],
        );
        const eventCount = (type: string, objectId: string) =>
          events.filter((e) => e.type === type && e.object_id === objectId).length;
        for (const s of sessions) {
          assert.equal(eventCount('checkout.session.pending', s.id), 1, `session ${s.id}: one pending event`);
          assert.equal(eventCount('checkout.session.completed', s.id), 1, `session ${s.id}: one completed event`);
        }
        for (const p of stored)
          assert.equal(eventCount('payout.paid', p.id), 1, `payout ${p.id}: one payout.paid event`);
        assert.equal(events.length, expectedEvents, 'no other events');
        const missing = events.filter((e) => !arrivals.has(e.id)).map((e) => `${e.id} ${e.type}`);
        assert.deepEqual(missing, [], `committed events never delivered (of ${events.length})`);
        const stray = [...arrivals.keys()].filter((id) => !events.some((e) => e.id === id));
        assert.deepEqual(stray, [], 'the receiver got only this merchant’s committed events');

        const duplicates = [...arrivals.values()].filter((n) => n > 1).length;
        const interruptedTotal = jobs.reduce((sum, job) => sum + job.interrupted, 0);
        t.diagnostic(
          `${storage.kind}: ${payments.length} payments, ${payouts.length} payouts, ${interruptedTotal} requests cut by a SIGKILL ` +
            `(${interruptedJobs} finished after the last one), ${events.length} events (${duplicates} delivered more than once), ` +
            `balance ${ledger.available_minor} pesewas, ${Math.round((performance.now() - started) / 1000)} s; ` +
            `committed before the kill but unanswered, replayed on retry: ${JSON.stringify(replays)}`,
        );
      });
      assert.equal(counting.badSignatures(), 0, 'every delivery verified with the endpoint secret');
      assert.ok(payouts.length > 0, 'the stream included payouts');
    } finally {
      await receiver.close();
    }
  });
});
