// One cell of a bank statement, read as banks write it: an amount in integer pesewas (never through a
// float), a date in the forms Ghanaian bank exports use, the Dr/Cr side of a type column.

/** Whole cedis in an amount, at most: pesewas then stay exact integers (below 2^53) with room to spare. */
export const AMOUNT_WHOLE_DIGITS_MAX = 13;

export type AmountCell = { kind: 'blank' } | { kind: 'amount'; minor: number } | { kind: 'bad'; message: string };

const BLANK: AmountCell = { kind: 'blank' };

/**
 * An amount as banks write it, in integer pesewas (never through a float): "1,234.50", "1234.5",
 * "GHS 1,234.50", "1 234.50", "(1,234.50)" or "-1,234.50" or "1,234.50-" (negative), "1,234.50 CR"
 * (positive) or "1,234.50 DR" (negative). Empty, "-" and "nil" are blank. More than two decimal places
 * are refused unless the extra ones are zeros.
 */
export function parseAmountCell(text: string): AmountCell {
  let t = text.trim().toUpperCase();
  if (t === '' || /^[-–—.]+$/.test(t) || t === 'NIL' || t === 'N/A') return BLANK;
  let negative = false;
  const bad = (): AmountCell => ({ kind: 'bad', message: `"${text.trim().slice(0, 40)}" is not an amount` });
  t = t.replace(/GH[S₵¢C]|₵|¢|\bCEDIS?\b|\bGH\b/g, '').trim();
  const marker = /^(CR|DR)\.?\s*(.*)$/.exec(t) ?? /^(.*?)\s*(CR|DR)\.?$/.exec(t);
  if (marker) {
    const [side, rest] = marker[1] === 'CR' || marker[1] === 'DR' ? [marker[1], marker[2]!] : [marker[2]!, marker[1]!];
    negative = side === 'DR';
    t = rest.trim();
  }
  const parenthesised = /^\((.*)\)$/.exec(t);
  if (parenthesised) {
    negative = !negative;
    t = parenthesised[1]!.trim();
  }
  if (t.startsWith('-') || t.startsWith('+')) {
    if (t.startsWith('-')) negative = !negative;
    t = t.slice(1).trim();
  } else if (t.endsWith('-')) {
    negative = !negative;
    t = t.slice(0, -1).trim();
  }
  t = t.replace(/\s+/g, '');
  const match = /^(\d{1,3}(?:,\d{3})+|\d*)(?:\.(\d*))?$/.exec(t);
  if (!match || !/\d/.test(t)) return bad();
  const fraction = match[2] ?? '';
  if (/[1-9]/.test(fraction.slice(2)))
    return { kind: 'bad', message: `"${text.trim().slice(0, 40)}" has more than two decimal places` };
  const whole = match[1]!.replace(/,/g, '').replace(/^0+(?=\d)/, '');
  if (whole.length > AMOUNT_WHOLE_DIGITS_MAX)
    return { kind: 'bad', message: `"${text.trim().slice(0, 40)}" is too large an amount` };
  const minor = Number(whole || '0') * 100 + Number((fraction + '00').slice(0, 2));
  return { kind: 'amount', minor: negative && minor !== 0 ? -minor : minor };
}

const MONTHS = [
  'JANUARY',
  'FEBRUARY',
  'MARCH',
  'APRIL',
  'MAY',
  'JUNE',
  'JULY',
  'AUGUST',
  'SEPTEMBER',
  'OCTOBER',
  'NOVEMBER',
  'DECEMBER',
];

function monthOf(name: string): number | null {
  if (name.length < 3) return null;
  const index = MONTHS.findIndex((month) => month.startsWith(name) || (name === 'SEPT' && month === 'SEPTEMBER'));
  return index < 0 ? null : index + 1;
}

const fullYear = (text: string) => (text.length === 2 ? 2000 + Number(text) : Number(text));

function isoDate(year: number, month: number, day: number): string | null {
  if (year < 2000 || year > 2100 || month < 1 || month > 12 || day < 1) return null;
  const date = new Date(Date.UTC(year, month - 1, day));
  if (date.getUTCMonth() !== month - 1 || date.getUTCDate() !== day) return null;
  return `${year}-${String(month).padStart(2, '0')}-${String(day).padStart(2, '0')}`;
}

/**
 * A statement date as YYYY-MM-DD, or null. Numeric dates are day first, as Ghanaian banks write them
 * (12/03/2026, 12-03-26, 12.03.2026); ISO dates (2026-03-12) and month names (12-Mar-2026, 12 March
 * 2026, Mar 12, 2026) are read too. A time after the date is ignored.
 */
export function parseStatementDate(text: string): string | null {
  const t = text
    .trim()
    .toUpperCase()
    .replace(/\s+/g, ' ')
    .replace(/[T ]\d{1,2}:\d{2}(:\d{2}(\.\d+)?)?( ?[AP]\.?M\.?)?( ?(Z|[+-]\d{2}:?\d{2}))?$/, '');
  let m = /^(\d{4})[-/.](\d{1,2})[-/.](\d{1,2})$/.exec(t);
  if (m) return isoDate(Number(m[1]), Number(m[2]), Number(m[3]));
  m = /^(\d{1,2})[-/.](\d{1,2})[-/.](\d{2}|\d{4})$/.exec(t);
  if (m) return isoDate(fullYear(m[3]!), Number(m[2]), Number(m[1]));
  m = /^(\d{1,2})(?:ST|ND|RD|TH)?[- /.]?([A-Z]{3,9})\.?[- /.,]*(\d{2}|\d{4})$/.exec(t);
  if (m) {
    const month = monthOf(m[2]!);
    return month ? isoDate(fullYear(m[3]!), month, Number(m[1])) : null;
  }
  m = /^([A-Z]{3,9})\.?[- ]?(\d{1,2})(?:ST|ND|RD|TH)?,? (\d{4})$/.exec(t);
  if (m) {
    const month = monthOf(m[1]!);
    return month ? isoDate(Number(m[3]), month, Number(m[2])) : null;
  }
  return null;
}

/** The side of a Dr/Cr column's value, or null when it names neither. */
export function sideOf(text: string): 'credit' | 'debit' | null {
  const t = text
    .trim()
    .toUpperCase()
    .replace(/[^A-Z]/g, '');
  if (['C', 'CR', 'CREDIT', 'DEPOSIT', 'LODGEMENT', 'IN'].includes(t)) return 'credit';
  if (['D', 'DR', 'DEBIT', 'WITHDRAWAL', 'OUT'].includes(t)) return 'debit';
  return null;
}
