/** Opens the store the settings name (PostgreSQL at DATABASE_URL, else PGlite in the data directory), migrated. */
import type { Settings } from '../settings';
import { openDatabase, type Database, type StoreReopened } from './db';
import { MIGRATIONS, migrate, migrationsUnknownHere } from './migrations';
import { lockDataDir } from './data-dir-lock';
import { describeStorePermissions, secureStoreFiles } from './store-permissions';
import { FREEZE_MAX_AGE, otherDatabasesToFreeze } from './maintenance';
import { freezeDatabases } from './pglite-thread';

export interface OpenStore {
  db: Database;
  /** Where the data lives, for messages: the PostgreSQL URL without its password, or the data directory. */
  location: string;
  /** Closes the database and releases the data directory. */
  close(): Promise<void>;
  /** The embedded store only: what securing its files did, as a log line (no personal data). */
  permissions?: string;
  /** The embedded store only: the template databases frozen as it opened (see maintenance.ts), if any. */
  frozenDatabases?: string[];
  /** Migrations recorded in the store that this version does not have (a newer version used it last), if any. */
  newerMigrations?: number[];
  /** The migrations this open applied to a store that had some already (an upgrade), if any; a new store's are left out. */
  upgradedWith?: number[];
}

/** The versions `migrate` applied, when the store had been migrated before (an upgrade, not a new store). */
export function upgradeOf(applied: readonly number[]): { upgradedWith?: number[] } {
  return applied.length > 0 && applied.length < MIGRATIONS.length ? { upgradedWith: [...applied] } : {};
}

/** Query settings of a PostgreSQL URL whose values hold no secret (every other value is hidden by redactDatabaseUrl). */
const HARMLESS_QUERY_SETTINGS = new Set(['sslmode', 'ssl', 'application_name', 'options', 'connect_timeout', 'host', 'port', 'sslrootcert', 'sslcert']);

/** A PostgreSQL URL fit to print: its password, and every query value but the harmless ones, replaced by `***`. */
export function redactDatabaseUrl(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password) parsed.password = '***';
    // node-postgres also reads the connection's settings from the query string (`?password=…`, `sslpassword`, …):
    // only the values of those known to hold no secret are kept.
    for (const name of new Set(parsed.searchParams.keys())) {
      if (!HARMLESS_QUERY_SETTINGS.has(name.toLowerCase())) parsed.searchParams.set(name, '***');
    }
    return parsed.toString();
  } catch {
    return 'postgres://…';
  }
}

/**
 * Opens and migrates the store; `owner` names the process in the embedded store's lock (for the error a second one
 * gets). `pgliteThread`: the embedded store on a worker thread of its own (the service) or in this thread (a command).
 */
export async function openStore(
  settings: Pick<Settings, 'databaseUrl' | 'dataDir'> & Partial<Pick<Settings, 'pgPoolSize'>>,
  owner: string,
  {
    pgliteThread = 'main',
    freezeAge = FREEZE_MAX_AGE,
    onReopened,
  }: { pgliteThread?: 'worker' | 'main'; freezeAge?: number; onReopened?: (event: StoreReopened) => void } = {},
): Promise<OpenStore> {
  if (settings.databaseUrl) {
    const db = await openDatabase({ databaseUrl: settings.databaseUrl, poolSize: settings.pgPoolSize });
    const { applied, newerMigrations } = await migrate(db)
      .then(async (applied) => ({ applied, newerMigrations: await migrationsUnknownHere(db) }))
      .catch(async (error) => {
        await db.close();
        throw error;
      });
    return {
      db,
      location: redactDatabaseUrl(settings.databaseUrl),
      close: () => db.close(),
      ...(newerMigrations.length > 0 ? { newerMigrations } : {}),
      ...upgradeOf(applied),
    };
  }
  // Private before PGlite writes a byte (the directory, and the umask for what it creates), and checked again after.
  const before = secureStoreFiles(settings.dataDir);
  const release = lockDataDir(settings.dataDir, owner);
  // What is open at any moment, so that a failure after the open (a migration, the freeze) closes it before the lock
  // goes: otherwise this process would keep the store's files (and on the worker, its thread) while the directory
  // looked free, and an open retried in this process would run a second PGlite on the same files.
  let db: Database | null = null;
  try {
    db = await openDatabase({ dataDir: settings.dataDir, pgliteThread, onReopened });
    const applied = await migrate(db);
    const newerMigrations = await migrationsUnknownHere(db);
    // The template databases, out of the service's reach, are frozen with the store closed (see maintenance.ts).
    const frozenDatabases = await otherDatabasesToFreeze(db, freezeAge);
    if (frozenDatabases.length > 0) {
      const closing = db;
      db = null;
      await closing.close();
      await freezeDatabases(settings.dataDir, frozenDatabases);
      db = await openDatabase({ dataDir: settings.dataDir, pgliteThread, onReopened });
    }
    const after = secureStoreFiles(settings.dataDir);
    const permissions = describeStorePermissions(settings.dataDir, { ...after, changed: before.changed + after.changed });
    const opened = db;
    return {
      db: opened,
      location: settings.dataDir,
      permissions,
      ...(frozenDatabases.length > 0 ? { frozenDatabases } : {}),
      ...(newerMigrations.length > 0 ? { newerMigrations } : {}),
      ...upgradeOf(applied),
      async close() {
        try {
          await opened.close();
        } finally {
          release();
        }
      },
    };
  } catch (error) {
    // The open's own error is the one to report; a failure to close as well would only hide it.
    await db?.close().catch(() => undefined);
    release();
    throw error;
  }
}
