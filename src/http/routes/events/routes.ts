// The merchant API's events, the calling key's merchant and environment only: the list and one event
// (with its deliveries), replays of one event or a time range, and the Test event stream (SSE) that
// `sika listen` reads. Thin: parse, authorize, call one service function.
import { Type, type Static } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { ID_PARAM_LENGTH_MAX } from '../../../checkout/model.ts';
import { principalOf } from '../../auth.ts';
import type { AppDeps } from '../../deps.ts';
import { transactionWork, workAs, idempotentPost } from '../../idempotency.ts';
import { errorResponses, StringEnum } from '../../schemas.ts';
import { WEBHOOK_ENDPOINT_STATUSES } from '../../../accounts/model.ts';
import { streamSigningSecrets } from '../../../accounts/webhook-endpoints.ts';
import {
  EVENT_DELIVERY_TRIES_SHOWN_MAX,
  EVENT_LIST_LIMIT_DEFAULT,
  EVENT_LIST_LIMIT_MAX,
  getEvent,
  listEvents,
} from '../../../events/event-list.ts';
import {
  EVENT_REPLAY_INTERVAL_S,
  EVENT_REPLAY_RANGE_DAYS_MAX,
  EVENT_REPLAY_ROWS_MAX,
  checkReplayRange,
  replayEventForKey,
  replayEventRange,
  type RangeReplayInput,
} from '../../../events/replay.ts';
import {
  EVENT_STREAM_CURSOR_LENGTH_MAX,
  EVENT_STREAM_HEARTBEAT_MS,
  EVENT_STREAM_TYPES_MAX,
  EVENT_STREAMS_PER_KEY_MAX,
  EVENT_TYPE_LENGTH_MAX,
  EventStreams,
  assertStreamAllowed,
  parseCursor,
  parseTypes,
} from '../../../events/stream.ts';

const EventBody = Type.Object(
  {
    id: Type.String({ description: 'evt_...; the webhook-id of its deliveries.' }),
    type: Type.String(),
    created_at: Type.String({ format: 'date-time' }),
    environment: Type.String(),
    livemode: Type.Boolean(),
    data: Type.Object({}, { additionalProperties: true }),
  },
  {
    $id: 'Event',
    title: 'Event',
    additionalProperties: true,
    description: 'Exactly the body its webhook deliveries carry.',
  },
);

const EventList = Type.Object(
  { object: Type.Literal('list'), data: Type.Array(Type.Ref('Event')), has_more: Type.Boolean() },
  { $id: 'EventList', title: 'Event list' },
);

const DeliveryTry = Type.Object(
  {
    try_number: Type.Integer({
      description: '1 for the first send; replays add tries numbered after the earlier ones.',
    }),
    tried_at: Type.String({ format: 'date-time' }),
    http_status: Type.Union([Type.Integer(), Type.Null()], {
      description: "Your endpoint's answer; null when none came (timeout, refused connection).",
    }),
    latency_ms: Type.Integer(),
    error: Type.Union([Type.String(), Type.Null()], { description: 'Why the try failed; null for a 2xx.' }),
  },
  { $id: 'EventDeliveryTry', title: 'Webhook delivery try' },
);

const Delivery = Type.Object(
  {
    id: Type.String({ description: 'The delivery (one per event and endpoint).' }),
    endpoint_id: Type.String(),
    url: Type.String({ description: "The endpoint's URL." }),
    status: Type.String({
      description:
        'pending (waiting for its next try), delivered, failed (tries used up) or skipped (endpoint disabled).',
    }),
    try_count: Type.Integer({ description: 'Tries so far.' }),
    next_try_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()], {
      description: 'When a pending delivery is tried next; null otherwise.',
    }),
    delivered_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
    last_http_status: Type.Union([Type.Integer(), Type.Null()]),
    tries: Type.Array(Type.Ref('EventDeliveryTry'), {
      description: `The latest ${EVENT_DELIVERY_TRIES_SHOWN_MAX} tries, oldest first.`,
    }),
  },
  { $id: 'EventDelivery', title: 'Webhook delivery' },
);

const EventWithDeliveries = Type.Object(
  {
    ...EventBody.properties,
    deliveries: Type.Array(Type.Ref('EventDelivery'), {
      description:
        'Its deliveries to your webhook endpoints of this environment, with their tries. Not part of the webhook body.',
    }),
  },
  {
    $id: 'EventWithDeliveries',
    title: 'Event with deliveries',
    additionalProperties: true,
    description: 'The body its webhook deliveries carry, plus `deliveries`.',
  },
);

const QueuedDelivery = Type.Object(
  { id: Type.String(), event_id: Type.String(), endpoint_id: Type.String(), url: Type.String() },
  { $id: 'QueuedDelivery', title: 'Queued delivery', description: 'A delivery queued again, due now.' },
);

const EventReplay = Type.Object(
  {
    object: Type.Literal('event_replay'),
    event_id: Type.String(),
    deliveries_queued: Type.Integer(),
    deliveries: Type.Array(Type.Ref('QueuedDelivery')),
  },
  { $id: 'EventReplay', title: 'Event replay' },
);

const EventRangeReplay = Type.Object(
  {
    object: Type.Literal('event_range_replay'),
    created_gte: Type.String({ format: 'date-time' }),
    created_lt: Type.String({ format: 'date-time' }),
    type: Type.Union([Type.String(), Type.Null()]),
    only_failed: Type.Boolean(),
    event_ids: Type.Array(Type.String(), {
      description: `The events replayed, oldest first (at most ${EVENT_REPLAY_ROWS_MAX}).`,
    }),
    deliveries_queued: Type.Integer(),
    has_more: Type.Boolean({
      description:
        'More events of the range are left: send the same request again with starting_after = next_starting_after.',
    }),
    next_starting_after: Type.Union([Type.String(), Type.Null()]),
  },
  { $id: 'EventRangeReplay', title: 'Event range replay' },
);

const EventIdParams = Type.Object({
  id: Type.String({ minLength: 1, maxLength: ID_PARAM_LENGTH_MAX, description: 'The event id (evt_...).' }),
});

const ReplayEventsBody = Type.Object(
  {
    created_gte: Type.String({ format: 'date-time', description: 'Events created at or after this.' }),
    created_lt: Type.String({
      format: 'date-time',
      description: `Events created before this; at most ${EVENT_REPLAY_RANGE_DAYS_MAX} days after created_gte.`,
    }),
    type: Type.Optional(
      Type.String({ minLength: 1, maxLength: EVENT_TYPE_LENGTH_MAX, description: 'Only events of this type.' }),
    ),
    only_failed: Type.Optional(
      Type.Boolean({
        default: true,
        description:
          'true: only the deliveries that failed or were not sent (endpoint disabled). false: every delivery, and endpoints of the key added since.',
      }),
    ),
    starting_after: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: ID_PARAM_LENGTH_MAX,
        description: 'next_starting_after of the previous call, to continue a range with has_more.',
      }),
    ),
  },
  { additionalProperties: false },
);

const StreamQuery = Type.Object(
  {
    types: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: EVENT_STREAM_TYPES_MAX * (EVENT_TYPE_LENGTH_MAX + 1),
        description: `Only these event types, comma-separated (at most ${EVENT_STREAM_TYPES_MAX}).`,
      }),
    ),
    after: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: EVENT_STREAM_CURSOR_LENGTH_MAX,
        description: 'Resume after this cursor (an id the stream sent); Last-Event-ID wins when both are sent.',
      }),
    ),
  },
  { additionalProperties: false },
);

const StreamHeaders = Type.Object({
  'last-event-id': Type.Optional(
    Type.String({
      maxLength: EVENT_STREAM_CURSOR_LENGTH_MAX,
      description: 'Resume after this cursor: the last id the stream sent.',
    }),
  ),
});

const StreamSigningSecret = Type.Object(
  {
    endpoint_id: Type.String({ description: 'The Test webhook endpoint paired with your key.' }),
    url: Type.String({ description: "The endpoint's URL." }),
    status: StringEnum(WEBHOOK_ENDPOINT_STATUSES, {
      description: "The endpoint's status; a disabled endpoint's secret still signs what sika listen forwards.",
    }),
    secret: Type.String({
      pattern: '^whsec_',
      description: "A signing secret (whsec_ and base64), as the endpoint's deliveries are signed with it.",
    }),
    expires_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()], {
      description:
        "null: the current secret. Otherwise a previous secret that keeps signing, beside the current one, until this time (a rotation's overlap).",
    }),
  },
  { $id: 'StreamSigningSecret', title: 'Stream signing secret', additionalProperties: false },
);

const StreamSigningSecrets = Type.Object(
  {
    object: Type.Literal('stream_signing_secrets'),
    secrets: Type.Array(Type.Ref('StreamSigningSecret'), {
      description:
        'Every secret the Test webhook endpoints paired with your key sign with, oldest endpoint first; empty when the key has none.',
    }),
  },
  { $id: 'StreamSigningSecrets', title: 'Stream signing secrets', additionalProperties: false },
);

const ListEventsQuery = Type.Object(
  {
    limit: Type.Optional(
      Type.Integer({ minimum: 1, maximum: EVENT_LIST_LIMIT_MAX, default: EVENT_LIST_LIMIT_DEFAULT }),
    ),
    starting_after: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: ID_PARAM_LENGTH_MAX,
        description: 'The last event id of the previous page.',
      }),
    ),
    type: Type.Optional(
      Type.String({ minLength: 1, maxLength: 100, description: 'e.g. checkout.session.completed, refund.succeeded.' }),
    ),
    object_id: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: ID_PARAM_LENGTH_MAX,
        description: 'Events of one session, payout or refund.',
      }),
    ),
    created_gte: Type.Optional(Type.String({ format: 'date-time' })),
    created_lt: Type.Optional(Type.String({ format: 'date-time' })),
  },
  { additionalProperties: false },
);

export async function eventRoutes(app: FastifyInstance, deps: AppDeps): Promise<void> {
  const { db } = deps;
  for (const schema of [
    EventBody,
    EventList,
    DeliveryTry,
    Delivery,
    EventWithDeliveries,
    QueuedDelivery,
    EventReplay,
    EventRangeReplay,
  ])
    app.addSchema(schema);
  for (const schema of [StreamSigningSecret, StreamSigningSecrets]) app.addSchema(schema);
  const streams = new EventStreams(db);
  // Open streams end before the server closes (it would wait for them): each client resumes from its last id.
  app.addHook('preClose', async () => streams.closeAll());

  app.get<{ Querystring: Static<typeof ListEventsQuery> }>(
    '/api/v1/events',
    {
      schema: {
        operationId: 'listEvents',
        tags: ['Events'],
        summary: 'List events',
        description:
          'Your events, newest first, as their webhooks carry them: catch up after downtime. Page with limit and starting_after while has_more is true.',
        querystring: ListEventsQuery,
        response: {
          200: Type.Ref('EventList', { description: 'A page of your events, newest first.' }),
          ...errorResponses(400, 401, 429),
        },
      },
    },
    async (request) => listEvents(db, principalOf(request), request.query),
  );
  app.get<{ Params: Static<typeof EventIdParams> }>(
    '/api/v1/events/:id',
    {
      schema: {
        operationId: 'retrieveEvent',
        tags: ['Events'],
        summary: 'Retrieve an event',
        description:
          'The event as its webhooks carry it, plus `deliveries`: each delivery to your endpoints of this environment, with its status and latest tries.',
        params: EventIdParams,
        response: {
          200: Type.Ref('EventWithDeliveries', { description: 'The event and its deliveries.' }),
          ...errorResponses(401, 404, 429),
        },
      },
    },
    async (request) => getEvent(db, principalOf(request), request.params.id),
  );

  idempotentPost<{ Params: Static<typeof EventIdParams> }>(
    app,
    '/api/v1/events/:id/replay',
    {
      operationId: 'replayEvent',
      tags: ['Events'],
      summary: 'Replay an event',
      description:
        'Queues the event again, with the same id, to your active webhook endpoints of this environment: every delivery is due now (one being tried at this moment is left to finish), and an endpoint of the key added since gets one too. Audited.',
      params: EventIdParams,
      response: {
        202: Type.Ref('EventReplay', { description: 'The deliveries queued.' }),
        ...errorResponses(401, 404, 422, 429),
      },
    },
    async (request) =>
      workAs(principalOf(request), 202, (tx, principal) => replayEventForKey(tx, principal, request.params.id)),
  );

  idempotentPost<{ Body: Static<typeof ReplayEventsBody> }>(
    app,
    '/api/v1/events/replay',
    {
      operationId: 'replayEvents',
      tags: ['Events'],
      summary: 'Replay the events of a time range',
      description:
        `Queues again the events created in [created_gte, created_lt), oldest first: by default only their deliveries that failed or were not sent. ` +
        `A range spans at most ${EVENT_REPLAY_RANGE_DAYS_MAX} days (400 otherwise: split it). One call replays at most ${EVENT_REPLAY_ROWS_MAX} events; with has_more, ` +
        `send it again with starting_after = next_starting_after. One range replay per key every ${EVENT_REPLAY_INTERVAL_S} s (429 with Retry-After). Audited.`,
      body: ReplayEventsBody,
      response: {
        202: Type.Ref('EventRangeReplay', { description: 'The events replayed and the deliveries queued.' }),
        ...errorResponses(400, 401, 422, 429),
      },
    },
    async (request) => {
      const principal = principalOf(request);
      const input: RangeReplayInput = request.body;
      checkReplayRange(input); // 400 before any key is claimed
      return transactionWork(202, (tx) => replayEventRange(tx, principal, input));
    },
  );

  app.get<{ Querystring: Static<typeof StreamQuery>; Headers: Static<typeof StreamHeaders> }>(
    '/api/v1/events/stream',
    {
      schema: {
        operationId: 'streamEvents',
        tags: ['Events'],
        summary: 'Stream Test events (Server-Sent Events)',
        description:
          'Your Test events as they commit, as Server-Sent Events (what `sika listen` reads): each message has `id:` (a cursor), `event:` (the type) and `data:` (the exact webhook body). ' +
          `A comment every ${EVENT_STREAM_HEARTBEAT_MS / 1000} s keeps the connection alive. Without a cursor the stream starts now; with Last-Event-ID (or ?after=) it resumes right after it, ` +
          `nothing skipped or repeated. Test keys only (Live: 403). At most ${EVENT_STREAMS_PER_KEY_MAX} streams per key at once (429).`,
        querystring: StreamQuery,
        headers: StreamHeaders,
        response: {
          200: {
            description:
              'The stream: `retry:` and the starting `id:` first, then one message per event (id, event, data), heartbeat comments, and id-only messages when the cursor passes filtered-out events.',
            content: {
              'text/event-stream': {
                schema: { type: 'string', description: 'text/event-stream messages (see src/events/stream.ts).' },
              },
            },
          },
          ...errorResponses(400, 401, 403, 429, 503),
        },
      },
    },
    async (request, reply) => {
      const principal = principalOf(request);
      assertStreamAllowed(principal);
      const types = parseTypes(request.query.types);
      const header = request.headers['last-event-id'];
      const after = header
        ? parseCursor(header, 'Last-Event-ID')
        : request.query.after
          ? parseCursor(request.query.after, 'after')
          : null;
      reply
        .header('content-type', 'text/event-stream; charset=utf-8')
        .header('cache-control', 'no-store')
        .header('x-accel-buffering', 'no')
        .header('connection', 'close');
      // HEAD (Fastify answers it with this handler): the headers only, no stream.
      if (request.method === 'HEAD') return reply.send('');
      return reply.send(await streams.start(principal, { types, after }));
    },
  );

  app.get(
    '/api/v1/events/stream/signing-secrets',
    {
      schema: {
        operationId: 'listStreamSigningSecrets',
        tags: ['Events'],
        summary: 'Signing secrets for sika listen (Test)',
        description:
          'The secrets the Test webhook endpoints paired with your key sign their deliveries with: `sika listen` signs the events it forwards with them, so a receiver ' +
          "that verifies with an endpoint's secret (the one the first run printed, or `sika merchant create` showed) accepts what it forwards. During a rotation's " +
          'overlap the previous secret is listed too, with its `expires_at`. Test keys only (Live: 403).',
        response: {
          200: Type.Ref('StreamSigningSecrets', {
            description: "The signing secrets of your key's Test webhook endpoints.",
          }),
          ...errorResponses(401, 403, 429),
        },
      },
    },
    async (request, reply) => {
      const secrets = await streamSigningSecrets(db, principalOf(request));
      reply.header('cache-control', 'no-store'); // secrets: never kept by a cache on the way
      return secrets;
    },
  );
}
