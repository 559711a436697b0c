// The Payments page's query (issue 36): a merchant's sessions, newest first in keyset pages, narrowed by the
// filters and by a search fragment read as every kind it can be (session-search.ts). Built to stay fast at a
// million sessions per merchant (migrations 041 and 042): each kind is its own indexed lookup of session ids, the kinds
// UNION-ed, so no kind scans the merchant's sessions; without a search the list walks
// checkout_sessions_merchant_idx backwards and stops after a page. The CSV export runs the same query page by page.
import type { Queryable } from '../db/index.ts';
import { likePrefix } from '../db/like-pattern.ts';
import type { SessionRow } from './model.ts';
import type { SessionSearchTerms } from './session-search.ts';
import { PAYMENT_LATERAL, split, type Joined, type SessionPayment } from './session-list-store.ts';
import { SESSION_COLUMNS } from './store.ts';

export interface PaymentsFilter {
  merchantId: string;
  environment: string;
  terms: SessionSearchTerms | null;
  status?: string;
  /** The method's rail and network: those the session keeps (migration 042: of the attempt that paid it, else the latest try). */
  rail?: string;
  network?: string;
  paymentLinkId?: string;
  createdFrom?: Date;
  createdBefore?: Date;
}

/** A row of the Payments page and its export: the session, the attempt that paid it, and how the payer paid or tried to. */
export interface PaymentsRow {
  session: SessionRow;
  payment: SessionPayment | null;
  method: { rail: string; network: string | null } | null;
}

const toRow = (row: Joined): PaymentsRow => ({
  ...split(row),
  method: row.method_rail ? { rail: row.method_rail, network: row.method_network } : null,
});

/** A tsquery requiring each word as a word prefix (the words hold only letters and digits: nothing to escape). */
const namePrefixQuery = (words: readonly string[]) => words.map((word) => `${word}:*`).join(' & ');

/**
 * A kind of the search: `from` the rows it reads (sessions, or attempts joined to their session) and `where` its
 * own lookup; for `names`, `where` is the tsquery's parameter (see nameBranch).
 */
type Branch = { from: 'sessions' | 'attempts' | 'names'; where: string };

/** Sessions of the newest a name search reads before it turns to the GIN index (see nameBranch). */
export const NAME_WALK_ROWS = 2_000;
/** Matches of a name the GIN index hands over as ids at most; a name with more is found by walking (see nameBranch). */
export const NAME_INDEX_IDS_MAX = 2_000;

/** The conditions each kind of the search adds, one branch each. `param` numbers each value. */
function searchBranches(terms: SessionSearchTerms | null, param: (value: unknown) => string): Branch[] {
  if (!terms) return [{ from: 'sessions', where: 'true' }];
  const branches: Branch[] = [];
  const sessions = (where: string) => branches.push({ from: 'sessions', where });
  const attempts = (where: string) => branches.push({ from: 'attempts', where });
  if (terms.sessionId) sessions(`c.id = ${param(terms.sessionId)}`);
  if (terms.receiptNumber) sessions(`c.receipt_number = ${param(terms.receiptNumber)}`);
  if (terms.invoiceRefPrefix) sessions(`c.invoice_ref LIKE ${param(likePrefix(terms.invoiceRefPrefix))}`);
  if (terms.nameWords) branches.push({ from: 'names', where: param(namePrefixQuery(terms.nameWords)) });
  if (terms.amountMinor !== null) sessions(`c.amount_minor = ${param(terms.amountMinor)}`);
  if (terms.phone) attempts(`a.phone IS NOT NULL AND a.phone = ${param(terms.phone)}`);
  if (terms.phoneLast4) attempts(`a.phone IS NOT NULL AND right(a.phone, 4) = ${param(terms.phoneLast4)}`);
  if (terms.reference) {
    const reference = param(terms.reference);
    // Each OR-ed column has its own index (034, 033 and the primary key): a BitmapOr, then the merchant checked.
    attempts(
      `(a.provider_transaction_id = ${reference} OR (a.provider_reference = ${reference} AND a.provider_reference <> '') OR a.id = ${reference})`,
    );
  }
  return branches;
}

/**
 * The name kind's rows. The planner cannot weigh a prefix (it guesses 2% of rows for any `word:*`), so the branch
 * decides from what it reads, in three steps, each run only when the one before fell short:
 * 1. the newest `walkRows` sessions of the filter: a common name ("Ama" is every fortieth payer) fills the page here;
 * 2. the GIN index's matches, at most `idsMax` + 1 of them: when there are no more than `idsMax`, the name is rare
 *    and those are every match, read by id and sorted;
 * 3. more than `idsMax`: a common name the newest sessions did not hold (they were, say, one payer's), so the
 *    sessions are walked newest first until the page is full; with that many matches the walk ends soon.
 * Reading every GIN match of a common name instead (an array of 125,000 ids at a year's data) took 3.7 s at p99.
 * `few` is a MATERIALIZED CTE so that it is planned for all its rows (the GIN bitmap: a LIMIT would make the
 * planner walk every session for a rare name) and read only as far as the LIMIT. Each step's rows are exact.
 */
function nameBranch(query: string, filters: string, ordered: string, walkRows: string, idsMax: string): string {
  const matches = (alias: string) =>
    `to_tsvector('simple'::regconfig, coalesce(${alias}.customer_name, '')) @@ to_tsquery('simple'::regconfig, ${query})`;
  const limit = ordered.slice(ordered.lastIndexOf('LIMIT ') + 6);
  return `(WITH walk AS MATERIALIZED (
      SELECT w.id, w.created_at FROM (SELECT c.id, c.created_at, c.customer_name FROM checkout_sessions c
                                       WHERE ${filters} ORDER BY c.created_at DESC, c.id DESC LIMIT ${walkRows}) w
       WHERE ${matches('w')} ORDER BY w.created_at DESC, w.id DESC LIMIT ${limit}),
    few AS MATERIALIZED (
      SELECT n.id FROM checkout_sessions n WHERE n.merchant_id = $1 AND n.environment = $2 AND ${matches('n')}),
    found AS MATERIALIZED (
      SELECT ARRAY(SELECT id FROM few LIMIT ${idsMax}::int + 1) AS ids WHERE (SELECT count(*) FROM walk) < ${limit})
    SELECT id, created_at FROM walk
    UNION ALL
    (SELECT c.id, c.created_at FROM checkout_sessions c
      WHERE (SELECT cardinality(ids) FROM found) <= ${idsMax}
        AND c.id = ANY((SELECT ids FROM found)::text[]) AND ${filters} ${ordered})
    UNION ALL
    (SELECT c.id, c.created_at FROM checkout_sessions c
      WHERE (SELECT cardinality(ids) FROM found) > ${idsMax} AND ${matches('c')} AND ${filters} ${ordered}))`;
}

/** Where a page starts: the session's creation time as PostgreSQL keeps it (microseconds, as text) and its id. */
async function positionOf(db: Queryable, filter: PaymentsFilter, id: string) {
  const rows = await db.query<{ created_at: string }>(
    'SELECT created_at::text AS created_at FROM checkout_sessions WHERE id = $1 AND merchant_id = $2 AND environment = $3',
    [id, filter.merchantId, filter.environment],
  );
  return rows[0] ? { createdAt: rows[0].created_at, id } : null;
}

/**
 * Up to `limit` rows of the filter, newest first, after the session `afterId` (none when it is not the merchant's).
 * Each kind of the search is its own branch carrying every filter, the keyset and the LIMIT, ordered by creation:
 * the union of each branch's first rows holds the page, and the planner picks per branch between its lookup index
 * (few matches) and walking the merchant's sessions newest first until the page is full (many matches, e.g. a
 * school's one fee). The payment lateral runs for the page's rows only.
 */
export async function searchPayments(
  db: Queryable,
  filter: PaymentsFilter,
  afterId: string | null,
  limit: number,
): Promise<PaymentsRow[]> {
  const after = afterId ? await positionOf(db, filter, afterId) : null;
  if (afterId && !after) return [];
  const params: unknown[] = [filter.merchantId, filter.environment];
  const param = (value: unknown) => {
    params.push(value);
    return `$${params.length}`;
  };
  const where = ['c.merchant_id = $1', 'c.environment = $2'];
  if (filter.status) where.push(`c.status = ${param(filter.status)}`);
  if (filter.paymentLinkId) where.push(`c.payment_link_id = ${param(filter.paymentLinkId)}`);
  if (filter.createdFrom) where.push(`c.created_at >= ${param(filter.createdFrom)}`);
  if (filter.createdBefore) where.push(`c.created_at < ${param(filter.createdBefore)}`);
  if (filter.rail) where.push(`c.method_rail = ${param(filter.rail)}`);
  if (filter.network) where.push(`c.method_network = ${param(filter.network)}`);
  if (after) where.push(`(c.created_at, c.id) < (${param(after.createdAt)}::timestamptz, ${param(after.id)})`);
  const limitParam = param(limit);
  const filters = where.join(' AND ');
  const ordered = `ORDER BY c.created_at DESC, c.id DESC LIMIT ${limitParam}`;
  const branches = searchBranches(filter.terms, param).map((branch) => {
    if (branch.from === 'names')
      return nameBranch(branch.where, filters, ordered, param(NAME_WALK_ROWS), param(NAME_INDEX_IDS_MAX));
    // An attempts kind (phone, its last four digits, a reference) is read from its own index first, as an array of
    // session ids: few rows match, and the planner cannot tell how few (a last-four estimate led it to walk every
    // session newest first looking for them: 4.4 s at p99 on a million).
    const where =
      branch.from === 'sessions'
        ? branch.where
        : `c.id = ANY(ARRAY(SELECT a.session_id FROM payment_attempts a WHERE a.merchant_id = $1 AND a.environment = $2 AND ${branch.where}))`;
    return `(SELECT c.id, c.created_at FROM checkout_sessions c WHERE ${where} AND ${filters} ${ordered})`;
  });
  const rows = await db.query<Joined>(
    `SELECT ${SESSION_COLUMNS.replace(/(\w+)/g, 's.$1')}, p.*
       FROM (SELECT id, created_at FROM (${branches.join('\n UNION ')}) u
              ORDER BY created_at DESC, id DESC LIMIT ${limitParam}) h
       JOIN checkout_sessions s ON s.id = h.id ${PAYMENT_LATERAL}
      ORDER BY s.created_at DESC, s.id DESC`,
    params,
  );
  return rows.map(toRow);
}

/** True when the session is the merchant's in that environment (a page's cursor). */
export const sessionIsOwned = async (db: Queryable, merchantId: string, environment: string, id: string) =>
  (
    await db.query('SELECT 1 FROM checkout_sessions WHERE id = $1 AND merchant_id = $2 AND environment = $3', [
      id,
      merchantId,
      environment,
    ])
  ).length > 0;

/** The merchant's payment links as the filter's choices, newest first, at most `limit`. */
export const listLinkChoices = (db: Queryable, merchantId: string, environment: string, limit: number) =>
  db.query<{ id: string; name: string }>(
    'SELECT id, name FROM payment_links WHERE merchant_id = $1 AND environment = $2 ORDER BY created_at DESC, id DESC LIMIT $3',
    [merchantId, environment, limit],
  );
