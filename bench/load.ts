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
  /** Mean of the per-second request counts (autocannon's requests.mean). */
  reqPerSec: number;
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
  method: 'GET' | 'POST';
  path: string;
  headers: Record<string, string>;
  body?: string;
  /** Called for every request; its headers are added to that request (a fresh Idempotency-Key). */
  perRequestHeaders?: () => Record<string, string>;
  /** The server's pid, for CPU accounting. */
  serverPid?: number;
  /** The server uses the PostgreSQL server (its CPU is part of the cost), not embedded PGlite. */
  usesPostgres?: boolean;
}

function options(spec: LoadSpec, durationS: number, connections: number, counters: { replayed: number }) {
  const request: RequestSpec = { method: spec.method, path: spec.path, headers: spec.headers };
  request.onResponse = (_status, _body, _context, headers) => {
    for (const name of Object.keys(headers)) if (name.toLowerCase() === 'idempotent-replayed') counters.replayed++;
  };
  if (spec.body !== undefined) request.body = spec.body;
  const perRequest = spec.perRequestHeaders;
  if (perRequest) {
    // autocannon rebuilds the request buffer for every request when setupRequest is set; the
    // callback runs in this process for all connections, so a shared counter stays unique.
    request.setupRequest = (req) => ({ ...req, headers: { ...req.headers, ...perRequest() } });
  }
  return { url: spec.url, connections, duration: durationS, pipelining: 1, timeout: 10, requests: [request] };
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
  return {
    label: spec.label,
    method: spec.method,
    path: spec.path,
    durationS: result.duration,
    connections: settings.connections,
    reqPerSec: result.requests.mean,
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
    cpu: cpuUsage(cpuBefore, cpuAfter, result['2xx'], spec.usesPostgres ?? false),
  };
}

/** A failed request of any kind, in the measured run or its warm-up. */
export const failures = (r: LoadResult): number => r.non2xx + r.errors + r.timeouts + r.warmupNon2xx + r.warmupErrors + r.replayed;
