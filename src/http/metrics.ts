// Prometheus metrics at /metrics: request counts and latency histograms by route. Served on the API port
// behind METRICS_TOKEN (or open on a developer's loopback instance), or on its own METRICS_PORT.
import { createHash, timingSafeEqual } from 'node:crypto';
import { createServer, type Server, type ServerResponse } from 'node:http';
import type { FastifyInstance } from 'fastify';
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { StorageAvailability } from '../db/index.ts';
import { errors } from '../lib/errors.ts';

export interface MetricsExposure {
  /** METRICS_TOKEN: the scraper must send it as a Bearer token. */
  token: string | null;
  /** Served on the API port (a token is set, or this is a developer's loopback instance). */
  onApiPort: boolean;
  /** METRICS_PORT: served on its own listener on this port (of host) instead, started with the app. */
  port: number | null;
  host: string;
}

const sha256 = (text: string) => createHash('sha256').update(text).digest();

/** Whether an Authorization header carries the token (compared in constant time; no token set: anyone). */
export function metricsAuthorized(token: string | null, authorization: string | undefined): boolean {
  if (token === null) return true;
  const presented = /^Bearer[ ]+(\S+)\s*$/i.exec(authorization ?? '')?.[1] ?? '';
  return timingSafeEqual(sha256(presented), sha256(token));
}

export function registerMetrics(app: FastifyInstance, exposure: MetricsExposure): Registry {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  const requests = new Counter({
    name: 'sika_http_requests_total',
    help: 'HTTP requests by method, route and status code',
    labelNames: ['method', 'route', 'status_code'] as const,
    registers: [registry],
  });
  const duration = new Histogram({
    name: 'sika_http_request_duration_seconds',
    help: 'HTTP request latency by method and route',
    labelNames: ['method', 'route'] as const,
    buckets: [0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
    registers: [registry],
  });

  app.addHook('onResponse', (request, reply, done) => {
    // The route pattern, never the raw URL, so ids do not explode the label set.
    const route = request.routeOptions.url ?? 'unmatched';
    requests.inc({ method: request.method, route, status_code: String(reply.statusCode) });
    duration.observe({ method: request.method, route }, reply.elapsedTime / 1000);
    done();
  });
  if (exposure.onApiPort) {
    app.get('/metrics', { schema: { hide: true } }, async (request, reply) => {
      if (!metricsAuthorized(exposure.token, request.headers.authorization)) throw errors.unauthorized();
      reply.type(registry.contentType);
      return registry.metrics();
    });
  }
  if (exposure.port !== null) {
    const server = metricsServer(registry, exposure.token);
    app.addHook('onListen', async () => {
      await new Promise<void>((resolve, reject) => {
        server.once('error', reject);
        server.listen(exposure.port!, exposure.host, () => resolve());
      });
      app.log.info(
        { metrics: `http://${exposure.host}:${exposure.port}/metrics` },
        'metrics listening on their own port',
      );
    });
    app.addHook('onClose', async () => {
      if (server.listening) await new Promise<void>((resolve) => server.close(() => resolve()));
    });
  }
  return registry;
}

/** The metrics port: GET /metrics (with the token when one is set), nothing else. */
function metricsServer(registry: Registry, token: string | null): Server {
  const send = (res: ServerResponse, status: number, type: string, body: string) => {
    res.writeHead(status, {
      'content-type': type,
      'content-length': Buffer.byteLength(body),
      'cache-control': 'no-store',
    });
    res.end(body);
  };
  const refuse = (res: ServerResponse, status: number, code: string, message: string) =>
    send(res, status, 'application/json; charset=utf-8', JSON.stringify({ error: { code, message } }));
  const server = createServer({ headersTimeout: 5_000, requestTimeout: 10_000 }, (req, res) => {
    if (req.method !== 'GET' || (req.url ?? '').split('?')[0] !== '/metrics')
      return refuse(res, 404, 'NOT_FOUND', 'Only GET /metrics is served here.');
    if (!metricsAuthorized(token, req.headers.authorization))
      return refuse(res, 401, 'UNAUTHORIZED', 'A valid metrics token is required.');
    registry.metrics().then(
      (text) => send(res, 200, registry.contentType, text),
      () => refuse(res, 500, 'INTERNAL', 'Metrics could not be collected.'),
    );
  });
  server.keepAliveTimeout = 5_000;
  return server;
}

/**
 * Storage as this process's background jobs see it (src/db/availability.ts): whether it takes work now, how many
 * outages paused them, and for how long in all. /readyz answers the same question per request.
 */
export function storageAvailabilityMetrics(
  registry: Registry,
  availability: Pick<StorageAvailability, 'available' | 'watch'>,
): void {
  new Gauge({
    name: 'sika_storage_available',
    help: '1 while storage takes work (a primary answers), 0 while background jobs are paused by a storage outage',
    registers: [registry],
    collect() {
      this.set(availability.available ? 1 : 0);
    },
  });
  const outages = new Counter({
    name: 'sika_storage_outages_total',
    help: 'Storage outages that paused the background jobs (a failover, a crash)',
    registers: [registry],
  });
  const downSeconds = new Counter({
    name: 'sika_storage_outage_seconds_total',
    help: 'Seconds the background jobs spent paused by storage outages that have ended',
    registers: [registry],
  });
  availability.watch((change) => {
    if (!change.available) outages.inc();
    else downSeconds.inc(change.downMs / 1000);
  });
}
