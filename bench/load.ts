// One load run with autocannon, reduced to the figures the report needs.
import autocannon, { type RequestSpec } from 'autocannon';
import { cpuSnapshot, cpuUsage, type CpuUsage } from './cpu.ts';

const SETTLE_MS = 1_000;

export interface LoadSettings {
  durationS: number;
  connections: number;
  warmupS: number;
}

export interface LoadResult {
  label: string;
  method: string;
  path: string;
  durationS: number;
  connections: number;
  /** Mean of the per-second request counts (autocannon's requests.mean), per unit of work (a journey counts once). */
  reqPerSec: number;
  /** Latencies are per request (for a journey: per step). */
  latencyP50Ms: number;
  latencyP99Ms: number;
  latencyMeanMs: number;
  latencyMaxMs: number;
  responses2xx: number;
  non2xx: number;
  /** Socket errors and timeouts: requests that got no response at all. */
  errors: number;
  timeouts: number;
  statusCodes: Record<string, number>;
  /** Responses that were idempotent replays (Idempotent-Replayed: true): a key was reused, so not a new session. */
  replayed: number;
  warmupNon2xx: number;
  warmupErrors: number;
  /** CPU per request during the measured run; null where /proc is not available. */
  cpu: CpuUsage | null;
}

export interface LoadSpec {
  label: string;
  url: string;
  /** For the report: the first request's method and path. */
  method: 'GET' | 'POST';
  path: string;
  /** The request sequence each connection runs in a loop (one request for the simple scenarios). */
  requests: RequestSpec[];
  /** Replace [<id>] in each request (headers included) with a fresh unique id: a new Idempotency-Key per request. */
  idReplacement?: boolean;
  /** The server's pid, for CPU accounting. */
  serverPid?: number;
  /** The server uses the PostgreSQL server (its CPU is part of the cost), not embedded PGlite. */
  usesPostgres?: boolean;
  /** Requests per unit of work (4 for a payment journey): req/s is divided by it, CPU multiplied. */
  requestsPerUnit?: number;
}

function options(spec: LoadSpec, durationS: number, connections: number, counters: { replayed: number }) {
  const requests = spec.requests.map((request): RequestSpec => {
    const onResponse = request.onResponse;
    return {
      ...request,
      onResponse(status, body, context, headers) {
        for (const name of Object.keys(headers)) if (name.toLowerCase() === 'idempotent-replayed') counters.replayed++;
        onResponse?.(status, body, context, headers);
      },
    };
  });
  return {
    url: spec.url,
    connections,
    duration: durationS,
    pipelining: 1,
    timeout: 10,
    requests,
    idReplacement: spec.idReplacement ?? false,
  };
}

export async function runLoad(spec: LoadSpec, settings: LoadSettings): Promise<LoadResult> {
  let warmupNon2xx = 0;
  let warmupErrors = 0;
  const counters = { replayed: 0 };
  if (settings.warmupS > 0) {
    const warm = await autocannon(options(spec, settings.warmupS, settings.connections, counters));
    warmupNon2xx = warm.non2xx;
    warmupErrors = warm.errors + warm.timeouts;
  }
  const cpuBefore = cpuSnapshot(spec.serverPid);
  const result = await autocannon(options(spec, settings.durationS, settings.connections, counters));
  const cpuAfter = cpuSnapshot(spec.serverPid);
  // Requests still in flight when the driver stopped finish on the server; let them, before the next run.
  await new Promise((resolve) => setTimeout(resolve, SETTLE_MS));
  const statusCodes: Record<string, number> = {};
  for (const [code, stat] of Object.entries(result.statusCodeStats)) statusCodes[code] = stat.count;
  const perUnit = spec.requestsPerUnit ?? 1;
  const units = Math.floor(result['2xx'] / perUnit);
  const cpu = cpuUsage(cpuBefore, cpuAfter, units, spec.usesPostgres ?? false);
  return {
    label: spec.label,
    method: spec.method,
    path: spec.path,
    durationS: result.duration,
    connections: settings.connections,
    reqPerSec: result.requests.mean / perUnit,
    latencyP50Ms: result.latency.p50,
    latencyP99Ms: result.latency.p99,
    latencyMeanMs: result.latency.mean,
    latencyMaxMs: result.latency.max,
    responses2xx: result['2xx'],
    non2xx: result.non2xx,
    errors: result.errors,
    timeouts: result.timeouts,
    statusCodes,
    replayed: counters.replayed,
    warmupNon2xx,
    warmupErrors,
    cpu,
  };
}

/** A failed request of any kind, in the measured run or its warm-up. */
export const failures = (r: LoadResult): number =>
  r.non2xx + r.errors + r.timeouts + r.warmupNon2xx + r.warmupErrors + r.replayed;

/**
 * Two runs of the same scenario as one figure: the mean of their rates, latencies and CPU, their failures
 * summed. A baseline measured just before and just after the runs it is compared with cancels a machine
 * that speeds up or slows down over the minute between (as shared machines do).
 */
export function meanLoad(a: LoadResult, b: LoadResult, label: string): LoadResult {
  const mean = (x: number, y: number) => (x + y) / 2;
  const cpu =
    a.cpu && b.cpu
      ? {
          serverUsPerReq: mean(a.cpu.serverUsPerReq, b.cpu.serverUsPerReq),
          postgresUsPerReq: mean(a.cpu.postgresUsPerReq, b.cpu.postgresUsPerReq),
          driverUsPerReq: mean(a.cpu.driverUsPerReq, b.cpu.driverUsPerReq),
          machineBusy: mean(a.cpu.machineBusy, b.cpu.machineBusy),
          otherBusy: mean(a.cpu.otherBusy, b.cpu.otherBusy),
        }
      : null;
  const statusCodes: Record<string, number> = { ...a.statusCodes };
  for (const [code, n] of Object.entries(b.statusCodes)) statusCodes[code] = (statusCodes[code] ?? 0) + n;
  return {
    ...a,
    label,
    durationS: a.durationS + b.durationS,
    reqPerSec: mean(a.reqPerSec, b.reqPerSec),
    latencyP50Ms: mean(a.latencyP50Ms, b.latencyP50Ms),
    latencyP99Ms: mean(a.latencyP99Ms, b.latencyP99Ms),
    latencyMeanMs: mean(a.latencyMeanMs, b.latencyMeanMs),
    latencyMaxMs: Math.max(a.latencyMaxMs, b.latencyMaxMs),
    responses2xx: a.responses2xx + b.responses2xx,
    non2xx: a.non2xx + b.non2xx,
    errors: a.errors + b.errors,
    timeouts: a.timeouts + b.timeouts,
    statusCodes,
    replayed: a.replayed + b.replayed,
    warmupNon2xx: a.warmupNon2xx + b.warmupNon2xx,
    warmupErrors: a.warmupErrors + b.warmupErrors,
    cpu,
  };
}
