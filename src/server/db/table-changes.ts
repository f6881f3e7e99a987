/**
 * Per-process counters of writes to a table, for the caches of its rows that may be trusted only within one process:
 * the embedded store, whose data directory one process holds (data-dir-lock.ts). A writer notes its table before and
 * after each write; a cache keeps what it read only when the count did not move while it read, so a read that
 * overlapped a write is used once and never kept.
 */
import type { Queryable } from './db';

const counts = new Map<string, number>();

/** Notes a write to `table` (call before and after it). */
export function noteTableChanged(table: string): void {
  counts.set(table, (counts.get(table) ?? 0) + 1);
}

/** How many writes to `table` this process has noted. */
export function tableChanges(table: string): number {
  return counts.get(table) ?? 0;
}

/** Runs one write to `table`, noted before and after it. */
export async function writeNoted<T>(db: Queryable, table: string, sql: string, params: readonly unknown[]): Promise<T[]> {
  noteTableChanged(table);
  try {
    return await db.query<T>(sql, params);
  } finally {
    noteTableChanged(table);
  }
}
