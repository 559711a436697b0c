// Dashboard: the Payment links pages' HTML (issue 35, item 5): the list with the New link form, and a link's page
// (its url with a Copy button, the QR code, the poster, a WhatsApp share link, Edit, Deactivate/Activate, and its
// payments with their totals). payment-links.ts reads the data and sends the pages.
import type { LinkSummary } from '../../checkout/payment-link-summary.ts';
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

export function linksListView(
  session: WebSession,
  links: readonly LinkView[],
  hasMore: boolean,
  form: { values: LinkFormValues; errors: readonly FieldError[] },
  now: Date,
): Html {
  return html`<h1>Payment links (${session.environment})</h1>
<p class="muted">A link is a page any payer can open to pay you: share it on WhatsApp, print its QR code, no developer needed.</p>
<div class="table-wrap"><table><thead><tr><th>Name</th><th class="num">Amount</th><th>Payments</th><th>State</th><th>Created</th></tr></thead><tbody>
${links.map((l) => html`<tr><td class="wrap"><a href="/dashboard/links/${l.id}">${l.name}</a><br><span class="muted mono">${l.id}</span></td><td class="num">${l.amount_minor !== null ? money(l.amount_minor) : 'Payer chooses'}</td><td>${paymentsOf(l)}</td><td class="nowrap">${linkState(l, now)}</td><td class="date">${when_(new Date(l.created_at))}</td></tr>`)}
${links.length === 0 ? html`<tr><td colspan="5" class="muted">No payment links yet.</td></tr>` : ''}</tbody></table></div>
${hasMore ? html`<p class="muted">Only the newest links are listed.</p>` : ''}
${canEditLinks(session) ? newLinkForm(session, form.values, form.errors) : html`<p class="muted">Only an owner, admin or developer can create payment links.</p>`}`;
}

function newLinkForm(session: WebSession, values: LinkFormValues, errors: readonly FieldError[]): Html {
  const v = (name: string) => values[name] ?? '';
  const open = v('amount_type') === 'open';
  return html`<form method="post" action="/dashboard/links" class="card" aria-label="New link">${csrfField(session)}<h2 style="margin-top:0">New link</h2>
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
${summary.has_more ? html`<p class="muted">The newest ${summary.payments.length} of ${totals.sessions_count} sessions are listed; the totals count them all. <a href="/dashboard/sessions">Checkout</a> and the exports have every one.</p>` : ''}`;
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
