// Checkout fees: a per-rail schedule per merchant and environment, each with a bearer (DESIGN §3).
// Integer pesewas only; percentages are basis points; rounding half up to the pesewa.

import { railDescriptors, type Bearer, type Rail, type RailFee } from '../rails/registry.ts';

export type { Bearer, RailFee };

/** Each rail's default fee (its descriptor's), before a merchant's schedule overrides it. */
export const defaultFees = (): Record<Rail, RailFee> =>
  Object.fromEntries(railDescriptors().map((descriptor) => [descriptor.id, { ...descriptor.defaultFee }])) as Record<
    Rail,
    RailFee
  >;

export function feeMinor(baseMinor: number, fee: RailFee): number {
  if (!Number.isSafeInteger(baseMinor) || baseMinor < 0) throw new Error(`fee of a bad base ${baseMinor}`);
  const percent = Math.floor((baseMinor * fee.percentBps + 5_000) / 10_000);
  const total = percent + fee.flatMinor;
  return fee.capMinor === null ? total : Math.min(total, fee.capMinor);
}

export interface RailQuote {
  bearer: Bearer;
  fee_minor: number;
  surcharge_minor: number;
  total_minor: number;
  currency: string;
}

/** When the payer bears the fee it is added as a surcharge; when the merchant does, the payer pays the base. */
export function quoteRail(baseMinor: number, fee: RailFee, currency: string): RailQuote {
  const fee_minor = feeMinor(baseMinor, fee);
  const surcharge_minor = fee.bearer === 'payer' ? fee_minor : 0;
  return { bearer: fee.bearer, fee_minor, surcharge_minor, total_minor: baseMinor + surcharge_minor, currency };
}

/**
 * A fee charged on chargedMinor, taken on what was actually received instead (an operator's decision on a
 * payment of another amount, issue 30): in proportion, rounded half up to the pesewa, never more than
 * what was received. Integers only (bigint inside, so large amounts do not lose precision).
 */
export function feeOnReceived(feeMinor: number, chargedMinor: number, receivedMinor: number): number {
  if (![feeMinor, chargedMinor, receivedMinor].every((n) => Number.isSafeInteger(n) && n >= 0) || chargedMinor < 1) {
    throw new Error(`fee of a bad amount: fee ${feeMinor} on ${chargedMinor} received ${receivedMinor}`);
  }
  const charged = BigInt(chargedMinor);
  const scaled = Number((BigInt(feeMinor) * BigInt(receivedMinor) * 2n + charged) / (2n * charged));
  return Math.min(scaled, receivedMinor);
}
