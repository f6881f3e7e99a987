/**
 * The databases store tests run against: embedded PGlite always, and a real PostgreSQL when TEST_DATABASE_URL is set.
 * A fresh PGlite is a clone of the migrated image (test/support/pglite.ts), not an initdb plus the migrations.
 */
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { openDatabase, type Database } from '../../../src/server/db/db';
import { migrate } from '../../../src/server/db/migrations';
import { openMigratedPglite, openUnmigratedPglite } from '../../support/pglite';

export interface DatabaseKind {
  name: 'pglite' | 'postgres';
  /** Opens a fresh, migrated, empty database of this kind. */
  open(): Promise<Database>;
  /** Opens a fresh database of this kind without any table: only the migrations' own test wants one. */
  openUnmigrated(): Promise<Database>;
}

const url = process.env.TEST_DATABASE_URL;
if (!url && process.env.CI) {
  throw new Error('TEST_DATABASE_URL is not set: CI must run the store tests against a real PostgreSQL (see .ci/run)');
}

/** A fresh, empty schema on the real server, so test files do not see each other's rows. */
async function openEmptyPostgres(serverUrl: string): Promise<Database> {
  const schema = `t_${randomBytes(6).toString('hex')}`;
  const admin = new pg.Client({ connectionString: serverUrl });
  await admin.connect();
  await admin.query(`create schema ${schema}`);
  await admin.end();
  const separator = serverUrl.includes('?') ? '&' : '?';
  return openDatabase({ databaseUrl: `${serverUrl}${separator}options=${encodeURIComponent(`-c search_path=${schema}`)}` });
}

/** A fresh schema on the real server, migrated (PostgreSQL runs the migrations in a fraction of a second). */
async function openFreshPostgres(serverUrl: string): Promise<Database> {
  const db = await openEmptyPostgres(serverUrl);
  await migrate(db);
  return db;
}

export const DATABASE_KINDS: DatabaseKind[] = [
  {
    name: 'pglite',
    open: openMigratedPglite,
    openUnmigrated: openUnmigratedPglite,
  },
  ...(url ? [{ name: 'postgres' as const, open: () => openFreshPostgres(url), openUnmigrated: () => openEmptyPostgres(url) }] : []),
];
