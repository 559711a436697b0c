// Input schemas of the console routes (merchant dashboard and operator console): every query parameter,
// path parameter and form field a handler reads. A repeated parameter arrives as an array and fails
// `type: 'string'` (the query validator only unwraps one-element arrays), so it is a 400 page instead of a
// crash in the handler. Closed sets are enums read from their source (environments, bearers, roles,
// networks, statuses, decisions), amounts have a pattern and bounds, and the fields a form always sends are
// required: a value outside them is a 400 page naming the field by its label (its `title`, else its name in
// words) and saying what it accepts, in a sentence (consoleInputError, console-messages.ts),
// never a "saved" that ignored it. Unknown fields are kept and ignored: handlers read only what they name.
// Handlers still judge what a schema cannot (an id of this merchant, a balance, a state).
import { Type, type TProperties, type TSchema } from '@sinclair/typebox';
import type { FastifyInstance, FastifySchema } from 'fastify';
import { INVITABLE_ROLES } from '../accounts/service.ts';
import { HOME_RANGES } from '../books/analytics.ts';
import { CODE_FIELD_LENGTH_MAX, ON_OFF } from './account-schemas.ts';
import { INVOICE_REF_LENGTH_MAX, SESSION_STATUSES } from '../checkout/model.ts';
import { SESSION_SEARCH_LENGTH_MAX } from '../checkout/session-search.ts';
import { ENVIRONMENTS } from '../lib/environment.ts';
import { errors, type SikaError } from '../lib/errors.ts';
import { MOMO_NETWORKS } from '../lib/ghana.ts';
import {
  ACCOUNT_NAME_LENGTH_MAX,
  ACCOUNT_TYPES,
  HOLD_REASON_LENGTH_MAX,
  NOTES_LENGTH_MAX,
  PAYOUT_STATUSES,
  RECONCILIATION_RESULTS,
} from '../payouts/model.ts';
import { PAYOUT_SEARCH_LENGTH_MAX } from '../payouts/payout-search.ts';
import { PAYOUT_TYPES } from '../payouts/presenters.ts';
import {
  FINISHED_REFUND_FILTERS,
  OPERATOR_FAIL_REASON_LENGTH_MAX,
  PAYER_ACCOUNT_LENGTH_MAX,
  TRANSFER_REFERENCE_LENGTH_MAX,
} from '../ops/refunds.ts';
import { BEARERS, railDescriptors } from '../rails/registry.ts';
import { REFUND_REASON_LENGTH_MAX, REFUND_REQUEST_KEY_LENGTH_MAX, REFUND_STATUSES } from '../refunds/model.ts';
import { REFUND_SEARCH_LENGTH_MAX } from '../refunds/refund-list.ts';
import { BALANCE_SEARCH_LENGTH_MAX } from '../books/balance-list.ts';
import { BALANCE_TRANSACTION_TYPES } from '../books/model.ts';
import {
  COLUMN_MAPPING_LENGTH_MAX,
  IMPORT_REASON_LENGTH_MAX,
  QUEUE_REFERENCE_FILTER,
  RESOLUTION_NOTE_LENGTH_MAX,
} from '../statements/model.ts';
import { refusalSentence, type FieldSchema, type ValidationIssue } from './console-messages.ts';
import { MERCHANT_NAV } from './layout.ts';
import {
  APPROVAL_REASON_LENGTH_MAX,
  HELD_CHOICES,
  PAYOUT_LIST_FILTERS,
  REVIEW_FILTERS,
} from '../ops/approvals-model.ts';
import { CONSOLE_CURSOR_LENGTH_MAX, CONSOLE_SEARCH_LENGTH_MAX } from './ops/console-list.ts';
import { MERCHANT_FILTERS } from '../ops/merchant-overview.ts';
import { MAIL_STATUSES } from '../mail/model.ts';
import { SETTLEMENT_INTERVALS, TIME_OF_DAY_PATTERN, WEEKDAYS } from '../payouts/settlement-schedule.ts';
import { CLEARING_DAYS_MAX, RESERVE_DAYS_MAX, RESERVE_DAYS_MIN } from '../ops/clearing-settings.ts';
import {
  CUSTOM_FIELD_KEY_LENGTH_MAX,
  CUSTOM_FIELD_LABEL_LENGTH_MAX,
  CUSTOM_FIELD_TYPES,
  CUSTOM_FIELDS_MAX,
  LINK_DESCRIPTION_LENGTH_MAX,
  LINK_NAME_LENGTH_MAX,
} from '../checkout/payment-link-model.ts';
import { LINK_FORM_KEY_LENGTH_MAX, LINK_LIST_STATES, LINK_SEARCH_LENGTH_MAX } from '../checkout/payment-links.ts';

/** Fastify's default maxParamLength: a longer path parameter is refused by the router (414) anyway. */
export const CONSOLE_ID_LENGTH_MAX = 100;
/** Short choice fields (environment, decision, role, account type, page number, ...). */
export const CONSOLE_CHOICE_LENGTH_MAX = 32;
/** Names, codes, references, amounts typed by a person. */
export const CONSOLE_TEXT_LENGTH_MAX = 200;
/** The CSRF tokens are 24-32 characters; anything far longer is not one. */
export const CSRF_TOKEN_LENGTH_MAX = 128;
export const EMAIL_LENGTH_MAX = 254;
/** Passwords longer than this are refused before argon2 spends time on them. */
export const PASSWORD_FIELD_LENGTH_MAX = 1_000;
/** Webhook URLs: the service checks the URL itself; this only bounds the field. */
export const URL_FIELD_LENGTH_MAX = 2_048;
/** A return_to path inside the console. */
export const PATH_FIELD_LENGTH_MAX = 200;

/** Longest amount a person types: 999,999,999.99 with its commas, and a little room for spaces. */
export const CEDIS_FIELD_LENGTH_MAX = 20;
/**
 * An amount in GHS as parseCedis (src/lib/ghana.ts) reads it, above zero: at most 9 whole digits (plain or in
 * thousands groups) and 2 decimals.
 */
export const CEDIS_PATTERN = String.raw`^(?!\s*[0,]*(?:\.0{0,2})?\s*$)\s*(?:\d{1,9}|\d{1,3}(?:,\d{3}){1,2})(?:\.\d{1,2})?\s*$`;
/** A calendar day, YYYY-MM-DD (the filters' date inputs send this, or nothing). */
const DAY_PATTERN = String.raw`^(?:\d{4}-(?:0[1-9]|1[0-2])-(?:0[1-9]|[12]\d|3[01]))?$`;
/** An optional day written YYYY-MM-DD, with the label its error names (else the field's name in words). */
const dayParam = (title?: string) =>
  Type.Optional(
    Type.String({
      maxLength: 10,
      pattern: DAY_PATTERN,
      ...(title ? { title } : {}),
      description: 'a date written YYYY-MM-DD',
      examples: ['2026-03-02'],
    }),
  );

const text = (maxLength: number) => Type.Optional(Type.String({ maxLength }));
/** Text the form always sends and the handler needs: present and not empty. */
const needed = (maxLength: number) => Type.String({ minLength: 1, maxLength });
/** One of a closed set; `examples` gives the tests a valid value. */
const oneOf = (values: readonly string[]) =>
  Type.Unsafe<string>({ type: 'string', enum: [...values], examples: [values[0]] });
/** A filter's choice: one of the set, or empty ("any"). */
const anyOrOneOf = (values: readonly string[]) => oneOf(['', ...values]);
const cedis = (title?: string) =>
  Type.String({
    maxLength: CEDIS_FIELD_LENGTH_MAX,
    pattern: CEDIS_PATTERN,
    description: 'an amount in GHS above zero with at most 2 decimals, e.g. 502.00',
    examples: ['502.00'],
    ...(title ? { title } : {}),
  });
/** An amount in GHS as cedis() takes it, or nothing (a form's amount field that is not always used). */
const optionalCedis = (title: string) =>
  Type.String({
    maxLength: CEDIS_FIELD_LENGTH_MAX,
    pattern: `^\\s*$|${CEDIS_PATTERN}`,
    description: 'an amount in GHS above zero with at most 2 decimals, e.g. 502.00',
    examples: ['502.00'],
    title,
  });
/** How the New link form's amount is set: fixed by the merchant, or chosen by the payer. */
const LINK_AMOUNT_TYPES = ['fixed', 'open'] as const;
const Id = Type.String({ minLength: 1, maxLength: CONSOLE_ID_LENGTH_MAX });
/** Ids stored as uuid columns (API keys, webhook endpoints, integrations, banks, branches, merchants). */
const Uuid = Type.String({
  format: 'uuid',
  maxLength: 36,
  description: 'an id like 123e4567-e89b-12d3-a456-426614174000',
});

/** Query parameters of a page; others are ignored. */
const query = (properties: TProperties = {}) => Type.Object(properties, { additionalProperties: true });
/**
 * A form post: the CSRF token (checked by the console, so a missing one is a 403, not a 400) and the named
 * fields; `required` names those the form always sends (the others are optional whatever their schema).
 */
const form = (properties: TProperties = {}, required: string[] = []) => {
  const fields = Object.fromEntries(
    Object.entries(properties).map(([name, schema]) => [
      name,
      required.includes(name) ? schema : Type.Optional(schema),
    ]),
  );
  return Type.Object({ _csrf: text(CSRF_TOKEN_LENGTH_MAX), ...fields }, { additionalProperties: true });
};
const params = (properties: TProperties) => Type.Object(properties, { additionalProperties: false });

const IdParams = params({ id: Id });
/** A list's page number (the handlers clamp it to their last page). */
const PageNumber = Type.String({
  maxLength: 6,
  pattern: '^[1-9][0-9]{0,5}$',
  description: 'a page number from 1',
  examples: ['1'],
});
/** An approver's decision on a payout or refund (four eyes), and an operator's on a held attempt. */
const DECISIONS = ['approve', 'reject'] as const;

const UuidParams = params({ id: Uuid });

type RouteSchema = { querystring?: TSchema; params?: TSchema; body?: TSchema };
const page = (querystring = query(), more: RouteSchema = {}): RouteSchema => ({ querystring, ...more });
const post = (body = form(), more: RouteSchema = {}): RouteSchema => ({ body, ...more });

/** Sign-in and sign-out, the same for both consoles. */
export const authSchemas = {
  loginPage: page(),
  login: post(form({ email: text(EMAIL_LENGTH_MAX), password: text(PASSWORD_FIELD_LENGTH_MAX) })),
  logout: post(),
};

export const dashboardSchemas = {
  home: page(query({ range: Type.Optional(oneOf(HOME_RANGES)) })),
  environment: post(
    form(
      {
        environment: oneOf(ENVIRONMENTS),
        return_to: Type.Optional(oneOf([...new Set(['/dashboard', ...MERCHANT_NAV.map(([, href]) => href)])])),
      },
      ['environment'],
    ),
  ),
  // Payments (issue 36): the search box, the filters and the keyset position are the address; format=csv its export.
  // invoice_ref and page: addresses of the page before issue 36 (invoice_ref is read as the search).
  sessions: page(
    query({
      q: text(SESSION_SEARCH_LENGTH_MAX),
      status: Type.Optional(anyOrOneOf(SESSION_STATUSES)),
      rail: Type.Optional(anyOrOneOf(railDescriptors().map((rail) => rail.id))),
      network: Type.Optional(anyOrOneOf(MOMO_NETWORKS)),
      link: text(CONSOLE_ID_LENGTH_MAX),
      from: dayParam('From'),
      to: dayParam('To'),
      after: text(CONSOLE_ID_LENGTH_MAX),
      format: Type.Optional(oneOf(['csv'])),
      invoice_ref: text(INVOICE_REF_LENGTH_MAX),
      page: Type.Optional(PageNumber),
    }),
  ),
  // The Payments page's other address: redirected to sessions with its query, which that route checks.
  payments: page(),
  // refund: a refund just asked for on this page (named in the flash).
  session: page(query({ refund: text(CONSOLE_ID_LENGTH_MAX) }), { params: IdParams }),
  revenueLines: page(),
  // Payouts
  // Payouts (issue 36): the search box, the filters and the keyset position are the address; format=csv its export.
  // page: an address of the list before issue 36 (ignored: the list starts at the newest).
  payouts: page(
    query({
      q: text(PAYOUT_SEARCH_LENGTH_MAX),
      status: Type.Optional(anyOrOneOf(PAYOUT_STATUSES)),
      method: Type.Optional(anyOrOneOf(ACCOUNT_TYPES)),
      type: Type.Optional(anyOrOneOf(PAYOUT_TYPES)),
      from: dayParam('From'),
      to: dayParam('To'),
      after: text(CONSOLE_ID_LENGTH_MAX),
      format: Type.Optional(oneOf(['csv'])),
      page: Type.Optional(PageNumber),
    }),
  ),
  payout: page(query(), { params: IdParams }),
  newPayout: page(),
  // code: the approver's TOTP code (account-schemas.ts bounds it the same way).
  payoutDecision: post(
    form({ decision: oneOf(DECISIONS), reason: text(NOTES_LENGTH_MAX), code: text(CODE_FIELD_LENGTH_MAX) }, [
      'decision',
    ]),
    { params: IdParams },
  ),
  payoutCancel: post(form(), { params: IdParams }),
  payoutReceipt: page(query(), { params: IdParams }),
  payoutEvidence: post(form(), { params: IdParams }),
  payoutQuote: page(query({ recipient_id: text(CONSOLE_ID_LENGTH_MAX), amount: text(CONSOLE_CHOICE_LENGTH_MAX) })),
  createPayout: post(
    form(
      {
        recipient_id: Id,
        amount: cedis(),
        api_key_id: Uuid,
        notes: text(NOTES_LENGTH_MAX),
        client_reference: text(CONSOLE_ID_LENGTH_MAX),
      },
      ['recipient_id', 'amount', 'api_key_id'],
    ),
  ),
  recipients: page(query({ replace: text(CONSOLE_ID_LENGTH_MAX) })),
  createRecipient: post(
    form(
      {
        account_type: oneOf(ACCOUNT_TYPES),
        account_name: text(ACCOUNT_NAME_LENGTH_MAX),
        bank_id: text(CONSOLE_ID_LENGTH_MAX),
        account_number: text(CONSOLE_CHOICE_LENGTH_MAX * 2),
        network: Type.Optional(oneOf(MOMO_NETWORKS)),
        phone: text(CONSOLE_CHOICE_LENGTH_MAX),
        previous_version_id: text(CONSOLE_ID_LENGTH_MAX),
      },
      ['account_type'],
    ),
  ),
  deactivateRecipient: post(form(), { params: IdParams }),
  // Exports (issue 17): a range of Accra days (judged by the books), and a file of it.
  exports: page(query({ from: text(CONSOLE_CHOICE_LENGTH_MAX), to: text(CONSOLE_CHOICE_LENGTH_MAX) })),
  exportFile: page(query({ from: text(CONSOLE_CHOICE_LENGTH_MAX), to: text(CONSOLE_CHOICE_LENGTH_MAX) })),
  // Developers
  developers: page(),
  createKey: post(form({ integration_id: Uuid }, ['integration_id'])),
  revokeKey: post(form(), { params: UuidParams }),
  createWebhook: post(form({ url: needed(URL_FIELD_LENGTH_MAX), api_key_id: Uuid }, ['url', 'api_key_id'])),
  webhookAction: post(form(), {
    params: params({ id: Uuid, action: Type.String({ maxLength: CONSOLE_CHOICE_LENGTH_MAX }) }),
  }),
  webhook: page(query({ replayed: text(CONSOLE_CHOICE_LENGTH_MAX) }), { params: UuidParams }),
  replayEvent: post(form({ endpoint_id: Type.Optional(Uuid) }), { params: IdParams }),
  // Settings
  settings: page(),
  // A bearer per rail; a rail left out keeps its bearer, and the handler refuses a form that names none.
  feeSettings: post(
    form(
      Object.fromEntries(
        railDescriptors().map((rail) => [
          `bearer_${rail.id}`,
          Type.Optional(
            Type.Unsafe<string>({
              type: 'string',
              enum: [...BEARERS],
              examples: [BEARERS[0]],
              title: `Who pays the ${rail.labels.dashboard} fee`,
            }),
          ),
        ]),
      ),
    ),
  ),
  approvalSetting: post(form({ required: oneOf(ON_OFF) }, ['required'])),
  inviteUser: post(form({ email: needed(EMAIL_LENGTH_MAX), role: oneOf(INVITABLE_ROLES) }, ['email', 'role'])),
  // Settlements (issue 34): the schedule (each field optional: left out keeps its value; `resume` alone resumes a
  // paused schedule), the settlement account with the user's TOTP code, and the Test clearing switch.
  settlements: page(),
  saveSettlements: post(
    form({
      interval: oneOf(SETTLEMENT_INTERVALS),
      weekly_anchor: oneOf(WEEKDAYS),
      monthly_anchor: Type.String({
        maxLength: 2,
        pattern: '^(?:[1-9]|1[0-9]|2[0-8])$',
        title: 'Day of the month',
        description: 'a day of the month from 1 to 28',
        examples: ['1'],
      }),
      time: Type.String({
        maxLength: 5,
        pattern: TIME_OF_DAY_PATTERN,
        title: 'Time',
        description: 'a time written HH:MM from 00:00 to 23:59, e.g. 09:30',
        examples: ['10:00'],
      }),
      minimum: Type.String({
        maxLength: CEDIS_FIELD_LENGTH_MAX,
        pattern: String.raw`^\s*(?:\d{1,9}|\d{1,3}(?:,\d{3}){1,2})(?:\.\d{1,2})?\s*$`,
        title: 'Minimum balance',
        description: 'an amount in GHS with at most 2 decimals, 0 for none, e.g. 50.00',
        examples: ['0.00'],
      }),
      recipient_id: text(CONSOLE_ID_LENGTH_MAX),
      code: text(CODE_FIELD_LENGTH_MAX),
      resume: Type.Optional(oneOf(['on'])),
    }),
  ),
  testClearing: post(form({ enabled: oneOf(ON_OFF) }, ['enabled'])),
  // Refunds: one of a session's payment (amount in GHS as typed), the list, and the approver's decision.
  refundSession: post(
    form(
      { amount: cedis(), reason: text(REFUND_REASON_LENGTH_MAX), request_key: text(REFUND_REQUEST_KEY_LENGTH_MAX) },
      ['amount'],
    ),
    { params: IdParams },
  ),
  // Refunds (issue 36): the search box, the filters and the keyset position are the address; format=csv its export.
  refunds: page(
    query({
      q: text(REFUND_SEARCH_LENGTH_MAX),
      status: Type.Optional(anyOrOneOf(REFUND_STATUSES)),
      from: dayParam('From'),
      to: dayParam('To'),
      after: text(CONSOLE_ID_LENGTH_MAX),
      format: Type.Optional(oneOf(['csv'])),
    }),
  ),
  // Balance transactions (issue 36): type and date filters, a transaction or source id search, keyset pages, CSV.
  balance: page(
    query({
      q: text(BALANCE_SEARCH_LENGTH_MAX),
      type: Type.Optional(anyOrOneOf(BALANCE_TRANSACTION_TYPES)),
      from: dayParam('From'),
      to: dayParam('To'),
      after: text(CONSOLE_ID_LENGTH_MAX),
      format: Type.Optional(oneOf(['csv'])),
    }),
  ),
  refundDecision: post(
    form({ decision: oneOf(DECISIONS), reason: text(REFUND_REASON_LENGTH_MAX), code: text(CODE_FIELD_LENGTH_MAX) }, [
      'decision',
    ]),
    { params: IdParams },
  ),
  // Payment links (issue 35): the list, the New link form (a fixed amount or the payer's choice, in GHS as typed,
  // each left empty when not used; CUSTOM_FIELDS_MAX numbered rows of custom fields, blank rows ignored), a link's
  // page (created: just made, named in the flash), its edit and its activation.
  // The list's search, status filter and keyset position are the address (issue 36); format=csv its export.
  links: page(
    query({
      q: text(LINK_SEARCH_LENGTH_MAX),
      status: Type.Optional(anyOrOneOf(LINK_LIST_STATES)),
      after: text(CONSOLE_ID_LENGTH_MAX),
      format: Type.Optional(oneOf(['csv'])),
    }),
  ),
  createLink: post(
    form(
      {
        name: needed(LINK_NAME_LENGTH_MAX),
        description: text(LINK_DESCRIPTION_LENGTH_MAX),
        amount_type: oneOf(LINK_AMOUNT_TYPES),
        amount: optionalCedis('Amount'),
        amount_min: optionalCedis('At least'),
        amount_max: optionalCedis('At most'),
        ...Object.fromEntries(
          Array.from({ length: CUSTOM_FIELDS_MAX }, (_, i) => i + 1).flatMap((n) => [
            [
              `field_${n}_key`,
              Type.String({
                maxLength: CUSTOM_FIELD_KEY_LENGTH_MAX,
                pattern: '^[a-z0-9_]*$',
                title: `Key ${n}`,
                description: 'lower-case letters, digits and _, e.g. student_name',
              }),
            ],
            [`field_${n}_label`, text(CUSTOM_FIELD_LABEL_LENGTH_MAX)],
            [
              `field_${n}_type`,
              Type.Unsafe<string>({
                type: 'string',
                enum: [...CUSTOM_FIELD_TYPES],
                examples: [CUSTOM_FIELD_TYPES[0]],
                title: `Type ${n}`,
              }),
            ],
            [`field_${n}_required`, oneOf(['on'])],
          ]),
        ),
        single_use: oneOf(['on']),
        max_payments: Type.String({
          maxLength: 6,
          pattern: '^(?:[1-9][0-9]{0,5})?$',
          title: 'Most payments',
          description: 'a whole number from 1, or nothing for no limit',
        }),
        expires: dayParam('Expires on'),
        redirect_url: text(URL_FIELD_LENGTH_MAX),
        // The form's one-time key (a second press shows the first link).
        form_key: text(LINK_FORM_KEY_LENGTH_MAX),
      },
      ['name', 'amount_type'],
    ),
  ),
  link: page(query({ created: Type.Optional(oneOf(['1'])) }), { params: IdParams }),
  editLink: post(
    form(
      {
        name: needed(LINK_NAME_LENGTH_MAX),
        description: text(LINK_DESCRIPTION_LENGTH_MAX),
        expires: dayParam('Expires on'),
      },
      ['name'],
    ),
    { params: IdParams },
  ),
  linkActive: post(form({ active: oneOf(ON_OFF) }, ['active']), { params: IdParams }),
};

/** The longest `after` cursor console-list.ts decodeCursor reads (a longer one is refused here rather than ignored). */
/** A console list's own parameters (console-list.ts): the search text, the opaque `after` cursor and `format=csv`. */
const consoleListParams = () => ({
  q: Type.Optional(Type.String({ maxLength: CONSOLE_SEARCH_LENGTH_MAX, title: 'Search' })),
  after: Type.Optional(Type.String({ maxLength: CONSOLE_CURSOR_LENGTH_MAX, title: 'Page position' })),
  format: Type.Optional(anyOrOneOf(['csv'])),
});
/** A console list page whose filters are closed sets (each optional, one of its values or empty for any). */
const closedFilterList = (filters: Readonly<Record<string, readonly string[]>>) =>
  page(
    query({
      ...consoleListParams(),
      ...Object.fromEntries(Object.entries(filters).map(([name, values]) => [name, Type.Optional(anyOrOneOf(values))])),
    }),
  );

/** A rail's clearing override: business days from 0 to CLEARING_DAYS_MAX (30), or empty for the default. */
const CLEARING_DAYS_PATTERN = '^(?:[0-9]|[12][0-9]|30)?$';
/** The rolling reserve as a percentage: 0 to 100 with at most two decimals. */
const RESERVE_PERCENT_PATTERN = String.raw`^(?:100(?:\.0{1,2})?|\d{1,2}(?:\.\d{1,2})?)$`;
/** How long a reserve is held: RESERVE_DAYS_MIN to RESERVE_DAYS_MAX (1-365) days, or empty when it is off. */
const RESERVE_DAYS_PATTERN = '^(?:[1-9]|[1-9][0-9]|[12][0-9]{2}|3[0-5][0-9]|36[0-5])?$';
/** The clearing form's field per rail of the registry, days_<rail>, named by the rail's dashboard label. */
const clearingDayFields = (): TProperties =>
  Object.fromEntries(
    railDescriptors().map((rail) => [
      `days_${rail.id}`,
      Type.String({
        maxLength: 2,
        pattern: CLEARING_DAYS_PATTERN,
        title: `Clearing days for ${rail.labels.dashboard}`,
        description: `a number of business days from 0 to ${CLEARING_DAYS_MAX}, or empty for the default`,
        examples: [''],
      }),
    ]),
  );

export const opsSchemas = {
  // The merchants list (console-list.ts): search, filters, the cursor and the CSV switch.
  merchants: closedFilterList(MERCHANT_FILTERS),
  merchant: page(query(), { params: UuidParams }),
  payoutSettings: post(
    form(
      {
        environment: oneOf(ENVIRONMENTS),
        access: oneOf(ON_OFF),
        paused: oneOf(ON_OFF),
        limit: cedis('Limit per payout'),
        daily_limit: cedis('Daily limit'),
        // Opening Live payouts or raising a Live limit goes to a second operator: its reason and confirmation.
        reason: text(APPROVAL_REASON_LENGTH_MAX),
        confirm: Type.Optional(anyOrOneOf(['yes'])),
      },
      ['environment', 'access', 'paused', 'limit', 'daily_limit'],
    ),
    { params: UuidParams },
  ),
  // One merchant's clearing times per rail and rolling reserve (issue 34, src/web/ops/clearing.ts).
  clearing: page(query(), { params: UuidParams }),
  clearingSettings: post(
    form(
      {
        environment: oneOf(ENVIRONMENTS),
        ...clearingDayFields(),
        reserve_percent: Type.String({
          maxLength: 6,
          pattern: RESERVE_PERCENT_PATTERN,
          title: 'Reserve percentage',
          description: 'a percentage from 0 to 100 with at most 2 decimals, e.g. 10 or 2.5 (0 turns the reserve off)',
          examples: ['0'],
        }),
        reserve_days: Type.String({
          maxLength: 3,
          pattern: RESERVE_DAYS_PATTERN,
          title: 'Reserve days',
          description: `a number of days from ${RESERVE_DAYS_MIN} to ${RESERVE_DAYS_MAX}, or empty when the reserve is off`,
          examples: [''],
        }),
      },
      // reserve_days may be empty (a reserve that is off): the service names it when a reserve needs it.
      ['environment', 'reserve_percent'],
    ),
    { params: UuidParams },
  ),
  // Suspending a merchant (its reason is e-mailed to the owner) and lifting it (issue 33).
  merchantSuspend: post(form({ reason: needed(500) }, ['reason']), { params: UuidParams }),
  merchantReinstate: post(form(), { params: UuidParams }),
  teller: page(query({ reference: text(CONSOLE_TEXT_LENGTH_MAX) })),
  tellerRecord: post(
    form({ reference: needed(CONSOLE_TEXT_LENGTH_MAX), amount: cedis(), branch_id: Uuid }, [
      'reference',
      'amount',
      'branch_id',
    ]),
  ),
  // The review queue (console-list.ts) and one held attempt's decision: a choice, a reason, the checkbox the server requires.
  review: closedFilterList(REVIEW_FILTERS),
  reviewAttempt: page(query(), { params: IdParams }),
  reviewDecision: post(
    form(
      {
        choice: oneOf(HELD_CHOICES),
        reason: text(APPROVAL_REASON_LENGTH_MAX),
        confirm: Type.Optional(anyOrOneOf(['yes'])),
      },
      ['choice'],
    ),
    { params: IdParams },
  ),
  payouts: closedFilterList(PAYOUT_LIST_FILTERS),
  reconcile: post(form({ result: oneOf(RECONCILIATION_RESULTS) }, ['result']), { params: IdParams }),
  payoutReturn: post(
    form(
      {
        return_reference: needed(CONSOLE_TEXT_LENGTH_MAX),
        reason: text(APPROVAL_REASON_LENGTH_MAX),
        confirm: Type.Optional(anyOrOneOf(['yes'])),
      },
      ['return_reference'],
    ),
    { params: IdParams },
  ),
  // An operator's hold on a Live payout not yet sent, and its release: each with a reason (payouts/holds.ts).
  payoutHold: post(form({ reason: needed(HOLD_REASON_LENGTH_MAX) }, ['reason']), { params: IdParams }),
  payoutRelease: post(form({ reason: needed(HOLD_REASON_LENGTH_MAX) }, ['reason']), { params: IdParams }),
  // Two operators for money: the requests waiting, and a second operator's decision on one.
  approvals: page(),
  approvalDecision: post(form({ decision: oneOf(DECISIONS), note: text(APPROVAL_REASON_LENGTH_MAX) }, ['decision']), {
    params: UuidParams,
  }),
  banks: page(),
  addBank: post(
    form({ name: needed(CONSOLE_TEXT_LENGTH_MAX), code: needed(CONSOLE_CHOICE_LENGTH_MAX) }, ['name', 'code']),
  ),
  addBranch: post(
    form({ name: needed(CONSOLE_TEXT_LENGTH_MAX), code: needed(CONSOLE_CHOICE_LENGTH_MAX) }, ['name', 'code']),
    { params: UuidParams },
  ),
  setActive: post(form(), {
    params: params({
      table: Type.String({ maxLength: CONSOLE_CHOICE_LENGTH_MAX }),
      id: Uuid,
      action: Type.String({ maxLength: CONSOLE_CHOICE_LENGTH_MAX }),
    }),
  }),
  // The audit log's filters (Accra days, both included) with the list's search, cursor and CSV switch.
  audit: page(
    query({
      ...consoleListParams(),
      actor: Type.Optional(Type.String({ maxLength: EMAIL_LENGTH_MAX, title: 'Actor' })),
      merchant: Type.Optional(Type.String({ maxLength: CONSOLE_ID_LENGTH_MAX, title: 'Merchant' })),
      action: Type.Optional(Type.String({ maxLength: CONSOLE_TEXT_LENGTH_MAX, title: 'Action' })),
      object_type: Type.Optional(Type.String({ maxLength: CONSOLE_TEXT_LENGTH_MAX, title: 'Object type' })),
      object_id: Type.Optional(Type.String({ maxLength: CONSOLE_TEXT_LENGTH_MAX, title: 'Object id' })),
      from: dayParam('From date'),
      to: dayParam('To date'),
    }),
  ),
  // Bank statements: the page, one import, the upload (its file is read apart from the fields) and the queue's two actions.
  // The unmatched queue (console-list.ts): search, whether a reference was found, the bank code, the cursor and CSV.
  statements: page(
    query({
      ...consoleListParams(),
      reference: Type.Optional(anyOrOneOf(QUEUE_REFERENCE_FILTER)),
      bank: text(CONSOLE_CHOICE_LENGTH_MAX),
    }),
  ),
  statementImport: page(query(), { params: UuidParams }),
  statementUpload: post(
    form({
      bank_code: text(CONSOLE_CHOICE_LENGTH_MAX),
      columns: text(COLUMN_MAPPING_LENGTH_MAX),
      force_reason: text(IMPORT_REASON_LENGTH_MAX),
    }),
  ),
  statementVoid: post(form({ reason: needed(IMPORT_REASON_LENGTH_MAX) }, ['reason']), { params: UuidParams }),
  statementAssign: post(form({ reference: needed(CONSOLE_TEXT_LENGTH_MAX) }, ['reference']), { params: UuidParams }),
  statementResolve: post(form({ note: needed(RESOLUTION_NOTE_LENGTH_MAX) }, ['note']), { params: UuidParams }),
  // The refunds queue: record an operator's transfer to the payer, or fail the refund with a reason.
  refunds: closedFilterList(FINISHED_REFUND_FILTERS),
  refundComplete: post(
    form(
      { payer_account: needed(PAYER_ACCOUNT_LENGTH_MAX), transfer_reference: needed(TRANSFER_REFERENCE_LENGTH_MAX) },
      ['payer_account', 'transfer_reference'],
    ),
    { params: IdParams },
  ),
  refundFail: post(form({ reason: needed(OPERATOR_FAIL_REASON_LENGTH_MAX) }, ['reason']), { params: IdParams }),
  // The daily reconciliation: a provider and a YYYY-MM-DD day (judged by the page).
  reconciliation: page(query({ provider: text(CONSOLE_CHOICE_LENGTH_MAX), day: text(CONSOLE_CHOICE_LENGTH_MAX) })),
  // Operators: the list, and another operator's reset (a temporary password, the second factor cleared).
  operators: page(),
  operatorReset: post(form(), { params: UuidParams }),
  // The mail outbox (console-list.ts): search by address, the status filter; one mail, and sending it again.
  mail: closedFilterList({ status: MAIL_STATUSES }),
  mailOne: page(query(), { params: IdParams }),
  mailResend: post(form(), { params: IdParams }),
};

/**
 * A console request's validation error as the 400 its page shows: a sentence per field naming it by its label
 * and saying what it accepts (console-messages.ts), never the validator's text; the value sent is never repeated.
 */
export function consoleInputError(
  error: Error & { validation?: ValidationIssue[]; validationContext?: string },
  routeSchema: FastifySchema | undefined,
  url?: string,
): SikaError {
  const context = error.validationContext ?? 'body';
  const part = (routeSchema as Record<string, { properties?: Record<string, FieldSchema> }> | undefined)?.[context];
  const fields = (error.validation ?? []).slice(0, 20).map((issue) => refusalSentence(issue, part, context, url));
  return errors.invalidArgument(fields[0]?.message ?? 'The form is not valid.', fields);
}

/**
 * Bad input on a console route is refused only after the session check (registered before this), so an
 * anonymous request is sent to sign in (or refused as signed out) whatever it carries, and learns nothing
 * from a validation message. Routes registered after this call keep their validation error
 * (attachValidation) and it is thrown here, to the console's error handler: a 400 page naming the field.
 */
export function refuseBadInputAfterSessionCheck(app: FastifyInstance): void {
  app.addHook('onRoute', (route) => {
    route.attachValidation = true;
  });
  app.addHook('preHandler', async (request) => {
    if (request.validationError)
      throw consoleInputError(request.validationError, request.routeOptions.schema, request.routeOptions.url);
  });
}
