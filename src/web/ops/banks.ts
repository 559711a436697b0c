// The operator console's banks and branches: add them, and activate or deactivate them.
import type { FastifyInstance } from 'fastify';
import type { AppDeps } from '../../http/deps.ts';
import * as ops from '../../ops/service.ts';
import type { BanksAndBranches } from '../../ops/service.ts';
import type { WebSession } from '../auth.ts';
import { formValue, postOnObject, sessionOf, pageSender } from '../console.ts';
import { opsSchemas } from '../console-schemas.ts';
import { html, type Html } from '../html.ts';
import { csrfField, statusBadge } from '../layout.ts';
import { actorOf, formPage } from './common.ts';

const show = pageSender('operator', 'banks');

export async function bankPages(app: FastifyInstance, deps: AppDeps): Promise<void> {
  const { db } = deps;
  // ---- banks and branches ----
  const banksPage = formPage(show, 'Banks', async (session) => banksView(session, await ops.banksAndBranches(db)));
  app.get('/ops/banks', { schema: { hide: true, ...opsSchemas.banks } }, async (request, reply) =>
    banksPage(reply, sessionOf(request)),
  );
  app.post('/ops/banks', { schema: { hide: true, ...opsSchemas.addBank } }, async (request, reply) => {
    const session = sessionOf(request);
    await ops.addBank(db, actorOf(session), { name: formValue(request, 'name'), code: formValue(request, 'code') });
    return banksPage(reply, session, { flash: { message: 'Bank added.' } });
  });
  postOnObject(app, '/ops/banks/:id/branches', opsSchemas.addBranch, async (request, reply, session) => {
    await ops.addBranch(db, actorOf(session), {
      bankId: request.params.id,
      name: formValue(request, 'name'),
      code: formValue(request, 'code'),
    });
    return banksPage(reply, session, { flash: { message: 'Branch added.' } });
  });
  app.post<{ Params: { table: string; id: string; action: string } }>(
    '/ops/:table/:id/:action',
    { schema: { hide: true, ...opsSchemas.setActive } },
    async (request, reply) => {
      const session = sessionOf(request);
      const { table, id, action } = request.params;
      if ((table !== 'banks' && table !== 'branches') || (action !== 'activate' && action !== 'deactivate'))
        return banksPage(reply, session, { flash: { message: 'Unknown action.', error: true }, status: 404 });
      await ops.setBankActive(
        db,
        actorOf(session),
        table === 'banks' ? 'banks' : 'bank_branches',
        id,
        action === 'activate',
      );
      return banksPage(reply, session, { flash: { message: `${table === 'banks' ? 'Bank' : 'Branch'} ${action}d.` } });
    },
  );
}

export const banksView = (
  session: WebSession,
  { banks, branches }: BanksAndBranches,
): Html => html`<h1>Banks and branches</h1>
<form method="post" action="/ops/banks" class="card row">${csrfField(session)}<div><label for="bank-name">Bank name</label><input id="bank-name" name="name" required></div><div><label for="bank-code">Code</label><input id="bank-code" name="code" required maxlength="10"></div><div><button>Add bank</button></div></form>
${banks.map(
  (
    b,
  ) => html`<section class="card" aria-label="${b.name}"><h2 style="margin-top:0">${b.name} <span class="mono muted">${b.code}</span> ${statusBadge(b.active ? 'active' : 'inactive')}</h2>
<form method="post" action="/ops/banks/${b.id}/${b.active ? 'deactivate' : 'activate'}" class="inline">${csrfField(session)}<button class="${b.active ? 'danger' : 'secondary'}">${b.active ? 'Deactivate bank' : 'Activate bank'}</button></form>
<ul class="list">${branches
    .filter((br) => br.bank_id === b.id)
    .map(
      (
        br,
      ) => html`<li>${br.name} <span class="mono muted">${br.code}</span> ${statusBadge(br.active ? 'active' : 'inactive')}
<form method="post" action="/ops/branches/${br.id}/${br.active ? 'deactivate' : 'activate'}" class="inline">${csrfField(session)}<button class="secondary" aria-label="${br.active ? 'Deactivate' : 'Activate'} ${br.name}">${br.active ? 'Deactivate' : 'Activate'}</button></form></li>`,
    )}</ul>
<form method="post" action="/ops/banks/${b.id}/branches" class="row">${csrfField(session)}<div><label for="br-name-${b.id}">New branch</label><input id="br-name-${b.id}" name="name" required></div><div><label for="br-code-${b.id}">Code</label><input id="br-code-${b.id}" name="code" required placeholder="${b.code}-XXX"></div><div><button class="secondary">Add branch</button></div></form></section>`,
)}`;
