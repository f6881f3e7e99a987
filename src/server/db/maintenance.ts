/**
 * Upkeep of the embedded store: what autovacuum and the checkpointer do on a PostgreSQL server. PGlite runs neither,
 * so without this its tables would never be analyzed nor vacuumed, and its WAL would only grow:
 * - **Statistics that follow the tables' growth.** A statement prepared on a new store (every statement the service
 *   runs twice is prepared) keeps the plan it got while the tables were nearly empty: scans of whole tables, which
 *   cost more with every row. Measured on a store grown to 30,000 events after its plans were made: the delivery read
 *   and lock of 100 rows took 146 to 216 ms, 9 to 13 ms once the tables were analyzed (an ANALYZE makes PostgreSQL plan
 *   the statements on that table again). Statistics taken at the wrong time mislead as much: analyzing the new, empty
 *   store at start made the planner trust that its tables were empty, and the benchmark's webhook fell from 970 to
 *   291 reports/s. So, as autovacuum does, a table is analyzed when it has grown: when it holds at least
 *   ANALYZE_MIN_PAGES pages and more than ANALYZE_GROWTH times the pages it had when last analyzed (or was never
 *   analyzed). A table that keeps growing is analyzed a few times, each after it has half as many pages again.
 * - **The queues.** Every outbox row is inserted and deleted within seconds, and so are notifications, adjustment
 *   results and the reports of a burst waiting for their events (`report_fanouts`): vacuum gives their dead rows' space and index entries back, so the queues stay small however long the
 *   service runs.
 * - **Dead rows of the other tables.** An update leaves the row's old version behind, and a delete the row; the space
 *   of those dead rows serves new rows only after a VACUUM (PostgreSQL finds room for a row through the free space map,
 *   which only VACUUM fills). Measured on the store of one webhook benchmark run (64,955 reports, each event delivered
 *   once): the live rows of `events` filled 55 % of its table, the rest dead versions that no new event would ever
 *   reuse. So, as autovacuum does, a table is vacuumed at a check once its dead rows (PostgreSQL's own count) are more
 *   than VACUUM_MIN_DEAD_ROWS plus VACUUM_DEAD_SHARE of its live ones: `vacuum events` took 443 ms after that run, 12 ms
 *   when nothing had changed (the visibility map skips pages untouched since the last one). Dead rows cost only space,
 *   so this waits for the end of a burst, however long, and then for a moment without requests (QUIET_BEFORE_VACUUM_MS:
 *   the pass over the indexes holds the store for up to a second on a big table).
 * - **Dead rows left from before a start.** PGlite keeps those counts only while it runs: they start at zero each
 *   time the store is opened (measured: 10,000 dead rows counted, the store closed cleanly and opened again, 0; PGlite
 *   writes no statistics file). So the dead rows left from before a start were seen again only once the table had
 *   grown by half and was analyzed (an analysis estimates them): a service restarted every day (a deployment, a host's
 *   reboot) kept its tables up to half again larger than their rows need, and vacuumed them in larger pieces. After
 *   each start the maintenance therefore vacuums every table once, largest first, one table per check from the second
 *   check on (the queues keep their own turn; a table the rule vacuumed meanwhile counts as done). A table unchanged
 *   since its last vacuum takes little (PostgreSQL skips the pages its visibility map marks all-visible: 69 ms for
 *   300,000 rows, 84 ms for a million just after a start, 1 to 2 ms later), one with dead rows the time their cleanup
 *   takes, as it would under the rule (1.1 s after 5 % of that million were updated).
 * - **Transaction ids.** PostgreSQL stamps each row with the 32-bit id of the transaction that wrote it, and a row must
 *   be frozen (marked as older than every transaction) before 2^31 more transactions have passed, or it would seem to
 *   come from the future and vanish from every query. A server's autovacuum freezes any table, the system catalogs
 *   included, once its oldest unfrozen id is `autovacuum_freeze_max_age` (200 million) transactions old, and a server
 *   refuses new transactions before the limit. PGlite does neither: it runs PostgreSQL as a standalone backend, which
 *   only warns. Nothing else here froze the catalogs (the rows that describe the service's tables, written by its
 *   migrations), nor reliably a small table (accounts, sites) or a table only ever inserted into, so a busy store would
 *   have lost them after about two billion transactions (each write of a batch is one: at the benchmark's pace about 35
 *   million a day). So a check freezes the oldest table past FREEZE_MAX_AGE (`vacuum (freeze)`, one table per check,
 *   oldest first, catalogs included; after a burst, or during one once a table is past FREEZE_EVEN_IN_BURST_AGE); once
 *   every table is frozen the database's own age (`datfrozenxid`) follows. Measured on a new store: all 94 tables
 *   frozen in 37 ms; a table of a million rows (537 MB), 0.5 s, whether vacuumed before or not. The template databases
 *   (template0, template1) cannot be reached from the service's connection. initdb froze their rows and nothing writes
 *   to them, but their age still grows with every transaction, and the oldest database's age is what lets PostgreSQL
 *   trim its commit log (`pg_xact`, 256 KB a million transactions) and what it warns about at every transaction once
 *   near the limit. So the store freezes them when it opens, once they are past FREEZE_MAX_AGE (open-store.ts: each
 *   opened in a child process, 250 to 320 ms each), and a check tells a service that has run on past
 *   FREEZE_EVEN_IN_BURST_AGE to restart (once, at error level).
 * - **Checkpoints.** A PostgreSQL server's checkpointer makes one every `checkpoint_timeout` (5 minutes) or once
 *   `max_wal_size` of WAL was written. PGlite runs PostgreSQL as one standalone backend, which has no checkpointer and
 *   never asks for a checkpoint itself (PostgreSQL requests one for WAL volume only under a postmaster): measured, 258 MB
 *   of WAL written on a store, 17 segments in pg_wal, and its last checkpoint still the one from its start. Without
 *   this, the embedded store's WAL grows for as long as the service runs (a checkpoint came only with a clean stop),
 *   and a restart after a crash replays all of it (those 258 MB: 2.0 s, against 0.4 s for a clean open). A checkpoint
 *   lets PostgreSQL recycle the segments behind it (renamed for reuse, their blocks already on disk: a commit's fsync
 *   then allocates nothing, and the next batch of 25 snapshots measured 1.28 ms against 1.35 before). It writes the
 *   buffer pool's dirty pages and syncs the data files, holding the store meanwhile: 15 to 17 ms after 10 MB of
 *   snapshots' WAL, 45 to 131 ms after 64 MB, 133 to 197 ms after 256 MB (2026-11-27, this machine). Checkpoints too
 *   close together cost WAL instead: the first change to a page after a checkpoint writes the whole page into the WAL,
 *   and a snapshot's random token lands on a random page of its index. On a store of 800,000 snapshots, a snapshot
 *   wrote 2,070 to 2,250 bytes of WAL with a checkpoint every 64 MB, 1,020 to 1,110 with one every 256 MB. So one is
 *   made at a check when CHECKPOINT_WAL_BYTES were written since the last, or CHECKPOINT_EVERY_MS have passed and
 *   anything was.
 * PGlite runs one statement at a time, so each step is its own statement (others run between them), and ANALYZE
 * samples 3,000 rows per table instead of 30,000 (`default_statistics_target` 10): 11 to 55 ms per table on that store,
 * 93 ms for the queues' vacuum.
 */
import type { Database } from './db';
import { startPeriodic, type PeriodicLog } from '../periodic';

/** Tables whose rows come and go (vacuumed every VACUUM_EVERY_CHECKS checks). */
export const QUEUE_TABLES = ['outbox', 'adjustment_results', 'notifications', 'report_fanouts'] as const;

/** Whether a table is not one of the queues (which keep their own turn to be vacuumed). */
const isNotQueue = (table: string): boolean => !(QUEUE_TABLES as readonly string[]).includes(table);

/** A table is analyzed once it has at least this many pages… */
export const ANALYZE_MIN_PAGES = 8;
/** …and more than this many times the pages it had when it was last analyzed. */
export const ANALYZE_GROWTH = 1.5;

/** Statistics sample 300 times this many rows per table. */
const STATISTICS_TARGET = 10;

/** How often the tables' growth is looked at (at start, then every interval). */
export const CHECK_INTERVAL_MS = 30_000;
/** The queues are vacuumed at every this many checks after the one at start: every 5 minutes. */
export const VACUUM_EVERY_CHECKS = 10;

/** A checkpoint once this much WAL was written since the last: 16 segments, a quarter of PostgreSQL's `max_wal_size` (see above). */
export const CHECKPOINT_WAL_BYTES = 256 * 1024 * 1024;
/** …or once this long has passed since the last, if at least CHECKPOINT_MIN_WAL_BYTES were written: PostgreSQL's `checkpoint_timeout`. */
export const CHECKPOINT_EVERY_MS = 300_000;
/** Less WAL than one page beside the last checkpoint's own record: nothing a restart would take time to replay. */
export const CHECKPOINT_MIN_WAL_BYTES = 8192;

export interface CheckpointRule {
  walBytes: number;
  everyMs: number;
}

/** WAL written since the last checkpoint began (its own record included), and when that checkpoint was made. */
export async function walSinceCheckpoint(db: Database): Promise<{ bytes: number; checkpointAt: Date }> {
  const [row] = await db.query<{ bytes: number; checkpoint_at: Date }>(
    `select (pg_current_wal_lsn() - checkpoint_lsn)::float8 as bytes, checkpoint_time as checkpoint_at from pg_control_checkpoint()`,
  );
  return { bytes: Number(row!.bytes), checkpointAt: new Date(row!.checkpoint_at) };
}

/**
 * Makes a checkpoint when the rule says one is due (see the module's comment); returns how much WAL it covered and how
 * long it held the store, or null when none was due.
 */
export async function checkpointIfDue(
  db: Database,
  now: Date = new Date(),
  rule: CheckpointRule = { walBytes: CHECKPOINT_WAL_BYTES, everyMs: CHECKPOINT_EVERY_MS },
): Promise<{ walBytes: number; ms: number } | null> {
  const { bytes, checkpointAt } = await walSinceCheckpoint(db);
  const due = bytes >= rule.walBytes || (bytes >= CHECKPOINT_MIN_WAL_BYTES && now.getTime() - checkpointAt.getTime() >= rule.everyMs);
  if (!due) return null;
  const started = performance.now();
  await db.exec('checkpoint');
  return { walBytes: bytes, ms: Math.round(performance.now() - started) };
}

/**
 * Gives the space of the rows a purge deleted back to the table, on the embedded store (on PostgreSQL autovacuum does
 * it). PostgreSQL finds room for a new row through the table's free space map, which only VACUUM fills: without it
 * every new row went to the end of the table, and a table kept to its retention period still grew without end
 * (measured on 100,000 snapshots, 50,000 purged and 50,000 added four times: 78, 156, 234, 312 and 390 MB; with this,
 * 78 MB each time, the vacuum 234 to 288 ms). It visits the pages changed since its last run (PostgreSQL's visibility
 * map skips the others) and the table's indexes: at a million snapshots, an hour's 36,000 purged, 256 to 286 ms; the
 * first on a table never vacuumed before, 959 ms.
 */
export async function vacuumAfterPurge(db: Database, table: 'snapshots' | 'form_submissions'): Promise<void> {
  if (db.kind === 'pglite') await db.exec(`vacuum ${table}`);
}

/** The tables of the service's schema that have grown since they were last analyzed (see the rule above). */
export async function tablesToAnalyze(db: Database): Promise<string[]> {
  const rows = await db.query<{ name: string }>(
    `select c.relname as name
     from pg_class c join pg_namespace n on n.oid = c.relnamespace
     cross join lateral (select pg_relation_size(c.oid) / current_setting('block_size')::int as pages) s
     where c.relkind = 'r' and n.nspname = current_schema() and s.pages >= $1
       and (c.reltuples < 0 or s.pages > $2::float8 * greatest(c.relpages, 1))
     order by c.relname`,
    [ANALYZE_MIN_PAGES, ANALYZE_GROWTH],
  );
  return rows.map((r) => r.name);
}

/** A table other than the queues is vacuumed once it holds more dead rows than this… */
export const VACUUM_MIN_DEAD_ROWS = 1000;
/** …plus this share of its live rows: autovacuum's `autovacuum_vacuum_scale_factor`. */
export const VACUUM_DEAD_SHARE = 0.2;

/**
 * The tables of the service's schema, the queues left out, that hold at least ANALYZE_MIN_PAGES pages, largest first:
 * the ones vacuumed once after each start (see the module's comment).
 */
export async function tablesToVacuumAfterStart(db: Database): Promise<string[]> {
  const rows = await db.query<{ name: string }>(
    `select c.relname as name
     from pg_class c join pg_namespace n on n.oid = c.relnamespace
     where c.relkind = 'r' and n.nspname = current_schema()
       and pg_relation_size(c.oid) / current_setting('block_size')::int >= $1
     order by pg_relation_size(c.oid) desc, c.relname`,
    [ANALYZE_MIN_PAGES],
  );
  return rows.map((r) => r.name).filter(isNotQueue);
}

/** A table is frozen once its oldest unfrozen transaction id is this old: PostgreSQL's `autovacuum_freeze_max_age`. */
export const FREEZE_MAX_AGE = 200_000_000;
/** …and frozen even while reports arrive in a burst once it is this old (the limit is about 2,147 million). */
export const FREEZE_EVEN_IN_BURST_AGE = 1_000_000_000;

export interface FreezeRule {
  maxAge: number;
  evenInBurstAge: number;
}

/**
 * Every table of the database (the system catalogs included) whose oldest unfrozen transaction id, its TOAST table's
 * included, is older than `maxAge` transactions, oldest first, by the name PostgreSQL quotes it under.
 */
export async function tablesToFreeze(db: Database, maxAge: number = FREEZE_MAX_AGE): Promise<Array<{ name: string; age: number }>> {
  return db.query<{ name: string; age: number }>(
    `select name, age from (
       select c.oid::regclass::text as name,
         greatest(age(c.relfrozenxid), coalesce(age(t.relfrozenxid), 0))::int8::float8 as age
       from pg_class c left join pg_class t on t.oid = c.reltoastrelid
       where c.relkind in ('r', 'm')
     ) a
     where age > $1
     order by age desc, name`,
    [maxAge],
  );
}

/**
 * The cluster's other databases (template0 and template1, which the service's connection cannot reach) whose oldest
 * unfrozen transaction id is older than `maxAge`: the store freezes them when it opens (see open-store.ts).
 */
export async function otherDatabasesToFreeze(db: Database, maxAge: number = FREEZE_MAX_AGE): Promise<string[]> {
  const rows = await db.query<{ name: string }>(
    `select datname as name from pg_database
     where datname <> current_database() and age(datfrozenxid)::int8::float8 > $1
     order by datname`,
    [maxAge],
  );
  return rows.map((r) => r.name);
}

/**
 * Freezes the oldest table past the rule (see the module's comment), unless reports arrive in a burst and it is not yet
 * past `evenInBurstAge`; returns what it froze and how long it held the store, or null.
 */
export async function freezeOldestIfDue(
  db: Database,
  busy: boolean,
  rule: FreezeRule = { maxAge: FREEZE_MAX_AGE, evenInBurstAge: FREEZE_EVEN_IN_BURST_AGE },
): Promise<{ table: string; age: number; ms: number } | null> {
  const [oldest] = await tablesToFreeze(db, rule.maxAge);
  if (!oldest || (busy && oldest.age <= rule.evenInBurstAge)) return null;
  const started = performance.now();
  await db.exec(`vacuum (freeze) ${oldest.name}`); // a name as PostgreSQL's regclass quotes it
  return { table: oldest.name, age: oldest.age, ms: Math.round(performance.now() - started) };
}

/** The tables of the service's schema whose dead rows passed the rule above (PostgreSQL's own counts, kept at run time). */
export async function tablesToVacuum(db: Database): Promise<string[]> {
  const rows = await db.query<{ name: string }>(
    `select relname as name from pg_stat_user_tables
     where schemaname = current_schema() and n_dead_tup > $1 + $2::float8 * n_live_tup
     order by relname`,
    [VACUUM_MIN_DEAD_ROWS, VACUUM_DEAD_SHARE],
  );
  return rows.map((r) => r.name).filter(isNotQueue);
}

/**
 * Analyzes the tables that have grown; with `vacuumQueues` vacuums the queues, with `vacuumDead` every other table
 * whose dead rows passed the rule, and `alsoVacuum` besides (the next table of the vacuums after a start); one statement
 * each (see the module's comment).
 */
export async function maintainEmbeddedStore(
  db: Database,
  { vacuumQueues, vacuumDead = false, alsoVacuum }: { vacuumQueues: boolean; vacuumDead?: boolean; alsoVacuum?: string | undefined },
): Promise<{ analyzed: string[]; vacuumed: string[] }> {
  const analyzed = await tablesToAnalyze(db);
  const vacuumed = vacuumDead ? await tablesToVacuum(db) : [];
  if (alsoVacuum !== undefined && !vacuumed.includes(alsoVacuum)) vacuumed.push(alsoVacuum);
  if (analyzed.length > 0) await db.exec(`set default_statistics_target = ${STATISTICS_TARGET}`);
  for (const table of analyzed) await db.exec(`analyze ${quoteIdentifier(table)}`);
  if (vacuumQueues) for (const table of QUEUE_TABLES) await db.exec(`vacuum ${table}`);
  for (const table of vacuumed) await db.exec(`vacuum ${quoteIdentifier(table)}`);
  return { analyzed, vacuumed };
}

function quoteIdentifier(name: string): string {
  return `"${name.replaceAll('"', '""')}"`;
}

/**
 * Checks put off in a row, at most, while reports arrive in a burst. Each ANALYZE holds the embedded store's one
 * connection for its whole run (36 to 95 ms per table at the webhook benchmark's size, five tables after its ingest), and
 * during a burst every report in flight waits behind it: measured, the analyses fell inside the webhook's load window
 * and were the slowest statements of it. A burst that outlasts this many checks is analyzed anyway, so the plans keep up
 * with a long import.
 */
export const MAX_CHECKS_PUT_OFF = 2;

/**
 * How long reports must have stopped queueing for a burst to count as over: longer than a lull inside a burst (a
 * retry's pause, a client's next page), so that such a lull does not let a check in.
 */
export const QUIET_AFTER_BURST_MS = 2_000;

/**
 * How long no request may have come (health checks aside) for a vacuum of dead rows to start. Such a vacuum reads every
 * index of its table whole, whatever the number of dead rows: on `events` about 0.6 ms a thousand rows of the table
 * (211 ms at 352,000 events, 407 ms at 472,000; measured 2026-11-28, docs/benchmarks.md, the twenty-third pass), and
 * PGlite runs nothing else meanwhile: every request that arrives then waits for it. Dead rows cost only space, so the
 * vacuum waits for a moment without requests, as it waits for a burst's end: after a burst, the 50 reports a second of
 * the benchmark's delivery sample met that stall (its p99 701 and 836 ms, against 105 to 115 ms without it).
 */
export const QUIET_BEFORE_VACUUM_MS = 2_000;

/**
 * Checks in a row, at most, that a vacuum of dead rows is put off while requests keep coming (at CHECK_INTERVAL_MS:
 * 15 minutes): a store that never has a quiet moment still gets its space back, each time with one stall.
 */
export const MAX_VACUUM_PUT_OFF_CHECKS = 30;

export interface StoreMaintenanceOptions {
  db: Database;
  /** Failures; and each checkpoint and freeze at info level, as PostgreSQL's `log_checkpoints` does by default (no data in them). */
  log: PeriodicLog;
  /** Whether reports are arriving in a burst now (the service passes the webhook's signal): a check then waits. */
  intakeBusy?: () => boolean;
  /**
   * Whether no request has come for QUIET_BEFORE_VACUUM_MS (the service passes http/request-activity.ts's answer): a
   * vacuum of dead rows waits for it, at most MAX_VACUUM_PUT_OFF_CHECKS checks in a row. Always quiet when absent.
   */
  requestsQuiet?: () => boolean;
  /** When a checkpoint is due (tests use smaller figures); CHECKPOINT_WAL_BYTES and CHECKPOINT_EVERY_MS by default. */
  checkpoint?: CheckpointRule;
  /** The clock the checkpoint rule reads (tests inject one). */
  now?: () => Date;
  /** When a table is frozen (tests use smaller ages); FREEZE_MAX_AGE and FREEZE_EVEN_IN_BURST_AGE by default. */
  freeze?: FreezeRule;
}

/** Maintains the embedded store every CHECK_INTERVAL_MS (nothing on PostgreSQL: its autovacuum and checkpointer do it). */
export function startStoreMaintenance(options: StoreMaintenanceOptions): { stop(): Promise<void> } {
  if (options.db.kind !== 'pglite') return { stop: async () => undefined };
  let check = 0; // the one at start
  let putOff = 0;
  let vacuumPutOff = 0;
  // The vacuums after a start (see the module's comment): the tables to visit, listed at the second check, and every
  // table vacuumed since this start, by either rule.
  let afterStart: string[] | null = null;
  const vacuumedSinceStart = new Set<string>();
  let templatesReported = false;
  return startPeriodic(
    async () => {
      const busy = options.intakeBusy?.() ?? false;
      if (busy && putOff < MAX_CHECKS_PUT_OFF) {
        putOff++;
        return;
      }
      putOff = 0;
      const vacuumQueues = check > 0 && check % VACUUM_EVERY_CHECKS === 0;
      check++;
      // Dead rows cost only space: their vacuum waits for a burst's end, however long it lasts, and then for a moment
      // without requests (at most MAX_VACUUM_PUT_OFF_CHECKS checks in a row).
      const vacuumDead = !busy && ((options.requestsQuiet?.() ?? true) || vacuumPutOff >= MAX_VACUUM_PUT_OFF_CHECKS);
      if (!busy) vacuumPutOff = vacuumDead ? 0 : vacuumPutOff + 1;
      // The vacuums after a start begin at the second check: the start itself (its purge, its first analyses) comes first.
      if (vacuumDead && check > 1) afterStart ??= await tablesToVacuumAfterStart(options.db);
      const alsoVacuum = vacuumDead ? afterStart?.find((table) => !vacuumedSinceStart.has(table)) : undefined;
      const { vacuumed } = await maintainEmbeddedStore(options.db, { vacuumQueues, vacuumDead, alsoVacuum });
      for (const table of vacuumed) vacuumedSinceStart.add(table);
      const frozen = await freezeOldestIfDue(options.db, busy, options.freeze);
      if (frozen) options.log.info(frozen, 'embedded store: table frozen against transaction id wraparound');
      // The template databases are frozen only as the store opens: a service that runs on and on is told to restart.
      const unfrozen = templatesReported ? [] : await otherDatabasesToFreeze(options.db, options.freeze?.evenInBurstAge ?? FREEZE_EVEN_IN_BURST_AGE);
      if (unfrozen.length > 0) {
        templatesReported = true;
        options.log.error(
          { databases: unfrozen },
          'embedded store: template databases unfrozen for a billion transactions; restart the service, which freezes them as it opens the store',
        );
      }
      const checkpoint = await checkpointIfDue(options.db, options.now?.() ?? new Date(), options.checkpoint);
      if (checkpoint) {
        options.log.info({ walMb: Math.round(checkpoint.walBytes / 1_048_576), ms: checkpoint.ms }, 'embedded store checkpoint');
      }
    },
    CHECK_INTERVAL_MS,
    options.log,
    {
      name: 'maintenance of the embedded store',
      failure: 'maintenance of the embedded store (vacuum, analyze, freeze, checkpoint) failed; it runs again at the next interval',
    },
  );
}
