// TypeBox schemas of the invoice and revenue line routes: they validate, serialise and document (OpenAPI).
import { Type, type TSchema } from '@sinclair/typebox';
import { INVOICE_REF_LENGTH_MAX } from '../../../checkout/model.ts';
import { Currency, DateTime, LineErrorCodeSchema } from '../../schemas.ts';
import {
  INVOICE_LINES_PER_REQUEST_MAX,
  InvoiceLineInput,
  REVENUE_LINES_PER_SYNC_MAX,
  RevenueLineInput,
} from '../../../invoicing/model.ts';

export const InvoiceRef = Type.String({ minLength: 1, maxLength: INVOICE_REF_LENGTH_MAX });
const LineErrors = Type.Array(
  Type.Object({
    index: Type.Integer({ description: 'Position of the line in the request.' }),
    code: LineErrorCodeSchema,
    message: Type.String(),
  }),
);

/**
 * Lines are checked one by one (SPEC 4.1: 200, or 207 with per-line errors), not by the request's schema: a
 * line of the documented shape, or anything else, which is then reported for its index in errors.
 */
const checkedPerLine = <T extends TSchema>(line: T, what: string) =>
  Type.Union([
    line,
    Type.Unknown({
      description: `Any other value is accepted here and reported in errors (index, INVALID_ARGUMENT${what}), while the good lines are stored.`,
    }),
  ]);

export const IngestBody = Type.Object(
  {
    invoice_ref: InvoiceRef,
    currency: Type.Optional(Currency),
    lines: Type.Array(checkedPerLine(InvoiceLineInput, ', or INVOICE_LINE_AMOUNT_INVALID for a bad amount_minor'), {
      minItems: 1,
      maxItems: INVOICE_LINES_PER_REQUEST_MAX,
    }),
  },
  {
    additionalProperties: false,
    examples: [
      {
        invoice_ref: 'INV-2026-0042',
        lines: [
          { code: 'TUITION', name: 'Tuition', amount_minor: 45000 },
          { code: 'PTA', name: 'PTA dues', amount_minor: 5000 },
        ],
      },
    ],
  },
);

export const IngestResponse = Type.Object(
  {
    object: Type.Literal('invoice.line_items'),
    invoice_ref: Type.String(),
    ingested: Type.Integer(),
    billed_minor: Type.Integer({ description: 'Sum of the lines stored by this request.' }),
    errors: LineErrors,
  },
  { $id: 'InvoiceLineIngestResult', title: 'Invoice lines recorded' },
);

export const InvoiceLinesResponse = Type.Object(
  {
    object: Type.Literal('invoice.line_items'),
    invoice_ref: Type.String(),
    lines: Type.Array(
      Type.Object({
        code: Type.String(),
        name: Type.String(),
        amount_minor: Type.Integer(),
        currency: Type.String(),
        remitted: Type.Boolean(),
      }),
    ),
    total_minor: Type.Integer(),
  },
  { $id: 'InvoiceLineList', title: 'Invoice lines' },
);

export const RevenueLine = Type.Object(
  {
    id: Type.String({ format: 'uuid' }),
    merchant_id: Type.String({ format: 'uuid' }),
    code: Type.String(),
    name: Type.String(),
    active: Type.Boolean(),
    source: Type.String(),
    last_synced_at: DateTime,
    created_at: DateTime,
    updated_at: DateTime,
  },
  { $id: 'RevenueLine', title: 'Revenue line' },
);

export const RevenueLineList = Type.Object(
  {
    object: Type.Literal('list'),
    lines: Type.Array(Type.Ref('RevenueLine')),
    counts: Type.Object({ total: Type.Integer(), active: Type.Integer(), inactive: Type.Integer() }),
  },
  { $id: 'RevenueLineList', title: 'Revenue lines' },
);

export const SyncBody = Type.Object(
  {
    lines: Type.Array(checkedPerLine(RevenueLineInput, ''), { maxItems: REVENUE_LINES_PER_SYNC_MAX }),
    deactivate_missing: Type.Optional(
      Type.Boolean({ default: false, description: 'Deactivate active codes that are not in this list.' }),
    ),
  },
  {
    additionalProperties: false,
    examples: [{ lines: [{ code: 'TUITION', name: 'Tuition' }], deactivate_missing: false }],
  },
);

export const SyncResponse = Type.Object(
  {
    object: Type.Literal('revenue_lines.sync'),
    created: Type.Integer(),
    updated: Type.Integer(),
    reactivated: Type.Integer(),
    deactivated: Type.Integer(),
    unchanged: Type.Integer(),
    total: Type.Integer({
      description: 'Revenue lines of the merchant and environment after the sync, active and inactive.',
    }),
    errors: LineErrors,
  },
  { $id: 'RevenueLineSyncResult', title: 'Revenue line sync' },
);
