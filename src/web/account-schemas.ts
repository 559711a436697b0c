// Input schemas of the console-account routes (second-factor sign-in, password change, TOTP enrolment,
// the owner's second-factor rule), in the shape of console-schemas.ts: bounded strings, a repeated field
// (an array) is a 400 page, unknown fields are ignored, the rule is on or off. The handlers judge the values.
import { Type, type TProperties } from '@sinclair/typebox';

const CSRF_TOKEN_LENGTH_MAX = 128;
const PASSWORD_FIELD_LENGTH_MAX = 1_000;
/** A TOTP code (6 digits) or a recovery code (16 characters and dashes), with room for spaces. */
export const CODE_FIELD_LENGTH_MAX = 40;
const CHOICE_LENGTH_MAX = 32;
/** A switch posted by a console form: turn the setting on or off. */
export const ON_OFF = ['on', 'off'] as const;

const text = (maxLength: number) => Type.Optional(Type.String({ maxLength }));
const form = (properties: TProperties = {}) => ({
  body: Type.Object({ _csrf: text(CSRF_TOKEN_LENGTH_MAX), ...properties }, { additionalProperties: true }),
});
const page = (properties: TProperties = {}) => ({
  querystring: Type.Object(properties, { additionalProperties: true }),
});

export const accountSchemas = {
  codePage: page(),
  code: form({ code: text(CODE_FIELD_LENGTH_MAX) }),
  account: page({ recovery_code_used: text(CHOICE_LENGTH_MAX) }),
  changePassword: form({
    current_password: text(PASSWORD_FIELD_LENGTH_MAX),
    new_password: text(PASSWORD_FIELD_LENGTH_MAX),
    new_password_confirm: text(PASSWORD_FIELD_LENGTH_MAX),
  }),
  secondFactor: page(),
  confirmSecondFactor: form({ code: text(CODE_FIELD_LENGTH_MAX), current_password: text(PASSWORD_FIELD_LENGTH_MAX) }),
  disableSecondFactor: form({ code: text(CODE_FIELD_LENGTH_MAX) }),
  secondFactorRule: {
    body: Type.Object(
      {
        _csrf: text(CSRF_TOKEN_LENGTH_MAX),
        required: Type.Unsafe<string>({ type: 'string', enum: [...ON_OFF], examples: ['on'] }),
      },
      { additionalProperties: true },
    ),
  },
};
