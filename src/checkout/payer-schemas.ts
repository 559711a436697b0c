import { Type } from '@sinclair/typebox';
import { DateTime } from '../http/schemas.ts';
import { railList } from '../rails/registry.ts';
import { ID_PARAM_LENGTH_MAX } from './model.ts';

/** The payer API's field bounds, in characters. */
const RAIL_FIELD_LENGTH_MAX = 32;
const OPERATOR_FIELD_LENGTH_MAX = 16;
const PHONE_FIELD_LENGTH_MAX = 32;
const ACCOUNT_NAME_LENGTH_MAX = 200;
/** The verification code field: longer than any code, so a malformed one gets the answer that says what a code is. */
export const CODE_FIELD_LENGTH_MAX = 32;

const Choice = Type.Object({ value: Type.String(), label: Type.String() });
const BranchOption = Type.Object({ id: Type.String({ format: 'uuid' }), name: Type.String(), code: Type.String() });

export const CheckoutOptions = Type.Object(
  {
    payment_methods: Type.Array(Choice),
    mobile_money_operators: Type.Array(Choice),
    branch_payment_methods: Type.Array(Choice),
    banks: Type.Array(Type.Object({ id: Type.String({ format: 'uuid' }), name: Type.String(), code: Type.String(), branches: Type.Array(BranchOption) })),
  },
  { $id: 'PublicCheckoutOptions', title: 'Checkout options' },
);

export const PublicSession = Type.Object(
  {
    id: Type.String(),
    merchant_name: Type.String(),
    status: Type.String(),
    amount_minor: Type.Integer(),
    currency: Type.String(),
    invoice_ref: Type.String(),
    description: Type.String(),
    customer_name: Type.String(),
    allowed_rails: Type.Array(Type.String()),
    allowed_operators: Type.Array(Type.String(), { description: 'The Mobile Money networks (operator values) a payer can pay from on this session.' }),
    expires_at: DateTime,
    return_to_merchant_url: Type.Union([Type.String(), Type.Null()]),
    card_collection_mode: Type.Union([Type.Literal('direct_card'), Type.Literal('test_simulation'), Type.Literal('card_network_hosted_session')]),
    line_items: Type.Array(Type.Object({ code: Type.String(), name: Type.String(), amount_minor: Type.Integer(), currency: Type.String() })),
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
    status: Type.String(),
    base_minor: Type.Integer(),
    currency: Type.String(),
    expires_at: DateTime,
    allowed_rails: Type.Array(Type.String()),
    surcharges: Type.Record(Type.String(), RailQuote),
  },
  { $id: 'CheckoutQuote', title: 'Checkout quote' },
);

export const AttemptBody = Type.Object(
  {
    rail: Type.String({ maxLength: RAIL_FIELD_LENGTH_MAX, description: railList() }),
    amount_minor: Type.Integer({ minimum: 1, description: 'The quoted total for the rail.' }),
    operator: Type.Optional(Type.String({ maxLength: OPERATOR_FIELD_LENGTH_MAX, description: 'mtn, telecel or at (momo)' })),
    phone: Type.Optional(Type.String({ maxLength: PHONE_FIELD_LENGTH_MAX, description: 'Ghana mobile number, local or +233 form (momo)' })),
    account_name: Type.Optional(Type.String({ maxLength: ACCOUNT_NAME_LENGTH_MAX })),
  },
  { additionalProperties: false },
);

export const AttemptInitiation = Type.Object(
  {
    attempt_reference: Type.String(),
    provider: Type.String(),
    provider_reference: Type.String(),
    rail: Type.String(),
    status: Type.String(),
    amount_charged_minor: Type.Integer(),
    currency: Type.String(),
    instructions: Type.Object({ mode: Type.String(), rail: Type.String() }, { additionalProperties: true }),
    replayed: Type.Boolean(),
  },
  { $id: 'PaymentAttemptInitiation', title: 'Payment attempt' },
);

export const AttemptStatusResponse = Type.Object(
  {
    attempt_reference: Type.String(),
    provider: Type.String(),
    provider_reference: Type.String(),
    rail: Type.String(),
    status: Type.String(),
    amount_charged_minor: Type.Integer(),
    currency: Type.String(),
    session_id: Type.String(),
    session_status: Type.String(),
    session_finalized_at: Type.Union([DateTime, Type.Null()]),
    raw_status: Type.String(),
    refreshed: Type.Boolean(),
    finalized: Type.Boolean(),
    verification_required: Type.Boolean(),
    resends_left: Type.Integer(),
  },
  { $id: 'PaymentAttemptStatus', title: 'Payment attempt status' },
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
    status: Type.String(),
    expires_at: DateTime,
    replayed: Type.Boolean(),
    can_record: Type.Boolean(),
  },
  { $id: 'CashDepositSlipResponse', title: 'Cash deposit slip' },
);

export const SIMULATION_OUTCOMES = ['pending', 'paid', 'failed', 'expired', 'cancelled', 'reversed', 'manual_review', 'amount_mismatch'] as const;
export const SimulateBody = Type.Object(
  { outcome: Type.Union(SIMULATION_OUTCOMES.map((o) => Type.Literal(o)), { description: 'The outcome to simulate (SPEC 3.2).' }) },
  { additionalProperties: false },
);
