import { Type, type Static } from '@sinclair/typebox';
import { Currency, CursorPage, DateTime, explainedPattern, NON_BLANK_TEXT_PATTERN, StringEnum } from '../../schemas.ts';
import {
  CALLBACK_URL_LENGTH_MAX,
  CUSTOMER_EMAIL_LENGTH_MAX,
  CUSTOMER_NAME_LENGTH_MAX,
  DESCRIPTION_LENGTH_MAX,
  ID_PARAM_LENGTH_MAX,
  INVOICE_REF_LENGTH_MAX,
  METADATA_BYTES_MAX,
  METADATA_KEYS_MAX,
  SESSION_AMOUNT_MAX_MINOR,
  SESSION_LIFETIME_DEFAULT_S,
  SESSION_LIFETIME_MAX_S,
  SESSION_LIFETIME_MIN_S,
  SESSION_STATUSES,
} from '../../../checkout/model.ts';
import { railIds, railList } from '../../../rails/registry.ts';
import { SESSION_LIST_LIMIT_DEFAULT, SESSION_LIST_LIMIT_MAX } from '../../../checkout/session-list.ts';

export const CreateSessionBody = Type.Object(
  {
    amount_minor: Type.Integer({
      minimum: 1,
      maximum: SESSION_AMOUNT_MAX_MINOR,
      description: 'Amount in pesewas (50000 = GHS 500.00).',
    }),
    invoice_ref: Type.String({
      minLength: 1,
      maxLength: INVOICE_REF_LENGTH_MAX,
      pattern: NON_BLANK_TEXT_PATTERN,
      description: 'Your invoice reference (not blank); use the same one on invoice lines.',
    }),
    description: Type.Optional(Type.String({ maxLength: DESCRIPTION_LENGTH_MAX })),
    currency: Type.Optional(Currency),
    customer: Type.Optional(
      Type.Object(
        {
          name: Type.Optional(Type.String({ maxLength: CUSTOMER_NAME_LENGTH_MAX })),
          email: Type.Optional(Type.String({ format: 'email', maxLength: CUSTOMER_EMAIL_LENGTH_MAX })),
        },
        { additionalProperties: false },
      ),
    ),
    callback_url: Type.Optional(
      Type.String({
        format: 'uri',
        pattern: explainedPattern('^[Hh][Tt][Tt][Pp][Ss]?:', 'must be an absolute http or https URL'),
        maxLength: CALLBACK_URL_LENGTH_MAX,
        description: 'Where the payer returns after paying: an absolute http or https URL.',
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
    expires_in_seconds: Type.Optional(
      Type.Integer({
        minimum: SESSION_LIFETIME_MIN_S,
        maximum: SESSION_LIFETIME_MAX_S,
        description: `Session lifetime; default ${SESSION_LIFETIME_DEFAULT_S} (24 hours).`,
      }),
    ),
  },
  {
    additionalProperties: false,
    examples: [
      {
        amount_minor: 50000,
        invoice_ref: 'INV-2026-0042',
        description: 'School fees, term 2',
        customer: { name: 'Ama Mensah', email: 'ama@example.com' },
        callback_url: 'https://shop.example.com/paid',
        metadata: { order: '42' },
      },
    ],
  },
);
export type CreateSessionBody = Static<typeof CreateSessionBody>;

/** Migration 033's bounds on what a provider names: its transaction id and a card's brand. */
const PROVIDER_TRANSACTION_ID_LENGTH_MAX = 100;
const CARD_BRAND_LENGTH_MAX = 30;

const SessionStatusSchema = StringEnum(SESSION_STATUSES, {
  description: 'open -> pending -> success | failed | expired (a pending session whose attempt ended unpaid reopens).',
});
const RailSchema = StringEnum(railIds(), { description: `The payment method: ${railList()}.` });

/** A paid session's payment: the attempt that paid, what was charged, the fee and what the balance was credited. */
export const Payment = Type.Object(
  {
    attempt_reference: Type.String({ description: 'The attempt that paid (att_...).' }),
    status: StringEnum(['paid', 'reversed'] as const),
    rail: RailSchema,
    provider: Type.String({ description: 'Who took the payment (test, cash, paystack, mtn_momo, ...).' }),
    provider_reference: Type.String({
      description:
        "Sika's reference with the provider (what the provider's webhooks and reports name; empty for cash).",
    }),
    provider_transaction_id: Type.Union([Type.String({ maxLength: PROVIDER_TRANSACTION_ID_LENGTH_MAX }), Type.Null()], {
      description:
        "What the provider itself calls this transaction, the id a payer's receipt and the provider's support know (MTN MoMo's financialTransactionId, Paystack's transaction id); null until the provider names one, and always for Test, cash and bank transfers.",
    }),
    card: Type.Union(
      [
        Type.Object(
          {
            brand: Type.String({
              maxLength: CARD_BRAND_LENGTH_MAX,
              description: 'The card scheme as the provider names it (visa, mastercard, verve, ...).',
            }),
            last4: Type.String({ pattern: '^[0-9]{4}$', description: 'The last four digits of the card number.' }),
          },
          { additionalProperties: false },
        ),
        Type.Null(),
      ],
      { description: 'The card that paid, when the payment was by card and the provider named it; null otherwise.' },
    ),
    amount_charged_minor: Type.Integer({ description: 'What the payer was charged, fees they bear included.' }),
    amount_received_minor: Type.Union([Type.Integer(), Type.Null()], {
      description:
        'What Sika received when it was not the amount charged (null: the amount charged was received). A short payment credited as received is less than amount_charged_minor: the session was paid short by the difference; fee_minor and net_minor are computed on what was received.',
    }),
    fee_minor: Type.Integer({ description: 'The fee taken (on what was received, when that differs).' }),
    net_minor: Type.Integer({
      description:
        'What your balance was credited: the session amount less a fee you bear (or what was received less the fee taken on it).',
    }),
    paid_at: Type.Union([DateTime, Type.Null()]),
  },
  { $id: 'Payment', title: 'Payment', description: 'Once the session is paid (on GET and the list; null before).' },
);

export const CheckoutSessionResponse = Type.Object(
  {
    id: Type.String({ description: 'cs_...' }),
    object: Type.Literal('checkout.session'),
    status: SessionStatusSchema,
    amount_minor: Type.Integer(),
    currency: Type.String({ maxLength: 3 }),
    invoice_ref: Type.String(),
    description: Type.Union([Type.String(), Type.Null()]),
    checkout_url: Type.String({ description: 'Send the payer here: {checkout_url_host}/pay/{id}.' }),
    expires_at: DateTime,
    created_at: DateTime,
    livemode: Type.Boolean(),
    customer: Type.Object({
      name: Type.Union([Type.String(), Type.Null()]),
      email: Type.Union([Type.String(), Type.Null()]),
    }),
    callback_url: Type.Union([Type.String(), Type.Null()]),
    metadata: Type.Object({}, { additionalProperties: true }),
    refunded_minor: Type.Optional(
      Type.Integer({
        minimum: 0,
        description: 'What refunds of its payment have given back so far (succeeded refunds), in pesewas.',
      }),
    ),
    payment_link_id: Type.Optional(
      Type.Union([Type.String(), Type.Null()], {
        description: 'The payment link (pl_...) a payer made this session from; null for a session made by the API.',
      }),
    ),
    custom_fields: Type.Optional(
      Type.Union([Type.Record(Type.String(), Type.String()), Type.Null()], {
        description:
          "What the payer entered in the payment link's custom fields, key to value; null for a session not made by a link.",
      }),
    ),
    receipt_number: Type.Optional(
      Type.Union([Type.String(), Type.Null()], {
        description:
          "The payer's receipt number, given when the session succeeds (at most 10 characters, the last a check character); null before.",
      }),
    ),
    payment: Type.Optional(Type.Union([Type.Ref('Payment'), Type.Null()])),
  },
  {
    $id: 'CheckoutSession',
    title: 'Checkout session',
    examples: [
      {
        id: 'cs_3f2a9c0d1e4b5a6978c1d2e3f4a5b6c7',
        object: 'checkout.session',
        status: 'open',
        amount_minor: 50000,
        currency: 'GHS',
        invoice_ref: 'INV-2026-0042',
        description: 'School fees, term 2',
        checkout_url: 'https://pay.example.com/pay/cs_3f2a9c0d1e4b5a6978c1d2e3f4a5b6c7',
        expires_at: '2026-06-02T10:00:00.000Z',
        created_at: '2026-06-01T10:00:00.000Z',
        livemode: false,
        customer: { name: 'Ama Mensah', email: 'ama@example.com' },
        callback_url: 'https://shop.example.com/paid',
        metadata: { order: '42' },
        refunded_minor: 0,
        payment_link_id: null,
        custom_fields: null,
        receipt_number: null,
        payment: null,
      },
    ],
  },
);

export const ListSessionsQuery = Type.Object(
  {
    limit: Type.Optional(
      Type.Integer({
        minimum: 1,
        maximum: SESSION_LIST_LIMIT_MAX,
        default: SESSION_LIST_LIMIT_DEFAULT,
        description: 'Sessions per page.',
      }),
    ),
    starting_after: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: ID_PARAM_LENGTH_MAX,
        description: 'The last session id of the previous page.',
      }),
    ),
    status: Type.Optional(SessionStatusSchema),
    invoice_ref: Type.Optional(Type.String({ minLength: 1, maxLength: INVOICE_REF_LENGTH_MAX })),
    created_gte: Type.Optional(Type.String({ format: 'date-time', description: 'Created at or after (ISO 8601).' })),
    created_lt: Type.Optional(Type.String({ format: 'date-time', description: 'Created before (ISO 8601).' })),
    rail: Type.Optional(StringEnum(railIds(), { description: 'Paid through this payment method.' })),
    payment_link_id: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: ID_PARAM_LENGTH_MAX,
        description: "Made by payers from this payment link (pl_...); a link that is not the key's is 404.",
      }),
    ),
  },
  { additionalProperties: false },
);
export type ListSessionsQuery = Static<typeof ListSessionsQuery>;

export const SessionList = CursorPage('CheckoutSession', {
  $id: 'CheckoutSessionList',
  title: 'Checkout session list',
});

export const SessionParams = Type.Object({
  reference: Type.String({ minLength: 1, maxLength: ID_PARAM_LENGTH_MAX, description: 'The session id (cs_...).' }),
});
