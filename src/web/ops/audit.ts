// The operator console's audit log: filters (actor, merchant, action, object type and id, Accra days from and
// to), each row's before and after as the fields that changed (unchanged ones folded away), keyset pages and a
// CSV of every matching row.
import type { FastifyInstance } from 'fastify';
import { auditChoices, auditEntries, auditFilter, type AuditEntry, type AuditQuery } from '../../audit/log.ts';
import { changesText, type FieldChange } from '../../audit/diff.ts';
import type { AppDeps } from '../../http/deps.ts';
import { csvColumn } from '../../lib/csv-columns.ts';
import { sessionOf, pageSender } from '../console.ts';
import { opsSchemas } from '../console-schemas.ts';
import { formRefusal } from '../error-pages.ts';
import { html, type Html } from '../html.ts';
import { when_ } from '../layout.ts';
import * as consoleList from './console-list.ts';

const AUDIT_FILTERS = ['actor', 'merchant', 'action', 'object_type', 'object_id', 'from', 'to'] as const;

const keyOf = (row: AuditEntry) => ({ at: row.created_at, id: row.id });

const AUDIT_CSV = [
  csvColumn.timestamp<AuditEntry>('when', (r) => r.created_at),
  csvColumn.text<AuditEntry>('actor_type', (r) => r.actor_type),
  csvColumn.text<AuditEntry>('actor', (r) => r.actor_email ?? r.actor_id),
  csvColumn.text<AuditEntry>('merchant', (r) => (r.merchant_id ? `${r.merchant_name ?? ''} (${r.merchant_id})` : '')),
  csvColumn.text<AuditEntry>('action', (r) => r.action),
  csvColumn.text<AuditEntry>('object_type', (r) => r.object_type),
  csvColumn.text<AuditEntry>('object_id', (r) => r.object_id),
  csvColumn.text<AuditEntry>('changes', (r) => changesText(r.changes)),
];

const show = pageSender('operator', 'audit');

export async function auditPages(app: FastifyInstance, deps: AppDeps): Promise<void> {
  const { db } = deps;
  app.get('/ops/audit', { schema: { hide: true, ...opsSchemas.audit } }, async (request, reply) => {
    const session = sessionOf(request);
    const list = consoleList.readListQuery(request.query as consoleList.QueryString, AUDIT_FILTERS);
    const query: AuditQuery = { q: list.q, ...list.filters };
    const choices = await auditChoices(db);
    try {
      auditFilter(query, null, 1);
    } catch (error) {
      const { flash, status } = formRefusal(error);
      const body = auditView(consoleList.listPageState(list, null), choices, []);
      return show(reply, session, 'Audit log', body, flash, status);
    }
    const fetch = () => (cursor: consoleList.ConsoleCursor | null, limit: number) =>
      auditEntries(db, auditFilter(query, cursor, limit));
    return consoleList.listAnswer(
      reply,
      list,
      { fetch, key: keyOf },
      { filename: 'sika-audit-log.csv', columns: AUDIT_CSV },
      (rows, state) => show(reply, session, 'Audit log', auditView(state, choices, rows)),
    );
  });
}

const value = (text: string | null) =>
  text === null ? html`<span class="muted">none</span>` : html`<span class="mono wrap">${text}</span>`;

/** One row's changes: a table of the changed, added and removed fields; the unchanged ones behind a <details>. */
export function changesView(changes: readonly FieldChange[]): Html {
  const shown = changes.filter((c) => c.kind !== 'unchanged');
  const same = changes.filter((c) => c.kind === 'unchanged');
  const line = (c: FieldChange) =>
    html`<tr><th scope="row" class="mono">${c.field}</th><td>${c.kind === 'added' ? html`<span class="badge ok">added</span>` : value(c.before)}</td><td>${c.kind === 'removed' ? html`<span class="badge bad">removed</span>` : value(c.after)}</td></tr>`;
  return html`${
    shown.length
      ? html`<table class="diff"><thead><tr><th scope="col">Field</th><th scope="col">Before</th><th scope="col">After</th></tr></thead><tbody>${shown.map(line)}</tbody></table>`
      : html`<p class="muted" style="margin:0">No field changed.</p>`
  }${
    same.length
      ? html`<details><summary>${same.length} unchanged field${same.length === 1 ? '' : 's'}</summary><table class="diff"><tbody>${same.map((c) => html`<tr><th scope="row" class="mono">${c.field}</th><td colspan="2">${value(c.after)}</td></tr>`)}</tbody></table></details>`
      : ''
  }`;
}

const input = (name: string, label: string, chosen: string | undefined, type = 'text', placeholder = ''): Html =>
  html`<div><label for="filter-${name}">${label}</label><input id="filter-${name}" name="${name}" type="${type}" value="${chosen ?? ''}"${placeholder ? html` placeholder="${placeholder}"` : ''}></div>`;

export function auditView(
  list: consoleList.ListPageState,
  choices: { actions: string[]; objectTypes: string[] },
  rows: readonly AuditEntry[],
): Html {
  const f = list.filters;
  const filters = html`${input('actor', 'Actor (email or id)', f.actor)}${input('merchant', 'Merchant (id or name)', f.merchant)}${consoleList.filterSelect('action', 'Action', choices.actions, f.action)}${consoleList.filterSelect('object_type', 'Object type', choices.objectTypes, f.object_type)}${input('object_id', 'Object id', f.object_id)}${input('from', 'From (Accra day)', f.from, 'date')}${input('to', 'To (Accra day)', f.to, 'date')}`;
  return html`<h1>Audit log</h1><p class="muted">Append-only: every operator, merchant user, API key and system action, newest first. Days are Africa/Accra days.</p>
${consoleList.listToolbar('/ops/audit', list, { searchLabel: 'Search the log', placeholder: 'Action, object id, email, merchant', filters })}
${
  rows.length === 0
    ? html`<p class="card">No audit row matches.</p>`
    : html`<div class="table-wrap"><table><thead><tr><th scope="col">When</th><th scope="col">Who</th><th scope="col">Action</th><th scope="col">Object</th><th scope="col">Changes</th></tr></thead><tbody>
${rows.map(
  (r) =>
    html`<tr><td class="nowrap">${when_(r.created_at)}</td><td class="wrap">${r.actor_email ?? r.actor_id}<br><span class="muted">${r.actor_type}</span></td><td>${r.action}${r.merchant_id ? html`<br><a href="/ops/merchants/${r.merchant_id}">${r.merchant_name ?? r.merchant_id}</a>` : ''}</td><td class="mono wrap">${r.object_type}<br>${r.object_id}</td><td>${changesView(r.changes)}</td></tr>`,
)}
</tbody></table></div>`
}
${consoleList.pagerNav('/ops/audit', list)}`;
}
