// An offered load that is steady: one unit of work (a journey: its requests in sequence) started every
// 1/rate seconds, whatever the earlier ones are doing (an open loop), over keep-alive connections.
//
// Why not autocannon's overallRate: autocannon (lib/httpClient.js) gives each connection a quota of
// requests per second and resets every connection's quota at the top of each second, so every connection
// sends its whole quota back to back and then waits: at "half the peak" the server runs flat out for part
// of each second and idles for the rest, and the latency measured is that of a saturated server (issue 37
// measured create-to-webhook p99 of 0.5-1.3 s that way). A merchant's customers arrive one by one.
import http from 'node:http';
import type { RequestSpec } from 'autocannon';
import { cpuSnapshot, cpuUsage } from './cpu.ts';
import type { LoadResult, LoadSettings, LoadSpec } from './load.ts';
import { percentile } from './report.ts';

const REQUEST_TIMEOUT_MS = 10_000;
const SETTLE_MS = 1_000;

interface Tally {
  latencies: number[];
  ok: number;
  non2xx: number;
  errors: number;
  timeouts: number;
  statusCodes: Record<string, number>;
  units: number;
}

const emptyTally = (): Tally => ({
  latencies: [],
  ok: 0,
  non2xx: 0,
  errors: 0,
  timeouts: 0,
  statusCodes: {},
  units: 0,
});

function send(
  agent: http.Agent,
  base: URL,
  request: RequestSpec,
): Promise<{ status: number; body: string; headers: http.IncomingHttpHeaders } | 'timeout' | 'error'> {
  return new Promise((resolve) => {
    const req = http.request(
      {
        agent,
        host: base.hostname,
        port: base.port,
        method: request.method ?? 'GET',
        path: request.path ?? '/',
        headers: {
          ...(request.headers ?? {}),
          ...(request.body !== undefined ? { 'content-length': String(Buffer.byteLength(request.body)) } : {}),
        },
        timeout: REQUEST_TIMEOUT_MS,
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () =>
          resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8'), headers: res.headers }),
        );
        res.on('error', () => resolve('error'));
      },
    );
    req.on('timeout', () => {
      req.destroy();
      resolve('timeout');
    });
    req.on('error', () => resolve('error'));
    req.end(request.body);
  });
}

/** One unit: its requests in order, each set up from the context the earlier answers filled; stops at a failure. */
async function runUnit(agent: http.Agent, base: URL, requests: readonly RequestSpec[], tally: Tally): Promise<void> {
  const context: Record<string, unknown> = {};
  for (const template of requests) {
    const request = template.setupRequest ? template.setupRequest({ ...template }, context) : template;
    if (!request) return;
    const started = performance.now();
    const answer = await send(agent, base, request);
    tally.latencies.push(performance.now() - started);
    if (answer === 'timeout' || answer === 'error') {
      if (answer === 'timeout') tally.timeouts++;
      else tally.errors++;
      return;
    }
    tally.statusCodes[answer.status] = (tally.statusCodes[answer.status] ?? 0) + 1;
    if (answer.status < 200 || answer.status >= 300) {
      tally.non2xx++;
      return;
    }
    tally.ok++;
    template.onResponse?.(answer.status, answer.body, context, answer.headers as Record<string, string | string[]>);
  }
  tally.units++;
}

/** Starts a unit every 1000/unitsPerS ms for durationS seconds, then waits for the last to finish. */
async function offer(spec: LoadSpec, durationS: number, unitsPerS: number, agent: http.Agent): Promise<Tally> {
  const tally = emptyTally();
  const base = new URL(spec.url);
  const intervalMs = 1000 / unitsPerS;
  const startedAt = performance.now();
  const total = Math.round(durationS * unitsPerS);
  const running: Promise<void>[] = [];
  for (let i = 0; i < total; i++) {
    const dueAt = startedAt + i * intervalMs;
    const waitMs = dueAt - performance.now();
    if (waitMs > 1) await new Promise((resolve) => setTimeout(resolve, waitMs));
    running.push(runUnit(agent, base, spec.requests, tally));
  }
  await Promise.all(running);
  return tally;
}

/** A paced run in the shape of an autocannon one (bench/load.ts), per unit of work. */
export async function runPacedLoad(spec: LoadSpec, settings: LoadSettings, unitsPerS: number): Promise<LoadResult> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 512 });
  try {
    const warm = settings.warmupS > 0 ? await offer(spec, settings.warmupS, unitsPerS, agent) : emptyTally();
    const cpuBefore = cpuSnapshot(spec.serverPid);
    const startedAt = performance.now();
    const tally = await offer(spec, settings.durationS, unitsPerS, agent);
    const elapsedS = (performance.now() - startedAt) / 1000;
    const cpuAfter = cpuSnapshot(spec.serverPid);
    await new Promise((resolve) => setTimeout(resolve, SETTLE_MS));
    const sorted = [...tally.latencies].sort((a, b) => a - b);
    const mean = sorted.length ? sorted.reduce((a, b) => a + b, 0) / sorted.length : 0;
    return {
      label: spec.label,
      method: spec.method,
      path: spec.path,
      durationS: settings.durationS,
      connections: agent.maxSockets,
      reqPerSec: tally.units / elapsedS,
      latencyP50Ms: Math.round(percentile(sorted, 50)),
      latencyP99Ms: Math.round(percentile(sorted, 99)),
      latencyMeanMs: mean,
      latencyMaxMs: Math.round(sorted.at(-1) ?? 0),
      responses2xx: tally.ok,
      non2xx: tally.non2xx,
      errors: tally.errors,
      timeouts: tally.timeouts,
      statusCodes: tally.statusCodes,
      replayed: 0,
      warmupNon2xx: warm.non2xx,
      warmupErrors: warm.errors + warm.timeouts,
      cpu: cpuUsage(cpuBefore, cpuAfter, tally.units, spec.usesPostgres ?? false),
    };
  } finally {
    agent.destroy();
  }
}
