// Several processes on one database (DESIGN §2 "Scale-out path", §4 "Hosting"): three real server processes on
// one PostgreSQL database and one Redis, and a client that spreads a bounded mixed load over them as a load
// balancer would, each request to the next process: session create (Idempotency-Key) -> quote -> MoMo attempt
// -> simulate paid (Idempotency-Key), and Test payouts (client_reference). Some session creates and payouts are
// raced: the same request sent to two processes at once. One process is SIGKILLed a third of the way in and
// restarted; a request that got no answer is retried on another process with the same keys, as a client behind
// a load balancer would. Afterwards, from the database:
//   - every 2xx the client saw is stored exactly once (sessions by Idempotency-Key, attempts, payouts by
//     client_reference), no client_reference has two payouts, and each raced request made one object;
//   - the journal balances and the cached balances equal it (checkInvariants); the balance is the funding plus
//     the paid credits less the payouts;
//   - every committed event reached the receiver at least once, validly signed (any process's worker may send it);
//   - a second Test key, revoked through process A's dashboard, is refused by B and C within 1 s of the revoke's
//     answer, and never accepted again after their first refusal.
// PostgreSQL only: embedded storage allows one process per data dir. Redis: TEST_REDIS_URL, else the local one.
// MULTI_SEED=<n> replays the operation mix (the interleaving of concurrent requests still varies).
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { after, before, describe, it } from 'node:test';
import { createMerchant, type CreatedMerchant } from '../../src/accounts/service.ts';
import type { Db } from '../../src/db/index.ts';
import { creditPayment } from '../../src/ledger/service.ts';
import { MTN_PHONE } from '../support/checkout.ts';
import { sleep, startCountingReceiver, waitFor, type CountingReceiver, type Receiver } from '../support/webhooks.ts';
import {
  assertTestBalance,
  assertTestPayoutsPaidOnce,
  call,
  journalEntryCounter,
  storedTestPayouts,
  killAllServers,
  NoAnswer,
  reliabilityStorage,
  seededRandom,
  startServer,
  type Answer,
  type CallOptions,
  type Server,
  type Storage,
} from './process-support.ts';

const PAYMENT_JOBS = 150;
const PAYOUT_JOBS = 75;
/** This many session creates and payouts, spread over the run, are sent to two processes at once. */
const RACED_SESSIONS = 5;
const RACED_PAYOUTS = 5;
const CLIENTS = 8;
/** The SIGKILL comes once this many jobs are done; jobs from PHASE_TWO_FROM on wait for the restart. */
const KILL_AFTER_JOBS_DONE = Math.floor((PAYMENT_JOBS + PAYOUT_JOBS) / 3);
const PHASE_TWO_FROM = Math.floor(((PAYMENT_JOBS + PAYOUT_JOBS) * 2) / 3);
const FUNDING_MINOR = 5_000_000; // GHS 50,000: every payout of the run is covered from the first request
const REQUEST_TIMEOUT_MS = 10_000;
const REQUEST_TRIES_MAX = 4;
/** How long the client leaves a process alone after it failed to answer (a load balancer's ejection). */
const BACKEND_BACKOFF_MS = 1_000;
const EVENTS_WAIT_MS = 60_000;
const REVOCATION_DEADLINE_MS = 1_000;
const REVOCATION_POLL_MS = 20;
/** Polls go on this long after the revoke when no refusal comes: past today's 5 s key cache, so a late refusal is measured. */
const REVOCATION_WATCH_MS = 8_000;
const WATCH_AFTER_REFUSAL_MS = 500;
const WARM_POLLS = 3;
const SEED = process.env.MULTI_SEED ? Number(process.env.MULTI_SEED) : Math.floor(Math.random() * 2 ** 31);
const REDIS_URL = process.env.TEST_REDIS_URL || 'redis://127.0.0.1:6379';
const RATE_LIMIT_UNREACHED = '1000000'; // per second: this suite measures consistency, not the limiter

const SERVER_ENV: Record<string, string> = {
  REDIS_URL,
  RATE_LIMIT_KEY_PER_S: RATE_LIMIT_UNREACHED,
  RATE_LIMIT_IP_PER_S: RATE_LIMIT_UNREACHED,
  RATE_LIMIT_SESSION_PER_S: RATE_LIMIT_UNREACHED,
  // The receiver listens on 127.0.0.1.
  WEBHOOK_ALLOW_PRIVATE_TARGETS: 'on',
};

interface PaymentJob {
  kind: 'payment';
  n: number;
  raced: boolean;
  amount: number;
  invoiceRef: string;
  createKey: string;
  simulateKey: string;
  step: 'create' | 'quote' | 'attempt' | 'simulate' | 'done';
  sessionId?: string;
  total?: number;
  attemptRef?: string;
}

interface PayoutJob {
  kind: 'payout';
  n: number;
  raced: boolean;
  amount: number;
  clientReference: string;
  step: 'create' | 'done';
  payoutId?: string;
}

type Job = PaymentJob | PayoutJob;

/** One server process as the client sees it; a restart puts a new process (on a new port) in the same slot. */
interface Slot {
  name: string;
  /** 0 for the first process in the slot, 1 after its restart. */
  restarts: number;
  server: Server;
  backedOffUntilMs: number;
}

interface Poll {
  sentAt: number;
  answeredAt: number;
  /** 0: no answer. */
  status: number;
}

interface ConsoleSession {
  base: string;
  cookie: string;
  csrf: string;
}

const now = () => performance.now();
const is2xx = (status: number) => status >= 200 && status < 300;
const replayed = (answer: Answer) => answer.headers.get('idempotent-replayed') === 'true';
const errorCode = (answer: Answer): string | null =>
  typeof answer.body?.error?.code === 'string' ? answer.body.error.code : null;

// Each test is skipped (and counted so) rather than the suite, so the closing line shows the skip.
const SKIP = process.env.DATABASE_URL
  ? false
  : 'needs PostgreSQL: set DATABASE_URL (embedded storage allows one process per data dir)';

describe('several processes on one database: a mixed load, a SIGKILL, races across processes and revocation', () => {
  let storage: Storage;
  let db: Db;
  let receiver: Receiver;
  let merchant: CreatedMerchant;
  const owner = { email: `owner-${randomUUID()}@example.com`, password: `pw-${randomUUID()}` };
  const slots: Slot[] = [];
  let recipientId = '';

  // What the receiver saw: arrivals per event id, and signatures that did not verify.
  let counting: CountingReceiver;

  // What the client was told (2xx only), and every answer by status.
  const sessionsAcked = new Map<string, { id: string; amount: number; createKey: string }>(); // invoiceRef -> session
  const attemptsAcked = new Map<string, { sessionId: string; total: number }>(); // attempt ref -> session
  const paidAcked = new Set<string>(); // attempt refs answered paid
  const payoutsAcked = new Map<string, { id: string; amount: number }>(); // client_reference -> payout
  const answersByStatus = new Map<string, number>(); // "201", "409 REFERENCE_CONFLICT", "no answer"
  const answersByProcess = new Map<string, number>();
  const raceOutcomes: string[] = [];
  const unexpected: string[] = [];
  const jobs: Job[] = [];
  let requests = 0;
  let loadFinished = false;

  before(async () => {
    if (SKIP) return;
    const redis = new Redis(REDIS_URL, {
      lazyConnect: true,
      maxRetriesPerRequest: 1,
      connectTimeout: 2_000,
      retryStrategy: () => null,
    });
    try {
      await redis.connect();
      await redis.ping();
    } catch (error) {
      throw new Error(`the multi-process suite needs Redis at ${REDIS_URL} (set TEST_REDIS_URL): ${String(error)}`);
    } finally {
      redis.disconnect();
    }
    storage = await reliabilityStorage('multi');
    db = await storage.open(); // migrates once, before three processes start on it
    counting = await startCountingReceiver(() => merchant.test_webhook_secret!);
    receiver = counting.receiver;
    // As the servers' deployment (WEBHOOK_ALLOW_PRIVATE_TARGETS=on) would take it.
    merchant = await createMerchant(
      db,
      { name: 'Multi Process Shop', email: owner.email, password: owner.password, webhookUrl: receiver.url },
      { allowPrivateTargets: true },
    );
    await db.transaction((tx) =>
      creditPayment(tx, {
        merchantId: merchant.merchant_id,
        environment: 'test',
        paymentId: `fund-${randomUUID()}`,
        chargedMinor: FUNDING_MINOR,
        payerFeeMinor: 0,
        merchantFeeMinor: 0,
      }),
    );
    const servers = await Promise.all(['A', 'B', 'C'].map(() => startServer(storage.env(), SERVER_ENV)));
    servers.forEach((server, i) => {
      slots.push({ name: 'ABC'[i]!, restarts: 0, server, backedOffUntilMs: 0 });
    });
    const answer = await call(slots[0]!.server.base, 'POST', '/api/v1/payouts/recipients', {
      key: merchant.test_api_key,
      body: { account_type: 'momo', network: 'mtn', phone: MTN_PHONE, account_name: 'Ama Owusu' },
    });
    assert.equal(answer.status, 201, answer.text);
    recipientId = answer.body.id;
  });

  after(async () => {
    killAllServers();
    await receiver?.close();
    await db?.close();
    await storage?.drop();
  });

  // ---- the client: a round-robin load balancer that skips a process for a while after it failed to answer

  let nextSlot = 0;
  function pick(exclude: Slot | null = null): Slot {
    const candidates = slots.filter((slot) => slot !== exclude);
    const live = candidates.filter((slot) => slot.backedOffUntilMs <= now());
    const from = live.length > 0 ? live : candidates;
    return from[nextSlot++ % from.length]!;
  }

  function count(slot: Slot, answer: Answer | null): void {
    requests++;
    const status =
      answer === null
        ? 'no answer'
        : is2xx(answer.status)
          ? String(answer.status)
          : `${answer.status} ${errorCode(answer) ?? '(no envelope)'}`;
    answersByStatus.set(status, (answersByStatus.get(status) ?? 0) + 1);
    const label = slot.restarts === 0 ? slot.name : `${slot.name} restarted`;
    if (answer) answersByProcess.set(label, (answersByProcess.get(label) ?? 0) + 1);
  }

  /** One request to `first` (or the next process); no answer: the same request on another process, the same keys. */
  async function send(
    method: 'GET' | 'POST',
    path: string,
    options: CallOptions,
    first: Slot | null = null,
  ): Promise<Answer> {
    let slot = first ?? pick();
    for (let tries = 1; ; tries++) {
      try {
        const answer = await call(slot.server.base, method, path, { timeoutMs: REQUEST_TIMEOUT_MS, ...options });
        count(slot, answer);
        return answer;
      } catch (error) {
        if (!(error instanceof NoAnswer)) throw error;
        count(slot, null);
        slot.backedOffUntilMs = now() + BACKEND_BACKOFF_MS;
        if (tries >= REQUEST_TRIES_MAX) throw error;
        slot = pick(slot);
      }
    }
  }

  /** The same request on two processes at once (each retried elsewhere if it gets no answer). */
  function race(method: 'GET' | 'POST', path: string, options: CallOptions): Promise<[Answer, Answer]> {
    const first = pick();
    const second = pick(first);
    return Promise.all([send(method, path, options, first), send(method, path, options, second)]);
  }

  function fail(job: Job, what: string, answer: Answer): void {
    unexpected.push(`${job.kind} #${job.n} ${what}: ${answer.status} ${answer.text.slice(0, 300)}`);
    job.step = 'done';
  }

  async function runPayout(job: PayoutJob): Promise<void> {
    const options = {
      key: merchant.test_api_key,
      body: { recipient_id: recipientId, amount_minor: job.amount, client_reference: job.clientReference },
    };
    const answers = job.raced
      ? await race('POST', '/api/v1/payouts', options)
      : [await send('POST', '/api/v1/payouts', options)];
    const paid = answers.filter((answer) => is2xx(answer.status));
    for (const answer of answers) {
      // A raced client_reference: both answer the same payout, or one answers and the other is a clean 4xx.
      const clean4xx = job.raced && answer.status >= 400 && answer.status < 500 && errorCode(answer) !== null;
      if (![200, 201].includes(answer.status) && !clean4xx) return fail(job, 'payout create', answer);
    }
    if (paid.length === 0) return fail(job, 'payout create (no 2xx from either process)', answers[0]!);
    const ids = new Set(paid.map((answer) => answer.body.id));
    assert.equal(ids.size, 1, `client_reference ${job.clientReference} answered with payouts ${[...ids].join(', ')}`);
    const payout = paid[0]!.body;
    assert.equal(payout.client_reference, job.clientReference);
    assert.equal(payout.status, 'paid', 'a Test payout is paid at once');
    const known = payoutsAcked.get(job.clientReference);
    if (known)
      assert.equal(payout.id, known.id, `client_reference ${job.clientReference} answered with two payout ids`);
    payoutsAcked.set(job.clientReference, { id: payout.id, amount: job.amount });
    if (job.raced)
      raceOutcomes.push(
        `payout ${answers.map((answer) => `${answer.status}${errorCode(answer) ? ` ${errorCode(answer)}` : ''}`).join(' + ')}`,
      );
    job.payoutId = payout.id;
    job.step = 'done';
  }

  async function runPayment(job: PaymentJob): Promise<void> {
    const key = merchant.test_api_key;
    while (job.step !== 'done') {
      switch (job.step) {
        case 'create': {
          const options = {
            key,
            idempotencyKey: job.createKey,
            body: { amount_minor: job.amount, invoice_ref: job.invoiceRef },
          };
          const answers = job.raced
            ? await race('POST', '/api/v1/sessions', options)
            : [await send('POST', '/api/v1/sessions', options)];
          // DESIGN §4: a request whose key is still running waits for the first and replays it.
          const refused = answers.find((answer) => answer.status !== 201);
          if (refused) return fail(job, 'session create', refused);
          const ids = new Set(answers.map((answer) => answer.body.id));
          assert.equal(ids.size, 1, `Idempotency-Key ${job.createKey} answered with sessions ${[...ids].join(', ')}`);
          if (job.raced)
            raceOutcomes.push(
              `session ${answers.map((answer) => `${answer.status}${replayed(answer) ? ' replayed' : ''}`).join(' + ')}`,
            );
          const id = answers[0]!.body.id as string;
          const known = sessionsAcked.get(job.invoiceRef);
          if (known) assert.equal(id, known.id, `Idempotency-Key ${job.createKey} answered with two session ids`);
          sessionsAcked.set(job.invoiceRef, { id, amount: job.amount, createKey: job.createKey });
          job.sessionId = id;
          job.step = 'quote';
          break;
        }
        case 'quote': {
          const answer = await send('GET', `/api/v1/checkout/sessions/${job.sessionId}/quote`, {});
          if (answer.status !== 200) return fail(job, 'quote', answer);
          job.total = answer.body.surcharges.momo.total_minor;
          job.step = 'attempt';
          break;
        }
        case 'attempt': {
          const answer = await send('POST', `/api/v1/checkout/sessions/${job.sessionId}/provider-attempts`, {
            body: { rail: 'momo', amount_minor: job.total, operator: 'mtn', phone: MTN_PHONE },
          });
          // 201 a new attempt; 200 the same pending attempt (a first POST committed whose answer was lost).
          if (![200, 201].includes(answer.status)) return fail(job, 'attempt', answer);
          if (job.attemptRef) assert.equal(answer.body.attempt_reference, job.attemptRef);
          job.attemptRef = answer.body.attempt_reference;
          attemptsAcked.set(job.attemptRef!, { sessionId: job.sessionId!, total: job.total! });
          job.step = 'simulate';
          break;
        }
        case 'simulate': {
          const answer = await send('POST', `/api/v1/test/payment-attempts/${job.attemptRef}/simulate`, {
            key,
            idempotencyKey: job.simulateKey,
            body: { outcome: 'paid' },
          });
          if (answer.status !== 200) return fail(job, 'simulate', answer);
          assert.equal(answer.body.status, 'paid');
          assert.equal(answer.body.session_status, 'success');
          paidAcked.add(job.attemptRef!);
          job.step = 'done';
          break;
        }
      }
    }
  }

  /** The job list: payments and payouts in a seeded order, every so often one raced. */
  function planJobs(): Job[] {
    const random = seededRandom(SEED);
    const kinds: Array<'payment' | 'payout'> = [
      ...Array(PAYMENT_JOBS).fill('payment'),
      ...Array(PAYOUT_JOBS).fill('payout'),
    ];
    for (let i = kinds.length - 1; i > 0; i--) {
      const j = Math.floor(random() * (i + 1));
      [kinds[i], kinds[j]] = [kinds[j]!, kinds[i]!];
    }
    let payments = 0;
    let payouts = 0;
    return kinds.map((kind, n): Job => {
      if (kind === 'payout') {
        const raced = payouts++ % Math.floor(PAYOUT_JOBS / RACED_PAYOUTS) === 1;
        return {
          kind,
          n,
          raced,
          amount: 500 + Math.floor(random() * 2_500),
          clientReference: `multi-${SEED}-${n}-${randomUUID().slice(0, 8)}`,
          step: 'create',
        };
      }
      const raced = payments++ % Math.floor(PAYMENT_JOBS / RACED_SESSIONS) === 1;
      return {
        kind,
        n,
        raced,
        amount: 5_000 + Math.floor(random() * 20_000),
        invoiceRef: `INV-MULTI-${n}-${randomUUID().slice(0, 8)}`,
        createKey: `multi-create-${randomUUID()}`,
        simulateKey: `multi-simulate-${randomUUID()}`,
        step: 'create',
      };
    });
  }

  it('a mixed load through three processes, one SIGKILLed and restarted midway, gets only the answers it expects', {
    skip: SKIP,
    timeout: 150_000,
  }, async (t) => {
    t.diagnostic(`MULTI_SEED=${SEED} (set it to replay the operation mix)`);
    const started = now();
    jobs.push(...planJobs());
    let cursor = 0;
    let done = 0;

    // The SIGKILL of B once a third of the jobs are done (requests in flight on it get no answer), then its restart.
    const victim = slots[1]!;
    let killedAfterMs = 0;
    let restartMs = 0;
    let restartDone!: () => void;
    let restartFailed!: (error: unknown) => void;
    const restarted = new Promise<void>((resolve, reject) => {
      restartDone = resolve;
      restartFailed = reject;
    });
    restarted.catch(() => {}); // the controller's own rejection reports it
    const controller = (async () => {
      try {
        await waitFor(
          'a third of the jobs done',
          () => done >= KILL_AFTER_JOBS_DONE || cursor >= jobs.length,
          120_000,
          5,
        );
        killedAfterMs = now() - started;
        await victim.server.kill();
        const restartStarted = now();
        victim.server = await startServer(storage.env(), SERVER_ENV);
        victim.restarts++;
        victim.backedOffUntilMs = 0;
        restartMs = now() - restartStarted;
        restartDone();
      } catch (error) {
        restartFailed(error);
        throw error;
      }
    })();

    async function client(): Promise<void> {
      while (cursor < jobs.length) {
        const job = jobs[cursor++]!;
        // The last third waits for the restarted process, so the load runs on all three again.
        if (job.n >= PHASE_TWO_FROM) await restarted;
        try {
          if (job.kind === 'payout') await runPayout(job);
          else await runPayment(job);
        } catch (error) {
          unexpected.push(`${job.kind} #${job.n}: ${error instanceof Error ? error.message : String(error)}`);
          job.step = 'done';
        }
        done++;
      }
    }

    await Promise.all([controller, ...Array.from({ length: CLIENTS }, () => client())]);
    loadFinished = true;
    const twoxx = [...answersByStatus].filter(([status]) => /^2/.test(status)).reduce((sum, [, n]) => sum + n, 0);
    const others = Object.fromEntries([...answersByStatus].filter(([status]) => !/^2/.test(status)));
    t.diagnostic(
      `${requests} requests in ${Math.round((now() - started) / 1000)} s: ${twoxx} 2xx, others ${JSON.stringify(others)}; ` +
        `answers by process ${JSON.stringify(Object.fromEntries(answersByProcess))}; B SIGKILLed after ${Math.round(killedAfterMs)} ms, back after ${Math.round(restartMs)} ms`,
    );
    t.diagnostic(`races: ${raceOutcomes.join('; ')}`);
    assert.deepEqual(unexpected, [], 'no request answered with an unexpected status');
    assert.ok(jobs.every((job) => job.step === 'done'));
    assert.equal(raceOutcomes.length, RACED_SESSIONS + RACED_PAYOUTS, 'every race ran');
    assert.ok(
      (answersByStatus.get('no answer') ?? 0) > 0,
      'the SIGKILL cut requests in flight (retried on another process)',
    );
    assert.ok((answersByProcess.get('B restarted') ?? 0) > 0, 'the restarted process took part in the load');
  });

  it('every 2xx is stored exactly once, no client_reference has two payouts, and the balance equals the journal', {
    skip: SKIP,
    timeout: 30_000,
  }, async (t) => {
    assert.ok(loadFinished, 'the load finished');
    const m = merchant.merchant_id;
    const payments = jobs.filter((job): job is PaymentJob => job.kind === 'payment');
    const payouts = jobs.filter((job): job is PayoutJob => job.kind === 'payout');

    const sessions = await db.query<{ id: string; invoice_ref: string; amount_minor: number; status: string }>(
      `SELECT id, invoice_ref, amount_minor, status FROM checkout_sessions WHERE merchant_id = $1 AND environment = 'test'`,
      [m],
    );
    for (const [ref, acked] of sessionsAcked) {
      const rows = sessions.filter((s) => s.invoice_ref === ref);
      assert.equal(rows.length, 1, `one session for Idempotency-Key ${acked.createKey}`);
      assert.equal(rows[0]!.id, acked.id, `session ${acked.id} acknowledged with 201 is stored`);
      assert.equal(rows[0]!.amount_minor, acked.amount);
    }
    assert.equal(sessions.length, payments.length, 'one session per payment job, none extra');
    const keys = await db.query<{ key: string; response_status: number; response_body: string }>(
      `SELECT key, response_status, response_body FROM idempotency_keys WHERE merchant_id = $1 AND environment = 'test' AND key = ANY($2)`,
      [m, payments.map((job) => job.createKey)],
    );
    for (const acked of sessionsAcked.values()) {
      const stored = keys.filter((k) => k.key === acked.createKey);
      assert.equal(stored.length, 1, `Idempotency-Key ${acked.createKey} stored once`);
      assert.equal(stored[0]!.response_status, 201);
      assert.equal(
        JSON.parse(stored[0]!.response_body).id,
        acked.id,
        `Idempotency-Key ${acked.createKey} replays session ${acked.id}`,
      );
    }

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
    for (const [ref, acked] of attemptsAcked) {
      const row = attempts.find((a) => a.id === ref);
      assert.ok(row, `attempt ${ref} acknowledged with 2xx is stored`);
      assert.equal(row.session_id, acked.sessionId);
      assert.equal(row.amount_charged_minor, acked.total);
    }
    assert.equal(attempts.length, payments.length, 'one attempt per payment (a lost answer is replayed, not doubled)');
    for (const ref of paidAcked) {
      const row = attempts.find((a) => a.id === ref)!;
      assert.equal(row.status, 'paid', `attempt ${ref} answered paid is paid in storage`);
      assert.equal(
        sessions.find((s) => s.id === row.session_id)!.status,
        'success',
        `the session of attempt ${ref} succeeded`,
      );
    }

    const entryCount = await journalEntryCounter(db, m);
    for (const a of attempts)
      assert.equal(
        entryCount('payment_credit', a.id),
        a.status === 'paid' ? 1 : 0,
        `payment credits of attempt ${a.id} (${a.status})`,
      );

    const stored = await storedTestPayouts(db, m);
    const doubled = await db.query<{ client_reference: string; n: number }>(
      `SELECT client_reference, count(*)::int AS n FROM payouts WHERE merchant_id = $1 GROUP BY 1 HAVING count(*) > 1`,
      [m],
    );
    assert.deepEqual(doubled, [], 'no client_reference with two payouts');
    assertTestPayoutsPaidOnce(stored, payoutsAcked, payouts.length, entryCount);

    const ledger = await assertTestBalance(db, m, FUNDING_MINOR, attempts, stored);
    t.diagnostic(
      `${sessions.length} sessions, ${attempts.filter((a) => a.status === 'paid').length} payments, ${stored.length} payouts; balance ${ledger.available_minor} pesewas`,
    );
  });

  it('every committed event reaches the receiver at least once, validly signed', {
    skip: SKIP,
    timeout: EVENTS_WAIT_MS + 10_000,
  }, async (t) => {
    assert.ok(loadFinished, 'the load finished');
    const m = merchant.merchant_id;
    const events = await db.query<{ id: string; type: string; object_id: string }>(
      'SELECT id, type, object_id FROM events WHERE merchant_id = $1',
      [m],
    );
    const sessions = jobs.filter((job) => job.kind === 'payment').length;
    const payouts = jobs.filter((job) => job.kind === 'payout').length;
    // Each paid session announced pending + completed, each payout payout.paid, each once.
    const byType = (type: string) => events.filter((e) => e.type === type);
    assert.equal(byType('checkout.session.pending').length, sessions);
    assert.equal(byType('checkout.session.completed').length, sessions);
    assert.equal(byType('payout.paid').length, payouts);
    for (const type of ['checkout.session.pending', 'checkout.session.completed', 'payout.paid']) {
      assert.equal(new Set(byType(type).map((e) => e.object_id)).size, byType(type).length, `one ${type} per object`);
    }
    assert.equal(events.length, sessions * 2 + payouts, 'no other events');
    const { arrivals } = counting;
    const missing = () => events.filter((e) => !arrivals.has(e.id));
    await waitFor(
      `${events.length} events at the receiver`,
      () => missing().length === 0 && receiver.inFlight() === 0,
      EVENTS_WAIT_MS,
      100,
    ).catch(() => {});
    assert.deepEqual(
      missing().map((e) => `${e.id} ${e.type}`),
      [],
      `committed events never delivered (of ${events.length})`,
    );
    const stray = [...arrivals.keys()].filter((id) => !events.some((e) => e.id === id));
    assert.deepEqual(stray, [], 'the receiver got only this merchant’s committed events');
    assert.equal(counting.badSignatures(), 0, 'every delivery verified with the endpoint secret');
    const duplicates = [...arrivals.values()].filter((n) => n > 1).length;
    t.diagnostic(`${events.length} events delivered (${duplicates} more than once)`);
  });

  it('a key revoked through process A’s dashboard is refused by B and C within 1 s and never accepted after', {
    skip: SKIP,
    timeout: 60_000,
  }, async (t) => {
    const [a, ...others] = slots as [Slot, Slot, Slot];
    const m = merchant.merchant_id;
    const session = await dashboardSignIn(a.server, owner.email, owner.password);
    // A second Test key, so the load's key stays valid.
    const [integration] = await db.query<{ id: string }>(
      `SELECT id FROM integrations WHERE merchant_id = $1 AND environment = 'test'`,
      [m],
    );
    const created = await dashboardPost(session, '/dashboard/keys', { integration_id: integration!.id });
    assert.equal(created.status, 200, created.text.slice(0, 500));
    const key = /id="new-api-key">([^<]+)</.exec(created.text)?.[1];
    assert.ok(key, 'the new key is shown once');
    const [keyRow] = await db.query<{ id: string }>(
      'SELECT id FROM api_keys WHERE merchant_id = $1 AND starts_with($2, prefix)',
      [m, key],
    );
    assert.ok(keyRow, 'the new key is stored');

    // B and C are polled from before the revoke (they have used the key: the cached case) until their first
    // refusal has been followed by WATCH_AFTER_REFUSAL_MS of polls, or REVOCATION_WATCH_MS after the revoke.
    const watch = { revokeSentAt: Infinity, revokedAt: Infinity, stop: false };
    const pollers = others.map((slot) => {
      const polls: Poll[] = [];
      const done = (async () => {
        while (!watch.stop) {
          const refusal = polls.find((p) => p.status === 401 && p.answeredAt >= watch.revokeSentAt);
          if (refusal && now() > refusal.answeredAt + WATCH_AFTER_REFUSAL_MS) break;
          if (now() > watch.revokedAt + REVOCATION_WATCH_MS) break;
          const sentAt = now();
          let status = 0;
          try {
            status = (await call(slot.server.base, 'GET', '/api/v1/payouts/balance', { key, timeoutMs: 2_000 })).status;
          } catch (error) {
            if (!(error instanceof NoAnswer)) throw error;
          }
          polls.push({ sentAt, answeredAt: now(), status });
          await sleep(Math.max(0, sentAt + REVOCATION_POLL_MS - now()));
        }
      })();
      return { slot, polls, done };
    });
    let revoked: { status: number; text: string } | null = null;
    try {
      await waitFor(
        'B and C to accept the new key',
        () => pollers.every((p) => p.polls.filter((poll) => poll.status === 200).length >= WARM_POLLS),
        10_000,
        10,
      );
      for (const p of pollers)
        assert.deepEqual(
          p.polls.filter((poll) => poll.status !== 200),
          [],
          `${p.slot.name} accepts the new key before the revoke`,
        );
      watch.revokeSentAt = now();
      revoked = await dashboardPost(session, `/dashboard/keys/${keyRow.id}/revoke`, {});
      watch.revokedAt = now();
    } finally {
      if (watch.revokedAt === Infinity) watch.stop = true;
      await Promise.all(pollers.map((p) => p.done));
    }
    assert.equal(revoked?.status, 200, revoked?.text.slice(0, 500));
    const [row] = await db.query<{ revoked_at: Date | null }>('SELECT revoked_at FROM api_keys WHERE id = $1', [
      keyRow.id,
    ]);
    assert.ok(row?.revoked_at, 'the key is revoked in storage');
    const onA = await call(a.server.base, 'GET', '/api/v1/payouts/balance', { key });
    assert.equal(onA.status, 401, 'the process that revoked the key refuses it at once');

    const results = pollers.map(({ slot, polls }) => {
      const refusal = polls.find((p) => p.status === 401 && p.answeredAt >= watch.revokeSentAt);
      const latencyMs = refusal ? Math.round(refusal.answeredAt - watch.revokedAt) : null;
      return {
        process: slot.name,
        first_401_ms: latencyMs,
        polls_after_revoke: polls.filter((p) => p.sentAt >= watch.revokedAt).length,
        accepted_after_revoke: polls.filter((p) => p.sentAt >= watch.revokedAt && is2xx(p.status)).length,
        accepted_after_first_401: refusal
          ? polls.filter((p) => p.sentAt > refusal.answeredAt && is2xx(p.status)).length
          : 0,
        other_answers: polls.filter((p) => p.status !== 200 && p.status !== 401).map((p) => p.status),
      };
    });
    for (const r of results) {
      t.diagnostic(
        `revocation on ${r.process}: ${r.first_401_ms === null ? `no 401 within ${REVOCATION_WATCH_MS} ms` : `first 401 ${r.first_401_ms} ms after the revoke answered`}, ` +
          `${r.accepted_after_revoke} of ${r.polls_after_revoke} polls accepted after the revoke answered`,
      );
    }
    assert.deepEqual(
      results.map((r) => ({
        process: r.process,
        refused_in_time: r.first_401_ms !== null && r.first_401_ms <= REVOCATION_DEADLINE_MS,
        accepted_after_first_401: r.accepted_after_first_401,
        other_answers: r.other_answers,
      })),
      results.map((r) => ({
        process: r.process,
        refused_in_time: true,
        accepted_after_first_401: 0,
        other_answers: [],
      })),
      `a revoked key is refused by every process within ${REVOCATION_DEADLINE_MS} ms (DESIGN §4): ${JSON.stringify(results)}`,
    );
  });
});

// ---------------------------------------------------------------------------------------------------
// The dashboard over HTTP, as a browser: the login form's CSRF cookie and field, the session cookie, the
// session's CSRF token on every form post.

function cookieOf(res: Response, name: string): string {
  const header = res.headers.getSetCookie().find((cookie) => cookie.startsWith(`${name}=`));
  assert.ok(header, `the answer sets the ${name} cookie`);
  return header.slice(name.length + 1).split(';')[0]!;
}

function csrfFieldOf(html: string): string {
  const csrf = /name="_csrf" value="([^"]+)"/.exec(html)?.[1];
  assert.ok(csrf, 'the page carries a CSRF field');
  return csrf;
}

const formHeaders = (cookie: string) => ({ cookie, 'content-type': 'application/x-www-form-urlencoded' });

async function dashboardSignIn(server: Server, email: string, password: string): Promise<ConsoleSession> {
  const base = server.base;
  const form = await fetch(`${base}/dashboard/login`, {
    redirect: 'manual',
    signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
  });
  const formHtml = await form.text();
  assert.equal(form.status, 200, formHtml.slice(0, 500));
  const login = await fetch(`${base}/dashboard/login`, {
    method: 'POST',
    redirect: 'manual',
    headers: formHeaders(`sika_login_csrf=${cookieOf(form, 'sika_login_csrf')}`),
    body: new URLSearchParams({ _csrf: csrfFieldOf(formHtml), email, password }).toString(),
    signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
  });
  const loginHtml = await login.text();
  assert.equal(
    login.status,
    303,
    `the owner signs in: ${loginHtml.slice(0, 300)}\n${server.output.slice(-20).join('\n')}`,
  );
  const cookie = `sika_dashboard=${cookieOf(login, 'sika_dashboard')}`;
  const page = await fetch(`${base}/dashboard/developers`, {
    headers: { cookie },
    redirect: 'manual',
    signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
  });
  const pageHtml = await page.text();
  assert.equal(page.status, 200, pageHtml.slice(0, 500));
  return { base, cookie, csrf: csrfFieldOf(pageHtml) };
}

async function dashboardPost(
  session: ConsoleSession,
  path: string,
  fields: Record<string, string>,
): Promise<{ status: number; text: string }> {
  const res = await fetch(`${session.base}${path}`, {
    method: 'POST',
    redirect: 'manual',
    headers: formHeaders(session.cookie),
    body: new URLSearchParams({ _csrf: session.csrf, ...fields }).toString(),
    signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
  });
  return { status: res.status, text: await res.text() };
}
