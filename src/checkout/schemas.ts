import { Type, type Static } from '@sinclair/typebox';
import { Currency, DateTime } from '../http/schemas.ts';
import {
  CALLBACK_URL_LENGTH_MAX,
  CUSTOMER_EMAIL_LENGTH_MAX,
  CUSTOMER_NAME_LENGTH_MAX,
  DESCRIPTION_LENGTH_MAX,
  ID_PARAM_LENGTH_MAX,
  INVOICE_REF_LENGTH_MAX,
  SESSION_AMOUNT_MAX_MINOR,
  SESSION_LIFETIME_DEFAULT_S,
  SESSION_LIFETIME_MAX_S,
  SESSION_LIFETIME_MIN_S,
  SESSION_STATUSES,
} from './model.ts';

export const CreateSessionBody = Type.Object(
  {
    amount_minor: Type.Integer({ minimum: 1, maximum: SESSION_AMOUNT_MAX_MINOR, description: 'Amount in pesewas (50000 = GHS 500.00).' }),
    invoice_ref: Type.String({ minLength: 1, maxLength: INVOICE_REF_LENGTH_MAX, description: 'Your invoice reference; use the same one on invoice lines.' }),
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
    callback_url: Type.Optional(Type.String({ format: 'uri', maxLength: CALLBACK_URL_LENGTH_MAX, description: 'Where the payer returns after paying.' })),
    metadata: Type.Optional(Type.Object({}, { additionalProperties: true, description: 'Your own key/value data, returned as given.' })),
    expires_in_seconds: Type.Optional(
      Type.Integer({ minimum: SESSION_LIFETIME_MIN_S, maximum: SESSION_LIFETIME_MAX_S, description: `Session lifetime; default ${SESSION_LIFETIME_DEFAULT_S} (24 hours).` }),
    ),
  },
  { additionalProperties: false },
);
export type CreateSessionBody = Static<typeof CreateSessionBody>;

export const CheckoutSessionResponse = Type.Object(
  {
    id: Type.String(),
    object: Type.Literal('checkout.session'),
    status: Type.Union(SESSION_STATUSES.map((s) => Type.Literal(s))),
    amount_minor: Type.Integer(),
    currency: Type.String({ maxLength: 3 }),
    invoice_ref: Type.String(),
    description: Type.Union([Type.String(), Type.Null()]),
    checkout_url: Type.String({ description: 'Send the payer here: {checkout_url_host}/pay/{id}.' }),
    expires_at: DateTime,
    created_at: DateTime,
    livemode: Type.Boolean(),
    customer: Type.Object({ name: Type.Union([Type.String(), Type.Null()]), email: Type.Union([Type.String(), Type.Null()]) }),
    callback_url: Type.Union([Type.String(), Type.Null()]),
    metadata: Type.Object({}, { additionalProperties: true }),
  },
  { $id: 'CheckoutSessionResponse', title: 'Checkout session' },
);

export const SessionParams = Type.Object({ reference: Type.String({ minLength: 1, maxLength: ID_PARAM_LENGTH_MAX, description: 'The session id (cs_...).' }) });
