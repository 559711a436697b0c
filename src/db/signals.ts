// Queryable.signal: telling a channel's listeners that work committed, so a worker waiting on its poll
// interval looks now (issue 37: an event committed by a request is claimed by the delivery worker at once).
// The same process's listeners (db.listen) are told directly, with no round trip. On PostgreSQL the other
// processes are told by one NOTIFY sent after the commit, in a transaction of its own: a NOTIFY inside the
// writing transaction would make its commit wait on every other notifying commit (PostgreSQL serialises
// them on one lock; src/events/delivery.ts has the measurement). At most one NOTIFY per channel is on its
// way at a time; commits made meanwhile are covered by one more after it. A signal is a hint: a listener
// that misses one (a dropped connection, a failed NOTIFY) still looks on its own schedule.

/** The listeners of one storage handle and, on PostgreSQL, how a NOTIFY reaches other processes. */
export class Signals {
  private readonly local = new Map<string, Set<() => void>>();
  /** Channels with a NOTIFY on its way: 'again' when more commits came while it was. */
  private readonly sending = new Map<string, 'once' | 'again'>();

  constructor(private readonly notifyOthers: ((channel: string) => Promise<unknown>) | null) {}

  /** A listener in this process; returns its removal. */
  listen(channel: string, listener: () => void): () => void {
    const set = this.local.get(channel) ?? new Set<() => void>();
    this.local.set(channel, set);
    set.add(listener);
    return () => {
      set.delete(listener);
      if (set.size === 0 && this.local.get(channel) === set) this.local.delete(channel);
    };
  }

  /** Work signalled on channel has committed: tell this process's listeners now and the others' soon. */
  fire(channel: string): void {
    for (const listener of this.local.get(channel) ?? []) {
      try {
        listener();
      } catch {
        // A listener's own failure is its own; the others are still told.
      }
    }
    if (!this.notifyOthers) return;
    if (this.sending.has(channel)) {
      this.sending.set(channel, 'again');
      return;
    }
    this.sending.set(channel, 'once');
    void this.send(channel, this.notifyOthers);
  }

  private async send(channel: string, notify: (channel: string) => Promise<unknown>): Promise<void> {
    for (;;) {
      await notify(channel).catch(() => {});
      if (this.sending.get(channel) !== 'again') break;
      this.sending.set(channel, 'once');
    }
    this.sending.delete(channel);
  }
}

/** The channels a transaction signalled, fired once it commits (never when it rolls back). */
export class CommitSignals {
  private readonly channels = new Set<string>();

  constructor(private readonly signals: Signals) {}

  add(channel: string): void {
    this.channels.add(channel);
  }

  committed(): void {
    for (const channel of this.channels) this.signals.fire(channel);
  }
}
