// Slow and broken webhook receivers (timeouts, 500s, connection resets) leave the API's p99 within 20%.
//
// One real server process (node --import tsx src/main.ts) with its delivery worker on. Each phase gives the
// worker a receiver in one mode and keeps events flowing to it (a paced producer: one paid payment every
// 100 ms = 2 events, from 1.5 s before the measurement to its end), while the API is measured: 10 concurrent
// clients, a fixed number of iterations of POST /api/v1/sessions + GET /api/v1/sessions/{id} with a merchant
// key that has no webhook endpoint (so the measured calls make no events themselves): 1,000 requests per
// phase on embedded storage, 3,000 on PostgreSQL (about 3x faster), so a phase lasts a few seconds on both
// and one stall of this shared machine (which freezes the 10 requests in flight, 1% of 1,000) does not
// decide a p99 on its own.
//   healthy  answers 200 at once (the baseline)
//   timeout  never answers, or answers 200 only after WEBHOOK_TIMEOUT_MS (2 s): every try runs into the
//            worker's deadline with its socket held open
//   500      answers 500 at once
//   reset    destroys the connection without an answer
// Retry schedule 1 s, 30 s, 300 s: within a phase of a few seconds a failing event is tried at most twice,
// as in the first minutes of the production schedule (5 s, 300 s, ...); WEBHOOK_TIMEOUT_MS is 2 s
// (production 10 s), so the timeout mode churns faster than in production. (A 1-second schedule with 10
// retries is a retry storm of its own, ~4x the tries of a healthy receiver and ~10-15% more server CPU per
// API request on embedded storage; RECEIVERS_RETRY_SCHEDULE_S=1,1,1,1,1,1,1,1,1,1 runs it.)
// After a phase its receiver answers 410 Gone, which disables its endpoint (Standard Webhooks) at its next
// retry; the phase ends when that 410 was answered and the receiver is quiet, so the next phase starts
// without the previous one's retries. After a warm-up, each repetition runs healthy,
// timeout, 500, reset, and one more healthy phase closes the run: every broken phase has a healthy phase
// before and after it (at most two phases away), which cancels slow drift of the machine.
//
// Rule: limit(b) = max(1.2 x b, b + 5 ms), where b is the mean p99 of the healthy phases just before and
// just after. A broken mode passes when the median over the repetitions of p99 / limit(b) is at most 1.
// The absolute floor keeps a 3 ms vs 4 ms p99 from failing; the median over repetitions and the paired
// baseline keep a burst of other work on this 2-core machine from failing the run. When a mode fails after
// 3 repetitions, 2 more are run and the verdict is taken over all 5.
//
// Also checked: the worker never holds more than its per-endpoint cap (8) of tries open on one endpoint.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import type { CreatedMerchant } from '../../src/accounts/service.ts';
import { defaultDeliveryOptions } from '../../src/events/delivery.ts';
import { MTN_PHONE } from '../support/checkout.ts';
import { sleep, startReceiver, waitFor, type Receiver } from '../support/webhooks.ts';
import {
  call,
  killAllServers,
  median,
  newMerchant,
  quantile,
  reliabilityStorage,
  round1,
  startServer,
  type Server,
  type Storage,
} from './process-support.ts';

const MODES = ['healthy', 'timeout', '500', 'reset'] as const;
type Mode = (typeof MODES)[number] | 'gone';
const REPETITIONS = Number(process.env.RECEIVERS_REPETITIONS ?? 3);
const EXTRA_REPETITIONS = Number(process.env.RECEIVERS_EXTRA_REPETITIONS ?? 2);
const PER_ENDPOINT_IN_FLIGHT_MAX = 8; // defaultDeliveryOptions().perEndpointMax
const CONNECTIONS = 10;
// x 2 requests x 10 connections: 1,000 (embedded) or 3,000 (PostgreSQL) measured requests per phase
const ITERATIONS_PER_CONNECTION = process.env.DATABASE_URL ? 150 : 50;
const WARMUP_ITERATIONS = ITERATIONS_PER_CONNECTION;
const PAYMENT_EVERY_MS = 100;
const FLOWING_BEFORE_MEASURE_MS = 1_500;
const RELATIVE_LIMIT = 1.2;
const ABSOLUTE_FLOOR_MS = 5;
const WEBHOOK_TIMEOUT_MS = 2_000;

/** CPU time (user + system, ms) the process has used so far; null where /proc is missing. */
function cpuMs(pid: number | undefined): number | null {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100; // utime + stime in clock ticks (USER_HZ 100)
  } catch {
    return null;
  }
}

interface Target {
  mode: (typeof MODES)[number];
  repetition: number;
  receiver: Receiver;
  merchant: CreatedMerchant;
  behaviour: { mode: Mode };
}

describe(`slow and broken webhook receivers leave API p99 within 20% (${process.env.DATABASE_URL ? 'postgres' : 'embedded'})`, () => {
  let storage: Storage;
  const targets: Target[] = [];
  before(async () => {
    storage = await reliabilityStorage('receivers');
  });
  after(async () => {
    killAllServers();
    for (const target of targets) await target.receiver.close();
    await storage?.drop();
  });

  it('API p99 with timing-out, failing and resetting receivers stays within 20% (or +5 ms) of a healthy receiver', {
    timeout: 240_000,
  }, async (t) => {
    // ---- receivers and merchants (created before the server: embedded storage is one process at a time)
    let api!: CreatedMerchant;
    await storage.with(async (db) => {
      api = await newMerchant(db, 'Receivers API Load', null);
      // repetition 0 is the warm-up (healthy); the closing healthy phase of the run has repetition last + 1.
      for (let repetition = 0; repetition <= REPETITIONS + EXTRA_REPETITIONS + 1; repetition++) {
        for (const mode of repetition === 0 || repetition > REPETITIONS + EXTRA_REPETITIONS
          ? (['healthy'] as const)
          : MODES) {
          const behaviour: { mode: Mode } = { mode };
          const receiver = await startReceiver((request, res, req) => {
            switch (behaviour.mode) {
              case 'healthy':
                return void res.end('ok');
              case 'timeout':
                // Every other try never answers, the others answer 200 only after the worker's deadline.
                if (request.n % 2 === 0) setTimeout(() => res.end('too late'), WEBHOOK_TIMEOUT_MS + 500);
                return;
              case '500':
                res.statusCode = 500;
                return void res.end('internal error');
              case 'reset':
                return void req.socket.destroy();
              case 'gone':
                res.statusCode = 410;
                return void res.end('gone');
            }
          });
          const merchant = await newMerchant(db, `Receivers ${mode} ${repetition}`, receiver.url);
          targets.push({ mode, repetition, receiver, merchant, behaviour });
        }
      }
    });

    const server: Server = await startServer(storage.env(), {
      WEBHOOK_TIMEOUT_MS: String(WEBHOOK_TIMEOUT_MS),
      WEBHOOK_CLAIM_TTL_S: '5',
      WEBHOOK_POLL_MS: '50',
      WEBHOOK_RETRY_SCHEDULE_S: process.env.RECEIVERS_RETRY_SCHEDULE_S ?? '1,30,300',
    });

    /** One paid payment with the target's key: checkout.session.pending + checkout.session.completed. */
    async function payment(target: Target, i: number): Promise<void> {
      const key = target.merchant.test_api_key;
      const session = await call(server.base, 'POST', '/api/v1/sessions', {
        key,
        body: { amount_minor: 1_000 + i, invoice_ref: `INV-RCV-${i}` },
      });
      assert.equal(session.status, 201, session.text);
      const quote = await call(server.base, 'GET', `/api/v1/checkout/sessions/${session.body.id}/quote`);
      const attempt = await call(
        server.base,
        'POST',
        `/api/v1/checkout/sessions/${session.body.id}/provider-attempts`,
        {
          body: {
            rail: 'momo',
            amount_minor: quote.body.surcharges.momo.total_minor,
            operator: 'mtn',
            phone: MTN_PHONE,
          },
        },
      );
      assert.equal(attempt.status, 201, attempt.text);
      const paid = await call(
        server.base,
        'POST',
        `/api/v1/test/payment-attempts/${attempt.body.attempt_reference}/simulate`,
        { key, body: { outcome: 'paid' } },
      );
      assert.equal(paid.status, 200, paid.text);
    }

    /** Starts the paced producer; the returned function stops it and resolves with the payments made. */
    function produce(target: Target): () => Promise<number> {
      let stopped = false;
      let made = 0;
      const loop = (async () => {
        let next = performance.now();
        while (!stopped) {
          await payment(target, made++);
          next += PAYMENT_EVERY_MS;
          const wait = next - performance.now();
          if (wait > 0) await sleep(wait);
          else next = performance.now(); // behind: no burst to catch up
        }
      })();
      return async () => {
        stopped = true;
        await loop;
        return made;
      };
    }

    /** CONNECTIONS clients, each `iterations` x (POST session, GET session); every latency in ms. */
    async function measure(iterations: number): Promise<number[]> {
      const latencies: number[] = [];
      await Promise.all(
        Array.from({ length: CONNECTIONS }, async (_, c) => {
          for (let i = 0; i < iterations; i++) {
            const created = await call(server.base, 'POST', '/api/v1/sessions', {
              key: api.test_api_key,
              body: { amount_minor: 5_000, invoice_ref: `INV-P99-${c}-${i}` },
            });
            assert.equal(created.status, 201, created.text);
            latencies.push(created.ms);
            const read = await call(server.base, 'GET', `/api/v1/sessions/${created.body.id}`, {
              key: api.test_api_key,
            });
            assert.equal(read.status, 200, read.text);
            latencies.push(read.ms);
          }
        }),
      );
      return latencies;
    }

    /**
     * Lets the receiver's endpoint go: it answers 410 from now on, which disables the endpoint at the next
     * retry (a broken mode always has retries due within a second or two). Waits for that 410 (broken modes) and then
     * until no delivery reaches the receiver for 1.2 s.
     */
    async function retire(target: Target): Promise<void> {
      const from = target.receiver.requests.length;
      target.behaviour.mode = 'gone';
      let seen = -1;
      let quietSince = performance.now();
      await waitFor(
        `the ${target.mode} receiver to be disabled and quiet`,
        () => {
          if (target.receiver.requests.length !== seen || target.receiver.inFlight() > 0) {
            seen = target.receiver.requests.length;
            quietSince = performance.now();
          }
          const disabled = target.mode === 'healthy' || target.receiver.requests.length > from;
          return disabled && performance.now() - quietSince > 1_200;
        },
        30_000,
        50,
      );
    }

    interface Phase {
      mode: string;
      repetition: number;
      p50: number;
      p99: number;
      max: number;
      payments: number;
      deliveries: number;
      maxInFlight: number;
      /** Server CPU ms per measured request (the producer's and the worker's work included). */
      cpuPerRequest: number | null;
    }
    const phases: Phase[] = [];
    async function phase(target: Target, iterations: number): Promise<Phase> {
      const stop = produce(target);
      await sleep(FLOWING_BEFORE_MEASURE_MS);
      let maxInFlight = 0;
      const sampler = setInterval(() => (maxInFlight = Math.max(maxInFlight, target.receiver.inFlight())), 20);
      const cpuBefore = cpuMs(server.child.pid);
      const latencies = await measure(iterations);
      const cpuAfter = cpuMs(server.child.pid);
      clearInterval(sampler);
      const payments = await stop();
      const deliveries = target.receiver.requests.length;
      await retire(target);
      return {
        mode: target.mode,
        repetition: target.repetition,
        p50: quantile(latencies, 0.5),
        p99: quantile(latencies, 0.99),
        max: Math.max(...latencies),
        payments,
        deliveries,
        maxInFlight,
        cpuPerRequest: cpuBefore === null || cpuAfter === null ? null : (cpuAfter - cpuBefore) / latencies.length,
      };
    }

    const run = async (repetition: number, mode: string) => {
      const result = await phase(
        targets.find((x) => x.repetition === repetition && x.mode === mode)!,
        ITERATIONS_PER_CONNECTION,
      );
      phases.push(result);
      t.diagnostic(
        `rep ${repetition} ${mode.padEnd(7)}: p50 ${round1(result.p50)} ms, p99 ${round1(result.p99)} ms, max ${round1(result.max)} ms; ` +
          `${result.payments} payments, ${result.deliveries} tries at the receiver (at most ${result.maxInFlight} open); server CPU ${result.cpuPerRequest === null ? '?' : result.cpuPerRequest.toFixed(2)} ms/request`,
      );
    };
    const limitOf = (baseline: number) => Math.max(baseline * RELATIVE_LIMIT, baseline + ABSOLUTE_FLOOR_MS);
    const p99Of = (repetition: number, mode: string) =>
      phases.find((p) => p.repetition === repetition && p.mode === mode)!.p99;
    /** Per repetition: the broken p99, its paired healthy baseline and their ratio to the limit. */
    const verdict = (mode: string, repetitions: number) => {
      const rows = Array.from({ length: repetitions }, (_, k) => {
        const r = k + 1;
        const baseline = (p99Of(r, 'healthy') + p99Of(r + 1, 'healthy')) / 2;
        return { r, p99: p99Of(r, mode), baseline, ratio: p99Of(r, mode) / limitOf(baseline) };
      });
      return { rows, ratio: median(rows.map((row) => row.ratio)) };
    };

    try {
      assert.equal(defaultDeliveryOptions().perEndpointMax, PER_ENDPOINT_IN_FLIGHT_MAX);
      const started = performance.now();
      const warm = await phase(targets.find((x) => x.repetition === 0)!, WARMUP_ITERATIONS);
      t.diagnostic(`warm-up: p50 ${round1(warm.p50)} ms, p99 ${round1(warm.p99)} ms`);
      let repetitions = REPETITIONS;
      for (let repetition = 1; repetition <= repetitions; repetition++)
        for (const mode of MODES) await run(repetition, mode);
      await run(repetitions + 1, 'healthy');
      const broken = MODES.filter((m) => m !== 'healthy');
      if (broken.some((mode) => verdict(mode, repetitions).ratio > 1)) {
        t.diagnostic(`a mode is over its limit after ${repetitions} repetitions: ${EXTRA_REPETITIONS} more`);
        // The closing healthy phase is the first phase of the next repetition.
        for (let repetition = repetitions + 1; repetition <= repetitions + EXTRA_REPETITIONS; repetition++) {
          for (const mode of MODES) if (repetition > repetitions + 1 || mode !== 'healthy') await run(repetition, mode);
        }
        repetitions += EXTRA_REPETITIONS;
        await run(repetitions + 1, 'healthy');
      }
      assert.equal(server.child.exitCode, null, 'the server is still running');
      assert.equal(await server.stop(), 0, `graceful stop; output:\n${server.output.slice(-20).join('\n')}`);

      const healthyP99 = median(phases.filter((p) => p.mode === 'healthy').map((p) => p.p99));
      const lines = broken.map((mode) => {
        const v = verdict(mode, repetitions);
        const reps = v.rows.map((row) => `${round1(row.p99)}/${round1(limitOf(row.baseline))}`).join(' ');
        return `${mode}: median p99 ${round1(median(v.rows.map((row) => row.p99)))} ms, p99/limit per rep ${reps} -> median ratio ${v.ratio.toFixed(2)}`;
      });
      t.diagnostic(
        `${storage.kind}, ${repetitions} repetitions, healthy median p99 ${round1(healthyP99)} ms; ${lines.join('; ')}; ${Math.round((performance.now() - started) / 1000)} s`,
      );

      // The broken receivers were really exercised: events reached them and failed, and were retried.
      for (const p of phases) {
        assert.ok(
          p.payments > 0 && p.deliveries > 0,
          `rep ${p.repetition} ${p.mode}: events flowed to the receiver (${p.payments} payments, ${p.deliveries} tries)`,
        );
        if (p.mode === '500' || p.mode === 'reset')
          assert.ok(
            p.deliveries > p.payments * 2,
            `rep ${p.repetition} ${p.mode}: failed deliveries were retried (${p.deliveries} tries for ${p.payments * 2} events)`,
          );
        if (p.mode === 'timeout') {
          assert.ok(p.maxInFlight > 0, `rep ${p.repetition} timeout: tries were held open`);
          // +1: a try the worker has just given up on may not have closed its socket yet when the next one opens.
          assert.ok(
            p.maxInFlight <= PER_ENDPOINT_IN_FLIGHT_MAX + 1,
            `rep ${p.repetition} timeout: ${p.maxInFlight} tries open on one endpoint (cap ${PER_ENDPOINT_IN_FLIGHT_MAX})`,
          );
        }
      }
      for (const mode of broken) {
        const v = verdict(mode, repetitions);
        assert.ok(
          v.ratio <= 1,
          `${mode}: median p99/limit ${v.ratio.toFixed(2)} > 1 (${JSON.stringify(v.rows.map((row) => ({ p99: round1(row.p99), healthy: round1(row.baseline) })))})`,
        );
      }
    } finally {
      await server.kill();
    }
  });
});
