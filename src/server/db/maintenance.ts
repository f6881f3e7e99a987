/**
 * Upkeep of the embedded store: what autovacuum does on a PostgreSQL server. PGlite runs no autovacuum, so without
 * this its tables would never be analyzed nor vacuumed:
 * - **Statistics.** A statement prepared on a new store (every statement the service runs twice is prepared) keeps the
 *   plan it got while the tables were nearly empty: scans of whole tables, which cost more with every row. Measured on
 *   a store grown to 30,000 events after its plans were made: the delivery read and lock of 100 rows took 146 to 216 ms,
 *   11 to 13 ms once the tables were analyzed (an ANALYZE makes PostgreSQL plan the prepared statements again).
 * - **The queues.** Every outbox row is inserted and deleted within seconds, and so are notifications and adjustment
 *   results: vacuum gives their dead rows' space and index entries back, so the queues stay small however long the
 *   service runs.
 * PGlite runs one statement at a time, so each step is its own statement (others run between them), and ANALYZE
 * samples 3,000 rows per table instead of 30,000 (`default_statistics_target` 10): 11 to 55 ms per table on that store,
 * 93 ms for the queues' vacuum. The large tables are not vacuumed: a vacuum of `events` would hold the store for as
 * long as it takes to visit every page changed since the last one; their dead row versions are pruned page by page as
 * PostgreSQL reads them.
 */
import type { Database } from './db';
import { startPeriodic, type PeriodicLog } from '../periodic';

/** Tables whose rows come and go (vacuumed and analyzed). */
export const QUEUE_TABLES = ['outbox', 'adjustment_results', 'notifications'] as const;

/** Statistics samples 300 times this many rows per table. */
const STATISTICS_TARGET = 10;

/** How often the embedded store is maintained (and once at start). */
export const MAINTENANCE_INTERVAL_MS = 5 * 60_000;

/** Vacuums the queues, then analyzes every other table of the service, one statement each. */
export async function maintainEmbeddedStore(db: Database): Promise<void> {
  await db.exec(`set default_statistics_target = ${STATISTICS_TARGET}`);
  for (const table of QUEUE_TABLES) await db.exec(`vacuum (analyze) ${table}`);
  const tables = await db.query<{ name: string }>(
    `select c.relname as name from pg_class c join pg_namespace n on n.oid = c.relnamespace
     where c.relkind = 'r' and n.nspname = current_schema() and c.relname <> all($1::text[]) order by c.relname`,
    [[...QUEUE_TABLES]],
  );
  for (const { name } of tables) await db.exec(`analyze ${quoteIdentifier(name)}`);
}

function quoteIdentifier(name: string): string {
  return `"${name.replaceAll('"', '""')}"`;
}

/** Maintains the embedded store at start and then every interval (nothing on PostgreSQL: its autovacuum does it). */
export function startStoreMaintenance(options: { db: Database; log: PeriodicLog; intervalMs?: number }): { stop(): Promise<void> } {
  if (options.db.kind !== 'pglite') return { stop: async () => undefined };
  return startPeriodic(
    () => maintainEmbeddedStore(options.db),
    options.intervalMs ?? MAINTENANCE_INTERVAL_MS,
    options.log,
    'maintenance of the embedded store (vacuum, analyze) failed; it runs again at the next interval',
  );
}
