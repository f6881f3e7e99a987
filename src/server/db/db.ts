/** The database handle: embedded PGlite by default, a real PostgreSQL through `pg` when a URL is given. Same SQL on both. */
import pg from 'pg';
import { fromTheStore, STORE_STOPPED_CODE } from './store-trouble';
import { pgliteClientConfig, type ProtocolEndpoint } from './pglite-connection';
import { pgliteHere, pgliteOnWorker } from './pglite-thread';

/** Anything that runs parameterised SQL: the database or a transaction on it. */
export interface Queryable {
  /** Runs one statement with `$1`-style parameters and returns its rows. */
  query<T = Record<string, unknown>>(sql: string, params?: readonly unknown[]): Promise<T[]>;
}

/** A database: queries, transactions, a multi-statement exec for migrations, close. */
export interface Database extends Queryable {
  readonly kind: 'pglite' | 'postgres';
  /** Runs `fn` in one transaction; rolls back when it throws. */
  transaction<T>(fn: (tx: Queryable) => Promise<T>): Promise<T>;
  /** Runs a script of several statements (migrations). */
  exec(sql: string): Promise<void>;
  close(): Promise<void>;
  /**
   * The embedded store only (one connection): how many statements and transactions so far had to wait for it because
   * another held it. The delivery worker yields to callers who wait (see its restFactor). Absent on PostgreSQL, whose
   * pool serves side by side.
   */
  readonly waits?: () => number;
}

export interface DatabaseOptions {
  /** A postgres:// URL: use a real PostgreSQL server. */
  databaseUrl?: string | undefined;
  /** PGlite data directory; omitted or 'memory://' keeps the data in memory (tests). */
  dataDir?: string | undefined;
  /**
   * PGlite only: a data directory image (a `dumpDataDir` tarball) to start from instead of an empty cluster, so
   * tests clone one migrated database instead of running initdb and the migrations each time.
   */
  image?: Blob | undefined;
  /**
   * PGlite on its worker with a data directory on disk only: called after the store was opened again because it had
   * failed (its thread ended, or a statement's answer lacked its outcome).
   */
  onReopened?: ((event: StoreReopened) => void) | undefined;
  /**
   * PGlite only: the PGlite to speak to, opened (or lent) by the caller instead of here; its `close` is called when the
   * database is closed, and it is never opened again after a failure. The tests lend one PGlite from test file to test
   * file, emptied between them (test/support/pglite.ts): an open of the test image is 0.5 to 0.8 s of CPU.
   */
  endpoint?: (() => Promise<ProtocolEndpoint>) | undefined;
  /** PostgreSQL only: connections in the pool (settings.pgPoolSize); default 10. */
  poolSize?: number | undefined;
  /**
   * PGlite only: run it on a worker thread of its own (the service does: HTTP and SQL then use two cores; see
   * pglite-thread.ts), or in this thread (the default: one-off commands and tests' in-memory stores).
   */
  pgliteThread?: 'worker' | 'main' | undefined;
}

/** The embedded store opened again after a failure: the failure's code and how long the new open took (no statement, no value). */
export interface StoreReopened {
  reason: string;
  ms: number;
}

/** Connections per process to a PostgreSQL server when no setting says otherwise. */
export const DEFAULT_PG_POOL_SIZE = 10;

/** Opens the database the options name. */
export async function openDatabase(options: DatabaseOptions): Promise<Database> {
  if (options.databaseUrl) return openPostgres(options.databaseUrl, options.poolSize ?? DEFAULT_PG_POOL_SIZE);
  const { dataDir, image } = options;
  const onWorker = options.pgliteThread === 'worker';
  const open = options.endpoint ?? (() => (onWorker ? pgliteOnWorker : pgliteHere)({ dataDir, image }));
  // A store on disk behind a worker is opened again after a failure, as a restart would (PostgreSQL recovers from its
  // write-ahead log: what was committed is there, what was not is not); one in memory or in this thread cannot be.
  const reopens = options.endpoint === undefined && onWorker && dataDir !== undefined && dataDir !== 'memory://' && image === undefined;
  return openPglite(open, reopens, options.onReopened);
}

/**
 * Both stores speak through node-postgres: a pool of connections to a PostgreSQL server, or one connection to the
 * embedded PGlite (pglite-connection.ts: a statement's protocol messages go in together, to PGlite in this thread or on
 * its own worker thread). So the same SQL runs on both with the same type parsing, and both get prepared statements: a
 * statement's text seen a second time is prepared under a name (per connection, by node-postgres), and later runs skip
 * parsing and planning. Planning, not execution, was most of the cost of the hot statements (the delivery read joins
 * eight tables; the webhook's insert is four data-modifying CTEs): 5 to 15 times the cost of running them on the
 * embedded store (see docs/benchmarks.md).
 */
async function openPglite(
  openEndpoint: () => Promise<ProtocolEndpoint>,
  reopens: boolean,
  onReopened: DatabaseOptions['onReopened'],
): Promise<Database> {
  /** One PGlite and its connection; `failure` is set once the connection failed (it then runs nothing more). */
  interface Session {
    endpoint: ProtocolEndpoint;
    client: pg.Client;
    names: StatementNames;
    failure: Error | null;
  }
  const open = async (): Promise<Session> => {
    const endpoint = await openEndpoint();
    const client = new pg.Client(pgliteClientConfig(endpoint));
    const session: Session = { endpoint, client, names: new StatementNames(), failure: null };
    // The connection fails when PGlite's thread ended or an answer lacked its statement's outcome (pglite-connection.ts):
    // the statements in flight have failed with it already, and an 'error' event nobody listens to would end the process.
    client.on('error', (error: Error) => void (session.failure ??= error));
    await client.connect().catch(async (error: unknown) => {
      await endpoint.close().catch(() => undefined);
      throw error;
    });
    return session;
  };
  let session = await open();
  /** The session to run the next statement on: this one, or a new one when this one failed. */
  const usable = async (): Promise<Session> => {
    const failure = session.failure;
    if (!failure) return session;
    if (!reopens || !session.endpoint.abandon) {
      throw Object.assign(new Error(`the embedded database cannot run statements any more: ${failure.message}`), { code: STORE_STOPPED_CODE });
    }
    const started = performance.now();
    await session.endpoint.abandon();
    try {
      session = await open();
    } catch (error) {
      // Tried again at the next statement; meanwhile each is answered 503 store_unavailable.
      throw Object.assign(new Error(`the embedded database could not be opened again: ${(error as Error).message}`), { code: STORE_STOPPED_CODE });
    }
    onReopened?.({ reason: (failure as { code?: string }).code ?? 'connection_error', ms: Math.round(performance.now() - started) });
    return session;
  };
  // One connection: a transaction holds it from BEGIN to COMMIT, and everything else waits its turn (as PGlite runs
  // one statement at a time anyway).
  const { exclusive, waits } = serialized();
  return {
    kind: 'pglite',
    query: <T>(sql: string, params: readonly unknown[] = []) =>
      exclusive(async () => {
        const { client, names } = await usable();
        return runStatement<T>(client, names, sql, params);
      }),
    transaction: <T>(fn: (tx: Queryable) => Promise<T>) =>
      exclusive(async () => {
        const { client, names } = await usable();
        return inTransaction(client, names, fn);
      }),
    exec: (sql: string) =>
      exclusive(async () => {
        const { client } = await usable();
        await client.query(sql);
      }),
    waits,
    async close() {
      await exclusive(async () => {
        if (!session.failure) await session.client.end();
      });
      // A PGlite that failed is not asked to close (it may never answer): its thread is ended; in this thread it is
      // left to the garbage collector.
      if (!session.failure) await session.endpoint.close();
      else await session.endpoint.abandon?.();
    },
  };
}

async function openPostgres(url: string, poolSize: number): Promise<Database> {
  const pool = new pg.Pool({ connectionString: url, max: poolSize });
  // A connection that breaks while idle in the pool (the server restarted, a network partition) is reported on the pool,
  // and an 'error' event nobody listens to ends the process. The pool has already dropped that connection; the next
  // statement opens a fresh one, or fails and is answered 503 store_unavailable (store-trouble.ts). Nothing else to do.
  pool.on('error', () => undefined);
  // Fail at start, not at the first request, when the server is unreachable.
  await pool.query('select 1');
  const names = new StatementNames();
  return {
    kind: 'postgres',
    query: <T>(sql: string, params: readonly unknown[] = []) => runStatement<T>(pool, names, sql, params),
    async transaction<T>(fn: (tx: Queryable) => Promise<T>) {
      const client = await pool.connect().catch(rethrowFromTheStore);
      try {
        return await inTransaction(client, names, fn);
      } finally {
        client.release();
      }
    },
    async exec(sql: string) {
      await pool.query(sql).catch(rethrowFromTheStore);
    },
    close: () => pool.end(),
  };
}

/** Runs `fn` between BEGIN and COMMIT on one connection; rolls back when it throws. */
async function inTransaction<T>(client: pg.ClientBase, names: StatementNames, fn: (tx: Queryable) => Promise<T>): Promise<T> {
  const control = (sql: string) => client.query(sql).catch(rethrowFromTheStore);
  await control('begin');
  try {
    const result = await fn({ query: <R>(sql: string, params: readonly unknown[] = []) => runStatement<R>(client, names, sql, params) });
    await control('commit');
    return result;
  } catch (error) {
    await client.query('rollback').catch(() => undefined);
    throw error;
  }
}

/**
 * Runs one statement, prepared under its name when it has one. A prepared statement whose result type a migration
 * changed meanwhile (another instance upgraded the schema: PostgreSQL refuses with "cached plan must not change result
 * type") is prepared again under a fresh name and run once more.
 */
async function runStatement<T>(on: pg.Pool | pg.ClientBase, names: StatementNames, sql: string, params: readonly unknown[]): Promise<T[]> {
  const name = names.nameFor(sql);
  const values = params as unknown[];
  try {
    return (await on.query(name ? { name, text: sql, values } : { text: sql, values })).rows as T[];
  } catch (error) {
    if (!name || !isStalePlan(error)) throw fromTheStore(error);
    const fresh = names.rename(sql);
    return (await on.query(fresh ? { name: fresh, text: sql, values } : { text: sql, values }).catch(rethrowFromTheStore)).rows as T[];
  }
}

/** Rethrows an error of the store's driver marked as the store's when it is a network error (store-trouble.ts). */
function rethrowFromTheStore(error: unknown): never {
  throw fromTheStore(error);
}

function isStalePlan(error: unknown): boolean {
  return (error as { code?: unknown })?.code === '0A000' && /cached plan/.test(String((error as Error).message));
}

/** Most statement texts prepared per database handle: a bound on the server memory of a process's prepared statements. */
export const MAX_PREPARED_STATEMENTS = 400;

/**
 * Names for prepared statements, by text. A text is named at its second use (a statement run once, such as a
 * migration, is never prepared) and keeps its name for the life of the handle; texts beyond MAX_PREPARED_STATEMENTS
 * run unprepared. Every statement of the service is a constant text with parameters, so the set is small and fixed.
 */
export class StatementNames {
  readonly #names = new Map<string, string>();
  readonly #seen = new Set<string>();
  #next = 1;

  /** The name to run `sql` under, or undefined to run it unprepared. */
  nameFor(sql: string): string | undefined {
    const name = this.#names.get(sql);
    if (name) return name;
    if (this.#names.size >= MAX_PREPARED_STATEMENTS) return undefined;
    if (!this.#seen.has(sql)) {
      // Remembered texts are bounded too (statements that never repeat must not grow the set forever).
      if (this.#seen.size >= 4 * MAX_PREPARED_STATEMENTS) this.#seen.clear();
      this.#seen.add(sql);
      return undefined;
    }
    this.#seen.delete(sql);
    return this.#assign(sql);
  }

  /** A fresh name for `sql` (its prepared statement went stale). */
  rename(sql: string): string | undefined {
    return this.#names.has(sql) ? this.#assign(sql) : undefined;
  }

  #assign(sql: string): string {
    const name = `cnv_${this.#next++}`;
    this.#names.set(sql, name);
    return name;
  }
}

/**
 * A lock as a promise chain: each call of `exclusive` runs after the previous one settled. `waits` counts the calls
 * that found the lock held.
 */
function serialized(): { exclusive: <T>(fn: () => Promise<T>) => Promise<T>; waits: () => number } {
  let tail: Promise<unknown> = Promise.resolve();
  let active = 0;
  let waited = 0;
  const exclusive = <T>(fn: () => Promise<T>): Promise<T> => {
    if (active > 0) waited++;
    active++;
    const running = tail.then(fn, fn);
    // Settled before the caller's own continuation runs, so a caller's next statement does not count as waiting.
    const settled = () => void active--;
    tail = running.then(settled, settled);
    return running;
  };
  return { exclusive, waits: () => waited };
}
