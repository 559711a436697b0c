// The shared page shell of the merchant dashboard and the operator console: desktop first, usable at
// 390 px, accessible (landmarks, labels, visible focus, AA contrast), no third-party requests.
import { formatGhs } from '../lib/ghana.ts';
import { html, raw, type Html } from './html.ts';
import type { WebSession } from './auth.ts';

export const CONSOLE_CSS = `
*{box-sizing:border-box}body{margin:0;font:15px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:#1a1d21;background:#f5f6f8}
a{color:#0b57d0}a:hover{text-decoration:none}
:focus-visible{outline:3px solid #0b57d0;outline-offset:2px}
header.top{display:flex;flex-wrap:wrap;gap:.5rem 1rem;align-items:center;justify-content:space-between;padding:.6rem 1rem;background:#13233a;color:#fff}
header.top a{color:#fff}.brand{font-weight:700;font-size:1.1rem;color:#fff;text-decoration:none}
nav.main{display:flex;flex-wrap:wrap;gap:.25rem;padding:.4rem 1rem;background:#fff;border-bottom:1px solid #d9dde3}
nav.main a{padding:.35rem .6rem;border-radius:6px;text-decoration:none;color:#1a1d21}nav.main a[aria-current=page]{background:#e6eefc;color:#0b3c91;font-weight:600}
main{max-width:1100px;margin:0 auto;padding:1rem}
h1{font-size:1.45rem;margin:.3rem 0 1rem}h2{font-size:1.15rem;margin:1.4rem 0 .6rem}
.card{background:#fff;border:1px solid #d9dde3;border-radius:10px;padding:1rem;margin-bottom:1rem}.card>h2:first-child{margin-top:0}
.grid{display:grid;grid-template-columns:repeat(auto-fit,minmax(220px,1fr));gap:1rem}
.stat .label{color:#4a5360;font-size:.85rem}.stat .value{font-size:1.35rem;font-weight:700}
table{width:100%;border-collapse:collapse;background:#fff}th,td{text-align:left;padding:.45rem .5rem;border-bottom:1px solid #e3e6ea;vertical-align:top}
th{font-size:.8rem;text-transform:uppercase;letter-spacing:.03em;color:#4a5360}
.table-wrap{overflow-x:auto;border:1px solid #d9dde3;border-radius:10px;margin-bottom:1rem}
label{display:block;font-weight:600;margin:.5rem 0 .2rem}
input,select,textarea{font:inherit;padding:.45rem .55rem;border:1px solid #8a94a3;border-radius:6px;width:100%;max-width:28rem;background:#fff;color:#1a1d21}
button,.button{font:inherit;display:inline-block;padding:.45rem .9rem;border-radius:6px;border:1px solid #0b57d0;background:#0b57d0;color:#fff;cursor:pointer;text-decoration:none}
button.secondary,.button.secondary{background:#fff;color:#0b57d0}button.danger{background:#b3261e;border-color:#b3261e}
form.inline{display:inline}
.badge{display:inline-block;padding:.05rem .5rem;border-radius:999px;font-size:.8rem;font-weight:600;background:#e9ecf0;color:#1a1d21}
.badge.ok{background:#d7f2df;color:#0d5a26}.badge.warn{background:#fff1cc;color:#6b4a00}.badge.bad{background:#fde0de;color:#8c1d18}
.env{display:flex;gap:.25rem;align-items:center}.env button{padding:.2rem .6rem;border-color:#fff;background:transparent}.env button[aria-pressed=true]{background:#fff;color:#13233a;font-weight:700}
.test-banner{background:#fff1cc;color:#5c3d00;padding:.4rem 1rem;font-weight:600;border-bottom:1px solid #e5c466}
.flash{padding:.7rem 1rem;border-radius:8px;margin-bottom:1rem;background:#d7f2df;color:#0d5a26}.flash.error{background:#fde0de;color:#8c1d18}
.secret{font-family:ui-monospace,monospace;background:#13233a;color:#fff;padding:.6rem;border-radius:6px;word-break:break-all}
.muted{color:#4a5360}.mono{font-family:ui-monospace,monospace;font-size:.9em}.nowrap{white-space:nowrap}.wrap,td.json{overflow-wrap:anywhere}td.wrap{min-width:8rem}td.json{min-width:9.5rem;font-size:.8rem}
fieldset.group{border:0;border-top:1px solid #e3e6ea;margin:1rem 0 0;padding:.3rem 0 0;min-width:0}fieldset.group legend{font-weight:700;padding:0 .4rem 0 0}
ul.list{list-style:none;padding:0;margin:.6rem 0}ul.list li{display:flex;flex-wrap:wrap;gap:.3rem .6rem;align-items:center;padding:.3rem 0;border-bottom:1px solid #e3e6ea}ul.list li form{margin-left:auto}
.row{display:flex;flex-wrap:wrap;gap:.5rem;align-items:end}
table.diff{background:transparent;font-size:.85rem}table.diff th,table.diff td{padding:.15rem .4rem;border-bottom:1px solid #eef0f3}table.diff th[scope=row]{text-transform:none;letter-spacing:0;color:#1a1d21;font-weight:600}details summary{cursor:pointer;color:#0b57d0;font-size:.85rem}
@media (max-width:600px){main{padding:.6rem}th,td{padding:.35rem}h1{font-size:1.25rem}}
td.num,th.num,td.money,th.money{text-align:right;white-space:nowrap;font-variant-numeric:tabular-nums}td.date,td.when{white-space:nowrap;font-variant-numeric:tabular-nums}
tfoot tr.total th,tfoot tr.total td{font-weight:700;border-top:2px solid #8a94a3;border-bottom:0;text-transform:none;letter-spacing:0;font-size:inherit;color:#1a1d21}
nav[aria-label=Ranges]{gap:.75rem;align-self:center}nav[aria-label=Ranges] a[aria-current]{font-weight:700;text-decoration:none}
td.id{font-size:.8rem;overflow-wrap:anywhere;min-width:8rem}
@media (max-width:480px){
table.stack thead{position:absolute;width:1px;height:1px;overflow:hidden;clip-path:inset(50%)}table.stack,table.stack tbody,table.stack tr{display:block}
table.stack tr{border-bottom:1px solid #d9dde3;padding:.3rem 0}table.stack td{display:flex;gap:.75rem;justify-content:space-between;align-items:baseline;border:0;padding:.15rem .6rem;white-space:normal;text-align:right;min-width:0}
table.stack td[data-label]::before{content:attr(data-label);flex:none;font-size:.8rem;font-weight:600;text-transform:uppercase;letter-spacing:.03em;color:#4a5360;text-align:left}table.stack td:empty{display:none}table.stack td:not([data-label]){display:block;text-align:left}table.stack td.num,table.stack td.date{white-space:nowrap}}
`;

export interface PageOptions {
  title: string;
  session: WebSession | null;
  kind: 'merchant' | 'operator';
  active?: string;
  flash?: { message: string; error?: boolean } | null;
  body: Html;
}

export const MERCHANT_NAV: [string, string][] = [
  ['home', '/dashboard'],
  ['developers', '/dashboard/developers'],
  ['payments', '/dashboard/sessions'],
  ['links', '/dashboard/links'],
  ['refunds', '/dashboard/refunds'],
  ['balance', '/dashboard/balance'],
  ['payouts', '/dashboard/payouts'],
  ['settlements', '/dashboard/settlements'],
  ['exports', '/dashboard/exports'],
  ['settings', '/dashboard/settings'],
];
const OPERATOR_NAV: [string, string][] = [
  ['merchants', '/ops'],
  ['teller', '/ops/teller'],
  ['review', '/ops/review'],
  ['approvals', '/ops/approvals'],
  ['payouts', '/ops/payouts'],
  ['refunds', '/ops/refunds'],
  ['statements', '/ops/statements'],
  ['reconciliation', '/ops/reconciliation'],
  ['banks', '/ops/banks'],
  ['activation', '/ops/activation'],
  ['audit', '/ops/audit'],
  ['mail', '/ops/mail'],
  ['operators', '/ops/operators'],
];
/** The dashboard's Go-Live application, in the nav while the merchant is not approved. */
const ACTIVATION_NAV: [string, string] = ['activation', '/dashboard/activation'];
const NAV_LABELS: Record<string, string> = { activation: 'Activate your account', links: 'Payment links' };
const label = (key: string) => key[0]!.toUpperCase() + key.slice(1);

/**
 * A .table-wrap scrolls sideways when its table is wider than a phone: it takes the focus (tabindex 0) so a
 * keyboard can scroll it too, whatever page it is on (axe-core's scrollable-region-focusable).
 */
const tableWrapsFocusable = (body: Html): Html =>
  raw(String(body).replaceAll('<div class="table-wrap">', '<div class="table-wrap" tabindex="0">'));

export function page(options: PageOptions): string {
  const { session, kind } = options;
  const base = kind === 'merchant' ? '/dashboard' : '/ops';
  // Until the merchant is approved for Live, the dashboard leads to its Go-Live application (issue 33).
  const activating =
    session?.activationStatus != null && (session.activationStatus !== 'approved' || options.active === 'activation');
  // Tellers only have the teller desk (the other pages send them back there).
  const nav =
    kind === 'merchant'
      ? activating
        ? [...MERCHANT_NAV, ACTIVATION_NAV]
        : MERCHANT_NAV
      : session?.role === 'teller'
        ? OPERATOR_NAV.filter(([key]) => key === 'teller')
        : OPERATOR_NAV;
  const envSwitch =
    session && kind === 'merchant'
      ? html`<form method="post" action="/dashboard/environment" class="env" aria-label="Environment">
          <input type="hidden" name="_csrf" value="${session.csrfToken}">
          <input type="hidden" name="return_to" value="${MERCHANT_NAV.find(([key]) => key === options.active)?.[1] ?? '/dashboard'}">
          <span class="muted" style="color:#cfd8e3">Mode:</span>
          <button name="environment" value="test" aria-pressed="${String(session.environment === 'test')}">Test</button>
          <button name="environment" value="live" aria-pressed="${String(session.environment === 'live')}">Live</button>
        </form>`
      : raw('');
  return `<!doctype html>${html`<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<title>${options.title} · Sika ${kind === 'merchant' ? 'Dashboard' : 'Operations'}</title><style>${raw(CONSOLE_CSS)}</style></head>
<body>
<header class="top"><a class="brand" href="${base}">Sika ${kind === 'merchant' ? 'Dashboard' : 'Operations'}</a>
${session ? html`<span>${session.merchantName ? html`<strong>${session.merchantName}</strong> · ` : ''}<a href="${base}/account" aria-label="Account: ${session.email}">${session.email}</a></span>` : ''}
${envSwitch}
${session ? html`<form method="post" action="${base}/logout" class="inline"><input type="hidden" name="_csrf" value="${session.csrfToken}"><button class="secondary" style="background:transparent;color:#fff;border-color:#fff">Sign out</button></form>` : ''}
</header>
${session && kind === 'merchant' && session.environment === 'test' ? html`<div class="test-banner" role="status">Test mode: no real money moves.</div>` : ''}
${session && kind === 'merchant' && session.environment === 'live' ? html`<div class="test-banner" role="status" style="background:#fde0de;color:#8c1d18;border-color:#e8a39d">Live mode: real money.</div>` : ''}
${session ? html`<nav class="main" aria-label="Main">${nav.map(([key, href]) => html`<a href="${href}"${raw(options.active === key ? ' aria-current="page"' : '')}>${kind === 'merchant' ? (NAV_LABELS[key] ?? label(key)) : label(key)}</a>`)}</nav>` : ''}
<main id="main">
${options.flash ? html`<div class="flash${options.flash.error ? ' error' : ''}" role="${options.flash.error ? 'alert' : 'status'}">${options.flash.message}</div>` : ''}
${tableWrapsFocusable(options.body)}
</main></body></html>`}`;
}

export const csrfField = (session: WebSession) => html`<input type="hidden" name="_csrf" value="${session.csrfToken}">`;
export const money = (minor: number) => formatGhs(minor);
export const when_ = (date: Date | null | undefined) =>
  date ? date.toISOString().replace('T', ' ').slice(0, 16) + ' UTC' : '';

export function statusBadge(status: string): Html {
  const tone = [
    'success',
    'paid',
    'succeeded',
    'delivered',
    'verified',
    'active',
    'matched',
    'enabled',
    'sent',
    'approved',
  ].includes(status)
    ? 'ok'
    : [
          'failed',
          'expired',
          'rejected',
          'cancelled',
          'reversed',
          'exception',
          'disabled',
          'returned',
          'suspended',
        ].includes(status)
      ? 'bad'
      : 'warn';
  return html`<span class="badge ${tone}">${status.replace(/_/g, ' ')}</span>`;
}
