// Start-up time and memory of the server (issue 18): from spawning the process to /readyz answering
// 200, and the resident set right after, on PostgreSQL and embedded storage with migrated storage
// (an existing database, an existing data dir). Each way of starting runs the same number of times,
// interleaved, so a busy machine slows all of them alike:
//   - tsx:      node --import tsx src/main.ts (the sources as they are)
//   - compiled: node scripts/start.mjs, what `npm start` runs (dist/main.js, built beforehand)
//   - before:   node --import tsx src/main.ts of another commit (STARTUP_BEFORE=<commit>), for a
//               baseline from the same run; its files come from `git archive`, nothing is checked out.
//
//   node --import tsx bench/startup.ts            STARTUP_RUNS=5 STARTUP_STORAGES=postgres,embedded
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ROOT, SIKA_MAIN, freePort, killAll, startServer, type Runner } from './processes.ts';
import { embeddedScratch, postgresScratch, type Scratch } from './storage.ts';

type StorageKind = 'postgres' | 'embedded';
interface Variant {
  label: string;
  runner: Runner;
  root: string;
}
interface Sample {
  startupMs: number;
  /** CPU used from spawn to ready: steadier than the wall time on a shared machine. */
  cpuMs: number | null;
  rssBytes: number | null;
  peakRssBytes: number | null;
}

const RUNS = Number(process.env.STARTUP_RUNS || 5);
const storages = (process.env.STARTUP_STORAGES || 'postgres,embedded').split(',').map((s) => s.trim()) as StorageKind[];
for (const s of storages)
  if (s !== 'postgres' && s !== 'embedded') throw new Error(`STARTUP_STORAGES: unknown storage "${s}"`);
const before = process.env.STARTUP_BEFORE || null;

/** The files of `commit` needed to run it through tsx, in a temp dir using this checkout's node_modules. */
function checkoutOf(commit: string): string {
  const dir = mkdtempSync(join(tmpdir(), 'sika-startup-before-'));
  const archive = execFileSync('git', ['archive', '--format=tar', commit, 'src', 'package.json', 'tsconfig.json'], {
    cwd: ROOT,
    maxBuffer: 64 * 1024 * 1024,
  });
  execFileSync('tar', ['-x', '-C', dir], { input: archive });
  symlinkSync(join(ROOT, 'node_modules'), join(dir, 'node_modules'));
  return dir;
}

function childEnv(scratch: Scratch, port: number): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env };
  for (const name of [
    'DATABASE_URL',
    'DATA_DIR',
    'REDIS_URL',
    'PORT',
    'BASE_URL',
    'LOG_LEVEL',
    'WORKERS',
    'NODE_OPTIONS',
  ])
    delete env[name];
  return { ...env, ...scratch.env, PORT: String(port), LOG_LEVEL: 'warn', WORKERS: 'on' };
}

async function startOnce(variant: Variant, scratch: Scratch): Promise<Sample> {
  const server = await startServer(
    `sika (${variant.label})`,
    SIKA_MAIN,
    childEnv(scratch, await freePort()),
    '/readyz',
    [],
    { runner: variant.runner, root: variant.root },
  );
  try {
    return {
      startupMs: server.startupMs,
      cpuMs: server.cpuMs(),
      rssBytes: server.rssBytes(),
      peakRssBytes: server.peakRssBytes(),
    };
  } finally {
    await server.stop();
  }
}

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
};
const mb = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(0)} MB`;

function row(storage: StorageKind, variant: Variant, samples: Sample[]): string[] {
  const times = samples.map((s) => s.startupMs);
  const rss = samples.map((s) => s.rssBytes).filter((v): v is number => v !== null);
  const peak = samples.map((s) => s.peakRssBytes).filter((v): v is number => v !== null);
  const cpu = samples.map((s) => s.cpuMs).filter((v): v is number => v !== null);
  return [
    storage,
    variant.label,
    `${Math.round(median(times))} ms`,
    `${Math.round(Math.min(...times))}-${Math.round(Math.max(...times))} ms`,
    cpu.length ? `${Math.round(median(cpu))} ms` : '-',
    rss.length ? mb(median(rss)) : '-',
    peak.length ? mb(median(peak)) : '-',
  ];
}

function table(rows: string[][]): string {
  const header = [
    'storage',
    'start',
    'start to ready (median)',
    'range',
    'CPU to ready (median)',
    'RSS at ready (median)',
    'peak RSS at ready (median)',
  ];
  const all = [header, ...rows];
  const widths = header.map((_, i) => Math.max(...all.map((r) => r[i]!.length)));
  const line = (r: string[]) => `| ${r.map((cell, i) => cell.padEnd(widths[i]!)).join(' | ')} |`;
  return [line(header), `|${widths.map((w) => '-'.repeat(w + 2)).join('|')}|`, ...rows.map(line)].join('\n');
}

async function main(): Promise<void> {
  const beforeRoot = before ? checkoutOf(before) : null;
  const variants: Variant[] = [
    ...(beforeRoot ? [{ label: `before: tsx @${before}`, runner: 'tsx' as const, root: beforeRoot }] : []),
    { label: 'tsx src/main.ts', runner: 'tsx', root: ROOT },
    { label: 'npm start (compiled)', runner: 'compiled', root: ROOT },
  ];
  const rows: string[][] = [];
  const stamp = `startup${Date.now()}`;
  try {
    for (const storage of storages) {
      const scratch = storage === 'postgres' ? await postgresScratch(stamp) : embeddedScratch();
      try {
        // One uncounted start per variant: migrates the storage and warms the file cache.
        for (const variant of variants) await startOnce(variant, scratch);
        const samples = new Map<Variant, Sample[]>(variants.map((v) => [v, []]));
        for (let run = 0; run < RUNS; run++) {
          for (const variant of variants) {
            const sample = await startOnce(variant, scratch);
            samples.get(variant)!.push(sample);
            console.error(
              `${storage} ${variant.label} #${run + 1}: ${Math.round(sample.startupMs)} ms (CPU ${sample.cpuMs ?? '-'} ms), RSS ${sample.rssBytes ? mb(sample.rssBytes) : '-'}`,
            );
          }
        }
        for (const variant of variants) rows.push(row(storage, variant, samples.get(variant)!));
      } finally {
        await scratch.drop();
      }
    }
  } finally {
    if (beforeRoot) rmSync(beforeRoot, { recursive: true, force: true });
  }
  console.log(`\n${RUNS} starts each, interleaved; migrated storage, workers on, no Redis.\n`);
  console.log(table(rows));
}

main().catch((error: unknown) => {
  killAll();
  console.error(error);
  process.exit(1);
});
