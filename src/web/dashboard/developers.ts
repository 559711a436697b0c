// Dashboard: developers (integrations, API keys, webhook endpoints, delivery log, replay).
import type { FastifyInstance, FastifyReply } from 'fastify';
import { findAccount } from '../../accounts/activation.ts';
import * as accounts from '../../accounts/integrations.ts';
import { webhookUrlProblem } from '../../accounts/service.ts';
import * as events from '../../events/replay.ts';
import type { AppDeps } from '../../http/deps.ts';
import { formValue, pageSender, postForm, postOnObject, refusedForm, sessionOf, type PageOutcome } from '../console.ts';
import { dashboardSchemas } from '../console-schemas.ts';
import { html, raw, when, type Html } from '../html.ts';
import { csrfField, statusBadge, when_ } from '../layout.ts';
import type { WebSession } from '../auth.ts';

const canManageKeys = (session: WebSession) => ['owner', 'admin', 'developer'].includes(session.role);

/**
 * Why no Live key may be made now (issue 33): Live opens when the Go-Live application is approved and shuts while
 * the account is suspended. null: it may (and always in Test).
 */
async function liveKeyRefusal(db: AppDeps['db'], session: WebSession): Promise<string | null> {
  if (session.environment !== 'live') return null;
  const account = await findAccount(db, session.merchantId!);
  if (account?.suspended) return 'Your account is suspended: no Live API key can be created until it is reinstated.';
  if (account?.activation.status !== 'approved')
    return 'Live API keys can be created once your Go-Live application is approved (Activate your account).';
  return null;
}

/** How the developers page is shown after a form; `secret`: a new API key or signing secret, shown once. */
type DevelopersPageOutcome = PageOutcome & { secret?: Html };

export async function developerPages(app: FastifyInstance, deps: AppDeps): Promise<void> {
  const { db } = deps;
  const show = pageSender('merchant', 'developers');

  async function developersPage(reply: FastifyReply, session: WebSession, outcome: DevelopersPageOutcome = {}) {
    const [integrations, keys, endpoints] = await Promise.all([
      accounts.listIntegrations(db, session.merchantId!, session.environment),
      accounts.listApiKeys(db, session.merchantId!, session.environment),
      accounts.listEndpoints(db, session.merchantId!, session.environment),
    ]);
    const activeKeys = keys.filter((k) => !k.revoked_at);
    const liveRefused = await liveKeyRefusal(db, session);
    const body = html`<h1>Developers <span class="muted">(${session.environment === 'test' ? 'Test' : 'Live'})</span></h1>
${outcome.secret ?? ''}
<h2 id="integrations">Integrations</h2>
<div class="table-wrap"><table><thead><tr><th>Name</th><th>Created</th></tr></thead><tbody>
${integrations.map((i) => html`<tr><td>${i.name}</td><td class="date">${when_(i.created_at)}</td></tr>`)}
</tbody></table></div>
<h2 id="keys">API keys</h2>
<div class="table-wrap"><table class="stack" aria-label="API keys"><thead><tr><th>Key</th><th>Integration</th><th>Created</th><th>Created by</th><th>Last used</th><th>Status</th><th><span class="muted">Action</span></th></tr></thead><tbody>
${keys.map(
  (
    k,
  ) => html`<tr><td class="mono" data-label="Key">${k.prefix}…</td><td data-label="Integration">${k.integration_name}</td><td class="date" data-label="Created">${when_(k.created_at)}</td><td class="wrap" data-label="Created by">${k.created_by_email ? html`<span class="muted">${k.created_by_email}</span>` : ''}</td>
  <td class="date" data-label="Last used">${k.last_used_at ? when_(k.last_used_at) : html`<span class="muted">never</span>`}</td><td data-label="Status">${statusBadge(k.revoked_at ? 'revoked' : 'active')}</td>
  <td data-label="Action">${!k.revoked_at && canManageKeys(session) ? html`<form method="post" action="/dashboard/keys/${k.id}/revoke" class="inline">${csrfField(session)}<button class="danger" aria-label="Revoke key ${k.prefix}">Revoke</button></form>` : ''}</td></tr>`,
)}
</tbody></table></div>
${when(liveRefused !== null, () => html`<p class="card" id="live-keys-refused">${liveRefused}</p>`)}
${when(
  canManageKeys(session) && integrations.length > 0 && liveRefused === null,
  () => html`<form method="post" action="/dashboard/keys" class="card row">${csrfField(session)}
  <div><label for="key-integration">Integration</label><select id="key-integration" name="integration_id">${integrations.map((i) => html`<option value="${i.id}">${i.name}</option>`)}</select></div>
  <div><button type="submit">Create API key</button></div></form>`,
)}
<h2 id="webhooks">Webhook endpoints</h2>
<div class="table-wrap"><table class="stack" aria-label="Webhook endpoints"><thead><tr><th>URL</th><th>Paired key</th><th>Status</th><th><span class="muted">Actions</span></th></tr></thead><tbody>
${endpoints.map(
  (
    e,
  ) => html`<tr><td class="mono wrap" data-label="URL"><a href="/dashboard/webhooks/${e.id}">${e.url}</a>${e.previous_secret_expires_at && e.previous_secret_expires_at > new Date() ? html`<br><span class="muted">old secret still signs until ${when_(e.previous_secret_expires_at)}</span>` : ''}</td>
  <td class="mono" data-label="Paired key">${e.key_prefix}…</td><td data-label="Status">${statusBadge(e.status)}${e.disabled_reason ? html`<br><span class="muted">${e.disabled_reason}</span>` : ''}</td>
  <td data-label="Actions">${
    canManageKeys(session)
      ? html`<form method="post" action="/dashboard/webhooks/${e.id}/rotate" class="inline">${csrfField(session)}<button class="secondary">Rotate secret</button></form>
  ${e.status === 'active' ? html`<form method="post" action="/dashboard/webhooks/${e.id}/disable" class="inline">${csrfField(session)}<button class="danger">Disable</button></form>` : html`<form method="post" action="/dashboard/webhooks/${e.id}/enable" class="inline">${csrfField(session)}<button class="secondary">Enable</button></form>`}`
      : ''
  }</td></tr>`,
)}
${endpoints.length === 0 ? html`<tr><td colspan="4" class="muted">No webhook endpoints yet.</td></tr>` : ''}
</tbody></table></div>
${when(
  canManageKeys(session) && activeKeys.length > 0,
  () => html`<form method="post" action="/dashboard/webhooks" class="card">${csrfField(session)}
  <label for="webhook-url">Endpoint URL${session.environment === 'live' ? ' (https only)' : ''}</label>
  <input id="webhook-url" name="url" type="url" required placeholder="https://example.com/sika/webhooks">
  <label for="webhook-key">Pair with API key</label><select id="webhook-key" name="api_key_id">${activeKeys.map((k) => html`<option value="${k.id}">${k.prefix}…</option>`)}</select>
  <p><button type="submit">Add endpoint</button></p></form>`,
)}`;
    return show(reply, session, 'Developers', body, outcome.flash, outcome.status);
  }

  /** The developers page again, its form refused with `message`. */
  const refuse = (reply: FastifyReply, session: WebSession, message: string, status: number) =>
    developersPage(reply, session, refusedForm(message, status));

  app.get('/dashboard/developers', { schema: { hide: true, ...dashboardSchemas.developers } }, async (request, reply) =>
    developersPage(reply, sessionOf(request)),
  );

  postForm(app, '/dashboard/keys', dashboardSchemas.createKey, async (request, reply, session) => {
    if (!canManageKeys(session)) return refuse(reply, session, 'Your role cannot create API keys.', 403);
    const liveRefused = await liveKeyRefusal(db, session);
    if (liveRefused) return refuse(reply, session, liveRefused, 403);
    const integrationId = formValue(request, 'integration_id');
    const integrations = await accounts.listIntegrations(db, session.merchantId!, session.environment);
    // Another merchant's integration, or the other environment's, is not found, as every id here.
    if (!integrations.some((i) => i.id === integrationId)) return refuse(reply, session, 'Integration not found.', 404);
    const key = await accounts.issueKey(db, {
      merchantId: session.merchantId!,
      integrationId,
      environment: session.environment,
      createdByUserId: session.userId,
    });
    const secret = html`<div class="card" role="alert"><h2>Your new API key</h2><p>Copy it now: it is shown <strong>once</strong> and Sika keeps only its hash.</p>
      <p class="secret" id="new-api-key">${key.key}</p></div>`;
    return developersPage(reply, session, { secret, flash: { message: `API key ${key.prefix}… created.` } });
  });

  postOnObject(app, '/dashboard/keys/:id/revoke', dashboardSchemas.revokeKey, async (request, reply, session) => {
    if (!canManageKeys(session)) return refuse(reply, session, 'Your role cannot revoke API keys.', 403);
    // Only a key of the environment in view: like every other id here, the other environment's keys are not found.
    const actor = { type: 'user' as const, id: session.userId!, email: session.email };
    const revoked = await accounts.revokeKey(db, {
      id: request.params.id,
      merchantId: session.merchantId!,
      environment: session.environment,
      actor,
    });
    if (!revoked) return refuse(reply, session, 'API key not found.', 404);
    deps.authenticator.forget(revoked.prefix);
    const message = revoked.alreadyRevoked
      ? `API key ${revoked.prefix}… was already revoked.`
      : `API key ${revoked.prefix}… revoked: it stops working at once.`;
    return developersPage(reply, session, { flash: { message } });
  });

  postForm(app, '/dashboard/webhooks', dashboardSchemas.createWebhook, async (request, reply, session) => {
    if (!canManageKeys(session)) return refuse(reply, session, 'Your role cannot add endpoints.', 403);
    const url = formValue(request, 'url').trim();
    const problem = await webhookUrlProblem(url, session.environment, {
      allowPrivateTargets: deps.config.webhookAllowPrivateTargets,
      resolver: deps.webhookResolver,
    });
    const keys = await accounts.listApiKeys(db, session.merchantId!, session.environment);
    const key = keys.find((k) => k.id === formValue(request, 'api_key_id'));
    if (!key) return refuse(reply, session, 'API key not found.', 404);
    if (problem || key.revoked_at)
      return refuse(reply, session, problem ? `The URL ${problem}.` : 'Choose an active API key to pair with.', 400);
    const secret = await accounts.addEndpoint(db, {
      merchantId: session.merchantId!,
      environment: session.environment,
      apiKeyId: key.id,
      url,
    });
    const shown = html`<div class="card" role="alert"><h2>Signing secret</h2><p>Verify every webhook with this secret (Standard Webhooks). It is shown once here.</p><p class="secret">${secret}</p></div>`;
    return developersPage(reply, session, { secret: shown, flash: { message: 'Endpoint added.' } });
  });

  app.post<{ Params: { id: string; action: string } }>(
    '/dashboard/webhooks/:id/:action',
    { schema: { hide: true, ...dashboardSchemas.webhookAction } },
    async (request, reply) => {
      const session = sessionOf(request);
      const endpoint = await accounts.findEndpoint(db, session.merchantId!, session.environment, request.params.id);
      const action = request.params.action;
      if (!endpoint || !canManageKeys(session)) return refuse(reply, session, 'Endpoint not found.', 404);
      if (action === 'rotate') {
        const rotated = await accounts.rotateEndpointSecret(db, endpoint.id, session.merchantId!);
        const shown = html`<div class="card" role="alert"><h2>New signing secret</h2><p>Both secrets sign deliveries until ${when_(new Date(rotated.previous_secret_expires_at))}; switch your receiver before then.</p><p class="secret">${rotated.secret}</p></div>`;
        return developersPage(reply, session, { secret: shown, flash: { message: 'Secret rotated.' } });
      }
      if (action === 'disable' || action === 'enable') {
        await accounts.setEndpointStatus(
          db,
          endpoint.id,
          action === 'disable' ? 'disabled' : 'active',
          action === 'disable' ? `disabled by ${session.email}` : null,
        );
        return developersPage(reply, session, { flash: { message: `Endpoint ${action}d.` } });
      }
      if (action === 'replay-failed') {
        const replayed = await events.replayFailedForEndpoint(db, endpoint.id);
        return reply.redirect(`/dashboard/webhooks/${endpoint.id}?replayed=${replayed}`, 303);
      }
      return refuse(reply, session, 'Unknown action.', 404);
    },
  );

  app.get<{ Params: { id: string }; Querystring: { replayed?: string } }>(
    '/dashboard/webhooks/:id',
    { schema: { hide: true, ...dashboardSchemas.webhook } },
    async (request, reply) => {
      const session = sessionOf(request);
      const endpoint = await accounts.findEndpoint(db, session.merchantId!, session.environment, request.params.id);
      if (!endpoint) return show(reply, session, 'Not found', html`<h1>Endpoint not found</h1>`, null, 404);
      const deliveries = await events.endpointDeliveries(db, endpoint.id, 100);
      const replayed = Number(request.query.replayed);
      const flash =
        Number.isInteger(replayed) && request.query.replayed !== undefined
          ? { message: `${replayed} failed deliver${replayed === 1 ? 'y' : 'ies'} queued again.` }
          : null;
      const body = html`<p><a href="/dashboard/developers#webhooks">Back to webhook endpoints</a></p><h1>Delivery log</h1><p class="mono" style="overflow-wrap:anywhere">${endpoint.url} ${statusBadge(endpoint.status)}</p>
<form method="post" action="/dashboard/webhooks/${endpoint.id}/replay-failed" class="inline">${csrfField(session)}<button class="secondary">Replay all failed</button></form>
<div class="table-wrap" style="margin-top:1rem"><table><thead><tr><th>Event</th><th>Status</th><th>Tries</th><th>HTTP</th><th>Latency</th><th>Response excerpt</th><th><span class="muted">Action</span></th></tr></thead><tbody>
${deliveries.map(
  (
    d,
  ) => html`<tr><td><span class="mono">${d.event_id}</span><br>${d.type}<br><span class="muted">${when_(d.updated_at)}</span></td><td>${statusBadge(d.status)}${d.last_error ? html`<br><span class="muted">${d.last_error}</span>` : ''}</td>
  <td>${d.tries}</td><td>${d.last_http_status ?? '–'}</td><td>${d.latency_ms === null ? '–' : `${d.latency_ms} ms`}</td><td class="mono">${(d.response_excerpt ?? '').slice(0, 160)}</td>
  <td><form method="post" action="/dashboard/events/${d.event_id}/replay" class="inline">${csrfField(session)}<input type="hidden" name="endpoint_id" value="${endpoint.id}"><button class="secondary" aria-label="Replay ${d.event_id}">Replay</button></form></td></tr>`,
)}
${deliveries.length === 0 ? html`<tr><td colspan="7" class="muted">No deliveries yet.</td></tr>` : raw('')}
</tbody></table></div>`;
      return show(reply, session, 'Delivery log', body, flash);
    },
  );

  postOnObject(app, '/dashboard/events/:id/replay', dashboardSchemas.replayEvent, async (request, reply, session) => {
    const endpointId = formValue(request, 'endpoint_id');
    // The page to return to is one of this merchant's endpoints, or none: another's is not found, and nothing is replayed.
    if (endpointId && !(await accounts.findEndpoint(db, session.merchantId!, session.environment, endpointId))) {
      return refuse(reply, session, 'Endpoint not found.', 404);
    }
    const replayed = await events.replayMerchantEvent(db, session.merchantId!, session.environment, request.params.id);
    if (!replayed) return refuse(reply, session, 'Event not found.', 404);
    return reply.redirect(
      endpointId ? `/dashboard/webhooks/${encodeURIComponent(endpointId)}?replayed=1` : '/dashboard/developers',
      303,
    );
  });
}
