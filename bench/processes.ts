// Child processes for the benchmark: a free port, the CLI, a server started and stopped cleanly.
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { once } from 'node:events';
import { join } from 'node:path';

export const ROOT = new URL('..', import.meta.url).pathname;

export async function freePort(): Promise<number> {
  const server = createServer();
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  if (!port) throw new Error('could not find a free port');
  return port;
}

/** Runs a command to completion; stdout is returned, a non-zero exit throws with stderr. */
export async function runCommand(args: string[], env: NodeJS.ProcessEnv, timeoutMs = 120_000): Promise<string> {
  const child = spawn(process.execPath, args, { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
  const [code, signal] = (await once(child, 'exit')) as [number | null, string | null];
  clearTimeout(timer);
  if (code !== 0) throw new Error(`${args.join(' ')} exited with ${code ?? signal}:\n${stderr || stdout}`);
  return stdout;
}

export interface Server {
  name: string;
  baseUrl: string;
  pid: number;
  /** From spawning the process to its ready path answering 200. */
  startupMs: number;
  /** The process's peak resident set size so far (VmHWM; null where /proc is not available). */
  peakRssBytes(): number | null;
  /** The process's resident set size now (VmRSS; null where /proc is not available). */
  rssBytes(): number | null;
  /** CPU time the process has used so far, user and system (null where /proc is not available). */
  cpuMs(): number | null;
  /** Log lines at warn or above (pino JSON level >= 40) and any non-JSON output, since start. */
  problemLines(): string[];
  stop(): Promise<void>;
}

/** A size line of /proc/<pid>/status (kB there) in bytes, or null. */
function procStatusBytes(pid: number, field: 'VmHWM' | 'VmRSS'): number | null {
  try {
    const kb = new RegExp(`${field}:\\s+(\\d+) kB`).exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1];
    return kb ? Number(kb) * 1024 : null;
  } catch {
    return null;
  }
}

/** utime + stime of /proc/<pid>/stat in milliseconds, or null. */
function procCpuMs(pid: number): number | null {
  try {
    // Fields after the command name (which may hold spaces), counted from the closing parenthesis.
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const ticksPerSecond = 100; // USER_HZ on Linux
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / ticksPerSecond;
  } catch {
    return null;
  }
}

const running = new Set<ChildProcess>();

/** Kills any server still running (bench failure or Ctrl-C). Only processes this bench started. */
export function killAll(): void {
  for (const child of running) child.kill('SIGKILL');
}

/** Sika's entry point: started the way `npm start` starts it unless the caller asks for tsx. */
export const SIKA_MAIN = 'src/main.ts';

/**
 * How a script is started: 'compiled' is `npm start`'s command (scripts/start.mjs, running the esbuild
 * output in dist/), for Sika's entry only; 'tsx' is `node --import tsx <script>`. BENCH_SIKA_RUNNER=tsx
 * puts Sika back on tsx (a CPU profile then names src/ files rather than dist/main.js).
 */
export type Runner = 'compiled' | 'tsx';

function defaultRunner(script: string): Runner {
  if (script !== SIKA_MAIN) return 'tsx';
  return process.env.BENCH_SIKA_RUNNER === 'tsx' ? 'tsx' : 'compiled';
}

/** Builds dist/ now if it is stale, so a server's start-up time never includes a build. */
async function ensureBuilt(root: string): Promise<void> {
  await runCommand([join(root, 'scripts', 'build.mjs'), '--if-stale'], process.env);
}

/**
 * Starts Sika (or another script) and waits until `readyPath` answers 200: `node [nodeArgs] scripts/start.mjs`
 * for the compiled runner, `node [nodeArgs] --import tsx <script>` for tsx.
 */
export async function startServer(
  name: string,
  script: string,
  env: NodeJS.ProcessEnv,
  readyPath: string,
  nodeArgs: string[] = [],
  {
    runner = defaultRunner(script),
    root = ROOT,
  }: { runner?: Runner /** Another checkout (bench/startup.ts's "before"). */; root?: string } = {},
): Promise<Server> {
  const port = Number(env.PORT);
  const baseUrl = `http://127.0.0.1:${port}`;
  if (runner === 'compiled' && script !== SIKA_MAIN)
    throw new Error(`only ${SIKA_MAIN} has a compiled build (asked for ${script})`);
  if (runner === 'compiled') await ensureBuilt(root);
  const args =
    runner === 'compiled' ? [...nodeArgs, join('scripts', 'start.mjs')] : [...nodeArgs, '--import', 'tsx', script];
  const spawnedAt = performance.now();
  const child = spawn(process.execPath, args, { cwd: root, env, stdio: ['ignore', 'pipe', 'pipe'] });
  running.add(child);
  const output: string[] = [];
  const problems: string[] = [];
  const collect = (chunk: Buffer) => {
    for (const line of chunk.toString().split('\n')) {
      if (line.trim() === '') continue;
      output.push(line);
      if (output.length > 200) output.shift();
      try {
        const entry = JSON.parse(line) as { level?: number };
        if (typeof entry.level === 'number' && entry.level >= 40) problems.push(line);
      } catch {
        problems.push(line);
      }
    }
  };
  child.stdout!.on('data', collect);
  child.stderr!.on('data', collect);
  let exited = false;
  const exit = once(child, 'exit').then(([code, signal]) => {
    exited = true;
    running.delete(child);
    return (code as number | null) ?? (signal as string);
  });

  const deadline = Date.now() + 60_000;
  for (;;) {
    if (exited) throw new Error(`${name} exited with ${await exit} before it was ready:\n${output.join('\n')}`);
    try {
      const response = await fetch(`${baseUrl}${readyPath}`);
      if (response.status === 200) break;
    } catch {
      /* not listening yet */
    }
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`${name} was not ready within 60 s:\n${output.join('\n')}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 25));
  }

  const startupMs = performance.now() - spawnedAt;
  return {
    name,
    baseUrl,
    pid: child.pid!,
    startupMs,
    peakRssBytes: () => procStatusBytes(child.pid!, 'VmHWM'),
    rssBytes: () => procStatusBytes(child.pid!, 'VmRSS'),
    cpuMs: () => procCpuMs(child.pid!),
    problemLines: () => [...problems],
    async stop() {
      if (exited) return;
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 20_000);
      await exit;
      clearTimeout(timer);
    },
  };
}
