// Every collection rail, described once. The options endpoint, quotes, fee schedules, the payer page, the
// dashboard's fee settings and the OpenAPI text read these descriptors; nothing else lists rails.
// A new rail is a descriptor here, its adapter, and a migration widening the rail CHECKs of
// fee_schedules and payment_attempts (test/rails/registry.test.ts fails until they match).
import type { Environment } from '../lib/environment.ts';
import { phoneLast4, type MomoNetwork } from '../lib/ghana.ts';
import { branchCash, testBranchCash } from './branch-cash.ts';
import { APPROVAL_HELP } from './momo-approval-help.ts';
import { testSimulator } from './test-simulator.ts';
import type { CollectionRail } from './types.ts';

/** Who pays a checkout fee: added to the payer's total, or taken from the merchant's payment (DESIGN §3). */
export const BEARERS = ['payer', 'merchant'] as const;
export type Bearer = (typeof BEARERS)[number];

/** A fee in integer pesewas; percentages in basis points. */
export interface RailFee {
  bearer: Bearer;
  percentBps: number;
  flatMinor: number;
  capMinor: number | null;
}

/**
 * How the payer page shows a rail: its panel on the choose screen and its screen while the attempt is
 * pending. 'confirmation' needs nothing rail-specific (the payer approves elsewhere, the page waits); the
 * others are the built-in rails' own screens (momo's wallet fields, the bank details, the cash slip).
 * Each is drawn by its module under src/web/checkout/payer-views/ (named here, not imported: rails know no
 * pages); a new view does not compile until web/checkout/payer-views.ts lists its module.
 */
export type PayerView = 'mobile_money' | 'card' | 'bank_transfer' | 'cash_slip' | 'confirmation';

/** The fields of an attempt its instructions are made of (a payment_attempts row has them all). */
export interface AttemptFacts {
  rail: string;
  environment: Environment;
  amount_charged_minor: number;
  currency: string;
  verification_required: boolean;
  network: string | null;
  phone: string | null;
  provider_reference: string;
  /** What the adapter added at initiation. */
  instructions: Record<string, unknown>;
}

export interface RailDescriptor<Id extends string = string> {
  readonly id: Id;
  readonly labels: {
    /** Its name for payers: the options endpoint and the payer page. */
    readonly payer: string;
    /** The line under its name on the payer page. */
    readonly hint: string;
    /** Its name in the dashboard's fee settings. */
    readonly dashboard: string;
    /** Its name at a bank counter, for rails paid at a branch (the options' branch_payment_methods). */
    readonly branch?: string;
    /** The payer page's button when it is chosen; without one the button says "Pay GHS x". */
    readonly action?: string;
  };
  /** The fee before a merchant's own schedule overrides it. */
  readonly defaultFee: RailFee;
  readonly payerView: PayerView;
  /** An attempt's instructions (SPEC 2.4): what the payer needs to complete the payment. */
  instructions(attempt: AttemptFacts): Record<string, unknown>;
  /**
   * The adapter serving it in each environment. Where it has none it is offered only when a Live provider
   * is configured for it; otherwise payers never see it there.
   */
  readonly adapters: Partial<Record<Environment, CollectionRail>>;
}

const base = (attempt: AttemptFacts) => ({
  rail: attempt.rail,
  amount_minor: attempt.amount_charged_minor,
  currency: attempt.currency,
});

const momo: RailDescriptor<'momo'> = {
  id: 'momo',
  labels: { payer: 'Mobile Money', hint: 'MTN MoMo, Telecel Cash, AT Money', dashboard: 'Mobile Money' },
  defaultFee: { bearer: 'payer', percentBps: 150, flatMinor: 0, capMinor: null },
  payerView: 'mobile_money',
  instructions: (attempt) => ({
    mode: attempt.verification_required ? 'verification_code' : 'mobile_money_prompt',
    ...base(attempt),
    operator: attempt.network, // the SPEC's wire name for the network
    phone_last4: attempt.phone ? phoneLast4(attempt.phone) : null,
    // No re-send unless the provider said it can (recorded when the attempt was sent); the network's own way
    // to approve when no prompt came, where it is documented (issue 31).
    resend_supported: false,
    approval_help: attempt.network ? (APPROVAL_HELP[attempt.network as MomoNetwork] ?? null) : null,
    ...attempt.instructions,
  }),
  adapters: { test: testSimulator },
};

const card: RailDescriptor<'card'> = {
  id: 'card',
  labels: { payer: 'Card', hint: 'Debit or credit card', dashboard: 'Card' },
  defaultFee: { bearer: 'merchant', percentBps: 250, flatMinor: 0, capMinor: null },
  payerView: 'card',
  instructions: (attempt) => ({
    mode: attempt.environment === 'test' ? 'test_simulation' : 'card_network_hosted_session',
    ...base(attempt),
    ...attempt.instructions,
  }),
  adapters: { test: testSimulator },
};

const bankTransfer: RailDescriptor<'bank_transfer'> = {
  id: 'bank_transfer',
  labels: {
    payer: 'Bank transfer',
    hint: 'From your bank app or a branch',
    dashboard: 'Bank transfer',
    action: 'Get bank transfer details',
  },
  defaultFee: { bearer: 'merchant', percentBps: 100, flatMinor: 0, capMinor: 1_000 },
  payerView: 'bank_transfer',
  instructions: (attempt) => ({
    mode: 'bank_transfer',
    ...base(attempt),
    bank_name: 'Sika Collections (GCB Bank)',
    account_name: 'Sika Collections',
    account_number: attempt.environment === 'test' ? '0000000000000' : null,
    reference: attempt.provider_reference,
    note: 'Quote the reference exactly so the transfer is matched to this payment.',
    ...attempt.instructions,
  }),
  adapters: { test: testSimulator },
};

const cash: RailDescriptor<'cash'> = {
  id: 'cash',
  labels: {
    payer: 'Cash at a bank branch',
    hint: 'Pay at a bank branch with a slip',
    dashboard: 'Cash at a branch',
    branch: 'Cash deposit',
    action: 'Get a cash deposit slip',
  },
  defaultFee: { bearer: 'payer', percentBps: 0, flatMinor: 200, capMinor: null },
  payerView: 'cash_slip',
  instructions: (attempt) => ({ mode: 'cash_deposit', ...base(attempt), ...attempt.instructions }),
  adapters: { test: testBranchCash, live: branchCash },
};

/** The built-in rails, in the order payers see them. */
const BUILT_IN = [momo, card, bankTransfer, cash] as const;
export type Rail = (typeof BUILT_IN)[number]['id'];

/** A rail id: lower case, as stored in the rail columns. */
const RAIL_ID_PATTERN = /^[a-z][a-z0-9_]{1,31}$/;

const descriptors: RailDescriptor<Rail>[] = [...BUILT_IN];

/** Every rail, in the order payers see them. */
export const railDescriptors = (): readonly RailDescriptor<Rail>[] => descriptors;
export const railIds = (): Rail[] => descriptors.map((descriptor) => descriptor.id);
export const findRail = (id: string): RailDescriptor<Rail> | undefined =>
  descriptors.find((descriptor) => descriptor.id === id);

/** The descriptor of a stored rail; a rail without one is a bug (a row the code no longer knows). */
export function railDescriptor(id: Rail): RailDescriptor<Rail> {
  const descriptor = findRail(id);
  if (!descriptor) throw new Error(`no rail descriptor for ${id}`);
  return descriptor;
}

/**
 * Adds a rail after the others (for tests, and for a rail that lives outside this file); returns its
 * removal. Its id must also be allowed by the rail CHECKs before an attempt of it can be stored.
 */
export function registerRail(descriptor: RailDescriptor): () => void {
  if (!RAIL_ID_PATTERN.test(descriptor.id)) throw new Error(`rail id ${descriptor.id} must match ${RAIL_ID_PATTERN}`);
  if (findRail(descriptor.id)) throw new Error(`rail ${descriptor.id} is already registered`);
  const added = descriptor as RailDescriptor<Rail>;
  descriptors.push(added);
  return () => {
    const index = descriptors.indexOf(added);
    if (index >= 0) descriptors.splice(index, 1);
  };
}

/** "a, b, c or d": the rails for a sentence (the OpenAPI text of the attempt's rail field). */
export function railList(): string {
  const ids = railIds();
  return ids.length > 1 ? `${ids.slice(0, -1).join(', ')} or ${ids.at(-1)}` : ids.join('');
}
