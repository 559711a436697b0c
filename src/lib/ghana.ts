// Ghana mobile numbers and MoMo networks (../shared/GHANA.md). The prefix table is data: an operator
// corrects it here, never in logic.

export const MOMO_NETWORKS = ['mtn', 'telecel', 'at'] as const;
export type MomoNetwork = (typeof MOMO_NETWORKS)[number];

export const NETWORK_LABELS: Record<MomoNetwork, string> = { mtn: 'MTN MoMo', telecel: 'Telecel Cash', at: 'AT Money' };

export const NETWORK_PREFIXES: Record<MomoNetwork, readonly string[]> = {
  mtn: ['24', '54', '55', '59', '25', '53'],
  telecel: ['20', '50'],
  at: ['26', '56', '27', '57'],
};

/** +233XXXXXXXXX from local (0XX...), 233..., +233..., with spaces or hyphens; null when not a Ghana mobile number. */
export function normaliseGhanaPhone(input: string): string | null {
  const compact = input.replace(/[\s-]/g, '');
  let national: string | null = null;
  if (/^0\d{9}$/.test(compact)) national = compact.slice(1);
  else if (/^\+233\d{9}$/.test(compact)) national = compact.slice(4);
  else if (/^233\d{9}$/.test(compact)) national = compact.slice(3);
  if (!national) return null;
  return `+233${national}`;
}

/**
 * The JSON Schema pattern of what normaliseGhanaPhone accepts with one of these network prefixes: 0 or
 * (+)233, the prefix and 7 more digits, spaces and hyphens anywhere. [0-9], not \\d: some engines read \\d as any Unicode digit.
 */
export function ghanaPhonePattern(prefixes: readonly string[]): string {
  const gap = '[\\s-]*';
  const spaced = (digits: string) => [...digits].join(gap);
  return `^${gap}(?:0|\\+?${gap}${spaced('233')})${gap}(?:${prefixes.map(spaced).join('|')})(?:${gap}[0-9]){7}${gap}$`;
}

export function networkOfPhone(e164: string): MomoNetwork | null {
  const prefix = e164.slice(4, 6);
  for (const network of MOMO_NETWORKS) if (NETWORK_PREFIXES[network].includes(prefix)) return network;
  return null;
}

export type PhoneCheck = { ok: true; phone: string } | { ok: false; message: string };

/** A phone for a chosen network: a Ghana mobile number whose prefix belongs to that network. */
export function checkPhoneForNetwork(input: string, network: MomoNetwork): PhoneCheck {
  const phone = normaliseGhanaPhone(input);
  if (!phone)
    return { ok: false, message: 'phone must be a Ghana mobile number such as 024 123 4567 or +233 24 123 4567' };
  const actual = networkOfPhone(phone);
  if (!actual) return { ok: false, message: `phone ${maskPhone(phone)} does not belong to a Mobile Money network` };
  if (actual !== network) {
    return {
      ok: false,
      message: `phone ${maskPhone(phone)} is a ${NETWORK_LABELS[actual]} number, not ${NETWORK_LABELS[network]}`,
    };
  }
  return { ok: true, phone };
}

/**
 * A payer's Mobile Money number for the network they chose (issue 31): any Ghana mobile number of some
 * network. Numbers have been portable between networks since 2011, so a prefix that usually belongs to
 * another network is not a refusal; `usualNetwork` tells the page which one, for its warning.
 */
export function checkPayerPhone(input: string): PhoneCheck & { usualNetwork?: MomoNetwork } {
  const phone = normaliseGhanaPhone(input);
  if (!phone)
    return { ok: false, message: 'phone must be a Ghana mobile number such as 024 123 4567 or +233 24 123 4567' };
  const usual = networkOfPhone(phone);
  if (!usual) return { ok: false, message: `phone ${maskPhone(phone)} does not belong to a Mobile Money network` };
  return { ok: true, phone, usualNetwork: usual };
}

export const maskPhone = (e164: string): string => `${e164.slice(0, 6)}*****${e164.slice(-2)}`;
export const phoneLast4 = (e164: string): string => e164.slice(-4);

/** GHS 1,234.50 */
export function formatGhs(amountMinor: number): string {
  const negative = amountMinor < 0;
  const abs = Math.abs(amountMinor);
  const cedis = Math.floor(abs / 100)
    .toString()
    .replace(/\B(?=(\d{3})+(?!\d))/g, ',');
  return `${negative ? '-' : ''}GHS ${cedis}.${String(abs % 100).padStart(2, '0')}`;
}

/**
 * "1,234.5", "1234.5" or "502" (GHS typed by a person) -> pesewas; null when it is not an amount. Commas
 * are read only as thousands separators, between groups of three digits ("1,220.00"): "1,22.00" is not an
 * amount (a slip of the finger, not GHS 122.00). At most 9 whole digits and 2 decimals.
 */
export function parseCedis(value: string): number | null {
  const match = /^\s*(\d{1,9}|\d{1,3}(?:,\d{3}){1,2})(?:\.(\d{1,2}))?\s*$/.exec(value);
  return match ? Number(match[1]!.replace(/,/g, '')) * 100 + Number((match[2] ?? '').padEnd(2, '0')) : null;
}
