// Prometheus metrics at /metrics: request counts and latency histograms by route.
import type { FastifyInstance } from 'fastify';
import { Counter, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { BatchOutcome } from '../payouts/batch-writer.ts';

export function registerMetrics(app: FastifyInstance): Registry {
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
  app.get('/metrics', { schema: { hide: true } }, async (_request, reply) => {
    reply.type(registry.contentType);
    return registry.metrics();
  });
  return registry;
}

/** How many payouts each payout statement was given (src/payouts/batch-writer.ts), and how it went. */
export function payoutBatchMetric(registry: Registry): (size: number, outcome: BatchOutcome) => void {
  const sizes = new Histogram({
    name: 'sika_payout_batch_size',
    help: 'Payouts per payout-writing statement; outcome "one by one": the batch failed and was written singly; "failed": storage was unreachable',
    labelNames: ['outcome'] as const,
    buckets: [1, 2, 4, 8, 16, 32],
    registers: [registry],
  });
  return (size, outcome) => sizes.observe({ outcome }, size);
}
