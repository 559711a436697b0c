// The Go-Live application's fields (issue 33) and their format checks: pure, no storage. A draft is saved
// half-filled, but every field it holds passed its check (checkDraft); submitting needs every field and
// document (applicationRequirements). The shapes follow ../shared/GHANA.md: Ghana Card PINs, GhanaPost GPS
// digital addresses, Registrar-General numbers and TINs are checked by shape only (nothing here asks an
// authority), and each message says which shape is expected.
import { MOMO_NETWORKS, checkPhoneForNetwork, normaliseGhanaPhone, type MomoNetwork } from '../lib/ghana.ts';

export const BUSINESS_TYPES = [
  'sole_proprietorship',
  'partnership',
  'limited_company',
  'ngo_or_church',
  'school',
  'government',
] as const;
export type BusinessType = (typeof BUSINESS_TYPES)[number];
export const BUSINESS_TYPE_LABELS: Record<BusinessType, string> = {
  sole_proprietorship: 'Sole proprietorship',
  partnership: 'Partnership',
  limited_company: 'Limited company',
  ngo_or_church: 'NGO or church',
  school: 'School',
  government: 'Government',
};

/** Expected money taken a month, in bands (a person estimates; the review judges the order of size). */
export const VOLUME_BANDS = ['up_to_10k', '10k_to_50k', '50k_to_250k', '250k_to_1m', 'over_1m'] as const;
export type VolumeBand = (typeof VOLUME_BANDS)[number];
export const VOLUME_BAND_LABELS: Record<VolumeBand, string> = {
  up_to_10k: 'Up to GHS 10,000 a month',
  '10k_to_50k': 'GHS 10,000 to 50,000 a month',
  '50k_to_250k': 'GHS 50,000 to 250,000 a month',
  '250k_to_1m': 'GHS 250,000 to 1,000,000 a month',
  over_1m: 'Over GHS 1,000,000 a month',
};

export const SETTLEMENT_TYPES = ['bank', 'momo'] as const;
export type SettlementType = (typeof SETTLEMENT_TYPES)[number];

export const DOCUMENT_KINDS = [
  'certificate_of_registration',
  'ghana_card_front',
  'ghana_card_back',
  'proof_of_address',
] as const;
export type DocumentKind = (typeof DOCUMENT_KINDS)[number];
export const DOCUMENT_LABELS: Record<DocumentKind, string> = {
  certificate_of_registration: 'Certificate of registration',
  ghana_card_front: 'Ghana Card, front',
  ghana_card_back: 'Ghana Card, back',
  proof_of_address: 'Proof of address (a utility bill or tenancy agreement)',
};
/** The Ghana Card sides belong to one director each (their index in the list). */
export const isCardSide = (kind: DocumentKind): boolean => kind === 'ghana_card_front' || kind === 'ghana_card_back';
/** A document file's largest size: 5 MB, the console's upload limit (src/http/body.ts UPLOAD_BYTES_MAX). */
export const DOCUMENT_BYTES_MAX = 5 * 1024 * 1024;
export const DOCUMENT_FILENAME_LENGTH_MAX = 200;

/** Directors and owners of 25% or more an application lists at most (migration 038's director_index bound). */
export const DIRECTORS_MAX = 20;
/** The youngest a director may be, in years. */
export const DIRECTOR_AGE_MIN = 18;

export const NAME_LENGTH_MAX = 150;
export const ADDRESS_LENGTH_MAX = 300;
export const PRODUCTS_LENGTH_MAX = 1_000;
export const WEBSITE_LENGTH_MAX = 300;

/** The business fields, in the order the form shows them. */
export const BUSINESS_FIELDS = [
  'business_type',
  'legal_name',
  'trading_name',
  'registration_number',
  'tin',
  'address',
  'digital_address',
  'phone',
  'website',
  'products',
  'monthly_volume_band',
] as const;
export type BusinessField = (typeof BUSINESS_FIELDS)[number];
export const DIRECTOR_FIELDS = ['full_name', 'ghana_card_pin', 'date_of_birth', 'phone'] as const;
export type DirectorField = (typeof DIRECTOR_FIELDS)[number];
export const SETTLEMENT_FIELDS = ['type', 'bank_code', 'network', 'account_number', 'account_name'] as const;
export type SettlementField = (typeof SETTLEMENT_FIELDS)[number];

export const FIELD_LABELS: Record<BusinessField, string> = {
  business_type: 'Business type',
  legal_name: 'Legal name',
  trading_name: 'Trading name',
  registration_number: 'Registrar-General number',
  tin: 'TIN',
  address: 'Address',
  digital_address: 'GhanaPost GPS digital address',
  phone: 'Business phone',
  website: 'Website or social page',
  products: 'What you sell',
  monthly_volume_band: 'Expected monthly volume',
};

/**
 * What a reviewer may ask to change: a business field, or a whole section. The names are the form's and the
 * requirement list's (a director's field is under `directors`, a document under `documents`).
 */
export const CHANGEABLE_FIELDS = [...BUSINESS_FIELDS, 'directors', 'documents', 'settlement_account'] as const;
export type ChangeableField = (typeof CHANGEABLE_FIELDS)[number];
export const CHANGEABLE_LABELS: Record<ChangeableField, string> = {
  ...FIELD_LABELS,
  directors: 'Directors and owners',
  documents: 'Documents',
  settlement_account: 'Settlement account',
};

export interface Director {
  full_name?: string;
  ghana_card_pin?: string;
  date_of_birth?: string;
  phone?: string;
}

export interface SettlementAccount {
  type?: SettlementType;
  /** A bank's code (banks.code, e.g. GCB) for a bank account. */
  bank_code?: string;
  network?: MomoNetwork;
  /** The bank account number, or the wallet's number in +233 form. */
  account_number?: string;
  /** The account's name as the merchant typed it. */
  account_name?: string;
}

/** A draft as stored: only fields that passed their check; absent means not given yet. */
export interface ApplicationDraft {
  business_type?: BusinessType;
  legal_name?: string;
  trading_name?: string;
  registration_number?: string;
  tin?: string;
  address?: string;
  digital_address?: string;
  phone?: string;
  website?: string;
  products?: string;
  monthly_volume_band?: VolumeBand;
  directors: Director[];
  settlement: SettlementAccount;
}

/** The form as posted: every value a string (or absent); directors as a list of rows. */
export interface DraftInput {
  [field: string]: unknown;
  directors?: unknown;
}

/** A field that failed its check: the form's name for it and why, in a sentence a person can act on. */
export interface FieldProblem {
  field: string;
  message: string;
}

/** The form's name of a director's field (`directors[0][full_name]`), as the page posts it. */
export const directorFieldName = (index: number, field: DirectorField): string => `directors[${index}][${field}]`;
/** The form's name of a settlement field (`settlement_account_number`). */
export const settlementFieldName = (field: SettlementField): string => `settlement_${field}`;

// ---- the checks, one per field: the normalised value, or the message ----

type Check = { ok: true; value: string } | { ok: false; message: string };
const ok = (value: string): Check => ({ ok: true, value });
const bad = (message: string): Check => ({ ok: false, message });

const GHANA_CARD_PIN = /^GHA-\d{9}-\d$/;
const DIGITAL_ADDRESS = /^[A-Z]{2}-\d{3,4}-\d{4}$/;
/** Registrar-General numbers: CS + 9 digits for companies, BN + digits for sole proprietorships and partnerships; loosely, 2-3 letters and 6-12 digits. */
const REGISTRATION_NUMBER = /^[A-Z]{2,3}\d{6,12}$/;
/** An organisation's TIN: a letter and 10 digits (C0012345678); an individual's is their Ghana Card PIN. */
const ORGANISATION_TIN = /^[A-Z]\d{10}$/;
const SOCIAL_HANDLE = /^@[A-Za-z0-9._]{1,50}$/;
const BANK_CODE = /^[A-Z0-9]{2,12}$/;
const ACCOUNT_NUMBER = /^\d{6,20}$/;
const DAY = /^(\d{4})-(\d{2})-(\d{2})$/;

const upperCompact = (value: string) => value.toUpperCase().replace(/\s+/g, '');

/** A name of a person or business: printable, 2 to NAME_LENGTH_MAX characters, with a letter in it. */
function checkName(value: string, what: string): Check {
  const v = value.trim().replace(/\s+/g, ' ');
  if (v.length < 2 || v.length > NAME_LENGTH_MAX) return bad(`${what} must be 2 to ${NAME_LENGTH_MAX} characters.`);
  if (!/\p{L}/u.test(v)) return bad(`${what} must contain letters.`);
  if (/[\p{Cc}<>]/u.test(v)) return bad(`${what} may not contain control characters or < >.`);
  return ok(v);
}

function checkFreeText(value: string, what: string, max: number): Check {
  const v = value.trim();
  if (v.length < 2 || v.length > max) return bad(`${what} must be 2 to ${max} characters.`);
  if (/[\p{Cc}]/u.test(v.replace(/[\r\n\t]/g, ''))) return bad(`${what} may not contain control characters.`);
  return ok(v);
}

export function checkGhanaCardPin(value: string): Check {
  const v = upperCompact(value);
  return GHANA_CARD_PIN.test(v)
    ? ok(v)
    : bad('The Ghana Card PIN must read GHA-, 9 digits, a dash and 1 digit, e.g. GHA-123456789-0.');
}

export function checkDigitalAddress(value: string): Check {
  const v = upperCompact(value);
  return DIGITAL_ADDRESS.test(v)
    ? ok(v)
    : bad('The GhanaPost GPS address must be two letters, 3 or 4 digits and 4 digits, e.g. GA-183-8164.');
}

export function checkRegistrationNumber(value: string): Check {
  const v = upperCompact(value).replace(/-/g, '');
  return REGISTRATION_NUMBER.test(v)
    ? ok(v)
    : bad('The Registrar-General number must be its letters and digits, e.g. CS123456789 or BN123456789.');
}

export function checkTin(value: string): Check {
  const v = upperCompact(value);
  if (ORGANISATION_TIN.test(v) || GHANA_CARD_PIN.test(v)) return ok(v);
  return bad(
    "The TIN must be an organisation's (a letter and 10 digits, e.g. C0012345678) or, for a sole proprietor, the Ghana Card PIN (GHA-123456789-0).",
  );
}

/** A Ghana phone number (mobile or fixed line), stored in +233 form. */
export function checkGhanaPhone(value: string, what = 'The phone number'): Check {
  const phone = normaliseGhanaPhone(value);
  return phone ? ok(phone) : bad(`${what} must be a Ghana number such as 024 123 4567 or +233 30 123 4567.`);
}

/** A website (http or https, with a host that has a dot) or a social handle (@name). */
export function checkWebsite(value: string): Check {
  const v = value.trim();
  if (v.length > WEBSITE_LENGTH_MAX) return bad(`The website must be at most ${WEBSITE_LENGTH_MAX} characters.`);
  if (SOCIAL_HANDLE.test(v)) return ok(v);
  try {
    const url = new URL(v);
    if ((url.protocol === 'http:' || url.protocol === 'https:') && /\.[a-z]{2,}$/i.test(url.hostname) && !url.username)
      return ok(url.toString());
  } catch {
    // not a URL: the message below
  }
  return bad(
    'The website must be an http(s) address such as https://example.com.gh, or a social handle such as @mybusiness.',
  );
}

/** A real calendar day, YYYY-MM-DD, at least DIRECTOR_AGE_MIN years before `today`, not before 1900. */
export function checkDateOfBirth(value: string, today: Date): Check {
  const v = value.trim();
  const m = DAY.exec(v);
  const date = m ? new Date(Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3]))) : null;
  if (!m || !date || date.toISOString().slice(0, 10) !== v || Number(m[1]) < 1900)
    return bad('The date of birth must be a real date written YYYY-MM-DD, e.g. 1985-03-21.');
  const adult = new Date(Date.UTC(today.getUTCFullYear() - DIRECTOR_AGE_MIN, today.getUTCMonth(), today.getUTCDate()));
  if (date > adult) return bad(`A director must be at least ${DIRECTOR_AGE_MIN} years old.`);
  return ok(v);
}

const oneOf = <T extends string>(values: readonly T[], value: string, message: string): Check =>
  (values as readonly string[]).includes(value) ? ok(value) : bad(message);

const BUSINESS_CHECKS: Record<BusinessField, (value: string) => Check> = {
  business_type: (v) =>
    oneOf(BUSINESS_TYPES, v, `The business type must be one of: ${Object.values(BUSINESS_TYPE_LABELS).join(', ')}.`),
  legal_name: (v) => checkName(v, 'The legal name'),
  trading_name: (v) => checkName(v, 'The trading name'),
  registration_number: checkRegistrationNumber,
  tin: checkTin,
  address: (v) => checkFreeText(v, 'The address', ADDRESS_LENGTH_MAX),
  digital_address: checkDigitalAddress,
  phone: (v) => checkGhanaPhone(v, 'The business phone'),
  website: checkWebsite,
  products: (v) => checkFreeText(v, 'What you sell', PRODUCTS_LENGTH_MAX),
  monthly_volume_band: (v) => oneOf(VOLUME_BANDS, v, 'Choose the expected monthly volume from the list.'),
};

const DIRECTOR_CHECKS: Record<DirectorField, (value: string, today: Date) => Check> = {
  full_name: (v) => checkName(v, "The director's full name"),
  ghana_card_pin: checkGhanaCardPin,
  date_of_birth: checkDateOfBirth,
  phone: (v) => checkGhanaPhone(v, "The director's phone"),
};

/** The value as typed, if any: a string with something in it (an array, a repeated field, is not one). */
const given = (value: unknown): string | null => (typeof value === 'string' && value.trim() !== '' ? value : null);

/** The settlement account's fields: the type decides which of bank or wallet fields count. */
function checkSettlement(input: DraftInput, problems: FieldProblem[]): SettlementAccount {
  const out: SettlementAccount = {};
  const read = (field: SettlementField) => given(input[settlementFieldName(field)]);
  const type = read('type');
  if (type !== null) {
    if ((SETTLEMENT_TYPES as readonly string[]).includes(type)) out.type = type as SettlementType;
    else
      problems.push({
        field: settlementFieldName('type'),
        message: 'The settlement account is a bank account or a MoMo wallet.',
      });
  }
  const name = read('account_name');
  if (name !== null) {
    const c = checkName(name, 'The account name');
    if (c.ok) out.account_name = c.value;
    else problems.push({ field: settlementFieldName('account_name'), message: c.message });
  }
  const number = read('account_number');
  if (out.type === 'momo') {
    const network = read('network');
    if (network !== null) {
      if ((MOMO_NETWORKS as readonly string[]).includes(network)) out.network = network as MomoNetwork;
      else problems.push({ field: settlementFieldName('network'), message: 'The network must be MTN, Telecel or AT.' });
    }
    if (number !== null) {
      if (out.network) {
        const c = checkPhoneForNetwork(number, out.network);
        if (c.ok) out.account_number = c.phone;
        else problems.push({ field: settlementFieldName('account_number'), message: `The wallet ${c.message}.` });
      } else {
        const c = checkGhanaPhone(number, 'The wallet number');
        if (c.ok) out.account_number = c.value;
        else problems.push({ field: settlementFieldName('account_number'), message: c.message });
      }
    }
  } else {
    const bank = read('bank_code');
    if (bank !== null) {
      const code = upperCompact(bank);
      if (BANK_CODE.test(code)) out.bank_code = code;
      else problems.push({ field: settlementFieldName('bank_code'), message: 'Choose the bank from the list.' });
    }
    if (number !== null) {
      const digits = number.replace(/[\s-]/g, '');
      if (ACCOUNT_NUMBER.test(digits)) out.account_number = digits;
      else
        problems.push({
          field: settlementFieldName('account_number'),
          message: 'The bank account number must be 6 to 20 digits.',
        });
    }
  }
  return out;
}

/** The directors' rows as posted: a list (nested form fields) of objects; anything else is no rows. */
const directorRows = (value: unknown): Record<string, unknown>[] =>
  Array.isArray(value)
    ? value.filter((row): row is Record<string, unknown> => typeof row === 'object' && row !== null)
    : [];

/**
 * Reads a posted form into a draft: each field given is checked (a problem for each that fails, and it is left
 * out of the draft); fields not given stay absent. Director rows with nothing typed are dropped.
 */
export function checkDraft(
  input: DraftInput,
  today: Date = new Date(),
): { draft: ApplicationDraft; problems: FieldProblem[] } {
  const problems: FieldProblem[] = [];
  const draft: ApplicationDraft = { directors: [], settlement: {} };
  for (const field of BUSINESS_FIELDS) {
    const value = given(input[field]);
    if (value === null) continue;
    const c = BUSINESS_CHECKS[field](value);
    if (c.ok) (draft as unknown as Record<string, string>)[field] = c.value;
    else problems.push({ field, message: c.message });
  }
  const rows = directorRows(input.directors).filter((row) => DIRECTOR_FIELDS.some((f) => given(row[f]) !== null));
  if (rows.length > DIRECTORS_MAX)
    problems.push({
      field: 'directors',
      message: `An application lists at most ${DIRECTORS_MAX} directors and owners.`,
    });
  rows.slice(0, DIRECTORS_MAX).forEach((row, index) => {
    const director: Director = {};
    for (const field of DIRECTOR_FIELDS) {
      const value = given(row[field]);
      if (value === null) continue;
      const c = DIRECTOR_CHECKS[field](value, today);
      if (c.ok) director[field] = c.value;
      else problems.push({ field: directorFieldName(index, field), message: `Director ${index + 1}: ${c.message}` });
    }
    draft.directors.push(director);
  });
  const pins = draft.directors.map((d) => d.ghana_card_pin).filter((pin): pin is string => !!pin);
  pins.forEach((pin, i) => {
    if (pins.indexOf(pin) !== i)
      problems.push({ field: 'directors', message: `The Ghana Card PIN ${pin} is listed for two directors.` });
  });
  draft.settlement = checkSettlement(input, problems);
  return { draft, problems };
}

/** A stored draft read back as the form's input (to check it again, e.g. for the review's format check). */
export function draftAsInput(draft: ApplicationDraft): DraftInput {
  const input: DraftInput = {};
  for (const field of BUSINESS_FIELDS) if (draft[field] !== undefined) input[field] = draft[field];
  input.directors = draft.directors.map((d) => ({ ...d }));
  for (const field of SETTLEMENT_FIELDS)
    if (draft.settlement[field] !== undefined) input[settlementFieldName(field)] = draft.settlement[field];
  return input;
}

/** A stored draft, whatever its age: absent parts are empty. */
export function draftOf(stored: unknown): ApplicationDraft {
  const value = (stored && typeof stored === 'object' ? stored : {}) as Partial<ApplicationDraft>;
  return {
    ...value,
    directors: Array.isArray(value.directors) ? value.directors : [],
    settlement: value.settlement && typeof value.settlement === 'object' ? value.settlement : {},
  };
}

/** Whether the business type has a Registrar-General registration (government bodies do not). */
export const registers = (type: BusinessType | undefined): boolean => type !== 'government';

/** Whether the settlement account is complete enough to ask its name of the provider. */
export function settlementComplete(s: SettlementAccount): boolean {
  if (!s.type || !s.account_number || !s.account_name) return false;
  return s.type === 'bank' ? !!s.bank_code : !!s.network;
}

/** One uploaded document as the requirement list counts it. */
export interface DocumentPresence {
  kind: DocumentKind;
  director_index: number | null;
}

/**
 * What is still missing before the application can be submitted: field paths, in the form's order, e.g.
 * `legal_name`, `directors`, `directors[0][ghana_card_pin]`, `settlement_account_number`,
 * `documents.certificate_of_registration`, `documents.ghana_card_front[0]`. Empty: complete.
 */
export function applicationRequirements(draft: ApplicationDraft, documents: readonly DocumentPresence[]): string[] {
  const missing: string[] = [];
  const optional = new Set<string>(['trading_name']);
  if (!registers(draft.business_type)) optional.add('registration_number');
  for (const field of BUSINESS_FIELDS) if (draft[field] === undefined && !optional.has(field)) missing.push(field);
  if (draft.directors.length === 0) missing.push('directors');
  draft.directors.forEach((director, index) => {
    for (const field of DIRECTOR_FIELDS)
      if (director[field] === undefined) missing.push(directorFieldName(index, field));
  });
  const s = draft.settlement;
  if (!s.type) missing.push(settlementFieldName('type'));
  else if (s.type === 'bank' && !s.bank_code) missing.push(settlementFieldName('bank_code'));
  else if (s.type === 'momo' && !s.network) missing.push(settlementFieldName('network'));
  if (!s.account_number) missing.push(settlementFieldName('account_number'));
  if (!s.account_name) missing.push(settlementFieldName('account_name'));
  const has = (kind: DocumentKind, index: number | null) =>
    documents.some((d) => d.kind === kind && d.director_index === index);
  if (registers(draft.business_type) && !has('certificate_of_registration', null))
    missing.push('documents.certificate_of_registration');
  draft.directors.forEach((_, index) => {
    if (!has('ghana_card_front', index)) missing.push(`documents.ghana_card_front[${index}]`);
    if (!has('ghana_card_back', index)) missing.push(`documents.ghana_card_back[${index}]`);
  });
  if (!has('proof_of_address', null)) missing.push('documents.proof_of_address');
  return missing;
}

/** A requirement in words, for the page's list (`directors[0][phone]` -> "Director 1: phone"). */
export function requirementLabel(requirement: string): string {
  const director = /^directors\[(\d+)\]\[(\w+)\]$/.exec(requirement);
  if (director) return `Director ${Number(director[1]) + 1}: ${director[2]!.replace(/_/g, ' ')}`;
  const card = /^documents\.(ghana_card_front|ghana_card_back)\[(\d+)\]$/.exec(requirement);
  if (card) return `Director ${Number(card[2]) + 1}: ${DOCUMENT_LABELS[card[1] as DocumentKind]}`;
  if (requirement.startsWith('documents.'))
    return DOCUMENT_LABELS[requirement.slice(10) as DocumentKind] ?? requirement;
  if (requirement === 'directors') return 'At least one director or owner';
  if (requirement.startsWith('settlement_')) return `Settlement account: ${requirement.slice(11).replace(/_/g, ' ')}`;
  return FIELD_LABELS[requirement as BusinessField] ?? requirement;
}

/** The section a field path belongs to, for the reviewer's "request changes" and the page's highlights. */
export function sectionOf(field: string): ChangeableField | null {
  if (field.startsWith('directors')) return 'directors';
  if (field.startsWith('documents')) return 'documents';
  if (field.startsWith('settlement_')) return 'settlement_account';
  return (BUSINESS_FIELDS as readonly string[]).includes(field) ? (field as BusinessField) : null;
}
