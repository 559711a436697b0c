// Whether storage takes work now, as the background jobs see it. A job that fails because the database is
// gone (a crash, a failover: no primary for a few seconds) reports it here; every job then pauses instead of
// failing and logging on each tick, one probe asks the database every PROBE_INTERVAL_MS until a primary
// answers (Db.ping), and the jobs resume by themselves. One warning when the outage starts, one line when
// it ends, with its length. Watchers (the metrics) hear of both.
import { DbError, type Db } from './types.ts';

const PROBE_INTERVAL_MS = 500;

interface OutageLog {
  warn(obj: object, msg: string): void;
  info(obj: object, msg: string): void;
}

/** An outage began (available false), or ended after downMs. */
export type AvailabilityChange = { available: false } | { available: true; downMs: number };

export class StorageAvailability {
  private readonly watchers: ((change: AvailabilityChange) => void)[] = [];
  private downSinceMs: number | null = null;
  private probe: NodeJS.Timeout | null = null;
  private waiters: (() => void)[] = [];
  private stopped = false;

  constructor(
    private readonly db: Pick<Db, 'ping'>,
    private readonly log: OutageLog,
    private readonly probeIntervalMs = PROBE_INTERVAL_MS,
  ) {}

  get available(): boolean {
    return this.downSinceMs === null;
  }

  /**
   * A job's failure: true when it was storage being unreachable (the caller pauses and does not log it as
   * its own failure), false for any other error.
   */
  report(error: unknown): boolean {
    if (!(error instanceof DbError) || !error.dropsConnection) return false;
    if (this.downSinceMs === null && !this.stopped) {
      this.downSinceMs = Date.now();
      this.log.warn(
        { sqlstate: error.sqlState, err_message: error.message },
        'storage unavailable: background jobs paused until a primary answers',
      );
      this.tell({ available: false });
      this.scheduleProbe();
    }
    return true;
  }

  /** Calls watcher on every change from now on. */
  watch(watcher: (change: AvailabilityChange) => void): void {
    this.watchers.push(watcher);
  }

  /** Resolves at once while storage is available, else when it is back (or stop() is called). */
  whenAvailable(): Promise<void> {
    if (this.available || this.stopped) return Promise.resolve();
    return new Promise((resolve) => this.waiters.push(resolve));
  }

  stop(): void {
    this.stopped = true;
    if (this.probe) clearTimeout(this.probe);
    this.probe = null;
    this.release();
  }

  private scheduleProbe(): void {
    if (this.stopped) return;
    this.probe = setTimeout(() => {
      this.probe = null;
      this.db.ping().then(
        () => {
          const downMs = this.downSinceMs === null ? 0 : Date.now() - this.downSinceMs;
          this.downSinceMs = null;
          this.log.info({ down_ms: downMs }, 'storage available again: background jobs resumed');
          this.tell({ available: true, downMs });
          this.release();
        },
        () => this.scheduleProbe(),
      );
    }, this.probeIntervalMs);
    this.probe.unref();
  }

  private tell(change: AvailabilityChange): void {
    for (const watcher of this.watchers) watcher(change);
  }

  private release(): void {
    const waiters = this.waiters.splice(0);
    for (const resolve of waiters) resolve();
  }
}
