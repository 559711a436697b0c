// The operator console's audit log.
import type { FastifyInstance } from 'fastify';
import type { AppDeps } from '../../http/deps.ts';
import * as ops from '../../ops/service.ts';
import type { AuditRow } from '../../ops/service.ts';
import { sessionOf } from '../console.ts';
import { opsSchemas } from '../console-schemas.ts';
import { html, type Html } from '../html.ts';
import { when_ } from '../layout.ts';
import { showOpsPage as show } from './common.ts';

export async function auditPages(app: FastifyInstance, deps: AppDeps): Promise<void> {
  const { db } = deps;
  // ---- audit ----
  app.get('/ops/audit', { schema: { hide: true, ...opsSchemas.audit } }, async (request, reply) =>
    show(reply, sessionOf(request), 'audit', 'Audit log', auditView(await ops.auditLog(db))),
  );
}

export const auditView = (rows: readonly AuditRow[]): Html => html`<h1>Audit log</h1><p class="muted">Append-only: every operator and approver action.</p>
<div class="table-wrap"><table><thead><tr><th>When</th><th>Who</th><th>Action</th><th>Object</th><th>Before</th><th>After</th></tr></thead><tbody>
${rows.map((r) => html`<tr><td class="nowrap">${when_(r.created_at)}</td><td>${r.actor_email ?? r.actor_id}<br><span class="muted">${r.actor_type}</span></td><td>${r.action}</td><td class="mono wrap">${r.object_type}<br>${r.object_id}</td><td class="mono json">${JSON.stringify(r.before)}</td><td class="mono json">${JSON.stringify(r.after)}</td></tr>`)}
</tbody></table></div>`;
