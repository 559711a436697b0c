// sika trigger EVENT: makes real Test objects through the public API, with a Test key, so that the server
// emits the event (and delivers it like any other: to the key's webhook endpoint and to `sika listen`).
// Nothing is faked: a session is paid through the payer API and the Test simulator, a refund is asked for
// with its test_outcome (and decided by the refund simulator), a payout is made from the balance that
// payment made, with its test_outcome, then moved on by the payout simulator or cancelled. Every event
// type Sika emits is made (RECIPES covers EVENT_TYPES), but those an operator's decision causes, which no Test
// key can (OPERATOR_EVENTS: account.updated, `sika merchant activate|suspend|reinstate`).
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { parseArgs } from 'node:util';
import { API_OPTIONS, API_OPTIONS_HELP, ApiError, apiCall, apiTarget, type ApiTarget } from './api-client.ts';
import { UsageError } from './common.ts';
import { WEBHOOK_EVENT_TYPES } from './event-types.ts';

/** The amount of a triggered session, in pesewas (GHS 50.00), unless --override amount_minor=… */
const TRIGGER_SESSION_AMOUNT_MINOR = 5_000;
/** A triggered refund's amount (GHS 10.00 of the GHS 50.00 payment): the balance covers it whoever bears the fee. */
const TRIGGER_REFUND_AMOUNT_MINOR = 1_000;
/** A triggered payout's amount (GHS 10.00). */
const TRIGGER_PAYOUT_AMOUNT_MINOR = 1_000;
/** The largest payout fee (Mobile Money's cap, GHS 10.00): the funding payment covers it. */
const PAYOUT_FEE_MAX_MINOR = 1_000;
/** The funding payment also covers a collection fee the merchant may bear (5% is above every default). */
const FUNDING_FEE_MARGIN_BPS = 500;
/** The shortest session lifetime Sika accepts (SESSION_LIFETIME_MIN_S): checkout.session.expired waits it out. */
const EXPIRING_SESSION_LIFETIME_S = 60;
/** Five failed attempts end a session (FAILED_ATTEMPTS_MAX in checkout). */
const FAILED_ATTEMPTS_TO_FAIL = 5;
/** Events of one object read back at most (GET /api/v1/events?object_id=…). */
const OBJECT_EVENTS_ROWS_MAX = 100;

/** The Test payer: an MTN wallet the simulator accepts without a verification code. */
const TEST_PAYER = { rail: 'momo', operator: 'mtn', phone: '0241234567' } as const;
const TEST_RECIPIENT = {
  account_type: 'momo',
  network: 'mtn',
  phone: '0241234567',
  account_name: 'Ama Mensah',
} as const;

type Json = Record<string, unknown>;

/** What every payout recipe makes first (its help text). */
const PAYOUT_SETUP = 'a paid session (the balance), a Mobile Money recipient and a payout';

/** What one trigger made, in the order it made it. */
export interface TriggerResult {
  event: string;
  /** The objects created, e.g. {kind: 'checkout session', id: 'cs_…'}. */
  created: { kind: string; id: string }[];
  /** Simulator outcomes applied, in order (e.g. "att_… paid"). */
  simulated: string[];
  /** The object whose event was asked for. */
  objectId: string;
  /** That object's events, oldest first, as GET /api/v1/events lists them. */
  events: { id: string; type: string }[];
}

interface Step {
  target: ApiTarget;
  /** The main object's create body fields set with --override. */
  overrides: Json;
  result: TriggerResult;
  say: (line: string) => void;
}

interface Recipe {
  /** What it makes, for --help. */
  how: string;
  run: (step: Step) => Promise<void>;
}

/** The events a Test key can make, and how. */
const RECIPES: Readonly<Record<string, Recipe>> = {
  'checkout.session.pending': {
    how: 'a session and a Mobile Money attempt (left pending)',
    run: async (s) => void (await pendingSession(s)),
  },
  'checkout.session.completed': {
    how: 'a session, an attempt, simulated paid',
    run: async (s) => void (await paidSession(s, s.overrides)),
  },
  'checkout.session.reopened': {
    how: 'a session, an attempt, simulated failed (the payer may try again)',
    run: async (s) => void (await simulate(s, (await pendingSession(s)).attempt, 'failed')),
  },
  'checkout.session.failed': {
    how: `a session and ${FAILED_ATTEMPTS_TO_FAIL} attempts, each simulated failed`,
    run: failedSession,
  },
  'checkout.session.expired': {
    how: `a session living ${EXPIRING_SESSION_LIFETIME_S} s and an attempt; waits for its expiry, then the attempt expires`,
    run: expiredSession,
  },
  'checkout.session.reversed': {
    how: 'a paid session, then its payment simulated reversed',
    run: async (s) => void (await simulate(s, (await paidSession(s, s.overrides)).attempt, 'reversed')),
  },
  'checkout.session.duplicate_payment_refunded': {
    how: 'a session, an attempt the payer cancels (changing course), a second one simulated paid, then the first simulated paid too',
    run: duplicatePayment,
  },
  'refund.created': {
    how: 'a paid session and a refund left pending (test_outcome pending)',
    run: async (s) => void (await refund(s, 'pending')),
  },
  'refund.succeeded': {
    how: 'a paid session and a refund (test_outcome succeeded)',
    run: async (s) => void (await refund(s, 'succeeded')),
  },
  'refund.failed': {
    how: 'a paid session and a refund (test_outcome failed)',
    run: async (s) => void (await refund(s, 'failed')),
  },
  'refund.cancelled': {
    how: 'a paid session, a refund awaiting approval (test_outcome awaiting_approval), simulated cancelled',
    run: async (s) => simulateRefund(s, await refund(s, 'awaiting_approval'), 'cancelled'),
  },
  'payout.requested': {
    how: `${PAYOUT_SETUP} (test_outcome requested: awaiting approval, amount and fee held)`,
    run: async (s) => void (await payout(s, 'requested')),
  },
  'payout.processing': {
    how: `${PAYOUT_SETUP} (test_outcome processing)`,
    run: async (s) => void (await payout(s, 'processing')),
  },
  'payout.paid': {
    how: `${PAYOUT_SETUP} (Test payouts are paid at once by default)`,
    run: async (s) => void (await payout(s, 'paid')),
  },
  'payout.failed': {
    how: `${PAYOUT_SETUP} (test_outcome processing), simulated failed`,
    run: async (s) => simulatePayout(s, await payout(s, 'processing'), 'failed'),
  },
  'payout.cancelled': {
    how: `${PAYOUT_SETUP} (test_outcome requested), then cancelled`,
    run: async (s) => cancelPayout(s, await payout(s, 'requested')),
  },
  'payout.returned': {
    how: `${PAYOUT_SETUP} (paid at once), simulated returned`,
    run: async (s) => simulatePayout(s, await payout(s, 'paid'), 'returned'),
  },
  'payment_link.created': {
    how: 'a payment link for a fixed amount',
    run: async (s) => void (await paymentLink(s)),
  },
  'payment_link.updated': {
    how: 'a payment link, then deactivated',
    run: async (s) => {
      const id = await paymentLink(s);
      await apiCall(s.target, 'POST', `/api/v1/payment-links/${id}`, { active: false });
      s.say(`  changed   ${'payment link'.padEnd(28)} ${id} active false`);
    },
  },
};

/** Events an operator's decision causes (an account's activation or suspension): no Test key can make them. */
export const OPERATOR_EVENTS: Readonly<Record<string, string>> = {
  'account.updated':
    'an operator activates, suspends or reinstates the merchant (sika merchant activate|suspend|reinstate)',
};

/** Every event type Sika emits, in the server's order, but OPERATOR_EVENTS: each has a recipe (test/cli/trigger.test.ts checks it). */
export const TRIGGER_EVENTS = WEBHOOK_EVENT_TYPES.filter((type) => RECIPES[type] !== undefined);

export const TRIGGER_HELP = `usage: sika trigger EVENT [--override FIELD=VALUE ...] [--api-key KEY] [--base-url URL] [--json]

Makes real Test objects through the API with a Test key, so that Sika emits EVENT; it is delivered like
any event, to the key's webhook endpoint and to \`sika listen\`. Prints what it created and the object's
events. Works against a running server; nothing in Live is touched.

events:
${TRIGGER_EVENTS.map((type) => `  ${type.padEnd(28)} ${RECIPES[type]!.how}`).join('\n')}

payout.* need a webhook endpoint paired with the key, as any payout does (sika listen does not count as one).
Not made by trigger (an operator's decision causes them):
${Object.entries(OPERATOR_EVENTS)
  .map(([type, how]) => `  ${type.padEnd(28)} ${how}`)
  .join('\n')}

options:
  --override FIELD=VALUE   sets a field of the main object's create body (the session for checkout.*, the
                           refund for refund.*, the payout for payout.*, the link for payment_link.*); a
                           dotted FIELD sets a nested one (customer.name=Ama); VALUE is read as JSON when it
                           is (100, true, null), else as text. Repeat for several fields.
${API_OPTIONS_HELP}
  --json                   what was created and the events, as JSON`;

export async function triggerCommand(args: string[]): Promise<void> {
  const { values, positionals } = parseArgs({
    args,
    allowPositionals: true,
    options: {
      ...API_OPTIONS,
      override: { type: 'string', multiple: true },
      json: { type: 'boolean', default: false },
      help: { type: 'boolean', short: 'h', default: false },
    },
  });
  if (values.help || positionals[0] === 'help') {
    console.log(TRIGGER_HELP);
    return;
  }
  const [event, ...extra] = positionals;
  if (!event) throw new UsageError(`trigger needs an EVENT, one of: ${TRIGGER_EVENTS.join(', ')}`);
  if (extra.length > 0) throw new UsageError(`trigger takes one EVENT (got ${positionals.join(' ')})`);
  if (!RECIPES[event]) throw new UsageError(`unknown event ${event}; trigger makes: ${TRIGGER_EVENTS.join(', ')}`);
  const overrides = parseOverrides(values.override ?? []);
  const target = apiTarget('trigger', values);
  const result = await trigger(target, event, overrides, values.json ? () => {} : (line) => console.log(line));
  if (values.json) console.log(JSON.stringify(result));
}

/** Runs an event's recipe and reads the object's events back; throws when the event is not among them. */
export async function trigger(
  target: ApiTarget,
  event: string,
  overrides: Json,
  say: (line: string) => void = () => {},
): Promise<TriggerResult> {
  const recipe = RECIPES[event];
  if (!recipe) throw new UsageError(`unknown event ${event}; trigger makes: ${TRIGGER_EVENTS.join(', ')}`);
  const result: TriggerResult = { event, created: [], simulated: [], objectId: '', events: [] };
  say(`Triggering ${event}: ${recipe.how}`);
  await recipe.run({ target, overrides, result, say });
  const listed = await apiCall<{ data: { id: string; type: string }[] }>(
    target,
    'GET',
    `/api/v1/events?object_id=${encodeURIComponent(result.objectId)}&limit=${OBJECT_EVENTS_ROWS_MAX}`,
  );
  result.events = listed.data.map((e) => ({ id: e.id, type: e.type })).reverse();
  for (const e of result.events) say(`  event     ${e.type.padEnd(28)} ${e.id}`);
  if (!result.events.some((e) => e.type === event)) {
    throw new Error(
      `${result.objectId} has no ${event} event (its events: ${result.events.map((e) => e.type).join(', ') || 'none'})`,
    );
  }
  return result;
}

/** --override FIELD=VALUE pairs as a body: dotted fields nest, values are JSON when they parse, else text. */
export function parseOverrides(pairs: readonly string[]): Json {
  const body: Json = {};
  for (const pair of pairs) {
    const at = pair.indexOf('=');
    const path = at > 0 ? pair.slice(0, at).split('.') : [];
    if (path.length === 0 || path.some((part) => !/^[A-Za-z0-9_]+$/.test(part)))
      throw new UsageError(`--override takes FIELD=VALUE, e.g. amount_minor=100 or customer.name=Ama (got ${pair})`);
    let node = body;
    for (const part of path.slice(0, -1)) {
      const next = node[part];
      if (next !== undefined && (typeof next !== 'object' || next === null || Array.isArray(next)))
        throw new UsageError(`--override ${pair}: ${part} was already set to a value`);
      if (next === undefined) node[part] = {};
      node = node[part] as Json;
    }
    node[path[path.length - 1]!] = jsonOrText(pair.slice(at + 1));
  }
  return body;
}

function jsonOrText(value: string): unknown {
  try {
    return JSON.parse(value);
  } catch {
    return value;
  }
}

/** Nested objects merged, the override winning. */
function merged(base: Json, overrides: Json): Json {
  const out: Json = { ...base };
  for (const [key, value] of Object.entries(overrides)) {
    const under = out[key];
    out[key] = isObject(under) && isObject(value) ? merged(under, value) : value;
  }
  return out;
}
const isObject = (value: unknown): value is Json =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

// ---- the steps ----

interface Session {
  id: string;
  amount_minor: number;
  expires_at: string;
}

async function createSession(s: Step, overrides: Json, main: boolean): Promise<Session> {
  const body = merged(
    {
      amount_minor: TRIGGER_SESSION_AMOUNT_MINOR,
      invoice_ref: `TRIGGER-${randomUUID().slice(0, 8)}`,
      description: 'sika trigger',
    },
    overrides,
  );
  const session = await apiCall<Session>(s.target, 'POST', '/api/v1/sessions', body);
  made(s, 'checkout session', session.id, `(${session.amount_minor} pesewas)`);
  if (main) s.result.objectId = session.id;
  return session;
}

/** A payment link (issue 35), the main object; --override sets its create body's fields. */
async function paymentLink(s: Step): Promise<string> {
  const body = merged({ name: 'sika trigger', amount_minor: TRIGGER_SESSION_AMOUNT_MINOR }, s.overrides);
  const link = await apiCall<{ id: string; url: string }>(s.target, 'POST', '/api/v1/payment-links', body);
  made(s, 'payment link', link.id, link.url);
  s.result.objectId = link.id;
  return link.id;
}

/** A Mobile Money attempt for the quoted total, through the payer API (no key, as the payer's page does). */
async function startAttempt(s: Step, session: Session): Promise<string> {
  const quote = await apiCall<{ surcharges: Record<string, { total_minor: number }> }>(
    s.target,
    'GET',
    `/api/v1/checkout/sessions/${session.id}/quote`,
  );
  const total = quote.surcharges[TEST_PAYER.rail]?.total_minor;
  if (total === undefined)
    throw new Error(`session ${session.id} offers no ${TEST_PAYER.rail} payment; trigger pays with Mobile Money`);
  const attempt = await apiCall<{ attempt_reference: string }>(
    s.target,
    'POST',
    `/api/v1/checkout/sessions/${session.id}/provider-attempts`,
    { ...TEST_PAYER, amount_minor: total },
  );
  made(
    s,
    'payment attempt',
    attempt.attempt_reference,
    `(${TEST_PAYER.rail} ${TEST_PAYER.operator.toUpperCase()} ${TEST_PAYER.phone}, ${total} pesewas)`,
  );
  return attempt.attempt_reference;
}

async function simulate(s: Step, attempt: string, outcome: string): Promise<void> {
  const answer = await apiCall<{ status: string; session_status: string }>(
    s.target,
    'POST',
    `/api/v1/test/payment-attempts/${attempt}/simulate`,
    { outcome },
  );
  s.result.simulated.push(`${attempt} ${outcome}`);
  s.say(`  simulated ${outcome.padEnd(28)} ${attempt} -> attempt ${answer.status}, session ${answer.session_status}`);
}

async function pendingSession(
  s: Step,
  overrides: Json = s.overrides,
  main = true,
): Promise<{ session: Session; attempt: string }> {
  const session = await createSession(s, overrides, main);
  return { session, attempt: await startAttempt(s, session) };
}

async function paidSession(s: Step, overrides: Json, main = true): Promise<{ session: Session; attempt: string }> {
  const paid = await pendingSession(s, overrides, main);
  await simulate(s, paid.attempt, 'paid');
  return paid;
}

async function duplicatePayment(s: Step): Promise<void> {
  const { session, attempt: abandoned } = await pendingSession(s);
  const cancelled = await apiCall<{ status: string }>(
    s.target,
    'POST',
    `/api/v1/checkout/sessions/${session.id}/provider-attempts/${abandoned}/cancel`,
  );
  s.say(`  cancelled ${''.padEnd(28)} ${abandoned} -> attempt ${cancelled.status} (the payer changed course)`);
  await simulate(s, await startAttempt(s, session), 'paid');
  await simulate(s, abandoned, 'paid');
}

async function failedSession(s: Step): Promise<void> {
  const session = await createSession(s, s.overrides, true);
  for (let i = 0; i < FAILED_ATTEMPTS_TO_FAIL; i++) await simulate(s, await startAttempt(s, session), 'failed');
}

async function expiredSession(s: Step): Promise<void> {
  const { session, attempt } = await pendingSession(
    s,
    merged({ expires_in_seconds: EXPIRING_SESSION_LIFETIME_S }, s.overrides),
  );
  const waitMs = Math.max(0, new Date(session.expires_at).getTime() - Date.now()) + 1_000;
  s.say(`  waiting   ${Math.ceil(waitMs / 1000)} s for the session to pass its expiry (${session.expires_at})`);
  await sleep(waitMs);
  // The server's expiry job may have expired it already; else the attempt's end finds it past its time.
  const now = await apiCall<{ status: string }>(s.target, 'GET', `/api/v1/sessions/${session.id}`);
  if (now.status !== 'expired') await simulate(s, attempt, 'expired');
}

async function refund(s: Step, outcome: 'pending' | 'succeeded' | 'failed' | 'awaiting_approval'): Promise<string> {
  const amount = typeof s.overrides.amount_minor === 'number' ? s.overrides.amount_minor : TRIGGER_REFUND_AMOUNT_MINOR;
  const { session } = await paidSession(
    s,
    { amount_minor: Math.max(TRIGGER_SESSION_AMOUNT_MINOR, withFeeMargin(amount)) },
    false,
  );
  const body = merged(
    {
      session_id: session.id,
      amount_minor: TRIGGER_REFUND_AMOUNT_MINOR,
      test_outcome: outcome,
      reason: 'sika trigger',
    },
    s.overrides,
  );
  const created = await apiCall<{ id: string; status: string }>(s.target, 'POST', '/api/v1/refunds', body);
  made(s, 'refund', created.id, `(${created.status})`);
  s.result.objectId = created.id;
  return created.id;
}

/** The refund simulator (POST /api/v1/test/refunds/{id}/simulate). */
async function simulateRefund(s: Step, id: string, outcome: 'cancelled'): Promise<void> {
  const answer = await apiCall<{ status: string }>(s.target, 'POST', `/api/v1/test/refunds/${id}/simulate`, {
    outcome,
  });
  s.result.simulated.push(`${id} ${outcome}`);
  s.say(`  simulated ${outcome.padEnd(28)} ${id} -> refund ${answer.status}`);
}

async function payout(s: Step, outcome: 'paid' | 'requested' | 'processing'): Promise<string> {
  const amount = typeof s.overrides.amount_minor === 'number' ? s.overrides.amount_minor : TRIGGER_PAYOUT_AMOUNT_MINOR;
  await paidSession(s, { amount_minor: withFeeMargin(amount + PAYOUT_FEE_MAX_MINOR) }, false);
  const recipient = await apiCall<{ id: string }>(s.target, 'POST', '/api/v1/payouts/recipients', {
    ...TEST_RECIPIENT,
  });
  made(s, 'recipient', recipient.id, `(${TEST_RECIPIENT.network.toUpperCase()} ${TEST_RECIPIENT.phone})`);
  const body = merged(
    {
      recipient_id: recipient.id,
      amount_minor: TRIGGER_PAYOUT_AMOUNT_MINOR,
      client_reference: `trigger-${randomUUID()}`,
      notes: 'sika trigger',
      test_outcome: outcome,
    },
    s.overrides,
  );
  const created = await apiCall<{ id: string; status: string }>(s.target, 'POST', '/api/v1/payouts', body).catch(
    (error: unknown) => {
      if (error instanceof ApiError && error.status === 403 && /webhook endpoint/.test(error.message)) {
        throw new ApiError(
          `${error.message} (Sika pays out only for a key with a webhook endpoint, Test keys too; sika listen does not count as one)`,
          error.status,
          error.code,
        );
      }
      throw error;
    },
  );
  made(s, 'payout', created.id, `(${created.status})`);
  s.result.objectId = created.id;
  return created.id;
}

/** The payout simulator (POST /api/v1/test/payouts/{id}/simulate). */
async function simulatePayout(s: Step, id: string, outcome: 'failed' | 'returned'): Promise<void> {
  const answer = await apiCall<{ status: string }>(s.target, 'POST', `/api/v1/test/payouts/${id}/simulate`, {
    outcome,
  });
  s.result.simulated.push(`${id} ${outcome}`);
  s.say(`  simulated ${outcome.padEnd(28)} ${id} -> payout ${answer.status}`);
}

/** POST /api/v1/payouts/{id}/cancel, as a merchant cancels a payout not yet sent. */
async function cancelPayout(s: Step, id: string): Promise<void> {
  const answer = await apiCall<{ status: string }>(s.target, 'POST', `/api/v1/payouts/${id}/cancel`, {
    reason: 'sika trigger',
  });
  s.say(`  cancelled ${''.padEnd(28)} ${id} -> payout ${answer.status}`);
}

/** A payment that leaves at least `minor` in the balance, whatever collection fee the merchant bears. */
const withFeeMargin = (minor: number) => Math.ceil((minor * (10_000 + FUNDING_FEE_MARGIN_BPS)) / 10_000);

function made(s: Step, kind: string, id: string, note: string): void {
  s.result.created.push({ kind, id });
  s.say(`  created   ${kind.padEnd(28)} ${id} ${note}`);
}
