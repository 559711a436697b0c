// A merchant's object read by its primary key alone, the owner checked after the read: with merchant_id and
// environment in the WHERE clause the planner may take a (merchant_id, environment, ...) index instead and scan
// every row of the merchant (it does when statistics are missing: PGlite never analyzes, PostgreSQL not until
// autovacuum gets to it; a 10,000-session merchant made each read ~1.4 ms of database time instead of 0.09 ms).

/** The row when it is this merchant's in this environment, else null: a foreign id looks exactly like a missing one. */
export async function ownedRow<Row extends { merchant_id: string; environment: string }>(
  read: Promise<Row | null>,
  merchantId: string,
  environment: string,
): Promise<Row | null> {
  const row = await read;
  return row && row.merchant_id === merchantId && row.environment === environment ? row : null;
}
