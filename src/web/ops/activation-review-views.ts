// The Go-Live review's page bodies: the queue, and one application with its documents inline, its automatic
// checks and (for compliance operators, while it is under review) the three decisions.
import type { ApplicationReview, QueueRow } from '../../accounts/activation-application.ts';
import {
  CHANGEABLE_FIELDS,
  CHANGEABLE_LABELS,
  requirementLabel,
  type ChangeableField,
} from '../../accounts/activation-fields.ts';
import type { WebSession } from '../auth.ts';
import {
  ACTIVATION_CSS,
  applicationSummary,
  documentName,
  nameEnquiryNote,
  statusBanner,
} from '../dashboard/activation-views.ts';
import { html, type Html } from '../html.ts';
import { csrfField, statusBadge, when_ } from '../layout.ts';

/** The checkbox naming a field the merchant must change. */
export const changeFieldName = (field: ChangeableField): string => `change_${field}`;

const matchBadge = (matched: boolean | null) =>
  matched === true
    ? html`<span class="badge ok">name matches</span>`
    : matched === false
      ? html`<span class="badge bad">name mismatch</span>`
      : html`<span class="badge warn">not known</span>`;

export function queueView(session: WebSession, rows: readonly QueueRow[]): Html {
  return html`<h1>Go-Live review</h1>
<p class="muted">Applications waiting for a decision, oldest first. ${session.role === 'compliance' ? 'You decide them.' : 'Only compliance operators decide; you can read them.'}</p>
<div class="table-wrap"><table><thead><tr><th>Submitted</th><th>Merchant</th><th>Legal name</th><th>Settlement account</th></tr></thead><tbody>
${rows.map(
  (r) =>
    html`<tr><td>${when_(r.submitted_at)}</td><td><a href="/ops/activation/${r.merchant_id}">${r.merchant_name}</a></td><td>${r.legal_name ?? ''}</td><td>${matchBadge(r.name_matched)}</td></tr>`,
)}
${rows.length === 0 ? html`<tr><td colspan="4" class="muted">Nothing is waiting.</td></tr>` : ''}
</tbody></table></div>`;
}

function checksView(review: ApplicationReview): Html {
  const { checks, application } = review;
  const ok = (good: boolean, label: string) => html`<span class="badge ${good ? 'ok' : 'bad'}">${label}</span>`;
  return html`<section class="card" aria-labelledby="checks-h"><h2 id="checks-h">Automatic checks</h2>
<h3>Formats</h3>
${
  checks.formatProblems.length === 0 && checks.missing.length === 0
    ? html`<p>${ok(true, 'passed')} Every field is given and valid.</p>`
    : html`<p>${ok(false, 'failed')}</p><ul>${checks.formatProblems.map((p) => html`<li>${p.message}</li>`)}${checks.missing.map((m) => html`<li>Missing: ${requirementLabel(m)}</li>`)}</ul>`
}
<h3>Settlement account name</h3>
<p>${
    checks.nameMatch === 'matched'
      ? ok(true, 'passed')
      : checks.nameMatch === 'mismatch'
        ? ok(false, 'failed')
        : html`<span class="badge warn">${checks.nameMatch === 'not_checked' ? 'not checked' : 'not known'}</span>`
  }</p>${nameEnquiryNote(application)}
<h3>Duplicates across merchants</h3>
${
  checks.duplicates.length === 0
    ? html`<p>${ok(true, 'passed')} No other merchant's application names these Ghana Card PINs or this settlement account.</p>`
    : html`<p>${ok(false, 'failed')}</p><ul>${checks.duplicates.map(
        (d) =>
          html`<li>${d.what === 'ghana_card_pin' ? 'Ghana Card PIN' : 'Settlement account'} <span class="mono">${d.value}</span> is also in <a href="/ops/activation/${d.merchant_id}">${d.merchant_name}</a>'s application (${d.activation_status.replace(/_/g, ' ')})</li>`,
      )}</ul>`
}</section>`;
}

function documentsView(review: ApplicationReview): Html {
  const { documents } = review.application;
  if (documents.length === 0)
    return html`<section class="card"><h2>Documents</h2><p class="muted">None uploaded.</p></section>`;
  return html`<section class="card" aria-labelledby="docs-h"><h2 id="docs-h">Documents</h2>
${documents.map((d) => {
  const url = `/ops/activation/documents/${d.id}`;
  const name = documentName(d.kind, d.director_index);
  return html`<figure style="margin:0 0 1rem"><figcaption><strong>${name}</strong> <span class="muted">${d.content_type}, ${Math.ceil(d.size / 1024)} KB, uploaded ${when_(d.uploaded_at)}, SHA-256 <span class="mono">${d.sha256.slice(0, 16)}…</span></span> <a href="${url}" target="_blank" rel="noopener">Open</a></figcaption>
${
  d.content_type === 'application/pdf'
    ? html`<iframe src="${url}" title="${name}" style="width:100%;height:32rem;border:1px solid #d9dde3;border-radius:6px"></iframe>`
    : html`<img src="${url}" alt="${name}" style="max-width:100%;max-height:32rem;border:1px solid #d9dde3;border-radius:6px">`
}</figure>`;
})}</section>`;
}

function decisionForms(session: WebSession, review: ApplicationReview): Html {
  const action = `/ops/activation/${review.application.merchantId}/decision`;
  return html`<section class="card" aria-labelledby="decide-h"><h2 id="decide-h">Decision</h2>
<form method="post" action="${action}" class="card" aria-label="Approve">${csrfField(session)}<input type="hidden" name="decision" value="approve">
<h3>Approve</h3><p class="muted">Live opens for the merchant; the owner is e-mailed.</p>
<label for="approve-code">Code from your authenticator app</label><input id="approve-code" name="code" autocomplete="one-time-code" inputmode="numeric" required>
<p><button type="submit">Approve</button></p></form>
<form method="post" action="${action}" class="card" aria-label="Request changes">${csrfField(session)}<input type="hidden" name="decision" value="request_changes">
<h3>Request changes</h3><fieldset class="group"><legend>What must change</legend>
${CHANGEABLE_FIELDS.map(
  // A box of its own name each: the console takes one value per field, and a list only without gaps.
  (f) =>
    html`<label style="font-weight:400"><input type="checkbox" name="${changeFieldName(f)}" value="on" style="width:auto"> ${CHANGEABLE_LABELS[f]}</label>`,
)}</fieldset>
<label for="changes-reason">Message to the merchant</label><textarea id="changes-reason" name="reason" rows="3" maxlength="2000" required></textarea>
<p><button type="submit" class="secondary">Request changes</button></p></form>
<form method="post" action="${action}" class="card" aria-label="Reject">${csrfField(session)}<input type="hidden" name="decision" value="reject">
<h3>Reject</h3><label for="reject-reason">Reason (shown to the merchant)</label><textarea id="reject-reason" name="reason" rows="3" maxlength="2000" required></textarea>
<p><button type="submit" class="danger">Reject</button></p></form></section>`;
}

export function reviewView(session: WebSession, review: ApplicationReview, canDecide: boolean): Html {
  const { application, merchant } = review;
  return html`${ACTIVATION_CSS}<p><a href="/ops/activation">← Go-Live review</a></p>
<h1>${merchant.name} ${statusBadge(application.status)}</h1>
<p class="muted">Owner ${merchant.email}. ${application.submittedAt ? `Submitted ${when_(application.submittedAt)}.` : 'Not submitted.'} ${application.decidedAt ? `Last decided ${when_(application.decidedAt)} by ${application.decidedBy ?? ''}.` : ''}</p>
${application.status === 'under_review' ? '' : statusBanner(application)}
${checksView(review)}
${applicationSummary(application.draft, { highlight: application.status === 'changes_requested' ? application.changesRequestedFields : [] })}
${documentsView(review)}
${
  application.status !== 'under_review'
    ? ''
    : canDecide
      ? decisionForms(session, review)
      : html`<p class="muted">Only compliance operators decide Go-Live applications.</p>`
}`;
}
