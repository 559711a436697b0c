// TypeBox schemas of the books' routes: they validate the query, serialise the answers and document both.
import { Type, type Static } from '@sinclair/typebox';
import { ID_PARAM_LENGTH_MAX } from '../../../checkout/model.ts';
import { CursorPage, Day, StringEnum } from '../../schemas.ts';
import {
  BALANCE_TRANSACTION_LIMIT_DEFAULT,
  BALANCE_TRANSACTION_LIMIT_MAX,
  BALANCE_TRANSACTION_STATUSES,
  BALANCE_TRANSACTION_TYPES,
  EXPORT_RANGE_DAYS_MAX,
  SUMMARY_AMOUNT_COLUMNS,
} from '../../../books/model.ts';

/** from and to of a CSV export (Accra days, inclusive): required with Accept: text/csv, ignored for JSON. */
export const ExportRangeProperties = {
  from: Type.Optional(
    Day(`With Accept: text/csv (required then): the first Africa/Accra day of the file, YYYY-MM-DD. Ignored for JSON.`),
  ),
  to: Type.Optional(
    Day(
      `With Accept: text/csv (required then): the last Africa/Accra day of the file, YYYY-MM-DD, at most ${EXPORT_RANGE_DAYS_MAX} days from \`from\` counting both. Ignored for JSON.`,
    ),
  ),
};

export const BalanceTransactionTypeSchema = Type.Union(
  BALANCE_TRANSACTION_TYPES.map((type) => Type.Literal(type)),
  {
    description:
      'payment (a payment credited), payment_reversal, payout (a payout held or paid: amount and fee leave available), payout_release (a failed or cancelled payout given back), payout_return (a paid payout that came back), refund (a refund held), refund_release (a failed refund given back), reserve (part of a cleared payment held by the rolling reserve), reserve_release (that reserve given back to available).',
  },
);

export const ListBalanceTransactionsQuery = Type.Object(
  {
    limit: Type.Optional(
      Type.Integer({
        minimum: 1,
        maximum: BALANCE_TRANSACTION_LIMIT_MAX,
        default: BALANCE_TRANSACTION_LIMIT_DEFAULT,
        description: 'Rows per page (JSON).',
      }),
    ),
    starting_after: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: ID_PARAM_LENGTH_MAX,
        description: 'The last id of the previous page (JSON).',
      }),
    ),
    type: Type.Optional(BalanceTransactionTypeSchema),
    created_gte: Type.Optional(
      Type.String({ format: 'date-time', description: 'Created at or after (ISO 8601; JSON).' }),
    ),
    created_lt: Type.Optional(Type.String({ format: 'date-time', description: 'Created before (ISO 8601; JSON).' })),
    payout_id: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: ID_PARAM_LENGTH_MAX,
        description:
          "A payout (po_...): only the balance transactions that settlement paid out, oldest first; their net_minor add up to its amount_minor. None for a manual payout; 404 for a payout that is not this key's. With Accept: text/csv, all of them (from and to not needed).",
      }),
    ),
    ...ExportRangeProperties,
  },
  { additionalProperties: false },
);
export type ListBalanceTransactionsQuery = Static<typeof ListBalanceTransactionsQuery>;

export const BalanceTransactionSchema = Type.Object(
  {
    id: Type.String({ description: 'txn_ and 32 hex digits (the journal entry that moved the balance); stable.' }),
    object: Type.Literal('balance_transaction'),
    type: BalanceTransactionTypeSchema,
    amount_minor: Type.Integer({
      description: "What moved before fees: a payment's charge, a payout's amount (negative), a refund (negative).",
    }),
    fee_minor: Type.Integer({
      description: "Sika's fees in it (negative when a fee comes back: a reversal, a released or returned payout).",
    }),
    net_minor: Type.Integer({ description: 'The change of the available balance: amount_minor - fee_minor.' }),
    currency: Type.Literal('GHS'),
    source: Type.Object({
      type: Type.Union([Type.Literal('payment'), Type.Literal('payout'), Type.Literal('refund')]),
      id: Type.String({ description: 'The attempt that paid (att_...), the payout (po_...) or the refund (re_...).' }),
      session_id: Type.Optional(
        Type.Union([Type.String(), Type.Null()], { description: "A payment's checkout session." }),
      ),
    }),
    balance_after_minor: Type.Integer({
      minimum: 0,
      description: 'The balance right after this movement: available + pending (reserved money is not in it).',
    }),
    available_on: Type.String({
      format: 'date-time',
      description:
        "When the money is (or was) available: a payment's when its rail's clearing time passes, every other movement's when it was made.",
    }),
    status: StringEnum(BALANCE_TRANSACTION_STATUSES, {
      description: 'pending: a payment still clearing (until available_on); available: spendable (or spent).',
    }),
    payout_id: Type.Union([Type.String(), Type.Null()], {
      description:
        "The settlement (po_...) that paid this movement out; null until one does (and on a payout's own movements).",
    }),
    created_at: Type.String({ format: 'date-time' }),
  },
  { $id: 'BalanceTransaction', title: 'Balance transaction' },
);

export const BalanceTransactionList = CursorPage('BalanceTransaction', {
  $id: 'BalanceTransactionList',
  title: 'Balance transaction list',
});

export const SummaryQuery = Type.Object(
  {
    from: Day('The first Africa/Accra day, YYYY-MM-DD.'),
    to: Day(`The last Africa/Accra day, YYYY-MM-DD (at most ${EXPORT_RANGE_DAYS_MAX} days counting both).`),
  },
  { additionalProperties: false },
);
export type SummaryQuery = Static<typeof SummaryQuery>;

const Minor = (description: string) => Type.Integer({ description });

export const BalanceSummary = Type.Object(
  {
    object: Type.Literal('balance_summary'),
    environment: Type.Union([Type.Literal('test'), Type.Literal('live')]),
    currency: Type.Literal('GHS'),
    from: Type.String(),
    to: Type.String(),
    time_zone: Type.Literal('Africa/Accra'),
    days: Type.Array(
      Type.Object({
        day: Type.String({ description: 'YYYY-MM-DD, an Africa/Accra day.' }),
        opening_balance_minor: Minor("The available balance when the day began: the previous day's closing."),
        ...Object.fromEntries(
          Object.values(SUMMARY_AMOUNT_COLUMNS).map((column) => [
            column,
            Minor("The day's movements of this type before fees (signed: money out is negative)."),
          ]),
        ),
        fees_minor: Minor("Every fee of the day (payments' and payouts'), less fees given back."),
        net_minor: Minor('closing - opening: the sum of the amount columns less fees_minor.'),
        transactions: Type.Integer({ minimum: 0, description: 'Balance transactions that day.' }),
        closing_balance_minor: Minor('The available balance when the day ended.'),
      }),
    ),
  },
  { $id: 'BalanceSummary', title: 'Daily settlement summary' },
);
