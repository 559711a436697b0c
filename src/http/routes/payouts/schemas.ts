// TypeBox schemas of the payouts API (SPEC 4.3): they validate, serialise and document (OpenAPI). Closed
// sets are read from their source: account types and statuses from model.ts, networks from src/lib/ghana.ts.
import { Type } from '@sinclair/typebox';
import {
  ANY_NETWORK_PHONE_PATTERN,
  Currency,
  DateTime,
  Environment,
  explainedPattern,
  fieldRule,
  NON_BLANK_TEXT_PATTERN,
  phoneOfNetwork,
  StringEnum,
} from '../../schemas.ts';
import { MOMO_NETWORKS } from '../../../lib/ghana.ts';
import {
  ACCOUNT_NAME_LENGTH_MAX,
  ACCOUNT_NUMBER_DIGITS_MAX,
  ACCOUNT_NUMBER_DIGITS_MIN,
  ACCOUNT_TYPES,
  CANCEL_REASON_LENGTH_MAX,
  CLIENT_REFERENCE_LENGTH_MAX,
  CLIENT_REFERENCE_PATTERN,
  EVIDENCE_BYTES_MAX,
  EVIDENCE_CONTENT_TYPES,
  NOTES_LENGTH_MAX,
  PAYOUT_AMOUNT_MAX_MINOR,
  PAYOUT_CURRENCY,
  PAYOUT_ID_LENGTH_MAX,
  PAYOUT_LIST_LIMIT_MAX,
  PAYOUT_STATUSES,
  RECONCILIATION_STATUSES,
  TEST_PAYOUT_OUTCOME_DEFAULT,
  TEST_PAYOUT_OUTCOMES,
  TEST_PAYOUT_SIMULATIONS,
  VERIFICATION_STATUSES,
} from '../../../payouts/model.ts';
import { ExportRangeProperties } from '../books/schemas.ts';
import { PAYOUT_TYPES } from '../../../payouts/presenters.ts';

// Outer bounds, in characters, on fields the services check in full.
const UUID_FIELD_LENGTH_MAX = 64; // bank_id, merchant_id
const ACCOUNT_NUMBER_FIELD_LENGTH_MAX = 64;
const PHONE_FIELD_LENGTH_MAX = 32;

/** A body's optional merchant_id: a merchant key acts for its own merchant only. */
const KeyMerchantId = () =>
  Type.Optional(
    Type.String({
      format: 'uuid',
      maxLength: UUID_FIELD_LENGTH_MAX,
      description: "Optional: must be the key's merchant.",
    }),
  );
const Nullable = <T extends ReturnType<typeof Type.String>>(schema: T) => Type.Union([schema, Type.Null()]);

export const AccountTypeSchema = StringEnum(ACCOUNT_TYPES, {
  description: 'bank (a bank account) or momo (a Mobile Money wallet).',
});
export const NetworkSchema = StringEnum(MOMO_NETWORKS, {
  description: 'The Mobile Money network of a momo recipient.',
});
export const PayoutStatusSchema = StringEnum(PAYOUT_STATUSES, {
  description:
    'requested (waiting for approval) -> processing -> paid | failed; requested or processing -> cancelled; paid -> returned.',
});

export const Recipient = Type.Object(
  {
    id: Type.String({ description: 'rcp_...' }),
    object: Type.Literal('recipient'),
    account_type: AccountTypeSchema,
    bank_id: Nullable(Type.String()),
    bank_name: Nullable(Type.String()),
    account_number: Nullable(Type.String()),
    network: Type.Union([NetworkSchema, Type.Null()]),
    phone: Nullable(Type.String({ description: '+233XXXXXXXXX' })),
    account_name: Type.String(),
    verified: Type.Boolean(),
    verification_status: StringEnum(VERIFICATION_STATUSES),
    rejection_reason: Type.Optional(Type.String()),
    active: Type.Boolean(),
    previous_version_id: Nullable(Type.String()),
    created_at: DateTime,
  },
  {
    $id: 'Recipient',
    title: 'Recipient',
    examples: [
      {
        id: 'rcp_1a2b3c4d5e6f7a8b9c0d1e2f3a4b5c6d',
        object: 'recipient',
        account_type: 'momo',
        bank_id: null,
        bank_name: null,
        account_number: null,
        network: 'mtn',
        phone: '+233241234567',
        account_name: 'Kofi Boateng',
        verified: true,
        verification_status: 'verified',
        active: true,
        previous_version_id: null,
        created_at: '2026-06-01T09:00:00.000Z',
      },
    ],
  },
);

export const RecipientList = Type.Object(
  { object: Type.Literal('list'), recipients: Type.Array(Type.Ref('Recipient')) },
  { $id: 'RecipientList', title: 'Recipient list' },
);

const RecipientFields = {
  account_type: Type.Optional(AccountTypeSchema),
  bank_id: Type.Optional(
    Type.String({
      format: 'uuid',
      maxLength: UUID_FIELD_LENGTH_MAX,
      description: 'bank (required): one of the banks of GET /api/v1/payouts/capabilities.',
    }),
  ),
  account_number: Type.Optional(
    Type.String({
      maxLength: ACCOUNT_NUMBER_FIELD_LENGTH_MAX,
      pattern: explainedPattern(
        `^[0-9]{${ACCOUNT_NUMBER_DIGITS_MIN},${ACCOUNT_NUMBER_DIGITS_MAX}}$`,
        `must be ${ACCOUNT_NUMBER_DIGITS_MIN} to ${ACCOUNT_NUMBER_DIGITS_MAX} digits`,
      ),
      description: `bank (required): the account number, ${ACCOUNT_NUMBER_DIGITS_MIN} to ${ACCOUNT_NUMBER_DIGITS_MAX} digits.`,
    }),
  ),
  account_name: Type.String({
    minLength: 1,
    maxLength: ACCOUNT_NAME_LENGTH_MAX,
    pattern: NON_BLANK_TEXT_PATTERN,
    description: "The account holder's name (the registered wallet name for momo).",
  }),
  network: Type.Optional(NetworkSchema),
  phone: Type.Optional(
    Type.String({
      maxLength: PHONE_FIELD_LENGTH_MAX,
      pattern: ANY_NETWORK_PHONE_PATTERN,
      description:
        'momo (required): a Ghana mobile number of the network, local or +233 form; spaces and hyphens accepted.',
    }),
  ),
  previous_version_id: Type.Optional(
    Type.String({
      maxLength: PAYOUT_ID_LENGTH_MAX,
      description: 'The recipient this one replaces (deactivated when this one is created).',
    }),
  ),
  merchant_id: KeyMerchantId(),
  environment: Type.Optional(Environment),
};
export const RecipientBody = Type.Object(RecipientFields, {
  additionalProperties: false,
  description:
    'account_type bank (the default) takes bank_id and account_number and no wallet field; momo takes network and phone (of that network) and no bank field.',
  // The rules of recipients.ts the properties alone cannot say: which fields each account type requires and refuses.
  allOf: [
    fieldRule(RecipientFields, {
      if: { properties: { account_type: { const: 'momo' } }, required: ['account_type'] },
      then: { required: ['network', 'phone'], properties: { bank_id: false, account_number: false } },
      else: { required: ['bank_id', 'account_number'], properties: { network: false, phone: false } },
    }),
    ...phoneOfNetwork(RecipientFields, 'network', { field: 'account_type', value: 'momo' }),
  ],
  examples: [{ account_type: 'momo', network: 'mtn', phone: '0241234567', account_name: 'Kofi Boateng' }],
});

export const PayoutRecipient = Type.Object(
  {
    id: Type.String(),
    account_type: AccountTypeSchema,
    account_name: Type.String(),
    bank_id: Nullable(Type.String()),
    bank_name: Nullable(Type.String()),
    account_number: Nullable(Type.String()),
    network: Type.Union([NetworkSchema, Type.Null()]),
    phone: Nullable(Type.String()),
  },
  {
    $id: 'PayoutRecipient',
    title: 'Payout recipient',
    description: 'The recipient the payout was made to, as it was.',
  },
);

export const Evidence = Type.Object(
  {
    id: Type.String({ description: 'evd_...; download it at /api/v1/payouts/{payout_id}/evidence/{id}.' }),
    content_type: StringEnum(EVIDENCE_CONTENT_TYPES, { description: 'Judged by the content.' }),
    size_bytes: Type.Integer(),
    filename: Type.Union([Type.String(), Type.Null()]),
    created_at: DateTime,
  },
  { $id: 'Evidence', title: 'Evidence file' },
);

export const EvidenceUploaded = Type.Object(
  {
    id: Type.String(),
    object: Type.Literal('evidence'),
    payout_id: Type.String(),
    content_type: StringEnum(EVIDENCE_CONTENT_TYPES, { description: 'Judged by the content.' }),
    size_bytes: Type.Integer(),
    filename: Type.Union([Type.String(), Type.Null()]),
  },
  { $id: 'EvidenceUpload', title: 'Evidence file attached' },
);

/** The evidence upload's body, for the API document only (the file is read by the multipart parser, not validated as a body). */
export const EvidenceUploadBody = {
  type: 'object',
  required: ['file'],
  properties: {
    file: {
      type: 'string',
      format: 'binary',
      contentMediaType: 'application/octet-stream',
      description: `${EVIDENCE_CONTENT_TYPES.join(', ')} (judged by the content), at most ${EVIDENCE_BYTES_MAX} bytes.`,
    },
  },
};

/** What made a payout (issue 34): the merchant, or its settlement schedule. */
export const PayoutTypeSchema = StringEnum(PAYOUT_TYPES, {
  description:
    'manual: a payout the merchant asked for. settlement: the scheduled payout of the available balance of a period (see settlement).',
});

/** A settlement's period; null for a manual payout. */
export const PayoutSettlement = Type.Union(
  [
    Type.Object({
      period_start: Type.Union([DateTime, Type.Null()], {
        description:
          "Where the period began: the end of the merchant's previous settlement in this environment; null for its first.",
      }),
      period_end: Type.String({
        format: 'date-time',
        description:
          'Where the period ended. The balance transactions it paid out: GET /api/v1/balance/transactions?payout_id=<this payout>; their net_minor sum to amount_minor.',
      }),
    }),
    Type.Null(),
  ],
  { description: 'A settlement: its period. null for a manual payout.' },
);

export const Payout = Type.Object(
  {
    id: Type.String({ description: 'po_...' }),
    object: Type.Literal('payout'),
    type: PayoutTypeSchema,
    settlement: PayoutSettlement,
    reference: Type.String({ description: 'PO-YYMMDD-XXXXXX, what the recipient sees.' }),
    client_reference: Type.String(),
    recipient: Type.Union([Type.Ref('PayoutRecipient'), Type.Null()]),
    status: PayoutStatusSchema,
    status_label: Type.String(),
    amount_minor: Type.Integer(),
    fee_minor: Type.Integer(),
    total_debit_minor: Type.Integer(),
    currency: Type.String(),
    notes: Type.String(),
    bank_reference: Type.String(),
    return_reference: Type.String(),
    reconciliation_status: StringEnum(RECONCILIATION_STATUSES),
    can_cancel: Type.Boolean(),
    failure_reason: Nullable(Type.String()),
    livemode: Type.Boolean(),
    evidence: Type.Array(Type.Ref('Evidence')),
    created_at: DateTime,
    updated_at: DateTime,
    paid_at: Type.Union([DateTime, Type.Null()]),
  },
  {
    $id: 'Payout',
    title: 'Payout',
    examples: [
      {
        id: 'po_9f8e7d6c5b4a39281706f5e4d3c2b1a0',
        object: 'payout',
        type: 'manual',
        settlement: null,
        reference: 'PO-260601-K7Q2ZD',
        client_reference: 'salary-2026-06-kofi',
        recipient: {
          id: 'rcp_1a2b3c4d5e6f7a8b9c0d1e2f3a4b5c6d',
          account_type: 'momo',
          account_name: 'Kofi Boateng',
          bank_id: null,
          bank_name: null,
          account_number: null,
          network: 'mtn',
          phone: '+233241234567',
        },
        status: 'paid',
        status_label: 'Paid',
        amount_minor: 100000,
        fee_minor: 1000,
        total_debit_minor: 101000,
        currency: 'GHS',
        notes: 'June salary',
        bank_reference: 'TEST-8F3K2M',
        return_reference: '',
        reconciliation_status: 'not_required',
        can_cancel: false,
        failure_reason: null,
        livemode: false,
        evidence: [],
        created_at: '2026-06-01T09:05:00.000Z',
        updated_at: '2026-06-01T09:05:00.000Z',
        paid_at: '2026-06-01T09:05:00.000Z',
      },
    ],
  },
);

export const PayoutList = Type.Object(
  { payouts: Type.Array(Type.Ref('Payout')), page: Type.Integer(), limit: Type.Integer(), total: Type.Integer() },
  { $id: 'PayoutList', title: 'Payout list' },
);

export const PayoutBody = Type.Object(
  {
    recipient_id: Type.String({ minLength: 1, maxLength: PAYOUT_ID_LENGTH_MAX }),
    amount_minor: Type.Integer({ minimum: 1, maximum: PAYOUT_AMOUNT_MAX_MINOR }),
    currency: Type.Optional({ ...Currency, default: PAYOUT_CURRENCY }),
    max_fee_minor: Type.Optional(Type.Integer({ minimum: 0 })),
    client_reference: Type.String({
      minLength: 1,
      maxLength: CLIENT_REFERENCE_LENGTH_MAX,
      pattern: explainedPattern(
        CLIENT_REFERENCE_PATTERN.source,
        'must start with a letter or digit and use letters, digits and _ . : - only',
      ),
      description:
        'Your unique reference (SPEC 4.3 rule 5: a letter or digit first, then letters, digits and _ . : -): retries with the same key and fields return the same payout.',
    }),
    notes: Type.Optional(Type.String({ maxLength: NOTES_LENGTH_MAX })),
    merchant_id: KeyMerchantId(),
    environment: Type.Optional(Environment),
    test_outcome: Type.Optional(
      StringEnum(TEST_PAYOUT_OUTCOMES, {
        description:
          `Test keys only (400 with a Live key): the status the Test payout is created in. ${TEST_PAYOUT_OUTCOME_DEFAULT} (the default): paid at once, nothing held; ` +
          'requested (awaiting approval, payout.requested) or processing (payout.processing): amount and fee held from available as for a Live payout, then moved on with POST /api/v1/test/payouts/{payout_id}/simulate or cancelled. Part of the request a client_reference retry must repeat.',
      }),
    ),
  },
  {
    additionalProperties: false,
    examples: [
      {
        recipient_id: 'rcp_1a2b3c4d5e6f7a8b9c0d1e2f3a4b5c6d',
        amount_minor: 100000,
        client_reference: 'salary-2026-06-kofi',
        notes: 'June salary',
      },
    ],
  },
);

export const QuoteBody = Type.Object(
  {
    recipient_id: Type.String({ minLength: 1, maxLength: PAYOUT_ID_LENGTH_MAX }),
    amount_minor: Type.Integer({ minimum: 1, maximum: PAYOUT_AMOUNT_MAX_MINOR }),
  },
  {
    additionalProperties: false,
    examples: [{ recipient_id: 'rcp_1a2b3c4d5e6f7a8b9c0d1e2f3a4b5c6d', amount_minor: 100000 }],
  },
);

export const PayoutQuote = Type.Object(
  {
    quote_id: Type.String(),
    recipient_id: Type.String(),
    amount_minor: Type.Integer(),
    fee_minor: Type.Integer(),
    total_debit_minor: Type.Integer(),
    currency: Type.String(),
    expires_at: DateTime,
  },
  { $id: 'PayoutQuote', title: 'Payout quote' },
);

export const PayoutBalance = Type.Object(
  {
    environment: Environment,
    currency: Type.String(),
    eligible_minor: Type.Integer({ description: 'available_minor + held_minor.' }),
    held_minor: Type.Integer({
      description: 'The amount plus fee of payouts still requested or processing, held from available.',
    }),
    available_minor: Type.Integer({ description: 'What payouts and refunds may spend now.' }),
    pending_minor: Type.Integer({
      minimum: 0,
      description:
        "Payments still clearing: credited, not yet available until their rail's clearing time passes (each balance transaction's available_on).",
    }),
    reserved_minor: Type.Integer({
      minimum: 0,
      description:
        'The rolling reserve: the part of cleared payments held for a number of days, then released to available.',
    }),
  },
  {
    $id: 'PayoutBalance',
    title: 'Payout balance',
    description:
      'eligible = available + held. Payouts and refunds spend only available money; pending and reserved money become available by themselves.',
  },
);

const Choice = <T extends ReturnType<typeof StringEnum>>(value: T) => Type.Object({ value, label: Type.String() });

export const Capabilities = Type.Object(
  {
    account_types: Type.Array(Choice(AccountTypeSchema), { description: 'The kinds of recipient this key can pay.' }),
    banks: Type.Array(Type.Object({ id: Type.String({ format: 'uuid' }), name: Type.String(), code: Type.String() }), {
      description: 'bank_id choices (empty when banks cannot be paid).',
    }),
    mobile_money_networks: Type.Array(Choice(NetworkSchema), { description: 'network choices.' }),
    settings: Type.Object({
      environment: Environment,
      currency: Type.String(),
      payout_access: Type.Boolean(),
      paused: Type.Boolean(),
      approval_required: Type.Boolean({
        description: "Live payouts wait for a second person's approval (status requested).",
      }),
      payout_limit_minor: Type.Integer(),
      daily_limit_minor: Type.Integer(),
      fees: Type.Object({
        bank: Type.Object({ flat_minor: Type.Integer() }),
        momo: Type.Object({ percent_bps: Type.Integer(), min_minor: Type.Integer(), max_minor: Type.Integer() }),
      }),
    }),
  },
  { $id: 'PayoutCapabilities', title: 'Payout capabilities' },
);

export const SimulatePayoutBody = Type.Object(
  {
    outcome: StringEnum(TEST_PAYOUT_SIMULATIONS, {
      description:
        'The status to move the Test payout to, as its table allows: requested -> processing; processing -> paid (the hold is paid out) or failed (amount and fee released); paid -> returned (amount and fee back to available).',
    }),
  },
  { additionalProperties: false, examples: [{ outcome: 'paid' }] },
);

export const CancelBody = Type.Object(
  { reason: Type.Optional(Type.String({ maxLength: CANCEL_REASON_LENGTH_MAX })) },
  { additionalProperties: false },
);

export const ListPayoutsQuery = Type.Object({
  page: Type.Optional(Type.Integer({ description: 'From 1' })),
  limit: Type.Optional(Type.Integer({ description: `Clamped to 1..${PAYOUT_LIST_LIMIT_MAX}` })),
  reference: Type.Optional(
    Type.String({ maxLength: CLIENT_REFERENCE_LENGTH_MAX, description: 'Exact client_reference' }),
  ),
  ...ExportRangeProperties,
});

export const IdParams = Type.Object({ payout_id: Type.String({ minLength: 1, maxLength: PAYOUT_ID_LENGTH_MAX }) });
export const RecipientParams = Type.Object({
  recipient_id: Type.String({ minLength: 1, maxLength: PAYOUT_ID_LENGTH_MAX }),
});
export const EvidenceParams = Type.Object({
  payout_id: Type.String({ maxLength: PAYOUT_ID_LENGTH_MAX }),
  evidence_id: Type.String({ maxLength: PAYOUT_ID_LENGTH_MAX }),
});
