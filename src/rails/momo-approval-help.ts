// The network's own way for a payer to approve a pending Mobile Money payment when no prompt came (or it was
// dismissed), and how long a network documents that the payer has to approve. A text is given only where a
// public source documents the steps; null elsewhere, so the page never invents a menu.
import type { MomoNetwork } from '../lib/ghana.ts';

/**
 * MTN: pending debits wait in the wallet's approvals list: dial *170#, My Wallet, My Approvals, enter the PIN,
 * pick the payment, approve (MTN's 2018 "payment approval" change, as told by Hubtel,
 * https://blog.hubtel.com/?p=2220, and https://fthghana.net/technology/mtn-mobile-money-approval/; AZA Finance's
 * GHS collection instructions give the same path, https://docs.azafinance.com/docs/collection-details). The
 * sources number the menu options differently (10 or 6 for My Wallet), so the text names them instead.
 *
 * Telecel Cash and AT Money: no public source found that documents an approvals menu for a pending merchant
 * debit (searched: Paystack's mobile money docs, Telecel and AT pages, aggregators' Ghana docs). Telecel's
 * *110# appears in Paystack's samples only to generate a voucher code before the charge
 * (PaystackOSS/doc-code-snippets dist/doc/payments/payment-methods/mobile-vodafone.js), which the voucher step
 * of the payer page already shows; it is not a way to approve a pending payment.
 */
export const APPROVAL_HELP: Record<MomoNetwork, string | null> = {
  mtn: 'Dial *170#, choose My Wallet, then My Approvals, and approve the payment.',
  telecel: null,
  at: null,
};

/**
 * Seconds a payer has to approve, where the network documents it. MTN: "a delay to approve a transaction within
 * the given time frame (5 minutes)" ends in COULD_NOT_PERFORM_TRANSACTION
 * (https://momodeveloper.mtn.com/content/html_widgets/TEcUW.html). That is MTN's wallet rule, documented for its
 * Open API; whether a charge through Paystack to an MTN wallet has the same window Paystack does not say.
 * Telecel and AT: none documented.
 */
export const APPROVAL_WINDOW_S_BY_NETWORK: Record<MomoNetwork, number | null> = {
  mtn: 300,
  telecel: null,
  at: null,
};
