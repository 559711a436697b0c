// A small in-process cache: entries expire a fixed time after they are set, and the whole map is
// cleared when it reaches its size limit (a burst of distinct keys cannot grow memory without bound).

export class ExpiringMap<K, V> {
  private readonly entries = new Map<K, { value: V; expiresAtMs: number }>();

  constructor(
    private readonly ttlMs: number,
    private readonly entriesMax: number,
  ) {}

  /** The value set for key less than ttlMs ago; undefined otherwise. */
  get(key: K): V | undefined {
    const entry = this.entries.get(key);
    if (!entry) return undefined;
    if (entry.expiresAtMs <= Date.now()) {
      this.entries.delete(key);
      return undefined;
    }
    return entry.value;
  }

  set(key: K, value: V): void {
    if (this.entries.size >= this.entriesMax) this.entries.clear();
    this.entries.set(key, { value, expiresAtMs: Date.now() + this.ttlMs });
  }

  delete(key: K): void {
    this.entries.delete(key);
  }

  clear(): void {
    this.entries.clear();
  }
}
