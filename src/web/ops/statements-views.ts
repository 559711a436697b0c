// The operator console's Statements pages: the upload form, the last import's result, the queue of credits
// that matched no payment (each with its two actions) and the list of imports.
import type { StatementLineRow } from '../../statements/model.ts';
import { COLUMN_MAPPING_LENGTH_MAX, RESOLUTION_NOTE_LENGTH_MAX, STATEMENT_PROBLEMS_KEPT_MAX } from '../../statements/model.ts';
import type { ImportResult, QueueLineRow, StatementImportRow, StatementsOverview } from '../../statements/service.ts';
import type { WebSession } from '../auth.ts';
import { CONSOLE_TEXT_LENGTH_MAX } from '../console-schemas.ts';
import { html, raw, type Html } from '../html.ts';
import { csrfField, money, statusBadge, when_ } from '../layout.ts';

/** "7 matched, 1 amount mismatch, ...": an import's counts in a sentence. */
export function importSummary(r: Pick<ImportResult, 'file_name' | 'bank_code' | 'lines' | 'credits' | 'matched' | 'amount_mismatch' | 'unmatched' | 'duplicates' | 'errors'>): string {
  return (
    `Imported ${r.file_name} (${r.bank_code}): ${r.lines} line${r.lines === 1 ? '' : 's'}, ${r.credits} credit${r.credits === 1 ? '' : 's'}: ` +
    `${r.matched} matched, ${r.amount_mismatch} amount mismatch, ${r.unmatched} unmatched, ${r.duplicates} already imported` +
    `${r.errors ? `; ${r.errors} row${r.errors === 1 ? '' : 's'} with problems` : ''}.`
  );
}

const uploadForm = (session: WebSession, banks: StatementsOverview['banks'], bankCode: string): Html => html`<form method="post" action="/ops/statements/import" enctype="multipart/form-data" class="card" aria-label="Import a statement">${csrfField(session)}
<h2>Import a statement</h2>
<p class="muted">A CSV export of the bank transfer collection account. Credits are matched to Live bank transfers by the payment reference in their narration (SK and 8 characters) and their amount; importing the same statement again changes nothing.</p>
<label for="statement-file">Statement file (CSV)</label><input id="statement-file" name="file" type="file" accept=".csv,text/csv" required>
<label for="statement-bank">Bank</label><select id="statement-bank" name="bank_code" required>${banks.map((b) => html`<option value="${b.code}"${raw(b.code === bankCode ? ' selected' : '')}>${b.name} (${b.code})${b.active ? '' : ' (inactive)'}</option>`)}</select>
<label for="statement-columns">Column mapping (only when the headers are not recognised)</label><input id="statement-columns" name="columns" maxlength="${COLUMN_MAPPING_LENGTH_MAX}" placeholder="date=Txn Date,credit=Amount In,description=Details" autocomplete="off">
<p><button type="submit">Import statement</button></p></form>`;

const resultCard = (result: ImportResult): Html => html`<section class="card" aria-label="Last import"><h2>Last import</h2>
<p>${importSummary(result)}</p>
<p class="muted">Columns read: ${Object.entries(result.columns).map(([field, name]) => `${field} = ${name}`).join(' · ')}${result.debits ? ` · ${result.debits} debit${result.debits === 1 ? '' : 's'} left out` : ''}</p>
${result.problems.length > 0 ? html`<h3>Rows with problems</h3><ul class="list">${result.problems.slice(0, STATEMENT_PROBLEMS_KEPT_MAX).map((p) => html`<li>Line ${p.line}: ${p.message}</li>`)}</ul>` : ''}
${result.problems.length > STATEMENT_PROBLEMS_KEPT_MAX ? html`<p class="muted">And ${result.problems.length - STATEMENT_PROBLEMS_KEPT_MAX} more: fix the file or its column mapping and import it again.</p>` : ''}
<p><a href="/ops/statements/imports/${result.import_id}">See its lines</a></p></section>`;

const queueRow = (session: WebSession, line: QueueLineRow): Html => html`<tr><td class="nowrap">${line.value_date}<br><span class="muted">${line.bank_code} · line ${line.line_number}</span></td><td class="nowrap">${money(line.amount_minor)}</td>
<td class="wrap">${line.narration}${line.bank_reference && line.bank_reference !== line.narration ? html`<br><span class="muted mono">${line.bank_reference}</span>` : ''}</td><td class="wrap">${line.reason}</td>
<td><form method="post" action="/ops/statements/lines/${line.id}/assign" class="row">${csrfField(session)}<div><label for="ref-${line.id}">Payment reference</label><input id="ref-${line.id}" name="reference" required placeholder="SK…" autocomplete="off" value="${line.payment_reference ?? ''}"></div><div><button aria-label="Apply the credit of line ${line.line_number} to this payment">Apply to payment</button></div></form>
<form method="post" action="/ops/statements/lines/${line.id}/resolve" class="row" style="margin-top:.3rem">${csrfField(session)}<div><label for="note-${line.id}">Note</label><input id="note-${line.id}" name="note" required maxlength="${RESOLUTION_NOTE_LENGTH_MAX}" placeholder="Returned to the sender on …"></div><div><button class="secondary" aria-label="Resolve the credit of line ${line.line_number}">Resolve</button></div></form></td></tr>`;

const importRow = (i: StatementImportRow): Html => html`<tr><td class="nowrap">${when_(i.created_at)}${i.finished_at ? '' : html`<br>${statusBadge('unfinished')}`}</td><td>${i.bank_code}</td><td class="wrap"><a href="/ops/statements/imports/${i.id}">${i.file_name}</a></td><td>${i.imported_by}</td>
<td>${i.lines}</td><td>${i.credits}</td><td>${i.matched}</td><td>${i.amount_mismatch}</td><td>${i.unmatched}</td><td>${i.duplicates}</td><td>${i.errors}</td></tr>`;

export function statementsView(session: WebSession, overview: StatementsOverview, options: { bankCode: string; result: ImportResult | null }): Html {
  const { banks, imports, queue, queueTotal, search } = overview;
  return html`<h1>Bank statements</h1>
${uploadForm(session, banks, options.bankCode)}
${options.result ? resultCard(options.result) : ''}
<h2 id="queue">Unmatched credits (${queueTotal}${search ? ` matching "${search}"` : ''})</h2>
<p class="muted">Money that arrived without a payment it could pay. Apply it to a payment by its reference (the exact amount pays it; another amount holds it under Review), or resolve it with a note once it is settled outside Sika (returned to the sender, not a payment).</p>
<form method="get" action="/ops/statements" class="row" role="search" aria-label="Search the unmatched credits"><div><label for="queue-search">Narration, amount or reference</label><input id="queue-search" name="q" value="${search}" maxlength="${CONSOLE_TEXT_LENGTH_MAX}" placeholder="KOFI MENSAH, 500.00 or SK…"></div><div><button class="secondary">Search</button></div>${search ? html`<div><a href="/ops/statements">Show all</a></div>` : ''}</form>
<div class="table-wrap"><table aria-describedby="queue"><thead><tr><th>Date</th><th>Amount</th><th>Narration</th><th>Why</th><th><span class="muted">Actions</span></th></tr></thead><tbody>
${queue.map((line) => queueRow(session, line))}
${queue.length === 0 ? html`<tr><td colspan="5" class="muted">${search ? 'No unmatched credit matches.' : 'Nothing is waiting.'}</td></tr>` : ''}
</tbody></table></div>
${queueTotal > queue.length ? html`<p class="muted">The ${queue.length} waiting longest are shown; search to find the others.</p>` : ''}
<h2>Imports</h2>
<div class="table-wrap"><table><thead><tr><th>When</th><th>Bank</th><th>File</th><th>By</th><th>Lines</th><th>Credits</th><th>Matched</th><th>Mismatch</th><th>Unmatched</th><th>Duplicates</th><th>Errors</th></tr></thead><tbody>
${imports.map(importRow)}
${imports.length === 0 ? html`<tr><td colspan="11" class="muted">No statement imported yet.</td></tr>` : ''}
</tbody></table></div>`;
}

export const importView = ({ import: i, lines }: { import: StatementImportRow; lines: readonly StatementLineRow[] }): Html => html`<h1>Statement ${i.file_name}</h1>
<p class="muted">${i.bank_code} · imported ${when_(i.created_at)} by ${i.imported_by} · <a href="/ops/statements">Back to statements</a></p>
<p>${importSummary(i)}</p>
${i.problems.length > 0 ? html`<h2>Rows with problems</h2><ul class="list">${i.problems.map((p) => html`<li>Line ${p.line}: ${p.message}</li>`)}</ul>` : ''}
<h2>Credits first recorded by this import</h2>
<div class="table-wrap"><table><thead><tr><th>Line</th><th>Date</th><th>Amount</th><th>Narration</th><th>Status</th><th>Payment</th><th>Note</th></tr></thead><tbody>
${lines.map((l) => html`<tr><td>${l.line_number}</td><td class="nowrap">${l.value_date}</td><td class="nowrap">${money(l.amount_minor)}</td><td class="wrap">${l.narration}</td><td>${statusBadge(l.status)}</td><td class="mono">${l.payment_reference ?? ''}${l.attempt_id ? html`<br><span class="muted">${l.attempt_id}</span>` : ''}</td><td class="wrap">${l.resolution_note ?? l.reason}</td></tr>`)}
${lines.length === 0 ? html`<tr><td colspan="7" class="muted">No new credits: every credit of this file was imported before.</td></tr>` : ''}
</tbody></table></div>`;
