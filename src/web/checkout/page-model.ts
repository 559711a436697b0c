// What the hosted payment page renders from: the session's payer view, the screen it is on, the attempt it
// is about, and the quotes, slip and banks that screen shows.
import type { RailQuote } from '../../checkout/fees.ts';
import type { AttemptRow } from '../../checkout/model.ts';
import type { Rail, RailDescriptor } from '../../rails/registry.ts';
import type { Html } from '../html.ts';

export type Screen = 'choose' | 'code' | 'waiting' | 'cash' | 'review' | 'success' | 'failed' | 'expired';

/** The payer view of the session (SPEC 2.2), as the public session endpoint returns it. */
export interface PublicSessionView {
  id: string;
  merchant_name: string;
  status: string;
  amount_minor: number;
  currency: string;
  invoice_ref: string;
  description: string;
  customer_name: string;
  allowed_rails: string[];
  /** The Mobile Money networks a payer can pay from; without it, every network. */
  allowed_operators?: string[];
  expires_at: string;
  return_to_merchant_url: string | null;
  card_collection_mode: string;
  line_items: { code: string; name: string; amount_minor: number; currency: string }[];
  livemode: boolean;
}

export interface SlipView {
  reference: string;
  amount_minor: number;
  merchant_name: string;
  invoice_ref: string;
  description: string;
  customer_name: string;
  status: string;
  expires_at: string;
}

export interface BankBranches {
  name: string;
  branches: { name: string }[];
}

export interface PageModel {
  session: PublicSessionView;
  test: boolean;
  screen: Screen;
  quotes: Partial<Record<Rail, RailQuote>>;
  /** The attempt the screen is about (the pending one, the paid one, or the last that failed). */
  attempt: AttemptRow | null;
  instructions: Record<string, unknown> | null;
  /** What the attempt's status response (SPEC 2.4, issue 31) says of `attempt`, or else of `lastUnpaid`: the same fields the script reads. */
  facts: AttemptFacts | null;
  /** The payer is back from the provider's hosted page for this (still pending) attempt: confirm it now. */
  returning: boolean;
  /** On the choose screen: the attempt that just ended without payment, to say so. */
  lastUnpaid: AttemptRow | null;
  slip: SlipView | null;
  banks: BankBranches[];
  /** The success screen offers the receipt by SMS too: a provider is configured (issue 35). */
  smsReceipts?: boolean;
}

/**
 * The fields of the attempt status response the page draws from (issue 31), so that a reload shows what the
 * script showed: resend only where the provider can, the time left to approve, the network's own way to
 * approve, the plain reason of a decline, and the references a payer and support can use.
 */
export interface AttemptFacts {
  resendSupported: boolean;
  resendsLeft: number;
  /** Seconds the payer has to approve, counted from the attempt's creation; null when the provider says none. */
  approveWithinS: number | null;
  approvalHelp: string | null;
  /** Seconds since the attempt was created, at render time (the script counts on from here, never from its own clock). */
  elapsedS: number;
  failureReason: string | null;
  failureMessage: string | null;
  providerTransactionId: string | null;
  card: { brand: string; last4: string } | null;
}

export interface Assets {
  scriptUrl: string;
  css: string;
}

/** A rail's part of the page, picked by its descriptor's payerView (the table in payer-views.ts). */
export interface RailPayerView {
  /** Its panel on the choose screen: what the payer is told before continuing with it. */
  panel(m: PageModel, rail: RailDescriptor<Rail>, quote: RailQuote): Html;
  /** Its button on the choose screen, when not the rail's own label or "Pay GHS x". */
  action?(m: PageModel): string | undefined;
  /** Its screen while the attempt is pending; without one, the Mobile Money prompt's. */
  waiting?(m: PageModel): Html;
  /** What the success screen says paid; without it, the rail's name. */
  paidWith?(attempt: AttemptRow, instructions: Record<string, unknown>, facts: AttemptFacts | null): string;
}
