// Verdicts against the issues' targets, the printed tables, and bench/REPORT.md.
import { failures, type LoadResult } from './load.ts';
import type { PageResult } from './page.ts';
import type { DeliveryResult } from './webhooks.ts';

export type StorageKind = 'postgres' | 'embedded';
export type Verdict = 'met' | 'missed' | 'invalid' | 'no target';

/** One figure next to what it is measured against, with the target when an issue sets one. */
export interface Check {
  name: string;
  figure: string;
  against: string;
  target: string;
  verdict: Verdict;
  why: string;
  /** The headline figure as a number (a ratio in %, ms, MB, /s), for the range over several runs. */
  value?: number;
  unit?: string;
}

/** The p-th percentile (nearest rank) of ascending figures; 0 for none. */
export const percentile = (sorted: number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))] ?? 0;

export const pct = (x: number) => `${(x * 100).toFixed(1)}%`;
const ms = (x: number) => `${Math.round(x)} ms`;

function verdictOf(problems: string[], failed: number, hasTarget: boolean): Pick<Check, 'verdict' | 'why'> {
  if (failed > 0) return { verdict: 'invalid', why: `${failed} failed requests: not a result` };
  if (!hasTarget) return { verdict: 'no target', why: '' };
  return problems.length ? { verdict: 'missed', why: problems.join('; ') } : { verdict: 'met', why: '' };
}

/** service req/s as a share of another run's, with a minimum ratio and an optional p99 ceiling (targets on PostgreSQL only). */
export function ratioCheck(
  name: string,
  service: LoadResult,
  base: LoadResult,
  baseName: string,
  target: { ratioMin: number; p99MaxMs?: number } | null,
): Check {
  const ratio = base.reqPerSec > 0 ? service.reqPerSec / base.reqPerSec : 0;
  const problems: string[] = [];
  if (target && ratio < target.ratioMin) problems.push(`ratio ${pct(ratio)} < ${pct(target.ratioMin)}`);
  if (target?.p99MaxMs !== undefined && service.latencyP99Ms > target.p99MaxMs)
    problems.push(`p99 ${service.latencyP99Ms} ms > ${target.p99MaxMs} ms`);
  return {
    name,
    figure: `${pct(ratio)} (${service.reqPerSec.toFixed(0)}/s, p99 ${service.latencyP99Ms} ms)`,
    value: ratio * 100,
    unit: '%',
    against: `${baseName} ${base.reqPerSec.toFixed(0)}/s`,
    target: target
      ? `>= ${pct(target.ratioMin)}${target.p99MaxMs !== undefined ? `, p99 <= ${target.p99MaxMs} ms` : ''}`
      : '-',
    ...verdictOf(problems, failures(service) + failures(base), target !== null),
  };
}

/** Issue 18's webhook targets: draining 10,000 events over 10 endpoints, and commit-to-receipt at 500/s. */
/** Issue 37 raised issue 18's 2,000/s. */
export const DELIVERIES_PER_S_MIN = 2_500;
/** Issue 37: the PostgreSQL CPU of one delivery (the worker's claim and record, amortised). */
export const DELIVERY_PG_CPU_US_MAX = 300;
export const DELIVERY_P99_MS_MAX = 50;

/**
 * Webhook delivery (#4, raised by #18): throughput is how fast the worker drains a backlog committed at
 * once over the endpoints (the burst run); latency is commit-to-receipt while events arrive at 500/s (the
 * paced run), so the backlog of the burst does not count as latency.
 */
export function deliveryChecks(paced: DeliveryResult, burst: DeliveryResult, target: boolean): Check[] {
  const lost = paced.undelivered + burst.undelivered;
  const invalid = lost > 0 ? { verdict: 'invalid' as const, why: `${lost} events not delivered within 60 s` } : null;
  const throughput =
    target && burst.deliveriesPerSec < DELIVERIES_PER_S_MIN
      ? [`${burst.deliveriesPerSec.toFixed(0)}/s < ${DELIVERIES_PER_S_MIN}/s`]
      : [];
  const latency =
    target && paced.latencyP99Ms > DELIVERY_P99_MS_MAX
      ? [`p99 ${paced.latencyP99Ms} ms > ${DELIVERY_P99_MS_MAX} ms`]
      : [];
  return [
    {
      name: `webhook deliveries/s, ${burst.events} events committed at once (#18, #37)`,
      figure: `${burst.deliveriesPerSec.toFixed(0)} deliveries/s`,
      value: burst.deliveriesPerSec,
      unit: '/s',
      against: '-',
      target: target ? `>= ${DELIVERIES_PER_S_MIN}/s` : '-',
      ...(invalid ?? verdictOf(throughput, 0, target)),
    },
    {
      name: `webhook delivery: PostgreSQL CPU per delivery, ${burst.events} events at once (#37)`,
      figure:
        burst.postgresCpuUsPerDelivery === null
          ? 'not measured'
          : `${burst.postgresCpuUsPerDelivery} µs (paced: ${paced.postgresCpuUsPerDelivery} µs; writing an event: ${burst.writerCpuUsPerEvent} µs)`,
      value: burst.postgresCpuUsPerDelivery ?? 0,
      unit: 'µs',
      against: '-',
      target: target ? `<= ${DELIVERY_PG_CPU_US_MAX} µs` : '-',
      ...(invalid ??
        verdictOf(
          target && burst.postgresCpuUsPerDelivery !== null && burst.postgresCpuUsPerDelivery > DELIVERY_PG_CPU_US_MAX
            ? [`${burst.postgresCpuUsPerDelivery} µs > ${DELIVERY_PG_CPU_US_MAX} µs`]
            : [],
          0,
          target && burst.postgresCpuUsPerDelivery !== null,
        )),
    },
    {
      name: `webhook commit-to-receipt, ${paced.events} events at ${paced.offeredPerSec}/s (#18, #37)`,
      figure: `p50 ${paced.latencyP50Ms} ms, p99 ${paced.latencyP99Ms} ms (${paced.deliveriesPerSec.toFixed(0)}/s delivered)`,
      value: paced.latencyP99Ms,
      unit: 'ms',
      against: '-',
      target: target ? `p99 <= ${DELIVERY_P99_MS_MAX} ms` : '-',
      ...(invalid ?? verdictOf(latency, 0, target)),
    },
  ];
}

/** A figure under a ceiling (start-up time, memory); no ceiling (null) = informational. */
export function limitCheck(name: string, value: number, max: number | null, unit: string): Check {
  const problems = max !== null && value > max ? [`${Math.round(value)} ${unit} > ${max} ${unit}`] : [];
  return {
    name,
    figure: `${Math.round(value)} ${unit}`,
    value,
    unit,
    against: '-',
    target: max !== null ? `<= ${max} ${unit}` : '-',
    ...verdictOf(problems, 0, max !== null),
  };
}

export function p99Check(name: string, disturbed: LoadResult, calm: LoadResult, target: boolean): Check {
  const ratio = calm.latencyP99Ms > 0 ? disturbed.latencyP99Ms / calm.latencyP99Ms : 1;
  const problems =
    target && ratio > 1.2
      ? [`p99 ${disturbed.latencyP99Ms} ms is ${pct(ratio - 1)} above ${calm.latencyP99Ms} ms`]
      : [];
  return {
    name,
    figure: `p99 ${disturbed.latencyP99Ms} ms (${disturbed.reqPerSec.toFixed(0)} journeys/s)`,
    value: disturbed.latencyP99Ms,
    unit: 'ms',
    against: `healthy receiver: p99 ${calm.latencyP99Ms} ms (${calm.reqPerSec.toFixed(0)} journeys/s)`,
    target: target ? 'p99 within +20%' : '-',
    ...verdictOf(problems, failures(disturbed) + failures(calm), target),
  };
}

export function table(header: string[], rows: string[][], rightAligned: Set<number> = new Set()): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: string[]) =>
    cells
      .map((c, i) => (rightAligned.has(i) ? c.padStart(widths[i]!) : c.padEnd(widths[i]!)))
      .join('  ')
      .trimEnd();
  return [line(header), widths.map((w) => '-'.repeat(w)).join('  '), ...rows.map(line)].join('\n');
}

export function markdownTable(header: string[], rows: string[][]): string {
  const esc = (c: string) => c.replace(/\|/g, '\\|');
  return [
    `| ${header.map(esc).join(' | ')} |`,
    `|${header.map(() => '---').join('|')}|`,
    ...rows.map((r) => `| ${r.map(esc).join(' | ')} |`),
  ].join('\n');
}

export const LOAD_HEADER = [
  'scenario',
  'req/s',
  'p50 ms',
  'p99 ms',
  'max ms',
  'non-2xx',
  'errors',
  'server us',
  'postgres us',
  'driver us',
  'other load',
];

export function loadRow(r: LoadResult, unit = 'req/s'): string[] {
  const c = r.cpu;
  return [
    r.label,
    `${r.reqPerSec.toFixed(1)}${unit === 'req/s' ? '' : ` ${unit}`}`,
    String(r.latencyP50Ms),
    String(r.latencyP99Ms),
    String(r.latencyMaxMs),
    String(r.non2xx + r.warmupNon2xx),
    String(r.errors + r.timeouts + r.warmupErrors),
    c ? c.serverUsPerReq.toFixed(0) : '?',
    c ? (r.cpu && c.postgresUsPerReq > 0 ? c.postgresUsPerReq.toFixed(0) : '-') : '?',
    c ? c.driverUsPerReq.toFixed(0) : '?',
    c ? pct(c.otherBusy) : '?',
  ];
}

export const CHECK_HEADER = ['check', 'figure', 'against', 'target', 'verdict'];
export const checkRow = (c: Check): string[] => [
  c.name,
  c.figure,
  c.against,
  c.target,
  c.verdict === 'met'
    ? 'MET'
    : c.verdict === 'no target'
      ? '-'
      : `${c.verdict.toUpperCase()}${c.why ? ` (${c.why})` : ''}`,
];

export function pageRows(p: PageResult): string[][] {
  return [
    ['requests', String(p.requests)],
    [
      'bytes transferred (compressed, with headers)',
      `${p.bytesTransferred} B (${(p.bytesTransferred / 1024).toFixed(1)} KiB)`,
    ],
    ['DOMContentLoaded, loopback', ms(p.domContentLoadedMs)],
    ['DOMContentLoaded, emulated 3G (1.6 Mbit/s, 150 ms RTT)', ms(p.domContentLoaded3gMs)],
  ];
}

/** Above this share of the machine used by other work, a run is flagged as noisy. */
export const NOISY_OTHER_LOAD = 0.15;

/** Each check's headline figure over several full runs: every run's, the range, and how often it met its target. */
export function rangeRows(runs: Check[][]): string[][] {
  const names = [...new Set(runs.flatMap((checks) => checks.map((c) => c.name)))];
  const fmt = (v: number, unit: string) =>
    unit === '%'
      ? `${v.toFixed(1)}%`
      : `${v >= 100 ? Math.round(v) : v.toFixed(1)}${unit === '/s' ? '/s' : ` ${unit}`}`;
  return names.map((name) => {
    const found = runs.map((checks) => checks.find((c) => c.name === name));
    const values = found.filter((c): c is Check => c?.value !== undefined);
    const unit = values[0]?.unit ?? '';
    const min = Math.min(...values.map((c) => c.value!));
    const max = Math.max(...values.map((c) => c.value!));
    const targeted = found.filter((c) => c && c.verdict !== 'no target');
    const met = found.filter((c) => c?.verdict === 'met').length;
    return [
      name,
      ...found.map((c) => (c?.value !== undefined ? fmt(c.value, unit) : '-')),
      values.length ? `${fmt(min, unit)} - ${fmt(max, unit)}` : '-',
      targeted.length ? `met in ${met} of ${found.length}` : '-',
    ];
  });
}
