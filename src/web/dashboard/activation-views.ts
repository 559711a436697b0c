// The Go-Live application's page bodies (issue 33): the form while the merchant may change it (with each
// refused field's message beside it and the reviewer's requested fields highlighted), the application read-only
// while under review or decided, and its documents. The operators' review page shows the same summary.
import type { ApplicationDocument, ApplicationView } from '../../accounts/activation-application.ts';
import {
  ADDRESS_LENGTH_MAX,
  BUSINESS_TYPES,
  BUSINESS_TYPE_LABELS,
  CHANGEABLE_LABELS,
  DIRECTOR_FIELDS,
  DOCUMENT_KINDS,
  DOCUMENT_LABELS,
  FIELD_LABELS,
  NAME_LENGTH_MAX,
  PRODUCTS_LENGTH_MAX,
  VOLUME_BANDS,
  VOLUME_BAND_LABELS,
  WEBSITE_LENGTH_MAX,
  directorFieldName,
  draftAsInput,
  isCardSide,
  registers,
  requirementLabel,
  sectionOf,
  settlementFieldName,
  type ApplicationDraft,
  type BusinessField,
  type ChangeableField,
  type DirectorField,
  type DocumentKind,
  type DraftInput,
  type FieldProblem,
} from '../../accounts/activation-fields.ts';
import { MOMO_NETWORKS, NETWORK_LABELS } from '../../lib/ghana.ts';
import type { WebSession } from '../auth.ts';
import { html, raw, type Html } from '../html.ts';
import { csrfField, statusBadge, when_ } from '../layout.ts';

export const ACTIVATION_CSS = raw(`<style>
.field-error{color:#8c1d18;font-weight:600;margin:.2rem 0 0}.requested{border-left:4px solid #b3261e;padding-left:.6rem}
.requested-note{color:#8c1d18;font-size:.85rem;font-weight:600}dl.summary{display:grid;grid-template-columns:minmax(9rem,14rem) 1fr;gap:.3rem .8rem;margin:0}
dl.summary dt{font-weight:600;color:#4a5360}dl.summary dd{margin:0;overflow-wrap:anywhere}fieldset.director{border:1px solid #d9dde3;border-radius:8px;margin:.8rem 0;padding:.6rem .8rem;min-width:0}
@media (max-width:600px){dl.summary{grid-template-columns:1fr}}
</style>`);

export interface Bank {
  name: string;
  code: string;
}

/** A page's extras after a form: the posted values to show again, each refused field's message, rows to add. */
export interface FormState {
  values: DraftInput;
  problems: FieldProblem[];
  extraDirectorRows: number;
}

const STATUS_WORDS: Record<string, string> = {
  not_submitted: 'Not submitted',
  under_review: 'Under review',
  changes_requested: 'Changes requested',
  approved: 'Approved',
  rejected: 'Not approved',
};

const text = (value: unknown): string => (typeof value === 'string' ? value : '');
const idOf = (name: string) => `f-${name.replace(/[[\]]+/g, '-').replace(/-+$/, '')}`;

/** The banner over the application: what its status means and what to do next. */
export function statusBanner(view: ApplicationView): Html {
  switch (view.status) {
    case 'under_review':
      return html`<div class="card" role="status"><h2>Under review</h2><p>You submitted your application ${view.submittedAt ? `on ${when_(view.submittedAt)}` : ''}. Our compliance team is reviewing it; we e-mail you when it is decided. Test keeps working meanwhile.</p></div>`;
    case 'changes_requested':
      return html`<div class="card requested" role="alert"><h2>Changes requested</h2><p>${view.decisionReason ?? ''}</p>
<p>Please change: ${view.changesRequestedFields.map((f, i) => html`${i > 0 ? ', ' : ''}<strong>${CHANGEABLE_LABELS[f]}</strong>`)}. Then choose <strong>Resubmit</strong>.</p></div>`;
    case 'rejected':
      return html`<div class="card" role="alert"><h2>Your application was not approved</h2><p>Reason: ${view.decisionReason ?? 'not given'}</p><p class="muted">Test keeps working. Reply to our e-mail if you think this is a mistake.</p></div>`;
    case 'approved':
      return html`<div class="card" role="status"><h2>Live is open</h2><p>Your business is verified: you can take real payments. Create your Live API key on the <a href="/dashboard/developers">Developers page</a> (switch to Live first; the key is shown once).</p></div>`;
    default:
      return html`<p>Tell us about your business to take real payments in Live. Save a draft at any time; submit when every part is filled. Test works meanwhile.</p>`;
  }
}

/** The application, read-only: the business, directors, settlement account (the review shows the same). */
export function applicationSummary(
  draft: ApplicationDraft,
  options: { highlight?: readonly ChangeableField[] } = {},
): Html {
  const highlight = new Set(options.highlight ?? []);
  const row = (label: string, value: unknown, field?: ChangeableField) =>
    html`<dt${raw(field && highlight.has(field) ? ' class="requested"' : '')}>${label}</dt><dd>${value === undefined || value === '' ? html`<span class="muted">not given</span>` : value}</dd>`;
  const business = (field: BusinessField) => {
    const value = draft[field];
    const shown =
      field === 'business_type' && value
        ? BUSINESS_TYPE_LABELS[value as keyof typeof BUSINESS_TYPE_LABELS]
        : field === 'monthly_volume_band' && value
          ? VOLUME_BAND_LABELS[value as keyof typeof VOLUME_BAND_LABELS]
          : value;
    return row(FIELD_LABELS[field], shown, field);
  };
  const s = draft.settlement;
  return html`<section class="card" aria-labelledby="sum-business"><h2 id="sum-business">Business</h2><dl class="summary">
${(Object.keys(FIELD_LABELS) as BusinessField[]).map(business)}</dl></section>
<section class="card${highlight.has('directors') ? ' requested' : ''}" aria-labelledby="sum-directors"><h2 id="sum-directors">Directors and owners of 25% or more</h2>
${draft.directors.length === 0 ? html`<p class="muted">None listed.</p>` : ''}
${draft.directors.map(
  (d, i) =>
    html`<h3>Director ${i + 1}</h3><dl class="summary">${row('Full name', d.full_name)}${row('Ghana Card PIN', d.ghana_card_pin ? html`<span class="mono">${d.ghana_card_pin}</span>` : undefined)}${row('Date of birth', d.date_of_birth)}${row('Phone', d.phone)}</dl>`,
)}</section>
<section class="card${highlight.has('settlement_account') ? ' requested' : ''}" aria-labelledby="sum-settlement"><h2 id="sum-settlement">Settlement account</h2><dl class="summary">
${row('Type', s.type === 'bank' ? 'Bank account' : s.type === 'momo' ? 'Mobile Money wallet' : undefined)}
${s.type === 'momo' ? row('Network', s.network ? NETWORK_LABELS[s.network] : undefined) : row('Bank code', s.bank_code)}
${row(s.type === 'momo' ? 'Wallet number' : 'Account number', s.account_number ? html`<span class="mono">${s.account_number}</span>` : undefined)}
${row('Account name as entered', s.account_name)}</dl></section>`;
}

/** The name enquiry's result for the merchant: what the provider holds and whether it matched. */
export function nameEnquiryNote(view: ApplicationView): Html {
  const e = view.nameEnquiry;
  if (!e) return html`<p class="muted">The account is checked with its bank or network when it is complete.</p>`;
  const source = e.source === 'test_simulator' ? ' (Test simulator: no Live provider is configured)' : '';
  if (e.outcome === 'rejected')
    return html`<p class="field-error">The account check failed: ${e.reason?.replace(/_/g, ' ') ?? 'not found'}${source}. Check the account details.</p>`;
  if (e.outcome === 'unavailable')
    return html`<p class="muted">The account could not be checked just now${source}; it is checked again when you save.</p>`;
  if (view.nameMatched === true)
    return html`<p><span class="badge ok">Name matches</span> The account is held by ${e.resolved_name ?? ''}, which matches ${e.matched_name ?? ''}${source}.</p>`;
  if (view.nameMatched === false)
    return html`<p><span class="badge bad">Name does not match</span> The account is held by "${e.resolved_name ?? ''}", which matches neither the legal name nor a director${source}. You may still submit; the review will ask about it.</p>`;
  return html`<p class="muted">The provider confirmed the account but does not tell its holder's name${source}.</p>`;
}

export function documentsList(documents: readonly ApplicationDocument[], urlOf: (id: string) => string): Html {
  if (documents.length === 0) return html`<p class="muted">No documents uploaded yet.</p>`;
  return html`<ul class="list">${documents.map(
    (d) =>
      html`<li><span>${documentName(d.kind, d.director_index)}</span> <a href="${urlOf(d.id)}" target="_blank" rel="noopener">${d.filename ?? d.id}</a> <span class="muted">${d.content_type}, ${Math.ceil(d.size / 1024)} KB, ${when_(d.uploaded_at)}</span></li>`,
  )}</ul>`;
}

export const documentName = (kind: DocumentKind, directorIndex: number | null): string =>
  directorIndex === null ? DOCUMENT_LABELS[kind] : `Director ${directorIndex + 1}: ${DOCUMENT_LABELS[kind]}`;

/** The whole page body: banner, what is missing, the form (or the read-only application) and the documents. */
export function activationView(
  session: WebSession,
  view: ApplicationView,
  banks: readonly Bank[],
  state: FormState | null,
): Html {
  const editable = view.status === 'not_submitted' || view.status === 'changes_requested';
  const missing = editable && view.requirements.length > 0 && view.requirements[0] !== 'activation_application';
  return html`${ACTIVATION_CSS}<h1>Activate your account ${statusBadge(STATUS_WORDS[view.status] ?? view.status)}</h1>
${statusBanner(view)}
${
  missing
    ? html`<section class="card" aria-labelledby="missing-h"><h2 id="missing-h">Still to fill in</h2><ul>${view.requirements.map((r) => html`<li>${requirementLabel(r)}</li>`)}</ul></section>`
    : ''
}
${editable ? applicationForm(session, view, banks, state) : applicationSummary(view.draft)}
${editable ? '' : html`<section class="card"><h2>Settlement account check</h2>${nameEnquiryNote(view)}</section>`}
<section class="card${view.changesRequestedFields.includes('documents') && editable ? ' requested' : ''}" aria-labelledby="docs-h"><h2 id="docs-h">Documents</h2>
<p class="muted">PDF, PNG or JPEG, at most 5 MB each. The type is read from the file itself.</p>
${documentsList(view.documents, (id) => `/dashboard/activation/document?id=${encodeURIComponent(id)}`)}
${editable ? uploadForms(session, view) : ''}</section>`;
}

function applicationForm(
  session: WebSession,
  view: ApplicationView,
  banks: readonly Bank[],
  state: FormState | null,
): Html {
  const values = state?.values ?? draftAsInput(view.draft);
  const problems = state?.problems ?? [];
  const requested = new Set(view.status === 'changes_requested' ? view.changesRequestedFields : []);
  const problemOf = (name: string) => problems.find((p) => p.field === name)?.message;
  const requestedNote = (field: ChangeableField) =>
    requested.has(field) ? html`<span class="requested-note">The reviewer asked you to change this.</span>` : '';
  /** One labelled input: its message below when refused, highlighted when the reviewer named it. */
  const input = (name: string, label: string, control: (id: string, describedBy: string) => Html, hint?: string) => {
    const id = idOf(name);
    const problem = problemOf(name);
    const section = sectionOf(name);
    const describedBy = [hint ? `${id}-hint` : '', problem ? `${id}-err` : ''].filter(Boolean).join(' ');
    return html`<div${raw(section && requested.has(section) && !name.startsWith('directors') && !name.startsWith('settlement') ? ' class="requested"' : '')}><label for="${id}">${label}</label>
${hint ? html`<p class="muted" id="${id}-hint" style="margin:0 0 .2rem">${hint}</p>` : ''}${control(id, describedBy)}
${problem ? html`<p class="field-error" id="${id}-err">${problem}</p>` : ''}${section && !name.startsWith('directors') && !name.startsWith('settlement') ? requestedNote(section) : ''}</div>`;
  };
  const attrs = (name: string, describedBy: string) =>
    raw(`${describedBy ? ` aria-describedby="${describedBy}"` : ''}${problemOf(name) ? ' aria-invalid="true"' : ''}`);
  const textInput = (name: string, label: string, max: number, hint?: string, type = 'text') =>
    input(
      name,
      label,
      (id, d) =>
        html`<input id="${id}" name="${name}" type="${type}" maxlength="${max}" value="${text(values[name])}"${attrs(name, d)}>`,
      hint,
    );
  const select = (name: string, label: string, options: readonly [string, string][], hint?: string) =>
    input(
      name,
      label,
      (id, d) =>
        html`<select id="${id}" name="${name}"${attrs(name, d)}><option value="">Choose…</option>${options.map(
          ([value, shown]) =>
            html`<option value="${value}"${raw(text(values[name]) === value ? ' selected' : '')}>${shown}</option>`,
        )}</select>`,
      hint,
    );
  const rows = Array.isArray(values.directors) ? (values.directors as Record<string, unknown>[]) : [];
  const rowCount = Math.max(1, rows.length + (state?.extraDirectorRows ?? 0));
  const directorLabels: Record<DirectorField, [string, number, string?, string?]> = {
    full_name: ['Full name', NAME_LENGTH_MAX, 'As on the Ghana Card.'],
    ghana_card_pin: ['Ghana Card PIN', 20, 'GHA-, 9 digits, a dash and 1 digit, e.g. GHA-123456789-0.'],
    date_of_birth: ['Date of birth', 10, 'YYYY-MM-DD; directors must be 18 or older.', 'date'],
    phone: ['Phone', 20, 'A Ghana number, e.g. 024 123 4567.', 'tel'],
  };
  const settlementType = text(values[settlementFieldName('type')]);
  return html`<form method="post" action="/dashboard/activation" novalidate aria-label="Go-Live application">${csrfField(session)}
<button type="submit" name="action" value="save" tabindex="-1" aria-hidden="true" style="position:absolute;left:-9999px">Save draft</button>
<section class="card" aria-labelledby="business-h"><h2 id="business-h">Your business</h2>
${select(
  'business_type',
  FIELD_LABELS.business_type,
  BUSINESS_TYPES.map((t) => [t, BUSINESS_TYPE_LABELS[t]] as [string, string]),
)}
${textInput('legal_name', FIELD_LABELS.legal_name, NAME_LENGTH_MAX, 'As registered with the Registrar-General (or your full name, for a sole proprietor).')}
${textInput('trading_name', `${FIELD_LABELS.trading_name} (optional)`, NAME_LENGTH_MAX, 'The name your customers know, if different.')}
${textInput('registration_number', FIELD_LABELS.registration_number, 20, `${registers(view.draft.business_type) ? '' : 'Not needed for government bodies. '}E.g. CS123456789 for a company, BN123456789 for a business name.`)}
${textInput('tin', FIELD_LABELS.tin, 20, "An organisation's TIN is a letter and 10 digits (C0012345678); a sole proprietor's is their Ghana Card PIN.")}
${textInput('address', FIELD_LABELS.address, ADDRESS_LENGTH_MAX, 'Street, area and town.')}
${textInput('digital_address', FIELD_LABELS.digital_address, 12, 'E.g. GA-183-8164.')}
${textInput('phone', FIELD_LABELS.phone, 20, 'E.g. 030 123 4567 or 024 123 4567.', 'tel')}
${textInput('website', FIELD_LABELS.website, WEBSITE_LENGTH_MAX, 'https://… or a social handle such as @mybusiness.')}
${input('products', FIELD_LABELS.products, (id, d) => html`<textarea id="${id}" name="products" maxlength="${PRODUCTS_LENGTH_MAX}" rows="3"${attrs('products', d)}>${text(values.products)}</textarea>`)}
${select(
  'monthly_volume_band',
  FIELD_LABELS.monthly_volume_band,
  VOLUME_BANDS.map((b) => [b, VOLUME_BAND_LABELS[b]] as [string, string]),
)}
</section>
<section class="card${requested.has('directors') ? ' requested' : ''}" aria-labelledby="directors-h"><h2 id="directors-h">Directors and owners of 25% or more</h2>${requestedNote('directors')}
<p class="muted">Everyone who directs the business or owns 25% or more of it. Upload each one's Ghana Card below once saved.</p>
${problemOf('directors') ? html`<p class="field-error">${problemOf('directors')}</p>` : ''}
${Array.from({ length: rowCount }, (_, i) => {
  const row = rows[i] ?? {};
  return html`<fieldset class="director"><legend>Director ${i + 1}</legend>
${DIRECTOR_FIELDS.map((field) => {
  const name = directorFieldName(i, field);
  const [label, max, hint, type] = directorLabels[field];
  return input(
    name,
    label,
    (id, d) =>
      html`<input id="${id}" name="${name}" type="${type ?? 'text'}" maxlength="${max}" value="${text(row[field])}"${attrs(name, d)}>`,
    hint,
  );
})}
<p><button type="submit" name="remove_director" value="${i}" class="secondary" aria-label="Remove director ${i + 1}">Remove</button></p></fieldset>`;
})}
<p><button type="submit" name="action" value="add_director" class="secondary">Add a director</button></p></section>
<section class="card${requested.has('settlement_account') ? ' requested' : ''}" aria-labelledby="settlement-h"><h2 id="settlement-h">Settlement account</h2>${requestedNote('settlement_account')}
<p class="muted">Where your Live money is paid. We check the name it is held in with the bank or network; it should be the business's or a director's.</p>
${select(settlementFieldName('type'), 'Account type', [
  ['bank', 'Bank account'],
  ['momo', 'Mobile Money wallet'],
])}
${select(
  settlementFieldName('bank_code'),
  'Bank (for a bank account)',
  banks.map((b) => [b.code, b.name] as [string, string]),
)}
${select(
  settlementFieldName('network'),
  'Network (for a wallet)',
  MOMO_NETWORKS.map((n) => [n, NETWORK_LABELS[n]] as [string, string]),
)}
${textInput(settlementFieldName('account_number'), settlementType === 'momo' ? 'Wallet number' : 'Account or wallet number', 24, 'A bank account number, or the wallet’s phone number.')}
${textInput(settlementFieldName('account_name'), 'Account name', NAME_LENGTH_MAX, 'The name the account is held in.')}
${nameEnquiryNote(view)}</section>
<p class="row"><button type="submit" name="action" value="save" class="secondary">Save draft</button>
<button type="submit" name="action" value="submit">${view.status === 'changes_requested' ? 'Resubmit' : 'Submit for review'}</button></p>
</form>`;
}

function uploadForms(session: WebSession, view: ApplicationView): Html {
  const slots: { kind: DocumentKind; director: number | null }[] = [];
  for (const kind of DOCUMENT_KINDS) {
    if (isCardSide(kind)) continue;
    if (kind === 'certificate_of_registration' && !registers(view.draft.business_type)) continue;
    slots.push({ kind, director: null });
  }
  view.draft.directors.forEach((_, i) => {
    slots.push({ kind: 'ghana_card_front', director: i }, { kind: 'ghana_card_back', director: i });
  });
  return html`<h3>Upload</h3>${slots.map(({ kind, director }) => {
    const id = `doc-${kind}-${director ?? 'x'}`;
    const uploaded = view.documents.some((d) => d.kind === kind && d.director_index === director);
    return html`<form method="post" action="/dashboard/activation/documents" enctype="multipart/form-data" class="row" aria-label="Upload ${documentName(kind, director)}">${csrfField(session)}
<input type="hidden" name="kind" value="${kind}">${director === null ? '' : html`<input type="hidden" name="director_index" value="${director}">`}
<div><label for="${id}">${documentName(kind, director)}${uploaded ? ' (replace)' : ''}</label><input id="${id}" name="file" type="file" accept="application/pdf,image/png,image/jpeg" required></div>
<div><button type="submit" class="secondary">Upload</button></div></form>`;
  })}`;
}
