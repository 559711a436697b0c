// The operator console's mail page: every mail Sika queued (src/mail), newest first, searched by address and
// filtered by status, with keyset pages and a CSV; one mail with its text body (links shown whole, so a
// developer without SMTP_URL can open a verify or sign-in link from here) and its HTML body in a sandboxed
// frame (never live markup in the console: a merchant's name inside a mail stays text to the console); and
// "Send again" for a failed or logged mail, audited.
import type { FastifyInstance } from 'fastify';
import { audit } from '../../audit/log.ts';
import type { AppDeps } from '../../http/deps.ts';
import { csvColumn } from '../../lib/csv-columns.ts';
import { MAIL_RESENDABLE, MAIL_STATUSES, type MailRow, type MailStatus } from '../../mail/model.ts';
import { mailById, mailList, resendMail } from '../../mail/queries.ts';
import type { WebSession } from '../auth.ts';
import { pageSender, postOnObject, sessionOf, type Flash } from '../console.ts';
import { opsSchemas } from '../console-schemas.ts';
import { html, type Html } from '../html.ts';
import { csrfField, statusBadge, when_ } from '../layout.ts';
import { actorOf } from './common.ts';
import * as consoleList from './console-list.ts';

const show = pageSender('operator', 'mail');
const keyOf = (row: MailRow) => ({ at: row.created_at, id: row.id });

const MAIL_CSV = [
  csvColumn.timestamp<MailRow>('created', (r) => r.created_at),
  csvColumn.text<MailRow>('id', (r) => r.id),
  csvColumn.text<MailRow>('to', (r) => r.to_address),
  csvColumn.text<MailRow>('kind', (r) => r.kind),
  csvColumn.text<MailRow>('subject', (r) => r.subject),
  csvColumn.text<MailRow>('status', (r) => r.status),
  csvColumn.text<MailRow>('attempts', (r) => String(r.attempts)),
  csvColumn.text<MailRow>('last_error', (r) => r.last_error ?? ''),
];

export async function mailPages(app: FastifyInstance, deps: AppDeps): Promise<void> {
  const { db } = deps;

  app.get('/ops/mail', { schema: { hide: true, ...opsSchemas.mail } }, async (request, reply) => {
    const session = sessionOf(request);
    const list = consoleList.readListQuery(request.query as consoleList.QueryString, ['status']);
    const status = consoleList.closedSetValue(MAIL_STATUSES, list.filters.status) as MailStatus | null;
    const fetch = () => (cursor: consoleList.ConsoleCursor | null, limit: number) =>
      mailList(db, { to: list.q || undefined, status: status ?? undefined, after: cursor }, limit);
    return consoleList.listAnswer(
      reply,
      list,
      { fetch, key: keyOf },
      { filename: 'sika-mail.csv', columns: MAIL_CSV },
      (rows, state) => show(reply, session, 'Mail', mailListView(state, rows)),
    );
  });

  const onePage = async (
    reply: Parameters<typeof show>[0],
    session: WebSession,
    id: string,
    flash: Flash = null,
    status = 200,
  ) => {
    const mail = await mailById(db, id);
    return show(reply, session, `Mail ${mail.subject}`, mailView(session, mail), flash, status);
  };

  app.get<{ Params: { id: string } }>(
    '/ops/mail/:id',
    { schema: { hide: true, ...opsSchemas.mailOne } },
    async (request, reply) => onePage(reply, sessionOf(request), request.params.id),
  );

  postOnObject(app, '/ops/mail/:id/resend', opsSchemas.mailResend, async (request, reply, session) => {
    const id = request.params.id;
    const result = await resendMail(db, id, (tx, change) =>
      audit(tx, {
        actor: actorOf(session),
        merchantId: null,
        action: 'mail.resend',
        objectType: 'mail',
        objectId: id,
        before: { status: change.before },
        after: { status: change.after },
      }),
    );
    if (!result.resent)
      return onePage(
        reply,
        session,
        id,
        { message: `Only a failed or logged mail is sent again; this one is ${result.status}.`, error: true },
        409,
      );
    return onePage(reply, session, id, { message: 'The mail is queued to be sent again.' });
  });
}

const filters = (list: consoleList.ListPageState): Html =>
  consoleList.closedSetFilter({ status: MAIL_STATUSES }, list)('status', 'Status');

export const mailListView = (list: consoleList.ListPageState, rows: readonly MailRow[]): Html => html`<h1>Mail</h1>
<p class="muted">Every e-mail Sika sends, newest first. Without <span class="mono">SMTP_URL</span> mail is written to the log and kept here as <em>logged</em>: open it to read it and follow its links.</p>
${consoleList.listToolbar('/ops/mail', list, { searchLabel: 'Address', placeholder: 'owner@example.com', filters: filters(list) })}
${
  rows.length === 0
    ? html`<p class="card">No mail matches.</p>`
    : html`<div class="table-wrap"><table><thead><tr><th scope="col">Created</th><th scope="col">To</th><th scope="col">Kind</th><th scope="col">Subject</th><th scope="col">Status</th><th scope="col">Attempts</th><th scope="col">Last error</th></tr></thead><tbody>
${rows.map(
  (r) =>
    html`<tr><td class="nowrap">${when_(r.created_at)}</td><td class="wrap">${r.to_address}</td><td class="mono">${r.kind}</td><td class="wrap"><a href="/ops/mail/${r.id}">${r.subject}</a></td><td>${statusBadge(r.status)}</td><td>${r.attempts}</td><td class="wrap">${r.last_error ?? ''}</td></tr>`,
)}
</tbody></table></div>`
}
${consoleList.pagerNav('/ops/mail', list)}`;

/** The text body with each http(s) link made a link (the rest escaped). */
function textWithLinks(text: string): Html {
  const parts = text.split(/(https?:\/\/[^\s<>"']+)/g);
  return html`${parts.map((part, index) => (index % 2 === 1 ? html`<a href="${part}" rel="noreferrer">${part}</a>` : html`${part}`))}`;
}

export const mailView = (session: WebSession, mail: MailRow): Html => html`<p><a href="/ops/mail">← All mail</a></p>
<h1>${mail.subject}</h1>
<section class="card" aria-label="About this mail"><dl>
<dt>To</dt><dd>${mail.to_address}</dd>
<dt>Kind</dt><dd class="mono">${mail.kind}</dd>
<dt>Status</dt><dd>${statusBadge(mail.status)}</dd>
<dt>Attempts</dt><dd>${mail.attempts}</dd>
<dt>Created</dt><dd>${when_(mail.created_at)}</dd>
${mail.sent_at ? html`<dt>Sent</dt><dd>${when_(mail.sent_at)}</dd>` : ''}
${mail.status === 'pending' ? html`<dt>Next attempt</dt><dd>${when_(mail.next_attempt_at)}</dd>` : ''}
${mail.last_error ? html`<dt>Last error</dt><dd class="wrap">${mail.last_error}</dd>` : ''}
${mail.message_id ? html`<dt>Message id</dt><dd class="mono wrap">${mail.message_id}</dd>` : ''}
${mail.merchant_id ? html`<dt>Merchant</dt><dd><a href="/ops/merchants/${mail.merchant_id}">${mail.merchant_id}</a></dd>` : ''}
</dl>
${
  MAIL_RESENDABLE.includes(mail.status)
    ? html`<form method="post" action="/ops/mail/${mail.id}/resend">${csrfField(session)}<button type="submit">Send again</button></form>`
    : ''
}</section>
<section class="card" aria-labelledby="mail-text"><h2 id="mail-text" style="margin-top:0">Text</h2><pre class="wrap" style="white-space:pre-wrap">${textWithLinks(mail.text_body)}</pre></section>
<section class="card" aria-labelledby="mail-html"><h2 id="mail-html" style="margin-top:0">HTML</h2>
<p class="muted">Shown in a sandboxed frame: no script runs and nothing in it reaches the console.</p>
<iframe title="The mail's HTML body" sandbox="" srcdoc="${mail.html_body}" style="width:100%;min-height:18rem;border:1px solid #d9dde3;border-radius:6px;background:#fff"></iframe>
<details><summary>HTML source</summary><pre class="wrap" style="white-space:pre-wrap">${mail.html_body}</pre></details></section>`;
