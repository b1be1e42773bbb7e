/**
 * Cursor paging over a table listed newest first: ORDER BY created_at DESC, id (ascending among rows
 * of the same millisecond), which is the column order of the lists' indexes, so every page is one
 * index range read of at most limit + 1 rows whatever the table's size.
 *
 * A filter on a repeatable value (several statuses, several event types) is read as one range per
 * value (each from an index whose columns are merchant, value, created_at DESC, id) and the ranges
 * are merged here: `status IN (...)` with this ORDER BY would make SQLite sort every matching row.
 */
import { sql, type SelectQueryBuilder, type SqlBool } from 'kysely';

/** The position of a row in the list. */
export interface Cursor {
  createdAt: number;
  id: string;
}

export interface PageRequest {
  limit: number;
  /** Rows listed after (older than) this one. */
  startingAfter?: Cursor;
  /** Rows listed before (newer than) this one. */
  endingBefore?: Cursor;
  createdGte?: number;
  createdLt?: number;
}

export interface Page<T> {
  items: T[];
  /** More rows lie beyond this page in the direction read (older, or newer with endingBefore). */
  hasMore: boolean;
}

interface Positioned {
  created_at: number;
  id: string;
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type AnyQuery<O> = SelectQueryBuilder<any, any, O>;

/** One range of the page: bounds, direction and limit + 1 applied to a filtered query. */
function bounded<O extends Positioned>(q: AnyQuery<O>, page: PageRequest): AnyQuery<O> {
  if (page.createdGte !== undefined) q = q.where(sql<SqlBool>`created_at >= ${page.createdGte}`);
  if (page.createdLt !== undefined) q = q.where(sql<SqlBool>`created_at < ${page.createdLt}`);
  const after = page.startingAfter;
  const before = page.endingBefore;
  // The first condition bounds the index range; the second only drops rows of the cursor's millisecond.
  if (after) q = q.where(sql<SqlBool>`created_at <= ${after.createdAt}`).where(sql<SqlBool>`(created_at < ${after.createdAt} or id > ${after.id})`);
  if (before) q = q.where(sql<SqlBool>`created_at >= ${before.createdAt}`).where(sql<SqlBool>`(created_at > ${before.createdAt} or id < ${before.id})`);
  q = before ? q.orderBy(sql`created_at`, 'asc').orderBy(sql`id`, 'desc') : q.orderBy(sql`created_at`, 'desc').orderBy(sql`id`, 'asc');
  return q.limit(page.limit + 1);
}

/** List order: newest first, then id. */
function newestFirst(a: Positioned, b: Positioned): number {
  return b.created_at - a.created_at || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);
}

/**
 * One page: `parts` are the filtered queries whose union is the list (one per value of a repeatable
 * filter, or just one). Each is read as its own index range; the merged rows are in list order.
 */
export async function readPage<O extends Positioned>(parts: Array<AnyQuery<O>>, page: PageRequest): Promise<Page<O>> {
  const ranges = await Promise.all(parts.map((q) => bounded(q, page).execute()));
  // Ranges may overlap (a search by an amount that is also an order id): a row is listed once.
  const rows =
    ranges.length === 1
      ? ranges[0]!
      : ranges
          .flat()
          .sort(page.endingBefore ? (a, b) => newestFirst(b, a) : newestFirst)
          .filter((row, i, all) => i === 0 || all[i - 1]!.id !== row.id);
  const hasMore = rows.length > page.limit;
  const items = rows.slice(0, page.limit);
  if (page.endingBefore) items.reverse();
  return { items, hasMore };
}

/** The SQL of each range of a page, for EXPLAIN QUERY PLAN in tests and benchmarks. */
export function pageQueries<O extends Positioned>(parts: Array<AnyQuery<O>>, page: PageRequest) {
  return parts.map((q) => bounded(q, page).compile());
}
