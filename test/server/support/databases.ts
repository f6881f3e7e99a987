/** The databases store tests run against: embedded PGlite always, and a real PostgreSQL when TEST_DATABASE_URL is set. */
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { openDatabase, type Database } from '../../../src/server/db/db';
import { migrate } from '../../../src/server/db/migrations';

export interface DatabaseKind {
  name: 'pglite' | 'postgres';
  /** Opens a fresh, migrated, empty database of this kind. */
  open(): Promise<Database>;
}

const url = process.env.TEST_DATABASE_URL;
if (!url && process.env.CI) {
  throw new Error('TEST_DATABASE_URL is not set: CI must run the store tests against a real PostgreSQL (see .ci/run)');
}

/** A fresh schema on the real server, so test files do not see each other's rows. */
async function openFreshPostgres(serverUrl: string): Promise<Database> {
  const schema = `t_${randomBytes(6).toString('hex')}`;
  const admin = new pg.Client({ connectionString: serverUrl });
  await admin.connect();
  await admin.query(`create schema ${schema}`);
  await admin.end();
  const separator = serverUrl.includes('?') ? '&' : '?';
  const db = await openDatabase({ databaseUrl: `${serverUrl}${separator}options=${encodeURIComponent(`-c search_path=${schema}`)}` });
  await migrate(db);
  return db;
}

export const DATABASE_KINDS: DatabaseKind[] = [
  {
    name: 'pglite',
    async open() {
      const db = await openDatabase({ dataDir: 'memory://' });
      await migrate(db);
      return db;
    },
  },
  ...(url ? [{ name: 'postgres' as const, open: () => openFreshPostgres(url) }] : []),
];
