/** The database handle: embedded PGlite by default, a real PostgreSQL through `pg` when a URL is given. Same SQL on both. */
import { PGlite } from '@electric-sql/pglite';
import pg from 'pg';

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
  /** PostgreSQL only: connections in the pool (settings.pgPoolSize); default 10. */
  poolSize?: number | undefined;
}

/** Connections per process to a PostgreSQL server when no setting says otherwise. */
export const DEFAULT_PG_POOL_SIZE = 10;

/** Opens the database the options name. */
export async function openDatabase(options: DatabaseOptions): Promise<Database> {
  return options.databaseUrl
    ? openPostgres(options.databaseUrl, options.poolSize ?? DEFAULT_PG_POOL_SIZE)
    : openPglite(options.dataDir, options.image);
}

async function openPglite(dataDir: string | undefined, image: Blob | undefined): Promise<Database> {
  const pgliteOptions = image ? { loadDataDir: image } : {};
  const db = dataDir && dataDir !== 'memory://' ? new PGlite(dataDir, pgliteOptions) : new PGlite(pgliteOptions);
  await db.waitReady;
  return {
    kind: 'pglite',
    async query<T>(sql: string, params: readonly unknown[] = []) {
      return (await db.query<T>(sql, params as unknown[])).rows;
    },
    transaction<T>(fn: (tx: Queryable) => Promise<T>) {
      return db.transaction((tx) =>
        fn({
          async query<R>(sql: string, params: readonly unknown[] = []) {
            return (await tx.query<R>(sql, params as unknown[])).rows;
          },
        }),
      );
    },
    async exec(sql: string) {
      await db.exec(sql);
    },
    close: () => db.close(),
  };
}

async function openPostgres(url: string, poolSize: number): Promise<Database> {
  const pool = new pg.Pool({ connectionString: url, max: poolSize });
  // Fail at start, not at the first request, when the server is unreachable.
  await pool.query('select 1');
  return {
    kind: 'postgres',
    async query<T>(sql: string, params: readonly unknown[] = []) {
      return (await pool.query(sql, params as unknown[])).rows as T[];
    },
    async transaction<T>(fn: (tx: Queryable) => Promise<T>) {
      const client = await pool.connect();
      try {
        await client.query('begin');
        const result = await fn({
          async query<R>(sql: string, params: readonly unknown[] = []) {
            return (await client.query(sql, params as unknown[])).rows as R[];
          },
        });
        await client.query('commit');
        return result;
      } catch (error) {
        await client.query('rollback').catch(() => undefined);
        throw error;
      } finally {
        client.release();
      }
    },
    async exec(sql: string) {
      await pool.query(sql);
    },
    close: () => pool.end(),
  };
}
