// Dashboard: the Payment links pages' HTML (issue 35, item 5): the list with the New link form, and a link's page
// (its url with a Copy button, the QR code, the poster, a WhatsApp share link, Edit, Deactivate/Activate, and its
// payments with their totals). payment-links.ts reads the data and sends the pages.
import { randomBytes } from 'node:crypto';
import type { LinkSummary } from '../../checkout/payment-link-summary.ts';
import {
  LINK_LIST_STATES,
  LINK_SEARCH_LENGTH_MAX,
  type LinkListItem,
  type LinkListQuery,
} from '../../checkout/payment-links.ts';
import { csvColumn, type CsvColumn } from '../../lib/csv-columns.ts';
import {
  CUSTOM_FIELD_KEY_LENGTH_MAX,
  CUSTOM_FIELD_LABEL_LENGTH_MAX,
  CUSTOM_FIELD_TYPES,
  CUSTOM_FIELDS_MAX,
  LINK_DESCRIPTION_LENGTH_MAX,
  LINK_NAME_LENGTH_MAX,
  type PaymentLinkResponse,
} from '../../checkout/payment-link-model.ts';
import type { FieldError } from '../../lib/errors.ts';
import type { WebSession } from '../auth.ts';
import { html, raw, type Html } from '../html.ts';
import { csrfField, money, statusBadge, when_ } from '../layout.ts';
import { filterSelect, listHref } from '../ops/console-list.ts';

/** Roles that may create and change links: those that may make sessions (through keys) and refund them. */
export const LINK_EDITOR_ROLES = ['owner', 'admin', 'developer'] as const;
export const canEditLinks = (session: WebSession) => (LINK_EDITOR_ROLES as readonly string[]).includes(session.role);
export const LINK_EDITOR_REFUSAL = 'Your role cannot change payment links; ask an owner, admin or developer.';

/** A link as the pages show it: the API's answer (src/checkout/payment-links.ts). */
export type LinkView = PaymentLinkResponse;

/** The numbered rows of the New link form's custom fields (field_1_key, field_1_label, …). */
export const CUSTOM_FIELD_ROWS = Array.from({ length: CUSTOM_FIELDS_MAX }, (_, i) => i + 1);

/** What the New link form was sent with, shown again beside a refusal. */
export type LinkFormValues = Record<string, string>;

const checked = (on: boolean) => raw(on ? ' checked' : '');
const selected = (on: boolean) => raw(on ? ' selected' : '');

/** "GHS 25.00", or the range a payer chooses in. */
export const linkAmount = (link: Pick<LinkView, 'amount_minor' | 'amount_min_minor' | 'amount_max_minor'>) =>
  link.amount_minor !== null
    ? money(link.amount_minor)
    : `Payer chooses (${money(link.amount_min_minor)} to ${money(link.amount_max_minor)})`;

const paymentsOf = (link: LinkView) =>
  `${link.payments_count}${link.single_use ? ' / 1' : link.max_payments !== null ? ` / ${link.max_payments}` : ''}`;

/** The link's state as a payer meets it: inactive, past its expiry, used up (its payments all taken), or active. */
function linkState(link: LinkView, now: Date): Html {
  if (!link.active) return statusBadge('inactive');
  if (link.expires_at && new Date(link.expires_at) <= now) return statusBadge('expired');
  const limit = link.single_use ? 1 : link.max_payments;
  if (limit !== null && link.payments_count >= limit) return statusBadge('used_up');
  return statusBadge('active');
}

/** The day an expiry falls on, as the form's date input takes it (Africa/Accra is UTC all year). */
export const expiryDay = (expiresAt: string | null) => (expiresAt ? expiresAt.slice(0, 10) : '');

/** The refusal's field messages, listed beside the form. */
function fieldErrors(errors: readonly FieldError[]): Html {
  if (errors.length === 0) return html``;
  return html`<ul class="field-errors" role="alert" aria-label="What to correct" style="color:#8c1d18;margin:.3rem 0 .6rem">${errors.map((e) => html`<li><strong>${e.field}</strong>: ${e.message}</li>`)}</ul>`;
}

/** The list's address (issue 36): its search, status filter and page are the query; format=csv its export. */
export const LINKS_PATH = '/dashboard/links';

/** The states the status filter offers, in the words the badges use. */
const STATE_CHOICES = LINK_LIST_STATES.map((state) => [state, state.replace('_', ' ')] as const);

/** The query's parameters that the address keeps (empty ones left out by listHref). */
export const linkQueryParams = (query: LinkListQuery): Record<string, string | undefined> => ({
  q: query.q,
  status: query.status,
});

/** The list's CSV: exactly the rows the search and filter show, every page. */
export const LINK_CSV_COLUMNS: readonly CsvColumn<LinkListItem>[] = [
  csvColumn.text('id', (row) => row.link.id),
  csvColumn.text('name', (row) => row.link.name),
  csvColumn.text('url', (row) => row.link.url),
  csvColumn.ghs('amount_ghs', (row) => row.link.amount_minor),
  csvColumn.ghs('amount_min_ghs', (row) => (row.link.amount_minor === null ? row.link.amount_min_minor : null)),
  csvColumn.ghs('amount_max_ghs', (row) => (row.link.amount_minor === null ? row.link.amount_max_minor : null)),
  csvColumn.text('status', (row) => row.state),
  csvColumn.integer('payments_count', (row) => row.link.payments_count),
  csvColumn.ghs('collected_ghs', (row) => row.collected_minor),
  csvColumn.timestamp('created_at', (row) => row.link.created_at),
];

function linkFilterForm(query: LinkListQuery): Html {
  return html`<form method="get" action="${LINKS_PATH}" class="card row" role="search" aria-label="Search payment links">
  <div style="flex:2 1 16rem"><label for="f-q">Search</label><input id="f-q" name="q" type="search" value="${query.q ?? ''}" maxlength="${LINK_SEARCH_LENGTH_MAX}" placeholder="Name, link id, url or amount" aria-describedby="f-q-hint"><div id="f-q-hint" class="muted" style="font-size:.8rem">Part of a name, a link id or its url, or a fixed amount such as 25.00.</div></div>
  ${filterSelect('status', 'Status', STATE_CHOICES, query.status, 'f-status')}
  <div><button type="submit">Search</button> <a href="${LINKS_PATH}">Clear</a></div></form>`;
}

function linkRow(row: LinkListItem): Html {
  const l = row.link;
  // data-label: the column's name beside each value once a phone stacks the row (layout.ts, table.stack).
  return html`<tr><td data-label="Name"><div style="min-width:0;overflow-wrap:anywhere"><a href="${LINKS_PATH}/${l.id}">${l.name}</a><br><span class="muted mono">${l.id}</span></div></td><td class="money" data-label="Amount">${l.amount_minor !== null ? money(l.amount_minor) : 'Payer chooses'}</td><td class="num" data-label="Payments">${paymentsOf(l)}</td><td class="money" data-label="Collected">${money(row.collected_minor)}</td><td class="nowrap" data-label="Status">${statusBadge(row.state)}</td><td class="date" data-label="Created">${when_(new Date(l.created_at))}</td></tr>`;
}

export function linksListView(
  session: WebSession,
  list: { query: LinkListQuery; rows: readonly LinkListItem[]; next: string | null; later: boolean },
  form: { values: LinkFormValues; errors: readonly FieldError[] },
): Html {
  const params = linkQueryParams(list.query);
  const filtered = Boolean(list.query.q || list.query.status);
  return html`<h1>Payment links (${session.environment})</h1>
<p class="muted">A link is a page any payer can open to pay you: share it on WhatsApp, print its QR code, no developer needed.</p>
${linkFilterForm(list.query)}
<p class="row"><a class="button secondary" href="${listHref(LINKS_PATH, { ...params, format: 'csv' })}" download>Export CSV</a></p>
<div class="table-wrap"><table class="stack" aria-label="Payment links"><thead><tr><th scope="col">Name</th><th scope="col" class="num">Amount</th><th scope="col" class="num">Payments</th><th scope="col" class="num">Collected</th><th scope="col">Status</th><th scope="col">Created</th></tr></thead><tbody>
${list.rows.map(linkRow)}
${list.rows.length === 0 ? html`<tr><td colspan="6" class="muted">${filtered ? 'No payment links match.' : 'No payment links yet.'}</td></tr>` : ''}</tbody></table></div>
${
  list.next || list.later
    ? html`<nav aria-label="Pages" class="row" style="margin-top:.6rem">${list.later ? html`<a class="button secondary" href="${listHref(LINKS_PATH, params)}">Newest</a>` : ''}${list.next ? html`<a class="button secondary" href="${listHref(LINKS_PATH, { ...params, after: list.next })}">Next page</a>` : ''}</nav>`
    : ''
}
${canEditLinks(session) ? newLinkForm(session, form.values, form.errors) : html`<p class="muted">Only an owner, admin or developer can create payment links.</p>`}`;
}

function newLinkForm(session: WebSession, values: LinkFormValues, errors: readonly FieldError[]): Html {
  const v = (name: string) => values[name] ?? '';
  const open = v('amount_type') === 'open';
  // The form's one-time key: a second press (or a resend) of this form shows the link the first one made.
  const formKey = v('form_key') || `dash-${randomBytes(12).toString('hex')}`;
  return html`<form method="post" action="/dashboard/links" class="card" aria-label="New link">${csrfField(session)}<input type="hidden" name="form_key" value="${formKey}"><h2 style="margin-top:0">New link</h2>
${fieldErrors(errors)}
<label for="name">Name</label><input id="name" name="name" value="${v('name')}" maxlength="${LINK_NAME_LENGTH_MAX}" required placeholder="School fees, Term 1">
<label for="description">Description (optional)</label><input id="description" name="description" value="${v('description')}" maxlength="${LINK_DESCRIPTION_LENGTH_MAX}">
<fieldset class="group"><legend>Amount</legend>
<label style="font-weight:400"><input type="radio" name="amount_type" value="fixed" style="width:auto"${checked(!open)}> A fixed amount</label>
<label for="amount">Amount (GHS)</label><input id="amount" name="amount" value="${v('amount')}" inputmode="decimal" placeholder="25.00">
<label style="font-weight:400"><input type="radio" name="amount_type" value="open" style="width:auto"${checked(open)}> Let the payer choose</label>
<div class="row"><div><label for="amount_min">At least (GHS, optional)</label><input id="amount_min" name="amount_min" value="${v('amount_min')}" inputmode="decimal" placeholder="1.00"></div>
<div><label for="amount_max">At most (GHS, optional)</label><input id="amount_max" name="amount_max" value="${v('amount_max')}" inputmode="decimal"></div></div>
</fieldset>
<fieldset class="group"><legend>Custom fields (optional)</legend>
<p class="muted">What the payer must tell you, e.g. a student's name or an order number. Leave a row blank to skip it. A key is lower-case letters, digits and _.</p>
${CUSTOM_FIELD_ROWS.map(
  (
    n,
  ) => html`<div class="row" aria-label="Custom field ${n}"><div><label for="field_${n}_key">Key ${n}</label><input id="field_${n}_key" name="field_${n}_key" value="${v(`field_${n}_key`)}" maxlength="${CUSTOM_FIELD_KEY_LENGTH_MAX}" pattern="[a-z0-9_]*" ${n === 1 ? html` placeholder="student_name"` : ''} style="max-width:11rem"></div>
<div><label for="field_${n}_label">Label ${n}</label><input id="field_${n}_label" name="field_${n}_label" value="${v(`field_${n}_label`)}" maxlength="${CUSTOM_FIELD_LABEL_LENGTH_MAX}" ${n === 1 ? html` placeholder="Student's name"` : ''} style="max-width:14rem"></div>
<div><label for="field_${n}_type">Type ${n}</label><select id="field_${n}_type" name="field_${n}_type" style="max-width:8rem">${CUSTOM_FIELD_TYPES.map((type) => html`<option value="${type}"${selected(v(`field_${n}_type`) === type)}>${type}</option>`)}</select></div>
<div><label style="font-weight:400;margin-bottom:.6rem"><input type="checkbox" name="field_${n}_required" value="on" style="width:auto"${checked(v(`field_${n}_required`) === 'on')}> Required</label></div></div>`,
)}
</fieldset>
<fieldset class="group"><legend>Limits (optional)</legend>
<label style="font-weight:400"><input type="checkbox" name="single_use" value="on" style="width:auto"${checked(v('single_use') === 'on')}> Single use: the link takes one payment</label>
<div class="row"><div><label for="max_payments">Most payments</label><input id="max_payments" name="max_payments" value="${v('max_payments')}" inputmode="numeric" pattern="[0-9]*" style="max-width:10rem"></div>
<div><label for="expires">Expires on (end of the day, Accra time)</label><input id="expires" name="expires" type="date" value="${v('expires')}" style="max-width:12rem"></div></div>
<label for="redirect_url">After paying, send the payer to (optional)</label><input id="redirect_url" name="redirect_url" type="url" value="${v('redirect_url')}" placeholder="https://example.com/thanks">
</fieldset>
<p><button type="submit">Create link</button></p></form>`;
}

/** The Copy button appears only with JavaScript; without it the url stays selectable in its field. */
const COPY_SCRIPT = raw(
  `<script>(function(){var b=document.getElementById('copy-url'),u=document.getElementById('link-url');if(!b||!u||!navigator.clipboard)return;b.hidden=false;b.addEventListener('click',function(){navigator.clipboard.writeText(u.value).then(function(){b.textContent='Copied';});});})();</script>`,
);

export function linkView(
  session: WebSession,
  link: LinkView,
  slugPath: string,
  summary: LinkSummary,
  now: Date,
  errors: readonly FieldError[] = [],
): Html {
  const editable = canEditLinks(session);
  const share = `https://wa.me/?text=${encodeURIComponent(`${link.name} ${link.url}`)}`;
  const { totals } = summary;
  return html`<p><a href="/dashboard/links">← Payment links</a></p>
<h1>${link.name} ${linkState(link, now)}</h1>
${link.description ? html`<p>${link.description}</p>` : ''}
<section class="card" aria-label="Share"><h2 style="margin-top:0">Share</h2>
<label for="link-url">Link</label>
<div class="row"><input id="link-url" value="${link.url}" readonly class="mono" onfocus="this.select()" style="max-width:34rem"><button type="button" id="copy-url" class="secondary" hidden>Copy</button></div>
${COPY_SCRIPT}
<div style="display:flex;flex-wrap:wrap;gap:1rem;align-items:center;margin-top:1rem">
<img src="${slugPath}/qr.svg" alt="QR code of ${link.url}" width="180" height="180" style="border:1px solid #d9dde3;border-radius:6px;background:#fff">
<p style="display:flex;flex-wrap:wrap;gap:.5rem"><a class="button secondary" href="${slugPath}/qr.png" download="${link.id}-qr.png">Download QR (PNG)</a>
<a class="button secondary" href="${slugPath}/poster.pdf">Poster (PDF)</a>
<a class="button secondary" href="${share}" rel="noopener noreferrer" target="_blank">Share on WhatsApp</a></p></div></section>
<section class="card" aria-label="Details"><h2 style="margin-top:0">Details</h2><div class="grid">
<div class="stat"><div class="label">Amount</div><div class="value">${link.amount_minor !== null ? money(link.amount_minor) : 'Payer chooses'}</div>${link.amount_minor === null ? html`<div class="muted">${money(link.amount_min_minor)} to ${money(link.amount_max_minor)}</div>` : ''}</div>
<div class="stat"><div class="label">Payments</div><div class="value">${paymentsOf(link)}</div>${link.single_use ? html`<div class="muted">single use</div>` : ''}</div>
<div class="stat"><div class="label">Expires</div><div class="value">${link.expires_at ? when_(new Date(link.expires_at)) : 'Never'}</div></div>
<div class="stat"><div class="label">Created</div><div class="value">${when_(new Date(link.created_at))}</div></div></div>
${link.custom_fields.length ? html`<p>Custom fields: ${link.custom_fields.map((f, i) => html`${i ? ', ' : ''}<strong>${f.label}</strong> <span class="muted">(${f.key}, ${f.type}${f.required ? ', required' : ''})</span>`)}</p>` : ''}
<p class="muted mono">${link.id}</p></section>
${editable ? editForms(session, link, errors) : html`<p class="muted">Only an owner, admin or developer can change payment links.</p>`}
<h2>Payments</h2>
<section class="card" aria-label="Totals"><div class="grid">
<div class="stat"><div class="label">Successful payments</div><div class="value" id="succeeded-count">${totals.succeeded_count}</div></div>
<div class="stat"><div class="label">Collected</div><div class="value" id="succeeded-sum">${money(totals.succeeded_minor)}</div></div>
<div class="stat"><div class="label">Refunded</div><div class="value" id="refunded-sum">${money(totals.refunded_minor)}</div></div></div></section>
<div class="table-wrap"><table><thead><tr><th>Session</th><th>Payer</th><th class="num">Amount</th><th>Status</th><th>Details</th><th>Receipt</th><th>Created</th></tr></thead><tbody>
${summary.payments.map((p) => html`<tr><td class="mono"><a href="/dashboard/sessions/${p.id}">${p.id}</a></td><td class="wrap">${p.customer_name ?? ''}</td><td class="num">${money(p.amount_minor)}${p.refunded_minor > 0 ? html`<br><span class="muted">refunded ${money(p.refunded_minor)}</span>` : ''}</td><td>${statusBadge(p.status)}</td><td class="wrap">${Object.entries(p.custom_fields).map(([key, value]) => html`<div><span class="muted">${labelOf(link, key)}:</span> ${value}</div>`)}</td><td class="mono">${p.receipt_number ?? ''}</td><td class="date">${when_(p.created_at)}</td></tr>`)}
${summary.payments.length === 0 ? html`<tr><td colspan="7" class="muted">No payments yet.</td></tr>` : ''}</tbody></table></div>
<p class="muted">${summary.has_more ? `The newest ${summary.payments.length} of ${totals.sessions_count} sessions are listed; the totals count them all. ` : ''}<a href="/dashboard/sessions?link=${link.id}">Payments</a> filters, searches and exports every one.</p>`;
}

const labelOf = (link: LinkView, key: string) => link.custom_fields.find((f) => f.key === key)?.label ?? key;

function editForms(session: WebSession, link: LinkView, errors: readonly FieldError[]): Html {
  return html`<form method="post" action="/dashboard/links/${link.id}" class="card" aria-label="Edit link">${csrfField(session)}<h2 style="margin-top:0">Edit</h2>
${fieldErrors(errors)}
<label for="name">Name</label><input id="name" name="name" value="${link.name}" maxlength="${LINK_NAME_LENGTH_MAX}" required>
<label for="description">Description</label><input id="description" name="description" value="${link.description ?? ''}" maxlength="${LINK_DESCRIPTION_LENGTH_MAX}">
<label for="expires">Expires on (end of the day, Accra time; empty for never)</label><input id="expires" name="expires" type="date" value="${expiryDay(link.expires_at)}" style="max-width:12rem">
<p><button type="submit">Save</button></p></form>
<form method="post" action="/dashboard/links/${link.id}/active" class="card" aria-label="${link.active ? 'Deactivate' : 'Activate'}">${csrfField(session)}
<p>${link.active ? 'Payers can open this link. Deactivate it to stop new payments (payments already started still finish).' : 'This link is inactive: payers see that it no longer takes payments.'}</p>
<input type="hidden" name="active" value="${link.active ? 'off' : 'on'}">
<button type="submit"${raw(link.active ? ' class="danger"' : '')}>${link.active ? 'Deactivate' : 'Activate'}</button></form>`;
}
