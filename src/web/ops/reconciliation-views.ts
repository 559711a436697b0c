// The Reconciliation page's body (/ops/reconciliation): the provider and day form, both sides' totals, the
// differences with the ids of the objects involved, then what matched (or, without a provider report,
// Sika's records as they stand).
import {
  amountText,
  noRecordsEitherSide,
  PROVIDER_LABELS,
  RECONCILIATION_PROVIDERS,
  type Difference,
  type DifferenceKind,
  type Matched,
  type ReconciliationProvider,
  type Reconciliation,
  type SideTotals,
  type SikaRecord,
  type StatementLine,
  type AccountTotals,
} from '../../reconciliation/model.ts';
import type { ReportedTransaction } from '../../rails/reports.ts';
import { html, raw, type Html } from '../html.ts';
import { money, statusBadge, when_ } from '../layout.ts';

const KIND_LABELS: Record<'report' | 'statement', Record<DifferenceKind, string>> = {
  report: {
    missing_at_provider: "In Sika, not in the provider's report",
    missing_in_sika: "In the provider's report, not in Sika",
    status_differs: 'Status differs',
    amount_differs: 'Amount differs',
    other_day: 'Recorded on another day',
  },
  statement: {
    missing_at_provider: 'Paid in Sika, no statement line',
    missing_in_sika: 'Statement credit matched to no payment',
    status_differs: 'Status differs',
    amount_differs: 'Amount differs',
    other_day: 'Recorded on another day',
  },
};

export function reconciliationForm(provider: ReconciliationProvider | null, day: string): Html {
  return html`<form method="get" action="/ops/reconciliation" class="card row" aria-label="Provider and day">
<div><label for="rec-provider">Provider</label><select id="rec-provider" name="provider">${RECONCILIATION_PROVIDERS.map((p) => html`<option value="${p}"${raw(p === provider ? ' selected' : '')}>${PROVIDER_LABELS[p]}</option>`)}</select></div>
<div><label for="rec-day">Day (Africa/Accra)</label><input id="rec-day" name="day" type="date" value="${day}" required></div>
<div><button type="submit">Reconcile</button></div></form>`;
}

const totalsCard = (
  title: string,
  totals: SideTotals,
  payouts: boolean,
): Html => html`<div class="card stat" aria-label="${title}"><div class="label">${title}</div>
<div class="value" data-total="collections">${money(totals.collections.amountMinor)}</div><div class="muted">${totals.collections.count} collection${totals.collections.count === 1 ? '' : 's'}</div>
${payouts ? html`<div class="value" data-total="payouts">${money(totals.payouts.amountMinor)}</div><div class="muted">${totals.payouts.count} payout${totals.payouts.count === 1 ? '' : 's'}</div>` : ''}</div>`;

/** One collection account's statement credits of the day. */
const accountCard = (
  account: AccountTotals,
): Html => html`<div class="card stat" aria-label="Statement credits, ${account.label}"><div class="label">Statement credits, ${account.label}</div>
<div class="value" data-total="collections">${money(account.totals.amountMinor)}</div><div class="muted">${account.totals.count} credit${account.totals.count === 1 ? '' : 's'}</div></div>`;

const sikaCell = (record: SikaRecord | null): Html =>
  record
    ? html`<span class="mono">${record.id}</span><br>${statusBadge(record.status)} ${amountText(record.amountMinor, record.currency)}<br><span class="muted">${record.merchantName}${record.paidAt ? html` · ${when_(record.paidAt)}` : ''}</span>`
    : html`<span class="muted">none</span>`;

const providerCell = (item: ReportedTransaction | null, lineId?: string): Html =>
  item
    ? html`${item.providerId ? html`<span class="mono">${item.providerId}</span><br>` : ''}<span class="badge">${item.rawStatus}</span> ${amountText(item.amountMinor, item.currency)}${item.settledAt ? html`<br><span class="muted">${when_(item.settledAt)}</span>` : ''}`
    : lineId
      ? html`statement line <span class="mono">${lineId}</span>`
      : html`<span class="muted">none</span>`;

function differencesTable(r: Reconciliation, labels: Record<DifferenceKind, string>): Html {
  return html`<h2 id="differences">Differences (${r.differences.length})</h2>
<div class="table-wrap"><table aria-describedby="differences"><thead><tr><th>Difference</th><th>Reference</th><th>Sika</th><th>${r.side.state === 'statement' ? 'Statement' : 'Provider'}</th><th>Why</th></tr></thead><tbody>
${r.differences.map((d: Difference) => html`<tr data-kind="${d.kind}"><td>${labels[d.kind]}</td><td class="mono wrap">${d.reference}</td><td>${sikaCell(d.sika)}</td><td>${providerCell(d.provider, d.lineId)}</td><td class="wrap">${d.note}</td></tr>`)}
${r.differences.length === 0 ? html`<tr><td colspan="5" class="muted">${noRecordsEitherSide(r) ? 'No records on either side for this day.' : 'No differences: every record on both sides matched.'}</td></tr>` : ''}
</tbody></table></div>`;
}

const matchedTable = (matched: readonly Matched[]): Html => html`<h2 id="matched">Matched (${matched.length})</h2>
<div class="table-wrap"><table aria-describedby="matched"><thead><tr><th>Sika</th><th>Kind</th><th>Reference</th><th>Provider</th></tr></thead><tbody>
${matched.map((m) => html`<tr><td>${sikaCell(m.sika)}</td><td>${m.sika.kind}</td><td class="mono wrap">${m.sika.reference}</td><td>${providerCell(m.provider, m.lineId)}</td></tr>`)}
${matched.length === 0 ? html`<tr><td colspan="4" class="muted">Nothing matched.</td></tr>` : ''}
</tbody></table></div>`;

const recordsTable = (
  records: readonly SikaRecord[],
): Html => html`<h2 id="records">Sika's records (${records.length})</h2>
<div class="table-wrap"><table aria-describedby="records"><thead><tr><th>Sika</th><th>Kind</th><th>Reference</th><th>Last status check</th></tr></thead><tbody>
${records.map((r) => html`<tr><td>${sikaCell(r)}</td><td>${r.kind}</td><td class="mono wrap">${r.reference}</td><td>${r.lastCheck ? html`<span class="badge">${r.lastCheck.rawStatus}</span><br><span class="muted">${r.lastCheck.checks} check${r.lastCheck.checks === 1 ? '' : 's'} · ${when_(r.lastCheck.at)}</span>` : html`<span class="muted">none</span>`}</td></tr>`)}
${records.length === 0 ? html`<tr><td colspan="4" class="muted">No Live records paid this day.</td></tr>` : ''}
</tbody></table></div>`;

const linesTable = (
  lines: readonly StatementLine[],
): Html => html`<h2 id="lines">Statement lines of the day (${lines.length})</h2>
<div class="table-wrap"><table aria-describedby="lines"><thead><tr><th>Line</th><th>Amount</th><th>Narration</th><th>Status</th><th>Payment</th><th>Note</th></tr></thead><tbody>
${lines.map((l) => html`<tr><td class="mono">${l.id}<br><span class="muted">${l.bankCode} · line ${l.lineNumber}</span></td><td class="nowrap">${money(l.amountMinor)}</td><td class="wrap">${l.narration}</td><td>${statusBadge(l.status)}</td><td class="mono">${l.paymentReference ?? ''}${l.attemptId ? html`<br><span class="muted">${l.attemptId}</span>` : ''}</td><td class="wrap">${l.note}</td></tr>`)}
${lines.length === 0 ? html`<tr><td colspan="6" class="muted">No statement line has this value date: import the day's statement first.</td></tr>` : ''}
</tbody></table></div>`;

export function reconciliationView(r: Reconciliation): Html {
  const label = PROVIDER_LABELS[r.provider];
  const payouts = r.provider !== 'bank_transfer';
  const side = r.side;
  const sideBody = (() => {
    switch (side.state) {
      case 'report':
        return totalsCard(`${label} reported`, side.totals, payouts);
      case 'statement':
        return html`${side.accounts.map((account) => accountCard(account))}${side.accounts.length === 0 ? html`<div class="card" role="status"><strong>No collection account is configured</strong> (the BANK_TRANSFER_* settings): no statement line is counted.</div>` : ''}`;
      case 'unavailable':
        return html`<div class="card" role="alert" data-report="unavailable"><strong>Provider report unavailable.</strong> ${label} could not be read in full: ${side.reason}. Nothing is claimed to match; try again later.</div>`;
      case 'not_configured':
        return html`<div class="card" role="status" data-report="not_configured"><strong>No provider report.</strong> ${side.reason}</div>`;
      case 'no_report':
        return html`<div class="card" role="status" data-report="none"><strong>No provider report.</strong> ${side.reason}</div>`;
    }
  })();
  const compared = side.state === 'report' || side.state === 'statement';
  return html`<h1>Reconciliation: ${label}, ${r.day.day}</h1>
${reconciliationForm(r.provider, r.day.day)}
<p class="muted">Africa/Accra day ${r.day.day}: collections by when Sika recorded them paid, payouts by when they were paid${r.provider === 'bank_transfer' ? '; statement lines by their value date' : ''}. Live records only.</p>
${r.truncated ? html`<p role="alert" class="flash error">More records than this page reads: the totals and lists are cut short.</p>` : ''}
<div class="grid">${totalsCard('Sika recorded', r.sikaTotals, payouts)}${sideBody}</div>
${compared ? differencesTable(r, KIND_LABELS[side.state === 'statement' ? 'statement' : 'report']) : ''}
${side.state === 'statement' ? linesTable(side.lines) : ''}
${side.state === 'statement' && side.otherAccountLines > 0 ? html`<p class="muted" data-other-accounts="${side.otherAccountLines}">${side.otherAccountLines} statement line${side.otherAccountLines === 1 ? '' : 's'} of this day ${side.otherAccountLines === 1 ? 'is' : 'are'} kept under a bank that is not a collection account (imported under the wrong bank): not counted here. Void that import under Statements.</p>` : ''}
${compared ? matchedTable(r.matched) : recordsTable(r.sika)}`;
}
