// The one currency Sika takes (GHS), and the rule a request's currency field follows: any letter case, upper-cased,
// GHS by default. Checkout sessions and invoices both read it.
import { errors } from './errors.ts';

export const SUPPORTED_CURRENCY = 'GHS';

export function normaliseCurrency(currency: string | undefined): string {
  const value = (currency ?? SUPPORTED_CURRENCY).toUpperCase();
  if (value !== SUPPORTED_CURRENCY) {
    throw errors.invalidArgument(`currency ${currency} is not supported; use ${SUPPORTED_CURRENCY}.`, [
      { field: 'currency', message: `must be ${SUPPORTED_CURRENCY}` },
    ]);
  }
  return value;
}
