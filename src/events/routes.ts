// GET /api/v1/events and /api/v1/events/{id}: the calling key's merchant and environment only. Thin.
import { Type, type Static } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { ID_PARAM_LENGTH_MAX } from '../checkout/model.ts';
import { principalOf } from '../http/auth.ts';
import type { AppDeps } from '../http/deps.ts';
import { errorResponses } from '../http/schemas.ts';
import { EVENT_LIST_LIMIT_DEFAULT, EVENT_LIST_LIMIT_MAX, getEvent, listEvents } from './event-list.ts';

const EventBody = Type.Object(
  {
    id: Type.String({ description: 'evt_...; the webhook-id of its deliveries.' }),
    type: Type.String(),
    created_at: Type.String({ format: 'date-time' }),
    environment: Type.String(),
    livemode: Type.Boolean(),
    data: Type.Object({}, { additionalProperties: true }),
  },
  { $id: 'Event', title: 'Event', additionalProperties: true, description: 'Exactly the body its webhook deliveries carry.' },
);

const ListEventsQuery = Type.Object(
  {
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: EVENT_LIST_LIMIT_MAX, default: EVENT_LIST_LIMIT_DEFAULT })),
    starting_after: Type.Optional(Type.String({ minLength: 1, maxLength: ID_PARAM_LENGTH_MAX, description: 'The last event id of the previous page.' })),
    type: Type.Optional(Type.String({ minLength: 1, maxLength: 100, description: 'e.g. checkout.session.completed, refund.succeeded.' })),
    object_id: Type.Optional(Type.String({ minLength: 1, maxLength: ID_PARAM_LENGTH_MAX, description: 'Events of one session, payout or refund.' })),
    created_gte: Type.Optional(Type.String({ format: 'date-time' })),
    created_lt: Type.Optional(Type.String({ format: 'date-time' })),
  },
  { additionalProperties: false },
);

export async function eventRoutes(app: FastifyInstance, deps: AppDeps): Promise<void> {
  const { db } = deps;
  app.addSchema(EventBody);
  app.get<{ Querystring: Static<typeof ListEventsQuery> }>(
    '/api/v1/events',
    {
      schema: {
        tags: ['Events'],
        summary: 'List events',
        description: 'Your events, newest first, as their webhooks carry them: catch up after downtime. Page with limit and starting_after while has_more is true.',
        security: [{ apiKey: [] }],
        querystring: ListEventsQuery,
        response: {
          200: Type.Object({ object: Type.Literal('list'), data: Type.Array(Type.Ref('Event')), has_more: Type.Boolean() }, { title: 'Event list' }),
          ...errorResponses(400, 401, 429),
        },
      },
    },
    async (request) => listEvents(db, principalOf(request), request.query),
  );
  app.get<{ Params: { id: string } }>(
    '/api/v1/events/:id',
    {
      schema: {
        tags: ['Events'],
        summary: 'Retrieve an event',
        security: [{ apiKey: [] }],
        params: Type.Object({ id: Type.String({ minLength: 1, maxLength: ID_PARAM_LENGTH_MAX }) }),
        response: { 200: Type.Ref('Event'), ...errorResponses(401, 404, 429) },
      },
    },
    async (request) => getEvent(db, principalOf(request), request.params.id),
  );
}
