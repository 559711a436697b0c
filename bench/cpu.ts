// CPU accounting around a run (Linux /proc; elsewhere it reports nothing): how much CPU the server,
// the PostgreSQL processes and the load driver used per request, and how busy the machine was with
// anything else. On a small shared machine a run next to someone's test suite is noise, not a result.
import { readFileSync, readdirSync } from 'node:fs';

const CLOCK_TICKS_PER_S = 100; // USER_HZ, 100 on every Linux this runs on

export interface CpuSnapshot {
  serverS: number;
  postgresS: number;
  driverS: number;
  busyS: number;
  totalS: number;
}

export interface CpuUsage {
  /** CPU microseconds per 2xx response. */
  serverUsPerReq: number;
  postgresUsPerReq: number;
  driverUsPerReq: number;
  /** Share of the machine's whole capacity (all CPUs) busy during the run, 0..1. */
  machineBusy: number;
  /** Share of capacity used by anything other than server, PostgreSQL and driver (other work, interrupts). */
  otherBusy: number;
}

/**
 * A process's CPU seconds. withReaped adds its reaped children's (cutime, cstime): for the postmaster,
 * that keeps the CPU of backends that ended during a run (a pool closing idle connections) in the sum.
 */
function processCpuS(pid: number | string, withReaped = false): number {
  // Fields after the ")" of the command name: utime, stime, cutime and cstime are the 12th to 15th.
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  const own = Number(fields[11]) + Number(fields[12]);
  return (withReaped ? own + Number(fields[13]) + Number(fields[14]) : own) / CLOCK_TICKS_PER_S;
}

/** The postmaster (…/bin/postgres) and its children (retitled "postgres: …"). */
function isPostgres(cmdline: string): boolean {
  const argv0 = cmdline.split('\0')[0] ?? '';
  return argv0.startsWith('postgres') || argv0.endsWith('/bin/postgres');
}

export function cpuSnapshot(serverPid: number | undefined): CpuSnapshot | null {
  try {
    let serverS = 0;
    let postgresS = 0;
    for (const entry of readdirSync('/proc')) {
      if (!/^\d+$/.test(entry)) continue;
      try {
        if (Number(entry) === serverPid) serverS = processCpuS(entry);
        else if (isPostgres(readFileSync(`/proc/${entry}/cmdline`, 'utf8'))) postgresS += processCpuS(entry, true);
      } catch {
        /* the process ended meanwhile */
      }
    }
    const ticks = readFileSync('/proc/stat', 'utf8').split('\n')[0]!.trim().split(/\s+/).slice(1).map(Number);
    const totalS = ticks.slice(0, 8).reduce((a, b) => a + b, 0) / CLOCK_TICKS_PER_S; // user..steal, not guest (counted in user)
    const idleS = (ticks[3]! + ticks[4]!) / CLOCK_TICKS_PER_S; // idle + iowait
    return { serverS, postgresS, driverS: processCpuS(process.pid), busyS: totalS - idleS, totalS };
  } catch {
    return null; // not Linux, or /proc not readable
  }
}

/** postgresIsOurs: false for embedded storage, where any PostgreSQL activity is someone else's work. */
export function cpuUsage(
  before: CpuSnapshot | null,
  after: CpuSnapshot | null,
  responses: number,
  postgresIsOurs: boolean,
): CpuUsage | null {
  if (!before || !after || responses <= 0) return null;
  const per = (s: number) => (s * 1e6) / responses;
  const total = after.totalS - before.totalS;
  const server = after.serverS - before.serverS;
  const postgres = after.postgresS - before.postgresS;
  const driver = after.driverS - before.driverS;
  const busy = after.busyS - before.busyS;
  return {
    serverUsPerReq: per(server),
    postgresUsPerReq: per(postgres),
    driverUsPerReq: per(driver),
    machineBusy: total > 0 ? busy / total : 0,
    otherBusy: total > 0 ? Math.max(0, busy - server - (postgresIsOurs ? postgres : 0) - driver) / total : 0,
  };
}
