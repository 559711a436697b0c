// TypeBox schemas of the payment link routes (issue 35): they validate, serialise and document (OpenAPI). The
// limits are the link model's; the rules across fields (a fixed amount or a range, unique keys, a future
// expiry) are payment-links.ts's, which the dashboard shares.
import { Type, type Static } from '@sinclair/typebox';
import {
  CALLBACK_URL_LENGTH_MAX,
  ID_PARAM_LENGTH_MAX,
  METADATA_BYTES_MAX,
  METADATA_KEYS_MAX,
  SESSION_AMOUNT_MAX_MINOR,
} from '../../../checkout/model.ts';
import {
  CUSTOM_FIELD_KEY_LENGTH_MAX,
  CUSTOM_FIELD_KEY_PATTERN,
  CUSTOM_FIELD_LABEL_LENGTH_MAX,
  CUSTOM_FIELD_TYPES,
  CUSTOM_FIELDS_MAX,
  LINK_AMOUNT_MAX_DEFAULT_MINOR,
  LINK_AMOUNT_MIN_DEFAULT_MINOR,
  LINK_DESCRIPTION_LENGTH_MAX,
  LINK_NAME_LENGTH_MAX,
} from '../../../checkout/payment-link-model.ts';
import { LINK_LIST_LIMIT_DEFAULT, LINK_LIST_LIMIT_MAX } from '../../../checkout/payment-links.ts';
import { CursorPage, DateTime, explainedPattern, NON_BLANK_TEXT_PATTERN, StringEnum } from '../../schemas.ts';

const Amount = (description: string) => Type.Integer({ minimum: 1, maximum: SESSION_AMOUNT_MAX_MINOR, description });

const Name = Type.String({
  minLength: 1,
  maxLength: LINK_NAME_LENGTH_MAX,
  pattern: NON_BLANK_TEXT_PATTERN,
  description: 'What the payer pays for, shown on the page (not blank).',
});
const Description = Type.String({
  maxLength: LINK_DESCRIPTION_LENGTH_MAX,
  description: 'More about it, shown under the name.',
});

const CustomFieldSchema = Type.Object(
  {
    key: Type.String({
      minLength: 1,
      maxLength: CUSTOM_FIELD_KEY_LENGTH_MAX,
      pattern: explainedPattern(CUSTOM_FIELD_KEY_PATTERN, 'must be a-z, 0-9 and _ only'),
      description: "The key of the payer's answer in the session's custom_fields (unique in the link).",
    }),
    label: Type.String({
      minLength: 1,
      maxLength: CUSTOM_FIELD_LABEL_LENGTH_MAX,
      pattern: NON_BLANK_TEXT_PATTERN,
      description: 'What the payer is asked, beside the field.',
    }),
    type: StringEnum(CUSTOM_FIELD_TYPES, { description: 'What the payer may enter.' }),
    required: Type.Optional(
      Type.Boolean({ default: false, description: 'Whether the payer must fill it in (default false).' }),
    ),
  },
  { additionalProperties: false },
);

export const CreatePaymentLinkBody = Type.Object(
  {
    name: Name,
    description: Type.Optional(Description),
    amount_minor: Type.Optional(
      Amount(
        'A fixed amount in pesewas. Leave it out to let the payer choose between amount_min_minor and amount_max_minor.',
      ),
    ),
    amount_min_minor: Type.Optional(
      Amount(`The least the payer may choose (default ${LINK_AMOUNT_MIN_DEFAULT_MINOR}); not with amount_minor.`),
    ),
    amount_max_minor: Type.Optional(
      Amount(`The most the payer may choose (default ${LINK_AMOUNT_MAX_DEFAULT_MINOR}); not with amount_minor.`),
    ),
    custom_fields: Type.Optional(
      Type.Array(CustomFieldSchema, {
        maxItems: CUSTOM_FIELDS_MAX,
        description: `What the payer is asked besides the amount (at most ${CUSTOM_FIELDS_MAX}, keys unique); the answers are the session's custom_fields.`,
      }),
    ),
    single_use: Type.Optional(
      Type.Boolean({ default: false, description: 'Paid once only: the first successful payment uses it up.' }),
    ),
    max_payments: Type.Optional(
      Type.Integer({
        minimum: 1,
        maximum: 2_147_483_647,
        description: 'How many successful payments the link takes in all (none: no limit; 1 on a single_use link).',
      }),
    ),
    expires_at: Type.Optional(
      Type.String({ format: 'date-time', description: 'When the link stops taking payments (in the future).' }),
    ),
    redirect_url: Type.Optional(
      Type.String({
        format: 'uri',
        pattern: explainedPattern('^[Hh][Tt][Tt][Pp][Ss]?:', 'must be an absolute http or https URL'),
        maxLength: CALLBACK_URL_LENGTH_MAX,
        description: "Where the payer returns after paying (each session's callback_url).",
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
  },
  {
    additionalProperties: false,
    examples: [
      {
        name: 'School fees, term 2',
        amount_minor: 50000,
        custom_fields: [{ key: 'student_name', label: "Student's name", type: 'text', required: true }],
      },
    ],
  },
);
export type CreatePaymentLinkBody = Static<typeof CreatePaymentLinkBody>;

const changeable = {
  name: Type.Optional(Name),
  description: Type.Optional(Type.Union([Description, Type.Null()])),
  active: Type.Optional(Type.Boolean({ description: 'false: the page answers 410 and takes no payment.' })),
  expires_at: Type.Optional(
    Type.Union([Type.String({ format: 'date-time' }), Type.Null()], {
      description: 'A new expiry in the future, or null for none.',
    }),
  ),
};
const updateBody = Type.Object(changeable, {
  additionalProperties: false,
  minProperties: 1,
  examples: [{ active: false }],
});
/**
 * The changes; a field of the create body that may not change (the amount, the custom fields, ...) is refused
 * with a 400 naming it (a `false` schema), where an unknown field is ignored as on every route.
 */
export const UpdatePaymentLinkBody: typeof updateBody = {
  ...updateBody,
  properties: {
    ...updateBody.properties,
    ...Object.fromEntries(
      Object.keys(CreatePaymentLinkBody.properties)
        .filter((field) => !(field in changeable))
        .map((field) => [field, false]),
    ),
  },
};
export type UpdatePaymentLinkBody = Static<typeof UpdatePaymentLinkBody>;

export const PaymentLinkResponse = Type.Object(
  {
    object: Type.Literal('payment_link'),
    id: Type.String({ description: 'pl_...' }),
    url: Type.String({ description: "The payer's page: {checkout_url_host}/l/{slug}." }),
    qr_svg_url: Type.String({ description: 'A QR code of url, as SVG (url + "/qr.svg").' }),
    active: Type.Boolean(),
    name: Type.String(),
    description: Type.Union([Type.String(), Type.Null()]),
    amount_minor: Type.Union([Type.Integer(), Type.Null()], {
      description: 'The fixed amount in pesewas; null when the payer chooses.',
    }),
    amount_min_minor: Type.Integer({ description: 'The least a payer may pay (the fixed amount when fixed).' }),
    amount_max_minor: Type.Integer({ description: 'The most a payer may pay (the fixed amount when fixed).' }),
    custom_fields: Type.Array(
      Type.Object({
        key: Type.String(),
        label: Type.String(),
        type: StringEnum(CUSTOM_FIELD_TYPES),
        required: Type.Boolean(),
      }),
    ),
    single_use: Type.Boolean(),
    max_payments: Type.Union([Type.Integer(), Type.Null()], {
      description: 'How many successful payments it takes in all; null: no limit.',
    }),
    payments_count: Type.Integer({ minimum: 0, description: 'Its sessions that succeeded.' }),
    expires_at: Type.Union([DateTime, Type.Null()]),
    created_at: DateTime,
    livemode: Type.Boolean(),
    metadata: Type.Object({}, { additionalProperties: true }),
  },
  {
    $id: 'PaymentLink',
    title: 'Payment link',
    examples: [
      {
        object: 'payment_link',
        id: 'pl_3f2a9c0d1e4b5a6978c1d2e3f4a5b6c7',
        url: 'https://pay.example.com/l/Xk3v9QmT2a',
        qr_svg_url: 'https://pay.example.com/l/Xk3v9QmT2a/qr.svg',
        active: true,
        name: 'School fees, term 2',
        description: null,
        amount_minor: 50000,
        amount_min_minor: 50000,
        amount_max_minor: 50000,
        custom_fields: [{ key: 'student_name', label: "Student's name", type: 'text', required: true }],
        single_use: false,
        max_payments: null,
        payments_count: 0,
        expires_at: null,
        created_at: '2026-06-01T10:00:00.000Z',
        livemode: false,
        metadata: {},
      },
    ],
  },
);

export const PaymentLinkList = CursorPage('PaymentLink', { $id: 'PaymentLinkList', title: 'Payment link list' });

export const ListPaymentLinksQuery = Type.Object(
  {
    limit: Type.Optional(
      Type.Integer({
        minimum: 1,
        maximum: LINK_LIST_LIMIT_MAX,
        default: LINK_LIST_LIMIT_DEFAULT,
        description: 'Links per page.',
      }),
    ),
    starting_after: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: ID_PARAM_LENGTH_MAX,
        description: 'The last link id of the previous page.',
      }),
    ),
    created_gte: Type.Optional(Type.String({ format: 'date-time', description: 'Created at or after (ISO 8601).' })),
    created_lt: Type.Optional(Type.String({ format: 'date-time', description: 'Created before (ISO 8601).' })),
  },
  { additionalProperties: false },
);
export type ListPaymentLinksQuery = Static<typeof ListPaymentLinksQuery>;

export const PaymentLinkParams = Type.Object({
  id: Type.String({ minLength: 1, maxLength: ID_PARAM_LENGTH_MAX, description: 'The link id (pl_...).' }),
});
