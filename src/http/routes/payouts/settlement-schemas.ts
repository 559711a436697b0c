// TypeBox schemas of the settlement schedule API (issue 34, item 2): GET and POST /api/v1/settlements/schedule.
// Closed sets and bounds are read from their source (src/lib/accra-calendar.ts, src/payouts/settlement-schedule.ts).
import { Type } from '@sinclair/typebox';
import { DateTime, Environment, explainedPattern, StringEnum } from '../../schemas.ts';
import {
  MONTHLY_ANCHOR_MAX,
  MONTHLY_ANCHOR_MIN,
  SETTLEMENT_INTERVALS,
  SETTLEMENT_MINIMUM_MAX_MINOR,
  SETTLEMENT_RECIPIENT_ID_LENGTH_MAX,
  TIME_OF_DAY_PATTERN,
  WEEKDAYS,
} from '../../../payouts/settlement-schedule.ts';

const Nullable = <T extends ReturnType<typeof Type.String>>(schema: T) => Type.Union([schema, Type.Null()]);

const IntervalSchema = StringEnum(SETTLEMENT_INTERVALS, {
  description:
    'manual (no automatic settlement), daily (every Africa/Accra business day), weekly (the first business day on or after weekly_anchor) or monthly (the first business day on or after monthly_anchor).',
});
const WeekdaySchema = StringEnum(WEEKDAYS, { description: 'The weekday of a weekly schedule.' });

export const SettlementSchedule = Type.Object(
  {
    object: Type.Literal('settlement_schedule'),
    environment: Environment,
    interval: IntervalSchema,
    weekly_anchor: WeekdaySchema,
    monthly_anchor: Type.Integer({ minimum: MONTHLY_ANCHOR_MIN, maximum: MONTHLY_ANCHOR_MAX }),
    time: Type.String({ description: 'HH:MM, Africa/Accra time.' }),
    time_zone: Type.Literal('Africa/Accra'),
    minimum_minor: Type.Integer({
      minimum: 0,
      description: 'No settlement while the available balance is below this, in pesewas.',
    }),
    recipient_id: Nullable(Type.String({ description: 'rcp_...: the settlement account.' })),
    recipient_active_at: Type.Union([DateTime, Type.Null()], {
      description:
        'When the settlement account starts receiving: at once for the first one, 24 hours after a change (account-takeover protection).',
    }),
    next_run_at: Type.Union([DateTime, Type.Null()], {
      description: 'The next scheduled settlement; null when manual or paused.',
    }),
    paused: Type.Boolean({
      description: 'A settlement failed or was returned: no settlement runs until the schedule is saved again.',
    }),
    paused_reason: Nullable(Type.String()),
    paused_payout_id: Nullable(Type.String({ description: 'po_...: the settlement that failed.' })),
    updated_at: Type.Union([DateTime, Type.Null()], { description: 'null until the schedule is first saved.' }),
  },
  {
    $id: 'SettlementSchedule',
    title: 'Settlement schedule',
    examples: [
      {
        object: 'settlement_schedule',
        environment: 'test',
        interval: 'weekly',
        weekly_anchor: 'friday',
        monthly_anchor: 1,
        time: '10:00',
        time_zone: 'Africa/Accra',
        minimum_minor: 5000,
        recipient_id: 'rcp_1a2b3c4d5e6f7a8b9c0d1e2f3a4b5c6d',
        recipient_active_at: '2026-06-01T09:00:00.000Z',
        next_run_at: '2026-06-05T10:00:00.000Z',
        paused: false,
        paused_reason: null,
        paused_payout_id: null,
        updated_at: '2026-06-01T09:00:00.000Z',
      },
    ],
  },
);

export const SettlementScheduleBody = Type.Object(
  {
    interval: Type.Optional(IntervalSchema),
    weekly_anchor: Type.Optional(WeekdaySchema),
    monthly_anchor: Type.Optional(
      Type.Integer({
        minimum: MONTHLY_ANCHOR_MIN,
        maximum: MONTHLY_ANCHOR_MAX,
        description: 'The day of the month of a monthly schedule (1-28).',
      }),
    ),
    time: Type.Optional(
      Type.String({
        maxLength: 5,
        pattern: explainedPattern(TIME_OF_DAY_PATTERN, 'must be HH:MM from 00:00 to 23:59, e.g. 09:30'),
        description: 'HH:MM, Africa/Accra time (default 10:00).',
      }),
    ),
    minimum_minor: Type.Optional(
      Type.Integer({
        minimum: 0,
        maximum: SETTLEMENT_MINIMUM_MAX_MINOR,
        description: 'No settlement while the available balance is below this, in pesewas (default 0).',
      }),
    ),
    recipient_id: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: SETTLEMENT_RECIPIENT_ID_LENGTH_MAX,
        description:
          'A verified, active recipient of this merchant and environment. Required (now or already set) for a schedule other than manual.',
      }),
    ),
  },
  { additionalProperties: false, description: 'A partial change: the fields left out keep their value.' },
);
