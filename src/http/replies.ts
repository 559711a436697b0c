import type { FastifyReply } from 'fastify';
import type { Outcome } from './idempotency.ts';

/** Sends an idempotent outcome; a replay carries Idempotent-Replayed: true (DESIGN §3). */
export function sendOutcome<Body>(reply: FastifyReply, outcome: Outcome<Body>): FastifyReply {
  if (outcome.replayed) reply.header('idempotent-replayed', 'true');
  return reply.code(outcome.status).send(outcome.body);
}
