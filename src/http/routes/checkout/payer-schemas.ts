import { Type, type Static } from '@sinclair/typebox';
import { ANY_NETWORK_PHONE_PATTERN, DateTime, fieldRule, StringEnum } from '../../schemas.ts';
import { FAILURE_REASONS } from '../../../lib/payment-failures.ts';
import { MOMO_NETWORKS } from '../../../lib/ghana.ts';
import { railIds, railList } from '../../../rails/registry.ts';
import {
  ATTEMPT_STATUSES,
  CASH_SLIP_STATUSES,
  ID_PARAM_LENGTH_MAX,
  SESSION_STATUSES,
} from '../../../checkout/model.ts';

const RailSchema = StringEnum(railIds(), { description: `The payment method: ${railList()}.` });
const NetworkSchema = StringEnum(MOMO_NETWORKS, { description: 'A Mobile Money network.' });
const SessionStatusSchema = StringEnum(SESSION_STATUSES);
const AttemptStatusSchema = StringEnum(ATTEMPT_STATUSES, {
  description:
    'pending until the provider decides; paid, failed, expired, cancelled, reversed, or held for review (manual_review, amount_mismatch).',
});

/** The payer API's field bounds, in characters. */
const OPERATOR_FIELD_LENGTH_MAX = 16;
const PHONE_FIELD_LENGTH_MAX = 32;
const ACCOUNT_NAME_LENGTH_MAX = 200;
/** The verification code field: longer than any code, so a malformed one gets the answer that says what a code is. */
export const CODE_FIELD_LENGTH_MAX = 32;

const BranchOption = Type.Object({ id: Type.String({ format: 'uuid' }), name: Type.String(), code: Type.String() });

export const CheckoutOptions = Type.Object(
  {
    payment_methods: Type.Array(Type.Object({ value: RailSchema, label: Type.String() })),
    mobile_money_operators: Type.Array(Type.Object({ value: NetworkSchema, label: Type.String() })),
    branch_payment_methods: Type.Array(Type.Object({ value: RailSchema, label: Type.String() })),
    banks: Type.Array(
      Type.Object({
        id: Type.String({ format: 'uuid' }),
        name: Type.String(),
        code: Type.String(),
        branches: Type.Array(BranchOption),
      }),
    ),
  },
  { $id: 'PublicCheckoutOptions', title: 'Checkout options' },
);

export const PublicSession = Type.Object(
  {
    id: Type.String(),
    merchant_name: Type.String(),
    status: SessionStatusSchema,
    amount_minor: Type.Integer(),
    currency: Type.String(),
    invoice_ref: Type.String(),
    description: Type.String(),
    customer_name: Type.String(),
    allowed_rails: Type.Array(RailSchema),
    allowed_operators: Type.Array(NetworkSchema, {
      description: 'The Mobile Money networks (operator values) a payer can pay from on this session.',
    }),
    expires_at: DateTime,
    return_to_merchant_url: Type.Union([Type.String(), Type.Null()]),
    card_collection_mode: Type.Union([
      Type.Literal('direct_card'),
      Type.Literal('test_simulation'),
      Type.Literal('card_network_hosted_session'),
    ]),
    line_items: Type.Array(
      Type.Object({ code: Type.String(), name: Type.String(), amount_minor: Type.Integer(), currency: Type.String() }),
    ),
    livemode: Type.Boolean(),
  },
  { $id: 'PublicCheckoutSession', title: 'Public checkout session' },
);

const RailQuote = Type.Object({
  bearer: Type.Union([Type.Literal('payer'), Type.Literal('merchant')]),
  fee_minor: Type.Integer(),
  surcharge_minor: Type.Integer(),
  total_minor: Type.Integer(),
  currency: Type.String(),
});

export const CheckoutQuote = Type.Object(
  {
    id: Type.String(),
    status: SessionStatusSchema,
    base_minor: Type.Integer(),
    currency: Type.String(),
    expires_at: DateTime,
    allowed_rails: Type.Array(RailSchema),
    surcharges: Type.Record(Type.String(), RailQuote),
  },
  { $id: 'CheckoutQuote', title: 'Checkout quote' },
);

/**
 * The attempt's body, made when the routes are registered: `rail` is an enum of the registry's rails as
 * they are then (a rail added with registerRail must be added before the app is built). The momo rules of
 * checkAttemptInput are here too: operator and phone required, the phone of that network; other rails
 * ignore both.
 */
export const attemptBody = () => {
  const fields = {
    rail: StringEnum(railIds(), { description: `The payment method: ${railList()}.` }),
    amount_minor: Type.Integer({ minimum: 1, description: 'The quoted total for the rail.' }),
    operator: Type.Optional(
      Type.String({
        maxLength: OPERATOR_FIELD_LENGTH_MAX,
        description: `momo (required): the Mobile Money network, one of ${MOMO_NETWORKS.join(', ')}; ignored for other rails.`,
        examples: [...MOMO_NETWORKS],
      }),
    ),
    phone: Type.Optional(
      Type.String({
        maxLength: PHONE_FIELD_LENGTH_MAX,
        description:
          "momo (required): a Ghana mobile number, local or +233 form; ignored for other rails. A number whose prefix usually belongs to another network is accepted (numbers are portable between networks in Ghana): the operator chosen decides and its provider's answer is final.",
      }),
    ),
    account_name: Type.Optional(Type.String({ maxLength: ACCOUNT_NAME_LENGTH_MAX })),
  };
  return Type.Object(fields, {
    additionalProperties: false,
    allOf: [
      fieldRule(fields, {
        if: { properties: { rail: { const: 'momo' } }, required: ['rail'] },
        then: {
          required: ['operator', 'phone'],
          properties: {
            operator: { type: 'string', enum: [...MOMO_NETWORKS] },
            phone: { pattern: ANY_NETWORK_PHONE_PATTERN },
          },
        },
      }),
    ],
    examples: [{ rail: 'momo', amount_minor: 50150, operator: 'mtn', phone: '0241234567', account_name: 'Ama Mensah' }],
  });
};
export type AttemptBody = Static<ReturnType<typeof attemptBody>>;

/** What Sika received on the attempt when an operator found another amount (issue 30). */
const AmountReceived = Type.Union([Type.Integer(), Type.Null()], {
  description:
    "What Sika received when it was not the amount charged (an operator's decision on a short or over payment); null: the amount charged, or not decided yet.",
});

/** What an attempt's start and its status both answer first: the attempt, its provider and its amounts. */
const attemptFields = () => ({
  attempt_reference: Type.String(),
  provider: Type.String(),
  provider_reference: Type.String(),
  rail: RailSchema,
  status: AttemptStatusSchema,
  amount_charged_minor: Type.Integer(),
  amount_received_minor: AmountReceived,
  currency: Type.String(),
});

export const AttemptInitiation = Type.Object(
  {
    ...attemptFields(),
    instructions: Type.Object({ mode: Type.String(), rail: Type.String() }, { additionalProperties: true }),
    replayed: Type.Boolean(),
  },
  {
    $id: 'PaymentAttemptInitiation',
    title: 'Payment attempt started',
    description: 'A new (or replayed pending) attempt and what the payer does next (instructions).',
  },
);

export const AttemptStatusResponse = Type.Object(
  {
    ...attemptFields(),
    session_id: Type.String(),
    session_status: SessionStatusSchema,
    session_finalized_at: Type.Union([DateTime, Type.Null()]),
    raw_status: Type.String(),
    refreshed: Type.Boolean(),
    finalized: Type.Boolean(),
    verification_required: Type.Boolean(),
    resend_supported: Type.Boolean({
      description:
        'Whether the provider can send the prompt again without a second charge; when false, resend answers 409 RESEND_NOT_AVAILABLE.',
    }),
    resends_left: Type.Integer({
      description: 'Prompts that can still be re-sent (0 when resend_supported is false).',
    }),
    approve_within_s: Type.Union([Type.Integer(), Type.Null()], {
      description:
        'Seconds the payer has to approve, counted from created_at, when the provider documents it (MTN: 300).',
    }),
    approval_help: Type.Union([Type.String(), Type.Null()], {
      description:
        "The network's own way to approve when no prompt appeared (MTN: *170#, My Wallet, My Approvals); null where none is documented.",
    }),
    failure_reason: Type.Union([StringEnum(FAILURE_REASONS), Type.Null()], {
      description:
        "Why it did not go through, from the provider's code; changed_course: the payer cancelled it for another number or method.",
    }),
    failure_message: Type.Union([Type.String(), Type.Null()], {
      description: 'What the payer reads when the attempt ended unpaid (failed, expired, cancelled); null otherwise.',
    }),
    provider_transaction_id: Type.Union([Type.String(), Type.Null()], {
      description:
        "The provider's own id of the transaction (MTN financialTransactionId, Paystack transaction id), for the payer and support.",
    }),
    card: Type.Union([Type.Object({ brand: Type.String(), last4: Type.String() }), Type.Null()], {
      description: 'The card that paid, when the provider says.',
    }),
    created_at: DateTime,
  },
  {
    $id: 'PaymentAttempt',
    title: 'Payment attempt',
    description: 'A payment attempt as its status answers show it (the payer API, the Test simulator).',
  },
);

export const CashSlipBody = Type.Object(
  {
    session_id: Type.String({ minLength: 1, maxLength: ID_PARAM_LENGTH_MAX }),
    amount_minor: Type.Integer({ minimum: 1, description: 'The cash total from the quote.' }),
  },
  { additionalProperties: false },
);

export const CashSlipResponse = Type.Object(
  {
    slip_token: Type.String(),
    reference: Type.String(),
    amount_minor: Type.Integer(),
    currency: Type.String(),
    merchant_name: Type.String(),
    session_reference: Type.String(),
    invoice_ref: Type.String(),
    description: Type.String(),
    customer_name: Type.String(),
    status: StringEnum(CASH_SLIP_STATUSES),
    expires_at: DateTime,
    replayed: Type.Boolean(),
    can_record: Type.Boolean(),
  },
  { $id: 'CashDepositSlip', title: 'Cash deposit slip' },
);

/** The Test simulator can put an attempt in any of its statuses. */
export const SIMULATION_OUTCOMES = ATTEMPT_STATUSES;
export const SimulateBody = Type.Object(
  {
    outcome: Type.Union(
      SIMULATION_OUTCOMES.map((o) => Type.Literal(o)),
      { description: 'The outcome to simulate (SPEC 3.2).' },
    ),
  },
  { additionalProperties: false },
);
