/** SQL of the shared rate-limit counts (PostgreSQL, several instances): one batch adds and reads, one deletes. */
import type { Queryable } from '../db/db';
import type { SharedCount } from './window-counts';

/** A bucket's threshold: counts of at least `hits` are read back even for keys the instance has not seen. */
export interface HotThreshold {
  bucket: string;
  hits: number;
}

interface CountRow {
  bucket: string;
  key_id: string;
  hits: number;
}

/**
 * Adds this instance's counts of a window and answers, in one statement, each added key's total over every instance
 * and every other key of the window at or above its bucket's hot threshold. Rows are added in key order, so two
 * instances adding the same keys at once take their row locks in the same order (no deadlock).
 */
export async function addAndReadCounts(
  db: Queryable,
  windowStart: number,
  counts: readonly SharedCount[],
  hot: readonly HotThreshold[],
): Promise<SharedCount[]> {
  const sorted = [...counts].sort((a, b) => (a.bucket === b.bucket ? (a.id < b.id ? -1 : a.id > b.id ? 1 : 0) : a.bucket < b.bucket ? -1 : 1));
  const rows = await db.query<CountRow>(
    `with added as (
       insert into rate_limit_counts (bucket, key_id, window_start, hits)
       select bucket, key_id, $1::bigint, hits from unnest($2::text[], $3::text[], $4::int[]) with ordinality as t(bucket, key_id, hits, n)
        order by n
       on conflict (bucket, key_id, window_start) do update set hits = rate_limit_counts.hits + excluded.hits
       returning bucket, key_id, hits
     )
     select bucket, key_id, hits from added
     union all
     select c.bucket, c.key_id, c.hits
       from rate_limit_counts c
       join unnest($5::text[], $6::int[]) as h(bucket, threshold) on h.bucket = c.bucket
      where c.window_start = $1::bigint and c.hits >= h.threshold
        and not exists (select 1 from added a where a.bucket = c.bucket and a.key_id = c.key_id)`,
    [
      windowStart,
      sorted.map((c) => c.bucket),
      sorted.map((c) => c.id),
      sorted.map((c) => c.hits),
      hot.map((h) => h.bucket),
      hot.map((h) => h.hits),
    ],
  );
  return rows.map((row) => ({ bucket: row.bucket, id: row.key_id, hits: Number(row.hits) }));
}

/** Deletes the counts of windows that started before `windowStart`; returns how many rows went. */
export async function deleteCountsBefore(db: Queryable, windowStart: number): Promise<number> {
  const rows = await db.query<{ n: number }>(
    'with gone as (delete from rate_limit_counts where window_start < $1::bigint returning 1) select count(*)::int as n from gone',
    [windowStart],
  );
  return Number(rows[0]?.n ?? 0);
}
