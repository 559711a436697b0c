// The operator console's Statements pages: the upload form, the last import's result, the queue of credits
// that matched no payment (each with its two actions) and the list of imports.
import type { StatementLineRow } from '../../statements/model.ts';
import { collectionAccountLabel } from '../../rails/bank-transfer/accounts.ts';
import {
  COLUMN_MAPPING_LENGTH_MAX,
  IMPORT_REASON_LENGTH_MAX,
  RESOLUTION_NOTE_LENGTH_MAX,
  STATEMENT_PROBLEMS_KEPT_MAX,
} from '../../statements/model.ts';
import type {
  ImportResult,
  QueueLineWithHints,
  StatementImportRow,
  StatementsSummary,
} from '../../statements/service.ts';
import type { WebSession } from '../auth.ts';
import { html, raw, type Html } from '../html.ts';
import { csrfField, money, statusBadge, when_ } from '../layout.ts';
import { environmentBadge } from './common.ts';
import { filterSelect, listPageState, listToolbar, pagerNav, type ListQuery } from './console-list.ts';

/** "7 matched, 1 amount mismatch, ...": an import's counts in a sentence. */
export function importSummary(
  r: Pick<
    ImportResult,
    | 'file_name'
    | 'bank_code'
    | 'lines'
    | 'credits'
    | 'matched'
    | 'amount_mismatch'
    | 'unmatched'
    | 'duplicates'
    | 'errors'
  >,
): string {
  return (
    `Imported ${r.file_name} (${r.bank_code}): ${r.lines} line${r.lines === 1 ? '' : 's'}, ${r.credits} credit${r.credits === 1 ? '' : 's'}: ` +
    `${r.matched} matched, ${r.amount_mismatch} amount mismatch, ${r.unmatched} unmatched, ${r.duplicates} already imported` +
    `${r.errors ? `; ${r.errors} row${r.errors === 1 ? '' : 's'} with problems` : ''}.`
  );
}

/** The account the statement is of: the one configured collection account shown as such, a choice only when there are several. */
function accountField(accounts: StatementsSummary['accounts'], bankCode: string): Html {
  if (accounts.length === 1) {
    const [account] = accounts;
    return html`<p><strong>Collection account:</strong> ${collectionAccountLabel(account!)}</p><input type="hidden" name="bank_code" value="${account!.bankCode}">`;
  }
  return html`<label for="statement-bank">Collection account</label><select id="statement-bank" name="bank_code" required>${accounts.map((a) => html`<option value="${a.bankCode}"${raw(a.bankCode === bankCode ? ' selected' : '')}>${collectionAccountLabel(a)}</option>`)}</select>`;
}

const uploadForm = (
  session: WebSession,
  accounts: StatementsSummary['accounts'],
  bankCode: string,
  askForce: boolean,
): Html =>
  accounts.length === 0
    ? html`<section class="card" aria-label="Import a statement"><h2>Import a statement</h2><p>No collection account is configured (the BANK_TRANSFER_* settings), so there is no statement to import.</p></section>`
    : html`<form method="post" action="/ops/statements/import" enctype="multipart/form-data" class="card" aria-label="Import a statement">${csrfField(session)}
<h2>Import a statement</h2>
<p class="muted">A CSV export of the bank transfer collection account. Credits are matched to Live bank transfers by the payment reference in their narration (SK and 8 characters) and their amount. A file imported before is refused.</p>
${accountField(accounts, bankCode)}
<label for="statement-file">Statement file (CSV)</label><input id="statement-file" name="file" type="file" accept=".csv,text/csv" required>
<label for="statement-columns">Column mapping (only when the headers are not recognised)</label><input id="statement-columns" name="columns" maxlength="${COLUMN_MAPPING_LENGTH_MAX}" placeholder="date=Txn Date,credit=Amount In,description=Details" autocomplete="off">
<details${raw(askForce ? ' open' : '')}><summary>Import a file that was imported before</summary>
<label for="statement-force">Reason to import it again (kept with the import and audited)</label><input id="statement-force" name="force_reason" maxlength="${IMPORT_REASON_LENGTH_MAX}" autocomplete="off" placeholder="The bank re-issued the statement with the same content">
</details>
<p><button type="submit">Import statement</button></p></form>`;

const resultCard = (
  result: ImportResult,
): Html => html`<section class="card" aria-label="Last import"><h2>Last import</h2>
<p>${importSummary(result)}</p>
<p class="muted">Columns read: ${Object.entries(result.columns)
  .map(([field, name]) => `${field} = ${name}`)
  .join(' · ')}${result.debits ? ` · ${result.debits} debit${result.debits === 1 ? '' : 's'} left out` : ''}</p>
${result.problems.length > 0 ? html`<h3>Rows with problems</h3><ul class="list">${result.problems.slice(0, STATEMENT_PROBLEMS_KEPT_MAX).map((p) => html`<li>Line ${p.line}: ${p.message}</li>`)}</ul>` : ''}
${result.problems.length > STATEMENT_PROBLEMS_KEPT_MAX ? html`<p class="muted">And ${result.problems.length - STATEMENT_PROBLEMS_KEPT_MAX} more: fix the file or its column mapping and import it again.</p>` : ''}
<p><a href="/ops/statements/imports/${result.import_id}">See its lines</a></p></section>`;

/** A cash slip the narration quotes, and the Live bank transfers a mistyped reference was likely meant for. */
const hintsOf = (line: QueueLineWithHints): Html =>
  html`${
    line.hints.slip
      ? html`<p>This is a cash slip reference, <a href="/ops/teller?reference=${encodeURIComponent(line.hints.slip.reference)}">${line.hints.slip.reference}</a> ${environmentBadge(line.hints.slip.environment)} (${line.hints.slip.merchant_name}, ${money(line.hints.slip.amount_minor)}, ${line.hints.slip.status}): not a bank transfer.</p>`
      : ''
  }${
    line.hints.nearMatches.length > 0
      ? html`<p>Did the payer mean:</p><ul class="list">${line.hints.nearMatches.map((m) => html`<li><span><span class="mono">${m.reference}</span> ${environmentBadge('live')} · ${money(m.amount_minor)} · ${m.merchant_name} · ${m.status}</span></li>`)}</ul>`
      : ''
  }`;

const queueRow = (
  session: WebSession,
  line: QueueLineWithHints,
): Html => html`<tr><td class="nowrap">${line.value_date}<br><span class="muted">${line.bank_code} · line ${line.line_number}</span></td><td class="nowrap">${money(line.amount_minor)}</td>
<td class="wrap">${line.narration}${line.bank_reference && line.bank_reference !== line.narration ? html`<br><span class="muted mono">${line.bank_reference}</span>` : ''}</td><td class="wrap">${line.hints.slip && line.reason.startsWith('This is a cash slip reference') ? '' : line.reason}${hintsOf(line)}</td>
<td><form method="post" action="/ops/statements/lines/${line.id}/assign" class="row">${csrfField(session)}<div><label for="ref-${line.id}">Payment reference</label><input id="ref-${line.id}" name="reference" required placeholder="SK…" autocomplete="off" value="${line.payment_reference ?? line.hints.nearMatches[0]?.reference ?? ''}"></div><div><button aria-label="Apply to payment: the credit of line ${line.line_number}">Apply to payment</button></div></form>
<form method="post" action="/ops/statements/lines/${line.id}/resolve" class="row" style="margin-top:.3rem">${csrfField(session)}<div><label for="note-${line.id}">Note</label><input id="note-${line.id}" name="note" required maxlength="${RESOLUTION_NOTE_LENGTH_MAX}" placeholder="Returned to the sender on …"></div><div><button class="secondary" aria-label="Resolve the credit of line ${line.line_number}">Resolve</button></div></form></td></tr>`;

const importRow = (
  i: StatementImportRow,
): Html => html`<tr><td class="nowrap">${when_(i.created_at)}${i.finished_at ? '' : html`<br>${statusBadge('unfinished')}`}${i.voided_at ? html`<br>${statusBadge('voided')}` : ''}${i.forced_reason ? html`<br>${statusBadge('forced')}` : ''}</td><td>${i.bank_code}</td><td class="wrap"><a href="/ops/statements/imports/${i.id}">${i.file_name}</a></td><td>${i.imported_by}</td>
<td>${i.lines}</td><td>${i.credits}</td><td>${i.matched}</td><td>${i.amount_mismatch}</td><td>${i.unmatched}</td><td>${i.duplicates}</td><td>${i.errors}</td></tr>`;

export function statementsView(
  session: WebSession,
  overview: StatementsSummary & { queue: readonly QueueLineWithHints[] },
  options: { bankCode: string; result: ImportResult | null; askForce: boolean; list: ListQuery; next: string | null },
): Html {
  const { accounts, imports, queue, queueTotal } = overview;
  const { list } = options;
  const state = listPageState(list, options.next);
  const searching = list.q !== '' || Object.keys(list.filters).length > 0;
  const filters = html`${filterSelect(
    'reference',
    'Payment reference',
    [
      ['found', 'found in the line'],
      ['none', 'none found'],
    ],
    list.filters.reference,
  )}${filterSelect(
    'bank',
    'Bank',
    accounts.map((a) => [a.bankCode, a.bankCode] as const),
    list.filters.bank,
  )}`;
  return html`<h1>Bank statements</h1>
${uploadForm(session, accounts, options.bankCode, options.askForce)}
${options.result ? resultCard(options.result) : ''}
<h2 id="queue">Unmatched credits (${queueTotal}${searching ? ` matching${list.q ? ` "${list.q}"` : ' the filters'}` : ''})</h2>
<p class="muted">Money that arrived without a payment it could pay, the longest waiting first. Apply it to a payment by its reference (the exact amount pays it; another amount holds it under Review), or resolve it with a note once it is settled outside Sika (returned to the sender, not a payment).</p>
${listToolbar('/ops/statements', state, { searchLabel: 'Narration, amount or reference', placeholder: 'KOFI MENSAH, 500.00 or SK…', filters })}
<div class="table-wrap"><table aria-describedby="queue"><thead><tr><th>Date</th><th>Amount</th><th>Narration</th><th>Why</th><th><span class="muted">Actions</span></th></tr></thead><tbody>
${queue.map((line) => queueRow(session, line))}
${queue.length === 0 ? html`<tr><td colspan="5" class="muted">${searching ? 'No unmatched credit matches.' : 'Nothing is waiting.'}</td></tr>` : ''}
</tbody></table></div>
${pagerNav('/ops/statements', state)}
<h2>Imports</h2>
<div class="table-wrap"><table><thead><tr><th>When</th><th>Bank</th><th>File</th><th>By</th><th>Lines</th><th>Credits</th><th>Matched</th><th>Mismatch</th><th>Unmatched</th><th>Duplicates</th><th>Errors</th></tr></thead><tbody>
${imports.map(importRow)}
${imports.length === 0 ? html`<tr><td colspan="11" class="muted">No statement imported yet.</td></tr>` : ''}
</tbody></table></div>`;
}

/** The void form of an import whose lines are all unmatched (the service refuses any other). */
const voidForm = (session: WebSession, i: StatementImportRow, lines: readonly StatementLineRow[]): Html =>
  i.voided_at
    ? html`<p role="status"><strong>Voided</strong> ${when_(i.voided_at)} by ${i.voided_by}: ${i.void_reason}. Its lines are not in the unmatched queue or the reconciliation.</p>`
    : lines.length > 0 && lines.every((l) => l.status === 'unmatched')
      ? html`<form method="post" action="/ops/statements/imports/${i.id}/void" class="card" aria-label="Void this import">${csrfField(session)}<h2>Void this import</h2>
<p class="muted">Every credit this import recorded is still unmatched, so no money moved on any of them. Voiding takes its ${lines.length} line${lines.length === 1 ? '' : 's'} (${money(lines.reduce((sum, l) => sum + l.amount_minor, 0))}) out of the unmatched queue and the reconciliation; the file can then be imported for the right account.</p>
<label for="void-reason">Reason</label><input id="void-reason" name="reason" required maxlength="${IMPORT_REASON_LENGTH_MAX}" autocomplete="off" placeholder="Imported under the wrong bank">
<p><button type="submit" class="danger">Void import</button></p></form>`
      : html``;

export const importView = (
  session: WebSession,
  { import: i, lines }: { import: StatementImportRow; lines: readonly StatementLineRow[] },
): Html => html`<h1>Statement ${i.file_name}</h1>
<p class="muted">${i.bank_code} · imported ${when_(i.created_at)} by ${i.imported_by} · <a href="/ops/statements">Back to statements</a></p>
${i.forced_reason ? html`<p>Imported although the same file was imported before: ${i.forced_reason}</p>` : ''}
<p>${importSummary(i)}</p>
${voidForm(session, i, lines)}
${i.problems.length > 0 ? html`<h2>Rows with problems</h2><ul class="list">${i.problems.map((p) => html`<li>Line ${p.line}: ${p.message}</li>`)}</ul>` : ''}
<h2>Credits first recorded by this import</h2>
<div class="table-wrap"><table><thead><tr><th>Line</th><th>Date</th><th>Amount</th><th>Narration</th><th>Status</th><th>Payment</th><th>Note</th></tr></thead><tbody>
${lines.map((l) => html`<tr><td>${l.line_number}</td><td class="nowrap">${l.value_date}</td><td class="nowrap">${money(l.amount_minor)}</td><td class="wrap">${l.narration}</td><td>${statusBadge(l.status)}</td><td class="mono">${l.payment_reference ?? ''}${l.attempt_id ? html`<br><span class="muted">${l.attempt_id}</span>` : ''}</td><td class="wrap">${l.resolution_note ?? l.reason}</td></tr>`)}
${lines.length === 0 ? html`<tr><td colspan="7" class="muted">No new credits: every credit of this file was imported before.</td></tr>` : ''}
</tbody></table></div>`;
