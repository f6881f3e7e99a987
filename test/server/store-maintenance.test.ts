/**
 * The embedded store's maintenance (src/server/db/maintenance.ts), what a PostgreSQL server's autovacuum does: a table
 * analyzed once it has grown (never while it is nearly empty), the queues vacuumed, a check put off (for a while) while
 * reports arrive in a burst, a checkpoint once enough WAL was written or enough time has passed, every table vacuumed
 * once after a restart (PGlite forgets its dead-row counts), every table frozen before its transaction ids wrap around
 * (PGlite runs no autovacuum and never refuses a transaction), nothing run on PostgreSQL.
 */
import { rmSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { openMigratedPglite, seededDataDir } from '../support/pglite';
import { openDatabase, type Database } from '../../src/server/db/db';
import { openStore } from '../../src/server/db/open-store';
import {
  CHECK_INTERVAL_MS, CHECKPOINT_EVERY_MS, CHECKPOINT_MIN_WAL_BYTES, MAX_CHECKS_PUT_OFF, MAX_VACUUM_PUT_OFF_CHECKS, VACUUM_EVERY_CHECKS, checkpointIfDue,
  tablesToFreeze,
  VACUUM_DEAD_SHARE, VACUUM_MIN_DEAD_ROWS, maintainEmbeddedStore, startStoreMaintenance, tablesToAnalyze, tablesToVacuum,
  tablesToVacuumAfterStart, walSinceCheckpoint, type StoreMaintenanceOptions,
} from '../../src/server/db/maintenance';
import { createDeliveryFixture, insertReportedEvent, type DeliveryFixture } from './delivery/fixtures';

/**
 * Runs `n` checks of the maintenance as it runs by itself (the one at start, then one per interval; setInterval faked)
 * and waits for them to end.
 */
async function runChecks(n: number, options: StoreMaintenanceOptions): Promise<void> {
  vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval'] });
  try {
    const maintenance = startStoreMaintenance(options);
    vi.advanceTimersByTime((n - 1) * CHECK_INTERVAL_MS);
    await maintenance.stop(); // waits for the checks the intervals started
  } finally {
    vi.useRealTimers();
  }
}

/** A log that keeps nothing. */
const SILENT = { error: () => undefined, info: () => undefined };

describe('maintenance of the embedded store', () => {
  let db: Database;
  let fx: DeliveryFixture;
  beforeAll(async () => {
    db = await openMigratedPglite({ fresh: true }); // its statistics and WAL as the image left them
    fx = await createDeliveryFixture(db);
  });
  afterAll(() => db.close());

  const reltuples = async (table: string) =>
    (await db.query<{ n: number }>('select reltuples::float8 as n from pg_class where relname = $1', [table]))[0]!.n;
  const report = async (count: number) => {
    for (let i = 0; i < count; i++) await insertReportedEvent(db, fx);
  };

  it('leaves a new, nearly empty store unanalyzed: statistics taken now would tell the planner the tables are empty', async () => {
    await report(5);
    expect(await maintainEmbeddedStore(db, { vacuumQueues: false })).toEqual({ analyzed: [], vacuumed: [] });
    expect(await reltuples('events')).toBe(-1);
  });

  it('analyzes a table once it has grown, and again only when it has grown by half again', async () => {
    await report(295);
    const { analyzed } = await maintainEmbeddedStore(db, { vacuumQueues: false });
    expect(analyzed).toContain('events'); // the first table past ANALYZE_MIN_PAGES here
    expect(await reltuples('events')).toBe(300);
    expect(await tablesToAnalyze(db)).toEqual([]);
    await report(100);
    expect(await tablesToAnalyze(db)).not.toContain('events');
    await report(200);
    expect(await tablesToAnalyze(db)).toContain('events');
  });

  const outboxPages = async () => (await db.query<{ pages: number }>("select (pg_relation_size('outbox') / 8192)::int as pages"))[0]!.pages;

  const fanoutPages = async () => (await db.query<{ pages: number }>("select (pg_relation_size('report_fanouts') / 8192)::int as pages"))[0]!.pages;

  it('vacuums the queues: the pages of delivered outbox rows and of built reports are given back', async () => {
    await db.query('delete from outbox'); // delivered
    // A burst's reports waiting for their events, then built (webhook/deferred-fanout.ts deletes their rows).
    await db.query(`insert into report_fanouts (report_id, received_at) select 'rpt_' || g, now() from generate_series(1, 500) g`);
    await db.query('delete from report_fanouts');
    expect(await outboxPages()).toBeGreaterThan(0); // deleted rows keep their pages until a vacuum
    expect(await fanoutPages()).toBeGreaterThan(0);
    await maintainEmbeddedStore(db, { vacuumQueues: true });
    expect(await outboxPages()).toBe(0);
    expect(await fanoutPages()).toBe(0);
  });

  it('when it runs by itself: checks at start and every interval, and vacuums the queues at every tenth check after the first', async () => {
    const errors: unknown[] = [];
    const log = { error: (obj: object) => errors.push(obj), info: () => undefined };
    await report(40);
    await db.query('delete from outbox');
    // The check at start and n - 1 intervals.
    await runChecks(VACUUM_EVERY_CHECKS, { db, log });
    expect(await outboxPages()).toBeGreaterThan(0);
    await runChecks(VACUUM_EVERY_CHECKS + 1, { db, log });
    expect(await outboxPages()).toBe(0);
    expect(errors).toEqual([]);
  });

  it('puts its check off while reports arrive in a burst, at most MAX_CHECKS_PUT_OFF checks in a row', async () => {
    await report(400);
    expect(await tablesToAnalyze(db)).toContain('events');
    const errors: unknown[] = [];
    let busy = true;
    const checks = (n: number) => runChecks(n, { db, log: { error: (obj: object) => errors.push(obj), info: () => undefined }, intakeBusy: () => busy });
    await checks(MAX_CHECKS_PUT_OFF);
    expect(await tablesToAnalyze(db)).toContain('events'); // put off
    await checks(MAX_CHECKS_PUT_OFF + 1);
    expect(await tablesToAnalyze(db)).toEqual([]); // a burst that lasts is analyzed anyway
    await report(900);
    expect(await tablesToAnalyze(db)).toContain('events');
    busy = false;
    await checks(1);
    expect(await tablesToAnalyze(db)).toEqual([]); // no burst: at once
    expect(errors).toEqual([]);
  });

  /** PostgreSQL's counts of dead rows, as the next check reads them (a backend sends its counts at a statement's end). */
  const deadRowsCounted = async () => {
    await db.query('select pg_stat_force_next_flush()');
    await db.query('select 1');
  };
  const churn = async (table: string, rows: number, updates: number) => {
    await db.exec(`create table ${table} (id int primary key, state text, body text); create index ${table}_state on ${table} (state)`);
    await db.query(`insert into ${table} select g, 'new', repeat('x', 300) from generate_series(1, $1::int) g`, [rows]);
    for (let i = 0; i < updates; i++) await db.query(`update ${table} set state = $1`, [`state ${i}`]); // not HOT: state is indexed
  };
  /** Checks run with these options (a silent log), then the dead rows counted as the next check would read them. */
  const checksCounted = (options: Partial<StoreMaintenanceOptions>) => async (n: number) => {
    await runChecks(n, { db, log: SILENT, ...options });
    await deadRowsCounted();
  };
  const tableBytes = async (table: string) => Number((await db.query<{ n: string }>('select pg_relation_size($1) as n', [table]))[0]!.n);

  it('vacuums a table once its dead rows pass VACUUM_MIN_DEAD_ROWS plus VACUUM_DEAD_SHARE of its live ones, and its space then serves new rows', async () => {
    await churn('churned', 2_000, 1); // 2,000 dead: more than 1,000 + 0.2 x 2,000
    await churn('barely_changed', 1_000, 1); // 1,000 dead: fewer than 1,000 + 0.2 x 1,000
    expect(2_000).toBeGreaterThan(VACUUM_MIN_DEAD_ROWS + VACUUM_DEAD_SHARE * 2_000);
    await deadRowsCounted();
    const due = await tablesToVacuum(db);
    expect(due).toContain('churned');
    expect(due).not.toContain('barely_changed');
    expect(await maintainEmbeddedStore(db, { vacuumQueues: false })).toMatchObject({ vacuumed: [] }); // only when asked
    const { vacuumed } = await maintainEmbeddedStore(db, { vacuumQueues: false, vacuumDead: true });
    expect(vacuumed).toContain('churned');
    expect(vacuumed).not.toContain('barely_changed');
    await deadRowsCounted();
    expect(await tablesToVacuum(db)).not.toContain('churned');
    const size = await tableBytes('churned');
    await db.query(`insert into churned select g, 'new', repeat('x', 300) from generate_series(2001, 3900) g`);
    expect(await tableBytes('churned')).toBe(size); // the dead rows' pages took the new rows
  });

  it('vacuums dead rows only once reports stop arriving in a burst, even when the burst outlasts the checks put off', async () => {
    await churn('churned_in_burst', 2_000, 1);
    await deadRowsCounted();
    let busy = true;
    const checks = checksCounted({ intakeBusy: () => busy });
    await checks(MAX_CHECKS_PUT_OFF + 1); // the last one runs anyway, its analyses and checkpoint included
    expect(await tablesToVacuum(db)).toContain('churned_in_burst');
    busy = false;
    await checks(1);
    expect(await tablesToVacuum(db)).not.toContain('churned_in_burst');
  });

  it('vacuums dead rows only in a moment without requests, or once MAX_VACUUM_PUT_OFF_CHECKS checks in a row were put off', async () => {
    await churn('churned_under_requests', 2_000, 1);
    await deadRowsCounted();
    let quiet = false;
    const checks = checksCounted({ requestsQuiet: () => quiet });
    await checks(MAX_VACUUM_PUT_OFF_CHECKS); // requests all the while: each check puts the vacuum off
    expect(await tablesToVacuum(db)).toContain('churned_under_requests');
    quiet = true;
    await checks(1); // a quiet moment
    expect(await tablesToVacuum(db)).not.toContain('churned_under_requests');

    await db.query(`update churned_under_requests set state = 'again'`);
    await deadRowsCounted();
    quiet = false;
    await checks(MAX_VACUUM_PUT_OFF_CHECKS + 1); // requests that never stop: the check after the last put off vacuums
    expect(await tablesToVacuum(db)).not.toContain('churned_under_requests');
  });

  it('runs nothing on PostgreSQL, whose autovacuum and checkpointer do this', async () => {
    const untouched = {
      kind: 'postgres',
      exec: () => Promise.reject(new Error('must not run')),
      query: () => Promise.reject(new Error('must not run')),
    } as unknown as Database;
    const errors: unknown[] = [];
    const maintenance = startStoreMaintenance({ db: untouched, log: { error: (obj) => errors.push(obj), info: () => undefined } });
    await maintenance.stop();
    expect(errors).toEqual([]);
  });
});

describe('after a restart of the embedded store (PGlite starts its dead-row counts afresh)', () => {
  let dataDir: string;
  let db: Database | undefined;
  beforeAll(async () => {
    dataDir = await seededDataDir('cnv-maintenance-');
  });
  afterAll(async () => {
    await db?.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  const stats = async (table: string) =>
    (await db!.query<{ dead: number; vacuums: number }>(
      'select n_dead_tup::int as dead, vacuum_count::int as vacuums from pg_stat_user_tables where relname = $1',
      [table],
    ))[0]!;
  const counted = async () => {
    await db!.query('select pg_stat_force_next_flush()');
    await db!.query('select 1');
  };
  const bytes = async (table: string) => Number((await db!.query<{ n: string }>('select pg_relation_size($1) as n', [table]))[0]!.n);

  it('vacuums each table once, largest first, one a check from the second check on: dead rows from before the start are cleaned', async () => {
    db = await openDatabase({ dataDir });
    await db.exec('create table kept_rows (id int primary key, state text, body text); create index kept_rows_state on kept_rows (state)');
    await db.query(`insert into kept_rows select g, 'new', repeat('x', 300) from generate_series(1, 3000) g`);
    await db.query(`update kept_rows set state = 'paid'`); // not HOT: state is indexed
    await db.exec('analyze kept_rows'); // as the maintenance left it: analyzed at its size, so not analyzed again after the restart
    // A queue big enough to be listed, were the queues not left to their own turn.
    await db.query(`insert into report_fanouts (report_id, received_at) select 'rpt_' || g, now() from generate_series(1, 3000) g`);
    await counted();
    expect((await stats('kept_rows')).dead).toBe(3000);
    await db.close();

    db = await openDatabase({ dataDir }); // a restart
    await counted();
    expect((await stats('kept_rows')).dead).toBe(0); // forgotten: the rule alone would never vacuum it
    expect(await tablesToVacuum(db)).not.toContain('kept_rows');
    const order = await tablesToVacuumAfterStart(db);
    expect(order[0]).toBe('kept_rows'); // the largest table of this store
    const queuePages = await db.query<{ pages: number }>("select (pg_relation_size('report_fanouts') / 8192)::int as pages");
    expect(queuePages[0]!.pages).toBeGreaterThanOrEqual(8);
    expect(order).not.toContain('report_fanouts'); // the queues keep their own turn

    const errors: unknown[] = [];
    const checks = (n: number) => runChecks(n, { db: db!, log: { error: (obj: object) => errors.push(obj), info: () => undefined } });
    await checks(1); // the check at start leaves it for later
    await counted();
    expect((await stats('kept_rows')).vacuums).toBe(0);
    await checks(2 + order.length); // the second check vacuums it; the next ones vacuum the other tables
    await counted();
    expect((await stats('kept_rows')).vacuums).toBe(1); // once, not at every check
    expect(errors).toEqual([]);
    const size = await bytes('kept_rows');
    await db.query(`insert into kept_rows select g, 'new', repeat('x', 300) from generate_series(3001, 5800) g`);
    expect(await bytes('kept_rows')).toBe(size); // the old versions' space took the new rows
  });
});

describe('against transaction id wraparound (PGlite freezes nothing by itself)', () => {
  let db: Database;
  let dataDir: string;
  // A store on disk, as the service's: it has the template databases (the in-memory test image leaves them out).
  beforeAll(async () => {
    dataDir = await seededDataDir('cnv-wraparound-');
    db = await openDatabase({ dataDir });
  });
  afterAll(async () => {
    await db.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  /** Transactions that each take an id, as the service's writes do. */
  const transactions = async (n: number) => {
    for (let i = 0; i < n; i++) await db.query('select txid_current()');
  };
  const databaseAge = async () =>
    (await db.query<{ age: number }>('select age(datfrozenxid)::int as age from pg_database where datname = current_database()'))[0]!.age;
  const checks = async (n: number, busy: boolean, freeze: { maxAge: number; evenInBurstAge: number }) => {
    const infos: Array<{ level: 'info' | 'error'; obj: object; msg?: string | undefined }> = [];
    await runChecks(n, {
      db,
      log: {
        error: (obj: object, msg?: string) => infos.push({ level: 'error', obj, msg }),
        info: (obj: object, msg?: string) => infos.push({ level: 'info', obj, msg }),
      },
      intakeBusy: () => busy,
      freeze,
    });
    return infos;
  };

  it('freezes every table past the age, the catalogs included, oldest first, one a check, and the database\'s age follows', async () => {
    await transactions(60);
    const due = await tablesToFreeze(db, 50);
    expect(due.map((t) => t.name)).toEqual(expect.arrayContaining(['pg_class', 'pg_attribute', 'events', 'sites', 'accounts']));
    expect(due.map((t) => t.age)).toEqual([...due.map((t) => t.age)].sort((a, b) => b - a));
    expect(await databaseAge()).toBeGreaterThan(50);

    const log = await checks(due.length + 1, false, { maxAge: 50, evenInBurstAge: 1_000 });
    const frozen = log.filter((l) => l.msg === 'embedded store: table frozen against transaction id wraparound');
    expect(log.filter((l) => l.level === 'error')).toEqual([]);
    expect(frozen.length).toBeGreaterThan(due.length / 2); // one a check (other vacuums of a check freeze some too)
    expect(frozen.length).toBeLessThanOrEqual(due.length + 1);
    expect(frozen[0]!.obj).toMatchObject({ table: due[0]!.name });
    expect(await tablesToFreeze(db, 50)).toEqual([]);
    expect(await databaseAge()).toBeLessThan(50); // PostgreSQL moved the database's horizon on
  });

  it('freezes the template databases, which the service cannot reach, when the store opens and they are past the age', async () => {
    const dataDir = await seededDataDir('cnv-freeze-');
    try {
      const templateAges = async (store: { db: Database }) =>
        (await store.db.query<{ name: string; age: number }>(
          `select datname as name, age(datfrozenxid)::int as age from pg_database where datname like 'template%' order by 1`,
        )).map((r) => r.age);
      let store = await openStore({ dataDir, databaseUrl: undefined }, 'the test', { freezeAge: 50 });
      expect(store.frozenDatabases).toBeUndefined();
      for (let i = 0; i < 60; i++) await store.db.query('select txid_current()');
      expect(Math.min(...(await templateAges(store)))).toBeGreaterThan(50);
      await store.close();

      store = await openStore({ dataDir, databaseUrl: undefined }, 'the test', { freezeAge: 50 });
      expect(store.frozenDatabases).toEqual(['template0', 'template1']);
      expect(Math.max(...(await templateAges(store)))).toBeLessThan(50);
      expect(await store.db.query('select count(*)::int as n from sites')).toEqual([{ n: 0 }]); // the store opened again, as it was
      await store.close();
      store = await openStore({ dataDir, databaseUrl: undefined }, 'the test', { freezeAge: 50 });
      expect(store.frozenDatabases).toBeUndefined(); // nothing to do at the next start
      await store.close();
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  }, 60_000); // three opens of a store on disk and a freeze: about 8 s alone, over 20 s on a machine busy with CI

  it('tells a service that runs on and on, once, to restart so that the template databases are frozen', async () => {
    await transactions(60);
    const log = await checks(3, false, { maxAge: 50, evenInBurstAge: 55 });
    const told = log.filter((l) => l.level === 'error');
    expect(told).toHaveLength(1); // once, not at every check
    expect(told[0]!.obj).toEqual({ databases: ['template0', 'template1'] });
    expect(told[0]!.msg).toMatch(/restart the service/);
  });

  it('waits for a burst to end, unless a table is past the age that cannot wait', async () => {
    await transactions(60);
    expect((await tablesToFreeze(db, 50)).length).toBeGreaterThan(0);
    // The third check of a burst runs (MAX_CHECKS_PUT_OFF), but freezes nothing that can wait.
    await checks(MAX_CHECKS_PUT_OFF + 1, true, { maxAge: 50, evenInBurstAge: 1_000 });
    expect((await tablesToFreeze(db, 50)).length).toBeGreaterThan(0);
    const log = await checks(MAX_CHECKS_PUT_OFF + 1, true, { maxAge: 50, evenInBurstAge: 55 });
    expect(log.filter((l) => l.msg === 'embedded store: table frozen against transaction id wraparound')).toHaveLength(1);
  });
});

describe('checkpoints of the embedded store (PGlite has no checkpointer)', () => {
  let db: Database;
  beforeAll(async () => {
    db = await openMigratedPglite({ fresh: true }); // its WAL as the image left it, with nothing written since a checkpoint
    await db.exec('create table wal_filler (v text)');
  });
  afterAll(() => db.close());

  /** Writes about `bytes` of WAL (rows of 1,000 characters, too short to be compressed). */
  const writeWal = (bytes: number) =>
    db.query(`insert into wal_filler (v) select repeat('x', 1000) from generate_series(1, $1::int)`, [Math.ceil(bytes / 1000)]);
  const redo = async () => (await db.query<{ lsn: string }>('select redo_lsn::text as lsn from pg_control_checkpoint()'))[0]!.lsn;
  const MIB = 1024 * 1024;

  it('makes one once the rule\'s WAL was written since the last, and not again until more was', async () => {
    await db.exec('checkpoint');
    const rule = { walBytes: MIB, everyMs: 3_600_000 };
    const now = (await walSinceCheckpoint(db)).checkpointAt; // the time rule is not what decides here
    const before = await redo();
    await writeWal(MIB / 2);
    expect(await checkpointIfDue(db, now, rule)).toBeNull();
    expect(await redo()).toBe(before);
    await writeWal(MIB / 2 + 100_000);
    const written = (await walSinceCheckpoint(db)).bytes;
    expect(written).toBeGreaterThanOrEqual(MIB);
    expect(await checkpointIfDue(db, now, rule)).toEqual({ walBytes: written, ms: expect.any(Number) });
    expect(await redo()).not.toBe(before);
    expect((await walSinceCheckpoint(db)).bytes).toBeLessThan(CHECKPOINT_MIN_WAL_BYTES);
    expect(await checkpointIfDue(db, now, rule)).toBeNull();
  });

  it('makes one CHECKPOINT_EVERY_MS after the last if anything was written, never for a store left idle', async () => {
    await db.exec('checkpoint');
    const { checkpointAt } = await walSinceCheckpoint(db);
    const after = (ms: number) => new Date(checkpointAt.getTime() + ms);
    const before = await redo();
    expect(await checkpointIfDue(db, after(10 * CHECKPOINT_EVERY_MS))).toBeNull(); // idle: nothing to replay
    await writeWal(4 * CHECKPOINT_MIN_WAL_BYTES);
    expect(await checkpointIfDue(db, after(CHECKPOINT_EVERY_MS - 60_000))).toBeNull();
    expect(await redo()).toBe(before);
    expect(await checkpointIfDue(db, after(CHECKPOINT_EVERY_MS))).not.toBeNull();
    expect(await redo()).not.toBe(before);
  });

  it('is part of every check the maintenance makes by itself, and logged as PostgreSQL logs its checkpoints', async () => {
    await db.exec('checkpoint');
    await writeWal(300_000);
    const errors: unknown[] = [];
    const infos: Array<{ obj: object; msg?: string }> = [];
    const { checkpointAt } = await walSinceCheckpoint(db);
    const maintenance = startStoreMaintenance({
      db,
      log: { error: (obj: object) => errors.push(obj), info: (obj: object, msg?: string) => infos.push({ obj, msg }) },
      checkpoint: { walBytes: 256 * 1024, everyMs: CHECKPOINT_EVERY_MS },
      now: () => checkpointAt,
    });
    await maintenance.stop(); // waits for the check at start
    expect(errors).toEqual([]);
    expect((await walSinceCheckpoint(db)).bytes).toBeLessThan(CHECKPOINT_MIN_WAL_BYTES);
    expect(infos).toEqual([{ obj: { walMb: expect.any(Number), ms: expect.any(Number) }, msg: 'embedded store checkpoint' }]);
  });
});
