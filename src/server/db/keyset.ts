/** Generic keyset pagination over a table's `seq` column (creation order), scoped to one account. */
import type { Queryable } from './db';
import type { PageRequest, PageResult } from '../http/pagination';

/** Which rows a page is taken from. `table`, `columns` and filter column names are trusted SQL, never user input. */
export interface KeysetSource {
  table: 'sites' | 'flows' | 'handoffs' | 'destinations' | 'notification_endpoints' | 'erasures';
  columns: string;
  accountId: string;
  /** Equality filters, column name to value; undefined values are ignored. */
  filters?: Record<string, unknown>;
}

/**
 * One page in ascending creation order. A cursor resolves by id within the account only (not the filters), so a
 * walk survives an object changing under a filter; an id not in the account answers `'unknown_cursor'`.
 */
export async function selectPageBySeq<R extends { id: string }>(
  db: Queryable,
  source: KeysetSource,
  request: PageRequest,
): Promise<PageResult<R>> {
  const params: unknown[] = [source.accountId];
  const where = ['account_id = $1'];
  for (const [column, value] of Object.entries(source.filters ?? {})) {
    if (value === undefined) continue;
    params.push(value);
    where.push(`${column} = $${params.length}`);
  }
  let order = 'asc';
  if (request.cursor) {
    const [found] = await db.query<{ seq: string | number }>(
      `select seq from ${source.table} where account_id = $1 and id = $2`,
      [source.accountId, request.cursor.id],
    );
    if (!found) return 'unknown_cursor';
    params.push(found.seq);
    const backward = request.cursor.direction === 'before';
    where.push(`seq ${backward ? '<' : '>'} $${params.length}`);
    if (backward) order = 'desc';
  }
  params.push(request.limit + 1);
  const rows = await db.query<R>(
    `select ${source.columns} from ${source.table} where ${where.join(' and ')} order by seq ${order} limit $${params.length}`,
    params,
  );
  const hasMore = rows.length > request.limit;
  const page = rows.slice(0, request.limit);
  // Walking backward we read newest-first to take the items just before the cursor; hand them back ascending.
  if (order === 'desc') page.reverse();
  return { rows: page, hasMore };
}
