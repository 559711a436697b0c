// A CliIo over a test's storage: the CLI's commands run in this process (src/cli/main.ts run(), the code
// bin/sika.mjs runs) on t.db, with this process's OS user and host as the audit log's actor, as `sika` has.
import { hostname, userInfo } from 'node:os';
import { run } from '../../src/cli/main.ts';
import { cliActor, localCliUser, type CliIo } from '../../src/cli/common.ts';
import { deploymentSettingsOf } from '../../src/cli/deployment.ts';
import type { TestContext } from './helpers.ts';

/** What the audit log names a change made by `sika` from this machine: user@host. */
export const CLI_USER_AT_HOST = `${userInfo().username}@${hostname()}`;

/** A CliIo whose output lines are kept, on the test's storage and settings, acting as `as` (this OS user and host unless told). */
export function bufferIo(
  t: TestContext,
  stdin = '',
  as: { user: string; host: string } = localCliUser(),
): { io: CliIo; out: string[]; err: string[] } {
  const out: string[] = [];
  const err: string[] = [];
  const io: CliIo = {
    out: (line) => out.push(line),
    err: (line) => err.push(line),
    config: () => t.config,
    // The test server's own settings, as a command forwarded to it gets them.
    deployment: async () => deploymentSettingsOf(t.config),
    withDb: (fn) => fn(t.db),
    stdin: async () => stdin,
    stdinIsTerminal: false,
    cwd: process.cwd(),
    actor: cliActor(as.user, as.host),
  };
  return { io, out, err };
}

/** Runs `sika argv` on the test's storage (as this OS user and host, unless told); its exit code and output. */
export async function runCliHere(
  t: TestContext,
  argv: string[],
  stdin = '',
  as: { user: string; host: string } = localCliUser(),
): Promise<{ code: number; stdout: string; stderr: string }> {
  const { io, out, err } = bufferIo(t, stdin, as);
  const code = await run(argv, io);
  return { code, stdout: out.join('\n'), stderr: err.join('\n') };
}
