// The dashboard home's figures (issue 36, item 1) as HTML: the range picker, a bar chart drawn as SVG on the
// server (no library, no script), the same figures as a table, success rates, failure reasons and the next
// settlement. The chart is a picture of the table: the table is what a screen reader and a phone read.
import {
  HOME_RANGES,
  type Bucket,
  type HomeAnalytics,
  type HomeRange,
  type SuccessRate,
} from '../../books/analytics.ts';
import { NETWORK_LABELS, type MomoNetwork } from '../../lib/ghana.ts';
import type { FailureReason } from '../../lib/payment-failures.ts';
import { findRail } from '../../rails/registry.ts';
import { accraWhen } from '../../payouts/settlement-schedule.ts';
import { html, raw, type Html } from '../html.ts';
import { money } from '../layout.ts';

/** Home's own styles (money cells, td.num, and total rows, tr.total, are the layout's): the range picker, the chart, columns a phone drops. */
export const HOME_CSS = `
th.day{white-space:nowrap}
nav.range{display:flex;flex-wrap:wrap;gap:.25rem;margin:0 0 1rem}nav.range a{padding:.3rem .7rem;border:1px solid #8a94a3;border-radius:999px;text-decoration:none;color:#1a1d21;background:#fff}
nav.range a[aria-current=page]{background:#13233a;border-color:#13233a;color:#fff;font-weight:600}
.chart svg{display:block;width:100%;height:auto}.chart svg.narrow{display:none}.legend{display:flex;flex-wrap:wrap;gap:.3rem 1rem;margin:.4rem 0 0;padding:0;list-style:none;font-size:.85rem}
.legend span.key{display:inline-block;width:.8rem;height:.8rem;border-radius:2px;margin-right:.35rem;vertical-align:-1px}
.figures{display:grid;grid-template-columns:repeat(auto-fit,minmax(140px,1fr));gap:.6rem 1rem;margin-bottom:.8rem}
.home-cols{display:grid;grid-template-columns:repeat(auto-fit,minmax(300px,1fr));gap:0 1rem}
table caption{text-align:left;font-weight:600;padding:.5rem .5rem .3rem}
th[scope=row]{text-transform:none;letter-spacing:0;font-size:inherit;color:#1a1d21;font-weight:400}
@media (max-width:600px){.phone-drop{display:none}.chart svg.wide{display:none}.chart svg.narrow{display:block}.figures .stat .value{font-size:1.1rem}}
@media (min-width:601px){.phone-only{display:none}}
`;

const GROSS_COLOUR = '#9db9e8';
const NET_COLOUR = '#0b3c91';
const REFUND_COLOUR = '#b3261e';

const RANGE_LABELS: Record<HomeRange, string> = {
  today: 'Today',
  '7d': '7 days',
  '30d': '30 days',
  '90d': '90 days',
};

/** The reasons as a merchant reads them in a list: short, the payer's side of it. */
const FAILURE_LABELS: Record<FailureReason, string> = {
  insufficient_funds: 'Not enough money',
  wrong_pin: 'Wrong PIN',
  timed_out: 'Not approved in time',
  declined_by_payer: 'Declined on the phone',
  declined: 'Declined by the network or bank',
  limit_reached: 'Above the wallet or card limit',
  number_not_registered: 'No wallet on that network',
  changed_course: 'Payer switched number or method',
};

const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];
/** '2026-11-03' as '3 Nov', an hour '09' as '09:00'. */
export const bucketLabel = (key: string): string =>
  key.length === 2 ? `${key}:00` : `${Number(key.slice(8, 10))} ${MONTHS[Number(key.slice(5, 7)) - 1]}`;

export function rangePicker(current: HomeRange): Html {
  return html`<nav class="range" aria-label="Range">${HOME_RANGES.map(
    (range) =>
      html`<a href="/dashboard?range=${range}"${raw(range === current ? ' aria-current="page"' : '')}>${RANGE_LABELS[range]}</a>`,
  )}</nav>`;
}

// ---------- the chart ----------

/** The chart's two drawings: a wide one for a desktop window, a narrow one a phone shows at its own size. */
interface ChartSize {
  width: number;
  height: number;
  left: number;
  right: number;
  top: number;
  bottom: number;
  font: number;
  /** About this many date labels along the bottom. */
  labels: number;
}
const WIDE: ChartSize = { width: 1000, height: 300, left: 96, right: 8, top: 12, bottom: 30, font: 14, labels: 8 };
const NARROW: ChartSize = { width: 360, height: 220, left: 74, right: 4, top: 10, bottom: 26, font: 12, labels: 4 };

/** A round number at least `value`: 1, 2 or 5 times a power of ten. */
function niceCeil(value: number): number {
  const power = 10 ** Math.floor(Math.log10(value));
  return [1, 2, 5, 10].map((m) => m * power).find((nice) => nice >= value) ?? 10 * power;
}

/** Axis money without pesewas when whole cedis: 'GHS 1,500'. */
const axisMoney = (minor: number) => money(minor).replace(/\.00$/, '');

const f1 = (n: number) => n.toFixed(1);

/** One drawing of the chart at a size: gridlines every round step from zero up, one below zero when needed. */
function chartSvg(analytics: HomeAnalytics, c: ChartSize, label: string, className: string): string {
  const { buckets } = analytics;
  const plotW = c.width - c.left - c.right;
  const plotH = c.height - c.top - c.bottom;
  const high = Math.max(0, ...buckets.map((b) => b.gross_minor));
  const low = Math.min(0, ...buckets.map((b) => b.net_minor));
  const step = niceCeil(Math.max(high, 100) / 4);
  const top = Math.max(step, Math.ceil(high / step) * step);
  // A day whose refunds exceed its payments goes below zero: the axis goes down just as far as it needs.
  const bottom = low < 0 ? -niceCeil(-low) : 0;
  const y = (minor: number) => c.top + ((top - minor) / (top - bottom)) * plotH;
  const slot = plotW / buckets.length;
  const barW = Math.max(1, slot * 0.72);
  const ticks: number[] = bottom < 0 ? [bottom] : [];
  for (let v = 0; v <= top; v += step) ticks.push(v);
  const labelEvery = Math.max(1, Math.ceil(buckets.length / c.labels));
  const bar = (b: Bucket, i: number) => {
    const x = c.left + i * slot + (slot - barW) / 2;
    let out = '';
    if (b.gross_minor > 0)
      out += `<rect x="${f1(x)}" y="${f1(y(b.gross_minor))}" width="${f1(barW)}" height="${f1(y(0) - y(b.gross_minor))}" fill="${GROSS_COLOUR}"/>`;
    if (b.net_minor !== 0)
      out += `<rect x="${f1(x + barW * 0.2)}" y="${f1(Math.min(y(0), y(b.net_minor)))}" width="${f1(barW * 0.6)}" height="${f1(Math.max(1, Math.abs(y(0) - y(b.net_minor))))}" fill="${b.net_minor < 0 ? REFUND_COLOUR : NET_COLOUR}"/>`;
    return out;
  };
  const gridline = (v: number) =>
    `<line x1="${c.left}" x2="${c.width - c.right}" y1="${f1(y(v))}" y2="${f1(y(v))}" stroke="${v === 0 ? '#4a5360' : '#e3e6ea'}"/><text x="${c.left - 6}" y="${f1(y(v) + c.font / 3)}" text-anchor="end" fill="#4a5360">${axisMoney(v)}</text>`;
  const dateLabel = (b: Bucket, i: number) =>
    i % labelEvery === 0
      ? `<text x="${f1(c.left + i * slot + slot / 2)}" y="${c.height - c.bottom + c.font + 6}" text-anchor="middle" fill="#4a5360">${bucketLabel(b.key)}</text>`
      : '';
  return `<svg class="${className}" viewBox="0 0 ${c.width} ${c.height}" role="img" aria-label="${escapeAttr(label)}" font-family="system-ui,sans-serif" font-size="${c.font}">${ticks.map(gridline).join('')}${buckets.map(bar).join('')}${buckets.map(dateLabel).join('')}</svg>`;
}

/**
 * Gross (light) and net (dark; red below zero, when a bucket's refunds exceed its payments) per bucket, with
 * the value axis in GHS and the dates along the bottom. Drawn twice, wide and narrow, so a phone's labels are
 * not shrunk to nothing; CSS shows one. Each is one image whose name gives the totals and points at the table.
 */
export function revenueChart(analytics: HomeAnalytics): Html {
  const t = analytics.totals;
  const label = `Gross and net per ${analytics.unit} over ${RANGE_LABELS[analytics.range].toLowerCase()}: gross ${money(t.gross_minor)}, fees ${money(t.fees_minor)}, refunds ${money(t.refunds_minor)}, net ${money(t.net_minor)}. The table below has each ${analytics.unit}.`;
  return html`<div class="chart">${raw(chartSvg(analytics, WIDE, label, 'wide'))}${raw(chartSvg(analytics, NARROW, label, 'narrow'))}<ul class="legend" aria-hidden="true"><li><span class="key" style="background:${GROSS_COLOUR}"></span>Gross</li><li><span class="key" style="background:${NET_COLOUR}"></span>Net (after fees and refunds)</li><li><span class="key" style="background:${REFUND_COLOUR}"></span>Net below zero</li></ul></div>`;
}

const escapeAttr = (value: string) => value.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;');

// ---------- the table and the totals ----------

export function totalsFigures(analytics: HomeAnalytics): Html {
  const t = analytics.totals;
  const stat = (label: string, minor: number, id: string) =>
    html`<div class="stat"><div class="label">${label}</div><div class="value nowrap" id="${id}">${money(minor)}</div></div>`;
  return html`<div class="figures">${stat('Gross', t.gross_minor, 'total-gross')}${stat('Fees', t.fees_minor, 'total-fees')}${stat('Refunds', t.refunds_minor, 'total-refunds')}${stat('Net', t.net_minor, 'total-net')}</div>`;
}

/** The chart's figures, one row per day (or hour) with any payment or refund, and the range's total. */
export function revenueTable(analytics: HomeAnalytics): Html {
  const unit = analytics.unit === 'hour' ? 'Hour' : 'Day';
  const rows = analytics.buckets.filter((b) => b.payments > 0 || b.refunds_minor > 0);
  const t = analytics.totals;
  // Focusable: on a narrow phone with large figures the table may scroll sideways, and a keyboard must reach it.
  return html`<div class="table-wrap" tabindex="0" role="region" aria-label="Revenue table"><table id="revenue-table" class="money-table"><caption>Gross, fees, refunds and net per ${unit.toLowerCase()} (Africa/Accra)${rows.length < analytics.buckets.length ? `, ${unit === 'Hour' ? 'hours' : 'days'} without payments or refunds left out` : ''}</caption>
<thead><tr><th scope="col">${unit}</th><th scope="col" class="num phone-drop">Payments</th><th scope="col" class="num">Gross</th><th scope="col" class="num phone-drop">Fees</th><th scope="col" class="num phone-drop">Refunds</th><th scope="col" class="num">Net</th></tr></thead><tbody>
${rows.map((b) => html`<tr data-bucket="${b.key}"><th scope="row" class="day">${bucketLabel(b.key)}</th><td class="num phone-drop">${b.payments}</td><td class="num">${money(b.gross_minor)}</td><td class="num phone-drop">${money(b.fees_minor)}</td><td class="num phone-drop">${money(b.refunds_minor)}</td><td class="num">${money(b.net_minor)}</td></tr>`)}
${rows.length === 0 ? html`<tr><td colspan="6" class="muted">No payments or refunds in this range.</td></tr>` : ''}
</tbody><tfoot><tr class="total"><th scope="row">Total</th><td class="num phone-drop">${t.payments}</td><td class="num">${money(t.gross_minor)}</td><td class="num phone-drop">${money(t.fees_minor)}</td><td class="num phone-drop">${money(t.refunds_minor)}</td><td class="num">${money(t.net_minor)}</td></tr></tfoot></table></div>
<p class="muted phone-only">On a narrow screen the table shows gross and net; the totals above have fees and refunds.</p>`;
}

// ---------- success rates and failure reasons ----------

const methodLabel = (rail: string) => findRail(rail)?.labels.dashboard ?? rail;
const networkLabel = (network: string) => NETWORK_LABELS[network as MomoNetwork] ?? network;
const percent = (r: SuccessRate) => (r.ended === 0 ? '–' : `${((r.paid / r.ended) * 100).toFixed(1)}%`);

function ratesTable(id: string, caption: string, head: string, rates: SuccessRate[], labelOf: (key: string) => string) {
  return html`<div class="table-wrap"><table id="${id}"><caption>${caption}</caption>
<thead><tr><th scope="col">${head}</th><th scope="col" class="num">Success</th><th scope="col" class="num">Paid</th><th scope="col" class="num">Ended</th></tr></thead><tbody>
${rates.map((r) => html`<tr data-key="${r.key}"><th scope="row">${labelOf(r.key)}</th><td class="num">${percent(r)}</td><td class="num">${r.paid}</td><td class="num">${r.ended}</td></tr>`)}
${rates.length === 0 ? html`<tr><td colspan="4" class="muted">No attempts ended in this range.</td></tr>` : ''}
</tbody></table></div>`;
}

export function successRates(analytics: HomeAnalytics): Html {
  return html`<div class="home-cols">${ratesTable('rates-by-method', 'By payment method', 'Method', analytics.byMethod, methodLabel)}${ratesTable('rates-by-network', 'Mobile Money by network', 'Network', analytics.byNetwork, networkLabel)}</div>`;
}

export function failureReasons(analytics: HomeAnalytics): Html {
  return html`<div class="table-wrap"><table id="failure-reasons"><caption>Top reasons payments did not go through</caption>
<thead><tr><th scope="col">Reason</th><th scope="col" class="num">Attempts</th></tr></thead><tbody>
${analytics.failures.map((f) => html`<tr data-reason="${f.reason ?? 'none'}"><th scope="row">${f.reason ? FAILURE_LABELS[f.reason] : 'No reason given'}</th><td class="num">${f.attempts}</td></tr>`)}
${analytics.failures.length === 0 ? html`<tr><td colspan="2" class="muted">No failed attempts in this range.</td></tr>` : ''}
</tbody></table></div>`;
}

// ---------- the next settlement ----------

export type NextSettlement =
  | { kind: 'manual' }
  | { kind: 'paused' }
  | { kind: 'none' }
  | { kind: 'scheduled'; at: Date; expected_minor: number; minimum_minor: number };

export function nextSettlementCard(next: NextSettlement): Html {
  const body =
    next.kind === 'manual'
      ? html`<p id="next-settlement">Manual: pay out from <a href="/dashboard/payouts">Payouts</a>.</p>`
      : next.kind === 'paused'
        ? html`<p id="next-settlement">Paused: see <a href="/dashboard/settlements">Settlements</a>.</p>`
        : next.kind === 'none'
          ? html`<p id="next-settlement" class="muted">None scheduled (no settlement account or run yet): see <a href="/dashboard/settlements">Settlements</a>.</p>`
          : html`<div class="grid" id="next-settlement"><div class="stat"><div class="label">Date</div><div class="value">${accraWhen(next.at).replace(' (Africa/Accra time)', '')}</div></div>
<div class="stat"><div class="label">Expected amount</div><div class="value nowrap">${money(next.expected_minor)}</div></div></div>
<p class="muted" style="margin-bottom:0">Expected: the available balance now plus what clears by then; payments after today are not counted.${
              next.expected_minor < Math.max(1, next.minimum_minor)
                ? ` Below the schedule's minimum of ${money(Math.max(1, next.minimum_minor))}: nothing is paid out until it is reached.`
                : ''
            }</p>`;
  return html`<section class="card" aria-label="Next settlement"><h2>Next settlement</h2>${body}</section>`;
}
