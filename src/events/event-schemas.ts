// What each webhook event carries, for the API document's `webhooks` section (OpenAPI 3.1) and its named
// schemas. The payload is the one the outbox writes (outbox.ts, eventPayload): {id, type, created_at,
// environment, livemode, version, data}; data holds the object as its emitter presents it. The event types
// are read from the tables that cause them (statuses and transitions), except the checkout session's,
// whose list is here (payments.ts maps a session status to one of them).
import { Type, type TSchema } from '@sinclair/typebox';
import { ATTEMPT_STATUSES, payoutMachine, RECONCILIATION_STATUSES, refundMachine } from '../lib/statuses.ts';
import { DateTime, Environment, StringEnum } from '../lib/typebox.ts';
import { SIGNATURE_VERSION } from './signing.ts';

/** The events of a checkout session (payments.ts, moveSession and reversals). */
export const CHECKOUT_SESSION_EVENT_TYPES = [
  'checkout.session.completed',
  'checkout.session.pending',
  'checkout.session.failed',
  'checkout.session.expired',
  'checkout.session.reversed',
  'checkout.session.reopened',
  'checkout.session.duplicate_payment_refunded',
] as const;

/** Statuses a row of the machine can be written with or moved to: each announces itself as `<object>.<status>`. */
const reachable = <S extends string>(
  machine: { initial: readonly S[]; transitions: Readonly<Record<S, readonly S[]>>; statuses: readonly S[] },
  except: readonly S[] = [],
): S[] => {
  const reached = new Set<S>([...machine.initial, ...Object.values<readonly S[]>(machine.transitions).flat()]);
  return machine.statuses.filter((status) => reached.has(status) && !except.includes(status));
};

/** payout.<status>: created (create.ts, with its first status) and every move (lifecycle.ts). */
export const PAYOUT_EVENT_TYPES = reachable(payoutMachine).map((status) => `payout.${status}` as const);

/** refund.created, then refund.<status> for every move but the one to pending (lifecycle.ts, moveRefund). */
export const REFUND_EVENT_TYPES = [
  'refund.created' as const,
  ...reachable(refundMachine, ['pending', 'awaiting_approval']).map((status) => `refund.${status}` as const),
];

/**
 * The merchant's account (GET /api/v1/account): its activation status or suspension changed (src/accounts/
 * activation.ts). Sent in both environments, to every endpoint of the merchant, not only a key's.
 */
export const ACCOUNT_EVENT_TYPES = ['account.updated'] as const;

/** A payment link (issue 35, src/checkout/payment-links.ts): made, and changed over the API or the dashboard. */
export const PAYMENT_LINK_EVENT_TYPES = ['payment_link.created', 'payment_link.updated'] as const;

/** Every event type Sika sends. */
export const EVENT_TYPES: readonly string[] = [
  ...CHECKOUT_SESSION_EVENT_TYPES,
  ...PAYOUT_EVENT_TYPES,
  ...REFUND_EVENT_TYPES,
  ...ACCOUNT_EVENT_TYPES,
  ...PAYMENT_LINK_EVENT_TYPES,
];

/** A payout as its events show it (presenters.ts, toPayoutPayload). */
export const PayoutEventObject = Type.Object(
  {
    id: Type.String(),
    reference: Type.String(),
    status: StringEnum(payoutMachine.statuses),
    amount_minor: Type.Integer(),
    fee_minor: Type.Integer(),
    currency: Type.String(),
    bank_reference: Type.String(),
    return_reference: Type.String(),
    reconciliation_status: StringEnum(RECONCILIATION_STATUSES),
  },
  {
    $id: 'PayoutEventObject',
    title: 'Payout (in events)',
    description:
      'SPEC 6.2 exactly; GET /api/v1/payouts/{id} for the whole payout (its type and, for a settlement, its period).',
  },
);

const SessionReopened = Type.Object(
  {
    attempt_reference: Type.String({ description: 'The attempt that ended unpaid.' }),
    attempt_status: StringEnum(ATTEMPT_STATUSES),
    reason: Type.String({ description: "The provider's status for it." }),
  },
  { description: 'Why the session is open again.' },
);

/** Why a payment was refunded automatically (checkout.session.duplicate_payment_refunded's `duplicate.reason`). */
export const DUPLICATE_PAYMENT_REASONS = ['session_already_paid', 'payment_link_used_up'] as const;

const DuplicatePaymentRefunded = Type.Object(
  {
    attempt_reference: Type.String({
      description: 'The second payment: an attempt that succeeded after another had paid the session.',
    }),
    amount_minor: Type.Integer({ description: 'What it took, refunded in full (no fee is kept on it).' }),
    currency: Type.String(),
    refund_id: Type.String({
      description: 'The automatic refund (re_...); its refund.* events follow it to the payer.',
    }),
    reason: Type.Optional(
      StringEnum(DUPLICATE_PAYMENT_REASONS, {
        description:
          'session_already_paid: the session was already paid by another attempt (it stays success). payment_link_used_up: the session came from a payment link that had already taken every payment it may (single_use, max_payments); the session does not succeed and expires. Absent on events written before it was added: session_already_paid.',
      }),
    ),
  },
  {
    description:
      'A payment that is not kept, refunded automatically: a second payment of an already paid session (the merchant fulfils the order once), or a payment on a used-up payment link.',
  },
);

const dataOf = (type: string): TSchema => {
  if (type === 'checkout.session.reopened')
    return Type.Object({ session: Type.Ref('CheckoutSession'), reopened: SessionReopened });
  if (type === 'checkout.session.duplicate_payment_refunded')
    return Type.Object({ session: Type.Ref('CheckoutSession'), duplicate: DuplicatePaymentRefunded });
  if (type.startsWith('checkout.session.')) return Type.Object({ session: Type.Ref('CheckoutSession') });
  if (type.startsWith('payout.')) return Type.Object({ payout: Type.Ref('PayoutEventObject') });
  if (type.startsWith('account.')) return Type.Object({ account: Type.Ref('Account') });
  if (type.startsWith('payment_link.')) return Type.Object({ payment_link: Type.Ref('PaymentLink') });
  return Type.Object({ refund: Type.Ref('Refund') });
};

/** The schema's name of an event type: checkout.session.completed -> CheckoutSessionCompletedEvent. */
export const eventSchemaId = (type: string): string =>
  `${type
    .split(/[._]/)
    .map((word) => word.charAt(0).toUpperCase() + word.slice(1))
    .join('')}Event`;

const eventSchema = (type: string) =>
  Type.Object(
    {
      id: Type.String({ description: 'evt_...; also the webhook-id header.' }),
      type: Type.Literal(type),
      created_at: DateTime,
      environment: Environment,
      livemode: Type.Boolean(),
      version: Type.Integer({
        description: "The object's version after the change: drop an event older than one you have.",
      }),
      data: dataOf(type),
    },
    { $id: eventSchemaId(type), title: type },
  );

/**
 * The named schemas of the events (one per type, and what they refer to besides the resources). No union of
 * them: nothing in the API answers one, and a receiver's union is the document's `webhooks` bodies (as the SDK's).
 */
export const EVENT_SCHEMAS: TSchema[] = [PayoutEventObject, ...EVENT_TYPES.map(eventSchema)];

const header = (name: string, description: string, example: string) => ({
  name,
  in: 'header',
  required: true,
  description,
  schema: { type: 'string' },
  example,
});

/** The headers of every delivery (Standard Webhooks). */
export const WEBHOOK_HEADERS = [
  header(
    'webhook-id',
    'The event id (evt_...): the same on every try, so a receiver can drop repeats.',
    'evt_5f0c1d2e3f4a5b6c7d8e9f0a1b2c3d4e',
  ),
  header('webhook-timestamp', 'Unix time in seconds of this try; refuse one far from now.', '1780308000'),
  header(
    'webhook-signature',
    `Space-separated ${SIGNATURE_VERSION},<base64> signatures: HMAC-SHA256 of "{webhook-id}.{webhook-timestamp}.{body}" keyed with the endpoint secret (whsec_ + base64 key, decoded).`,
    `${SIGNATURE_VERSION},K5oZfzN95Z9UVu1EsfQmfVNQhnkZ2pj9o9NDN/H/pI4=`,
  ),
];

/** The document's `webhooks`: one POST to the merchant's endpoint per event type. */
export function webhooksDocument(): Record<string, unknown> {
  return Object.fromEntries(
    EVENT_TYPES.map((type) => [
      type,
      {
        post: {
          summary: `${type} (sent to your webhook endpoints)`,
          description: 'A signed POST with the event as its body; the same body GET /api/v1/events/{id} answers.',
          tags: ['Webhooks'],
          parameters: WEBHOOK_HEADERS,
          requestBody: {
            required: true,
            content: { 'application/json': { schema: { $ref: `#/components/schemas/${eventSchemaId(type)}` } } },
          },
          responses: {
            '200': { description: 'Received (any 2xx): no more tries.' },
            '410': {
              description:
                'Gone: the endpoint is disabled and nothing more is sent to it (its events stay replayable).',
            },
            default: { description: 'Any other answer or none: tried again later on the retry schedule.' },
          },
        },
      },
    ]),
  );
}
