// Connection generations on PostgreSQL, shared by the pool and the pipelines (src/db/postgres.ts).

/**
 * Which connections were opened since the last sign of a failover (a connection that failed as a
 * connection: DbError.dropsConnection). Older ones are closed when next taken.
 */
export class ConnectionEpoch {
  private current = 0;
  private readonly born = new WeakMap<object, number>();

  stamp(client: object): void {
    this.born.set(client, this.current);
  }
  isCurrent(client: object): boolean {
    return (this.born.get(client) ?? this.current) >= this.current;
  }
  advance(): void {
    this.current++;
  }
}
