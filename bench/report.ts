// The printed tables and the verdicts against the issue's targets.
import { failures, type LoadResult } from './load.ts';

export type StorageKind = 'postgres' | 'embedded';

export interface Target {
  /** Minimum req/s as a fraction of the matching baseline route. */
  ratioMin: number;
  /** Maximum p99 latency, when the target has one. */
  p99MaxMs?: number;
}

/** The issue's targets; they are stated for PostgreSQL only (embedded figures are informational). */
export const TARGETS: Record<StorageKind, { create: Target; read: Target } | null> = {
  postgres: { create: { ratioMin: 0.5, p99MaxMs: 50 }, read: { ratioMin: 0.7 } },
  embedded: null,
};

export type Verdict = 'met' | 'missed' | 'invalid' | 'no target';

export interface Comparison {
  service: LoadResult;
  baseline: LoadResult;
  ratio: number;
  target: Target | null;
  verdict: Verdict;
  why: string;
}

export function compare(service: LoadResult, baseline: LoadResult, target: Target | null): Comparison {
  const ratio = baseline.reqPerSec > 0 ? service.reqPerSec / baseline.reqPerSec : 0;
  const failed = failures(service) + failures(baseline);
  if (failed > 0) return { service, baseline, ratio, target, verdict: 'invalid', why: `${failed} failed requests: not a result` };
  if (!target) return { service, baseline, ratio, target, verdict: 'no target', why: '' };
  const problems: string[] = [];
  if (ratio < target.ratioMin) problems.push(`ratio ${pct(ratio)} < ${pct(target.ratioMin)}`);
  if (target.p99MaxMs !== undefined && service.latencyP99Ms > target.p99MaxMs) problems.push(`p99 ${service.latencyP99Ms} ms > ${target.p99MaxMs} ms`);
  return { service, baseline, ratio, target, verdict: problems.length ? 'missed' : 'met', why: problems.join('; ') };
}

const pct = (x: number) => `${(x * 100).toFixed(1)}%`;
const targetText = (t: Target | null) => (t ? `>= ${pct(t.ratioMin)}${t.p99MaxMs !== undefined ? `, p99 <= ${t.p99MaxMs} ms` : ''}` : '-');

function table(header: string[], rows: string[][], rightAligned: Set<number>): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: string[]) =>
    cells.map((c, i) => (rightAligned.has(i) ? c.padStart(widths[i]!) : c.padEnd(widths[i]!))).join('  ').trimEnd();
  return [line(header), widths.map((w) => '-'.repeat(w)).join('  '), ...rows.map(line)].join('\n');
}

export function formatStorage(title: string, storage: StorageKind, create: Comparison, read: Comparison): string {
  const row = (r: LoadResult, ratio: string, target: string, verdict: string) => [
    r.label,
    r.reqPerSec.toFixed(1),
    String(r.latencyP50Ms),
    String(r.latencyP99Ms),
    String(r.non2xx + r.warmupNon2xx),
    String(r.errors + r.timeouts + r.warmupErrors),
    ratio,
    target,
    verdict,
  ];
  const verdictText = (c: Comparison) => (c.verdict === 'no target' ? '-' : c.verdict === 'met' ? 'MET' : `${c.verdict.toUpperCase()}${c.why ? ` (${c.why})` : ''}`);
  const rows = [
    row(create.service, pct(create.ratio), targetText(create.target), verdictText(create)),
    row(create.baseline, 'baseline', '', ''),
    row(read.service, pct(read.ratio), targetText(read.target), verdictText(read)),
    row(read.baseline, 'baseline', '', ''),
  ];
  const header = ['scenario', 'req/s', 'p50 ms', 'p99 ms', 'non-2xx', 'errors', 'vs base', 'target', 'verdict'];
  const all = [create.service, create.baseline, read.service, read.baseline];
  const statusLines = [
    ...all
      .filter((r) => r.non2xx + r.warmupNon2xx > 0)
      .map((r) => `  ${r.label}: status codes ${JSON.stringify(r.statusCodes)} (warm-up non-2xx: ${r.warmupNon2xx})`),
    ...all.filter((r) => r.replayed > 0).map((r) => `  ${r.label}: ${r.replayed} responses were idempotent replays (a key was reused)`),
  ];
  const cpuRows = all.map((r) => {
    const c = r.cpu;
    return c
      ? [r.label, c.serverUsPerReq.toFixed(0), storage === 'postgres' ? c.postgresUsPerReq.toFixed(0) : '-', c.driverUsPerReq.toFixed(0), pct(c.machineBusy), pct(c.otherBusy)]
      : [r.label, '?', '?', '?', '?', '?'];
  });
  const cpuTable = table(['CPU per request (us)', 'server', 'postgres', 'driver', 'machine busy', 'other load'], cpuRows, new Set([1, 2, 3, 4, 5]));
  const noisy = all.filter((r) => r.cpu && r.cpu.otherBusy > NOISY_OTHER_LOAD);
  const noiseLines = noisy.map(
    (r) => `  WARNING: other work used ${pct(r.cpu!.otherBusy)} of the machine during "${r.label}": that figure is noisy; rerun on a quiet machine.`,
  );
  return [`\n${title}`, table(header, rows, new Set([1, 2, 3, 4, 5, 6])), ...statusLines, '', cpuTable, ...noiseLines].join('\n');
}

/** Above this share of the machine used by other work, a run is flagged as noisy. */
export const NOISY_OTHER_LOAD = 0.15;
