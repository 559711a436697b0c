// The operator console's Operators page: every operator with role, second factor and last sign-in, and the
// reset of a locked-out one (lost phone, forgotten password) by another operator: a temporary password shown
// once, to be changed at their next sign-in, and their second factor cleared so they set it up again.
// Tellers never reach it (routes.ts); an operator cannot reset themselves (the service refuses both).
import type { FastifyInstance } from 'fastify';
import { listOperators, resetOperator } from '../../accounts/console-accounts.ts';
import type { AppDeps } from '../../http/deps.ts';
import type { WebSession } from '../auth.ts';
import { postOnObject, sessionOf, pageSender, type PageOutcome } from '../console.ts';
import { opsSchemas } from '../console-schemas.ts';
import { formRefusal } from '../error-pages.ts';
import { html, type Html } from '../html.ts';
import { csrfField, when_ } from '../layout.ts';
import { actorOf, formPage } from './common.ts';

type OperatorRow = Awaited<ReturnType<typeof listOperators>>[number];

const show = pageSender('operator', 'operators');

export async function operatorPages(app: FastifyInstance, deps: AppDeps): Promise<void> {
  const { db } = deps;
  // After a reset, the page shows the temporary password once (`shown`).
  const operatorsPage = formPage<PageOutcome & { shown?: Html }>(show, 'Operators', async (session, { shown }) =>
    operatorsView(session, await listOperators(db), shown),
  );

  app.get('/ops/operators', { schema: { hide: true, ...opsSchemas.operators } }, async (request, reply) =>
    operatorsPage(reply, sessionOf(request)),
  );

  postOnObject(app, '/ops/operators/:id/reset', opsSchemas.operatorReset, async (request, reply, session) => {
    let reset: Awaited<ReturnType<typeof resetOperator>>;
    try {
      reset = await resetOperator(db, actorOf(session), { id: request.params.id });
    } catch (error) {
      const refusal = formRefusal(error);
      if (refusal.status === 404) throw error;
      return operatorsPage(reply, session, refusal);
    }
    return operatorsPage(reply, session, {
      flash: {
        message: `${reset.email} is reset: their sessions are signed out and their two-factor authentication is off.`,
      },
      shown: html`<section class="card" aria-label="Temporary password"><h2 style="margin-top:0">Temporary password for ${reset.email}</h2>
<p>Give it to them in person or by phone; it is shown <strong>once</strong>. They sign in with it, choose their own password, then set up two-factor authentication again.</p>
<p class="secret" id="temporary-password">${reset.temporaryPassword}</p></section>`,
    });
  });
}

export const operatorsView = (
  session: WebSession,
  rows: readonly OperatorRow[],
  shown?: Html,
): Html => html`<h1>Operators</h1>
<p class="muted">A locked-out operator (lost phone, forgotten password) is reset here by another operator, or by the administrator with <span class="mono nowrap">sika operator reset --email</span>. You cannot reset yourself.</p>
${shown ?? ''}
<div class="table-wrap"><table><thead><tr><th>Email</th><th>Role</th><th>Two-factor</th><th>Last sign-in</th><th>Reset</th></tr></thead><tbody>
${rows.map(
  (
    o,
  ) => html`<tr><td>${o.email}${o.must_change_password ? html`<br><span class="muted">temporary password</span>` : ''}</td><td>${o.role}</td><td>${o.second_factor ? 'On' : 'Off'}</td><td class="nowrap">${o.last_sign_in_at ? when_(o.last_sign_in_at) : 'Never'}</td>
<td>${o.id === session.operatorId ? html`<span class="muted">You</span>` : html`<form method="post" action="/ops/operators/${o.id}/reset" class="inline">${csrfField(session)}<button class="danger" aria-label="Reset ${o.email}">Reset</button></form>`}</td></tr>`,
)}
</tbody></table></div>`;
