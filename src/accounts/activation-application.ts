// The Go-Live application's use cases (issue 33): the merchant saves a draft, uploads documents and submits;
// a compliance operator reads the queue and decides. The status moves only through changeActivation
// (activation.ts: locked, checked against the table, audited, announced and e-mailed); this module keeps what
// the merchant typed and what the reviewer decided. The settlement account's name enquiry is a provider call:
// it is handed in (src/accounts does not import the rails) and made before any transaction opens.
import { createHash } from 'node:crypto';
import type { Actor } from '../audit/log.ts';
import type { Db, Queryable } from '../db/index.ts';
import { sniffContentType } from '../lib/file-types.ts';
import { SikaError, errors } from '../lib/errors.ts';
import { newId } from '../lib/ids.ts';
import { changeActivation } from './activation.ts';
import type { ActivationStatus } from './activation-model.ts';
import { findActivation } from './activation-store.ts';
import {
  CHANGEABLE_FIELDS,
  DIRECTORS_MAX,
  DOCUMENT_BYTES_MAX,
  DOCUMENT_FILENAME_LENGTH_MAX,
  DOCUMENT_KINDS,
  applicationRequirements,
  checkDraft,
  draftAsInput,
  draftOf,
  isCardSide,
  settlementComplete,
  type ApplicationDraft,
  type ChangeableField,
  type DocumentKind,
  type DraftInput,
  type FieldProblem,
  type SettlementAccount,
} from './activation-fields.ts';
import * as store from './activation-application-store.ts';

export type { DuplicateRow, QueueRow } from './activation-application-store.ts';

/** What the settlement account's name enquiry found, as stored with the application (name_enquiry_result). */
export interface NameEnquiryResult {
  /** live_provider: a configured Live provider asked; test_simulator: no Live provider pays there (Test, development). */
  source: 'live_provider' | 'test_simulator';
  provider: string | null;
  /** resolved: the provider knows the account; rejected: it does not (reason); unavailable: no answer. */
  outcome: 'resolved' | 'rejected' | 'unavailable';
  /** The name the provider holds, when it tells. */
  resolved_name: string | null;
  reason: string | null;
  /** Which name matched it (the legal name or a director's), if any. */
  matched_name: string | null;
  /** The account and names it was asked for: a later save with the same ones does not ask again. */
  account: string;
  names: string;
  checked_at: string;
}

/**
 * Asks the provider (or the Test simulator) who holds the settlement account and whether that name matches one
 * of `names` (namesMatch). Called outside any transaction. `matched` null: the provider does not tell the name.
 */
export type SettlementNameEnquiry = (
  account: Required<Pick<SettlementAccount, 'type' | 'account_number' | 'account_name'>> & SettlementAccount,
  names: readonly string[],
) => Promise<{ result: Omit<NameEnquiryResult, 'account' | 'names' | 'checked_at'>; matched: boolean | null }>;

/** The statuses in which the merchant may change the application. */
const EDITABLE: readonly ActivationStatus[] = ['not_submitted', 'changes_requested'];
/** The most applications the review queue shows at once. */
export const REVIEW_QUEUE_ROWS = 200;
export const DECISION_REASON_LENGTH_MAX = 2_000;

const accountKey = (s: SettlementAccount) => `${s.type}:${s.bank_code ?? s.network ?? ''}:${s.account_number ?? ''}`;
/** The names the settlement account may be held in: the business's legal name or any director's. */
const holderNames = (draft: ApplicationDraft): string[] =>
  [draft.legal_name, ...draft.directors.map((d) => d.full_name)].filter((n): n is string => !!n);

export interface ApplicationDocument {
  id: string;
  kind: DocumentKind;
  director_index: number | null;
  content_type: string;
  filename: string | null;
  size: number;
  sha256: string;
  uploaded_at: Date;
}

export interface ApplicationView {
  merchantId: string;
  status: ActivationStatus;
  draft: ApplicationDraft;
  documents: ApplicationDocument[];
  /** What is still missing before it can be submitted (activation-fields.ts applicationRequirements). */
  requirements: string[];
  nameEnquiry: NameEnquiryResult | null;
  nameMatched: boolean | null;
  updatedAt: Date | null;
  submittedAt: Date | null;
  decidedAt: Date | null;
  decidedBy: string | null;
  decisionReason: string | null;
  changesRequestedFields: ChangeableField[];
}

function viewOf(
  merchantId: string,
  status: ActivationStatus,
  row: store.ApplicationRow | null,
  documents: store.DocumentRow[],
): ApplicationView {
  const draft = draftOf(row?.draft);
  const requested = Array.isArray(row?.changes_requested_fields) ? (row.changes_requested_fields as string[]) : [];
  return {
    merchantId,
    status,
    draft,
    documents: documents.map(({ merchant_id: _, ...d }) => d),
    requirements: applicationRequirements(draft, documents),
    nameEnquiry: (row?.name_enquiry_result as NameEnquiryResult | null) ?? null,
    nameMatched: row?.name_matched ?? null,
    updatedAt: row?.updated_at ?? null,
    submittedAt: row?.submitted_at ?? null,
    decidedAt: row?.decided_at ?? null,
    decidedBy: row?.decided_by ?? null,
    decisionReason: row?.decision_reason ?? null,
    changesRequestedFields: requested.filter((f): f is ChangeableField =>
      (CHANGEABLE_FIELDS as readonly string[]).includes(f),
    ),
  };
}

/** The merchant's application as it stands (an empty draft before the first save). NOT_FOUND for no such merchant. */
export async function applicationOf(db: Queryable, merchantId: string): Promise<ApplicationView> {
  const merchant = await findActivation(db, merchantId);
  if (!merchant) throw errors.notFound('Merchant');
  const [row, documents] = await Promise.all([
    store.findApplication(db, merchantId),
    store.listDocuments(db, merchantId),
  ]);
  return viewOf(merchantId, merchant.activation_status, row, documents);
}

const notEditable = (status: ActivationStatus) =>
  new SikaError(
    'ACTIVATION_DECIDED',
    status === 'under_review'
      ? 'Your application is under review; it cannot be changed until the review asks for changes.'
      : `Your application is ${status.replace(/_/g, ' ')}; it cannot be changed.`,
  );

export type SaveOutcome =
  | { saved: false; problems: FieldProblem[] }
  | { saved: true; submitted: boolean; missing: string[]; view: ApplicationView };

/**
 * Saves the posted form as the draft and, with `submit`, submits it. A field that fails its check refuses the
 * save (nothing stored; the problems say why, per field). The settlement account's name enquiry runs first,
 * outside any transaction, when the account or the names changed since the last one. A submission with
 * something missing saves the draft and answers what is missing; a complete one moves the activation to
 * under_review. ACTIVATION_DECIDED while the application is under review or decided.
 */
export async function saveApplication(
  db: Db,
  input: {
    merchantId: string;
    form: DraftInput;
    submit: boolean;
    actor: Actor;
    nameEnquiry: SettlementNameEnquiry;
    /** Drop this director's row (and their Ghana Card sides) with the save. */
    removeDirector?: number | null;
  },
): Promise<SaveOutcome> {
  const { draft, problems } = checkDraft(input.form);
  if (problems.length > 0) return { saved: false, problems };
  const removing = input.removeDirector ?? null;
  if (removing !== null && removing >= 0 && removing < draft.directors.length) draft.directors.splice(removing, 1);
  const before = await applicationOf(db, input.merchantId);
  if (!EDITABLE.includes(before.status)) throw notEditable(before.status);

  // The provider call, before any transaction: only for a complete account, and only when something changed.
  const names = holderNames(draft);
  let enquiry: { result: NameEnquiryResult; matched: boolean | null } | null = null;
  if (settlementComplete(draft.settlement)) {
    const account = accountKey(draft.settlement);
    const previous = before.nameEnquiry;
    if (
      previous &&
      previous.account === account &&
      previous.names === names.join('|') &&
      previous.outcome !== 'unavailable'
    )
      enquiry = { result: previous, matched: before.nameMatched };
    else {
      const asked = await input.nameEnquiry(draft.settlement as Parameters<SettlementNameEnquiry>[0], names);
      enquiry = {
        result: { ...asked.result, account, names: names.join('|'), checked_at: new Date().toISOString() },
        matched: asked.matched,
      };
    }
  }

  return db.transaction(async (tx) => {
    await store.lockApplication(tx, input.merchantId);
    const merchant = await findActivation(tx, input.merchantId);
    if (!merchant) throw errors.notFound('Merchant');
    if (!EDITABLE.includes(merchant.activation_status)) throw notEditable(merchant.activation_status);
    await store.saveDraft(tx, input.merchantId, draft, enquiry);
    if (removing !== null && removing >= 0 && removing < DIRECTORS_MAX)
      await store.dropDirectorDocuments(tx, input.merchantId, removing);
    const documents = await store.listDocuments(tx, input.merchantId);
    const missing = applicationRequirements(draft, documents);
    let status = merchant.activation_status;
    if (input.submit && missing.length === 0) {
      await changeActivation(tx, {
        merchantId: input.merchantId,
        to: 'under_review',
        actor: input.actor,
        expectedFrom: merchant.activation_status,
      });
      await store.markSubmitted(tx, input.merchantId);
      status = 'under_review';
    }
    const row = await store.findApplication(tx, input.merchantId);
    return {
      saved: true as const,
      submitted: input.submit && missing.length === 0,
      missing,
      view: viewOf(input.merchantId, status, row, documents),
    };
  });
}

/**
 * Stores one document (replacing the earlier one of its kind, and director): PDF, PNG or JPEG judged by the
 * bytes, never the name, at most DOCUMENT_BYTES_MAX. PAYLOAD_TOO_LARGE, UNSUPPORTED_MEDIA_TYPE or
 * INVALID_ARGUMENT with a message for the page; ACTIVATION_DECIDED while it cannot be changed.
 */
export async function uploadDocument(
  db: Db,
  input: { merchantId: string; kind: string; directorIndex: number | null; data: Buffer; filename: string | null },
): Promise<ApplicationDocument> {
  if (!(DOCUMENT_KINDS as readonly string[]).includes(input.kind))
    throw errors.invalidArgument('Choose which document this is.');
  const kind = input.kind as DocumentKind;
  if (input.data.length === 0) throw errors.invalidArgument('The file is empty: choose the document to upload.');
  if (input.data.length > DOCUMENT_BYTES_MAX) throw new SikaError('PAYLOAD_TOO_LARGE', documentTooLargeMessage);
  const contentType = sniffContentType(input.data);
  if (!contentType)
    throw new SikaError(
      'UNSUPPORTED_MEDIA_TYPE',
      `${input.filename ? `"${input.filename.slice(0, 80)}" is not` : 'The file is not'} a PDF, PNG or JPEG file (judged by what is inside it, not its name). Scan or photograph the document and upload it as PDF, PNG or JPEG.`,
    );
  return db.transaction(async (tx) => {
    const merchant = await findActivation(tx, input.merchantId);
    if (!merchant) throw errors.notFound('Merchant');
    await store.lockApplication(tx, input.merchantId);
    if (!EDITABLE.includes(merchant.activation_status)) throw notEditable(merchant.activation_status);
    const draft = draftOf((await store.findApplication(tx, input.merchantId))?.draft);
    let directorIndex: number | null = null;
    if (isCardSide(kind)) {
      const index = input.directorIndex;
      if (index === null || !Number.isSafeInteger(index) || index < 0 || index >= draft.directors.length)
        throw errors.invalidArgument('Save the director first, then upload their Ghana Card.');
      directorIndex = index;
    }
    const id = newId('kdoc');
    const document = {
      id,
      merchant_id: input.merchantId,
      kind,
      director_index: directorIndex,
      content_type: contentType,
      sha256: createHash('sha256').update(input.data).digest('hex'),
      filename: input.filename?.slice(0, DOCUMENT_FILENAME_LENGTH_MAX) ?? null,
    };
    await store.replaceDocument(tx, { ...document, data: input.data });
    await store.touchApplication(tx, input.merchantId);
    return { ...document, size: input.data.length, uploaded_at: new Date() };
  });
}

/** The refusal of a file over the limit, wherever it is caught (here, or the upload parser before the route). */
export const documentTooLargeMessage = `The file is larger than ${DOCUMENT_BYTES_MAX / (1024 * 1024)} MB, the most a document may be. Scan it at a lower resolution or as a smaller PDF, and upload it again.`;

/**
 * A document with its bytes: the merchant's own (merchantId given), or any (an operator's review). null when
 * there is none (or it is another merchant's).
 */
export async function documentFile(
  db: Queryable,
  documentId: string,
  merchantId: string | null,
): Promise<(ApplicationDocument & { data: Buffer }) | null> {
  const row = await store.findDocument(db, documentId);
  if (!row || (merchantId !== null && row.merchant_id !== merchantId)) return null;
  const { merchant_id: _, data, ...document } = row;
  return { ...document, data: Buffer.from(data) };
}

// ---- the operators' review ----

export const reviewQueue = (db: Queryable) => store.listUnderReview(db, REVIEW_QUEUE_ROWS);

export interface AutomaticChecks {
  /** Fields of the stored draft that fail their check now (empty: every format is valid). */
  formatProblems: FieldProblem[];
  missing: string[];
  /** The settlement account's name enquiry: matched, mismatched (a failed check), or not known. */
  nameMatch: 'matched' | 'mismatch' | 'unknown' | 'not_checked';
  /** Other merchants' applications with one of these Ghana Card PINs or the same settlement account. */
  duplicates: store.DuplicateRow[];
}

/** An application as the reviewer sees it, with its automatic checks; NOT_FOUND for no such merchant. */
export interface ApplicationReview {
  application: ApplicationView;
  merchant: { name: string; email: string };
  checks: AutomaticChecks;
}

export async function applicationReview(db: Queryable, merchantId: string): Promise<ApplicationReview> {
  const merchant = await findActivation(db, merchantId);
  if (!merchant) throw errors.notFound('Merchant');
  const application = await applicationOf(db, merchantId);
  const { draft } = application;
  const pins = draft.directors.map((d) => d.ghana_card_pin).filter((p): p is string => !!p);
  const s = draft.settlement;
  const account =
    s.type && s.account_number && (s.bank_code || s.network)
      ? { type: s.type, institution: (s.bank_code ?? s.network)!, number: s.account_number }
      : null;
  const duplicates = await store.findDuplicates(db, merchantId, pins, account);
  const nameMatch =
    application.nameEnquiry === null
      ? 'not_checked'
      : application.nameMatched === true
        ? 'matched'
        : application.nameMatched === false
          ? 'mismatch'
          : 'unknown';
  return {
    application,
    merchant: { name: merchant.name, email: merchant.email },
    checks: {
      formatProblems: checkDraft(draftAsInput(draft)).problems,
      missing: application.requirements,
      nameMatch,
      duplicates,
    },
  };
}

export const DECISIONS = ['approve', 'reject', 'request_changes'] as const;
export type Decision = (typeof DECISIONS)[number];
/** The operator role that decides Go-Live applications. */
export const COMPLIANCE_ROLE = 'compliance';

/**
 * A compliance operator's decision on an application under review (the caller has checked the second factor
 * for an approval). Through changeActivation with expectedFrom under_review: of two operators deciding at once,
 * one wins and the other gets ACTIVATION_DECIDED. FORBIDDEN for another role; INVALID_ARGUMENT for a rejection
 * without a reason or a request for changes without fields and a message.
 */
export async function decideApplication(
  db: Db,
  input: {
    merchantId: string;
    decision: Decision;
    actor: Actor;
    operatorRole: string;
    reason?: string | null;
    fields?: readonly string[];
  },
): Promise<ActivationStatus> {
  if (input.operatorRole !== COMPLIANCE_ROLE)
    throw new SikaError('FORBIDDEN', 'Only compliance operators decide Go-Live applications.');
  const reason = input.reason?.trim() || null;
  if (reason && reason.length > DECISION_REASON_LENGTH_MAX)
    throw errors.invalidArgument(`The message must be at most ${DECISION_REASON_LENGTH_MAX} characters.`);
  const fields = [...new Set(input.fields ?? [])];
  if (fields.some((f) => !(CHANGEABLE_FIELDS as readonly string[]).includes(f)))
    throw errors.invalidArgument('Choose the fields to change from the list.');
  if (input.decision === 'reject' && !reason)
    throw errors.invalidArgument('Give the reason for the rejection: the merchant sees it.');
  if (input.decision === 'request_changes' && (fields.length === 0 || !reason))
    throw errors.invalidArgument('Choose what the merchant must change and write them a message.');
  const to: ActivationStatus =
    input.decision === 'approve' ? 'approved' : input.decision === 'reject' ? 'rejected' : 'changes_requested';
  return db.transaction(async (tx) => {
    await changeActivation(tx, {
      merchantId: input.merchantId,
      to,
      actor: input.actor,
      reason,
      expectedFrom: 'under_review',
    });
    await store.lockApplication(tx, input.merchantId);
    await store.recordDecision(tx, input.merchantId, {
      decidedBy: input.actor.email ?? input.actor.id,
      reason,
      changesRequestedFields: input.decision === 'request_changes' ? fields : [],
    });
    return to;
  });
}
