// TypeBox schemas of the refund routes: they validate, serialise and document (OpenAPI).
import { Type, type Static } from '@sinclair/typebox';
import { ID_PARAM_LENGTH_MAX, METADATA_BYTES_MAX, METADATA_KEYS_MAX } from '../../../checkout/model.ts';
import {
  REFUND_LIST_LIMIT_DEFAULT,
  REFUND_LIST_LIMIT_MAX,
  REFUND_REASON_LENGTH_MAX,
  REFUND_STATUSES,
  TEST_REFUND_OUTCOMES,
  TEST_REFUND_SIMULATIONS,
} from '../../../refunds/model.ts';
import { CursorPage } from '../../schemas.ts';

const DateTime = Type.String({ format: 'date-time' });
const Nullable = <T extends ReturnType<typeof Type.String>>(schema: T) => Type.Union([schema, Type.Null()]);

export const CreateRefundBody = Type.Object(
  {
    session_id: Type.String({
      minLength: 1,
      maxLength: ID_PARAM_LENGTH_MAX,
      description: 'The paid (success) session to refund (cs_...).',
    }),
    amount_minor: Type.Optional(
      Type.Integer({
        minimum: 1,
        maximum: Number.MAX_SAFE_INTEGER,
        description:
          'Pesewas to give back; omitted: all that is not yet refunded. All refunds of a payment add up to at most what the payer was charged.',
      }),
    ),
    reason: Type.Optional(
      Type.String({
        maxLength: REFUND_REASON_LENGTH_MAX,
        description: 'Why (shown to you, and passed to the provider as a note where it takes one).',
      }),
    ),
    metadata: Type.Optional(
      Type.Object(
        {},
        {
          additionalProperties: true,
          maxProperties: METADATA_KEYS_MAX,
          description: `Your own key/value data, returned as given: at most ${METADATA_KEYS_MAX} keys and ${METADATA_BYTES_MAX} bytes of JSON.`,
        },
      ),
    ),
    test_outcome: Type.Optional(
      Type.Union(
        TEST_REFUND_OUTCOMES.map((o) => Type.Literal(o)),
        {
          description:
            'Test keys only (400 with a Live key): settle the refund succeeded (default, at once), failed (the hold is released), leave it pending, or make it awaiting_approval (the hold taken, as for a Live refund needing a second person); then POST /api/v1/test/refunds/{id}/simulate.',
        },
      ),
    ),
  },
  {
    additionalProperties: false,
    examples: [
      {
        session_id: 'cs_3f2a9c0d1e4b5a6978c1d2e3f4a5b6c7',
        amount_minor: 20000,
        reason: 'Order cancelled',
        metadata: { ticket: 'T-991' },
      },
    ],
  },
);
export type CreateRefundBody = Static<typeof CreateRefundBody>;

export const RefundResponse = Type.Object(
  {
    id: Type.String({ description: 're_...' }),
    object: Type.Literal('refund'),
    status: Type.Union(
      REFUND_STATUSES.map((s) => Type.Literal(s)),
      {
        description:
          'pending -> succeeded | failed; awaiting_approval -> pending | cancelled when your account requires a second person for Live money leaving.',
      },
    ),
    session_id: Type.String(),
    attempt_reference: Type.String({ description: 'The attempt whose payment is refunded (att_...).' }),
    amount_minor: Type.Integer(),
    currency: Type.String(),
    reason: Nullable(Type.String()),
    metadata: Type.Object({}, { additionalProperties: true }),
    method: Type.Union([Type.Literal('test'), Type.Literal('provider'), Type.Literal('operator')], {
      description:
        "How it reaches the payer: test (Test mode), provider (the provider that took the payment), operator (cash and bank transfer payments: Sika's operators transfer it to the payer's account).",
    }),
    provider: Nullable(Type.String()),
    provider_refund_id: Nullable(Type.String()),
    failure_reason: Nullable(Type.String()),
    livemode: Type.Boolean(),
    created_at: DateTime,
    succeeded_at: Type.Union([DateTime, Type.Null()]),
    failed_at: Type.Union([DateTime, Type.Null()]),
    version: Type.Integer({ description: 'Grows with each change; webhook events carry it.' }),
  },
  {
    $id: 'Refund',
    title: 'Refund',
    examples: [
      {
        id: 're_8c1d2e3f4a5b6c7d8e9f0a1b2c3d4e5f',
        object: 'refund',
        status: 'succeeded',
        session_id: 'cs_3f2a9c0d1e4b5a6978c1d2e3f4a5b6c7',
        attempt_reference: 'att_5a6978c1d2e3f4a5b6c7d8e9f0a1b2c3',
        amount_minor: 20000,
        currency: 'GHS',
        reason: 'Order cancelled',
        metadata: { ticket: 'T-991' },
        method: 'test',
        provider: null,
        provider_refund_id: null,
        failure_reason: null,
        livemode: false,
        created_at: '2026-06-01T12:00:00.000Z',
        succeeded_at: '2026-06-01T12:00:00.000Z',
        failed_at: null,
        version: 2,
      },
    ],
  },
);

export const RefundList = CursorPage('Refund', { $id: 'RefundList', title: 'Refund list' });

export const ListRefundsQuery = Type.Object(
  {
    limit: Type.Optional(
      Type.Integer({
        minimum: 1,
        maximum: REFUND_LIST_LIMIT_MAX,
        default: REFUND_LIST_LIMIT_DEFAULT,
        description: 'Refunds per page.',
      }),
    ),
    starting_after: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: ID_PARAM_LENGTH_MAX,
        description: 'The last refund id of the previous page.',
      }),
    ),
    status: Type.Optional(Type.Union(REFUND_STATUSES.map((s) => Type.Literal(s)))),
    session_id: Type.Optional(Type.String({ minLength: 1, maxLength: ID_PARAM_LENGTH_MAX })),
    created_gte: Type.Optional(Type.String({ format: 'date-time', description: 'Created at or after (ISO 8601).' })),
    created_lt: Type.Optional(Type.String({ format: 'date-time', description: 'Created before (ISO 8601).' })),
  },
  { additionalProperties: false },
);
export type ListRefundsQuery = Static<typeof ListRefundsQuery>;

export const RefundParams = Type.Object({
  id: Type.String({ minLength: 1, maxLength: ID_PARAM_LENGTH_MAX, description: 'The refund id (re_...).' }),
});

export const SimulateRefundBody = Type.Object(
  {
    outcome: Type.Union(
      TEST_REFUND_SIMULATIONS.map((o) => Type.Literal(o)),
      {
        description:
          'A pending Test refund: succeeded (refund.succeeded) or failed (the hold released, refund.failed). One awaiting approval: approved (-> pending, waiting for succeeded or failed here) or cancelled (the hold released, refund.cancelled).',
      },
    ),
  },
  { additionalProperties: false },
);
