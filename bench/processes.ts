// Child processes for the benchmark: a free port, the CLI, a server started and stopped cleanly.
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { once } from 'node:events';

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
  /** Log lines at warn or above (pino JSON level >= 40) and any non-JSON output, since start. */
  problemLines(): string[];
  stop(): Promise<void>;
}

const running = new Set<ChildProcess>();

/** Kills any server still running (bench failure or Ctrl-C). Only processes this bench started. */
export function killAll(): void {
  for (const child of running) child.kill('SIGKILL');
}

/** Starts `node [nodeArgs] --import tsx <script>` and waits until `readyPath` answers 200. */
export async function startServer(name: string, script: string, env: NodeJS.ProcessEnv, readyPath: string, nodeArgs: string[] = []): Promise<Server> {
  const port = Number(env.PORT);
  const baseUrl = `http://127.0.0.1:${port}`;
  const spawnedAt = performance.now();
  const child = spawn(process.execPath, [...nodeArgs, '--import', 'tsx', script], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
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
    peakRssBytes() {
      try {
        const kb = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${child.pid}/status`, 'utf8'))?.[1];
        return kb ? Number(kb) * 1024 : null;
      } catch {
        return null;
      }
    },
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
