/**
 * The databases store tests run against: embedded PGlite always, and a real PostgreSQL when TEST_DATABASE_URL is set.
 * A fresh PGlite is a clone of the migrated image (test/support/pglite.ts), not an initdb plus the migrations.
 */
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { openDatabase, type Database } from '../../../src/server/db/db';
import { migrate } from '../../../src/server/db/migrations';
import { openMigratedPglite, openUnmigratedPglite } from '../../support/pglite';
import { migratedSchemaOf, printDifference, recordRefusal, refusalOfError, schemaPrint, type MigratedSchema, type Refusal } from '../../support/schema-print';

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

/** A new, empty schema on the real server, so test files do not see each other's rows; its name. */
async function newSchema(serverUrl: string): Promise<string> {
  const schema = `t_${randomBytes(6).toString('hex')}`;
  const admin = new pg.Client({ connectionString: serverUrl });
  await admin.connect();
  await admin.query(`create schema ${schema}`);
  await admin.end();
  return schema;
}

/** The store on one schema of the real server. */
function openOnSchema(serverUrl: string, schema: string): Promise<Database> {
  const separator = serverUrl.includes('?') ? '&' : '?';
  return openDatabase({ databaseUrl: `${serverUrl}${separator}options=${encodeURIComponent(`-c search_path=${schema}`)}` });
}

async function openEmptyPostgres(serverUrl: string): Promise<Database> {
  return openOnSchema(serverUrl, await newSchema(serverUrl));
}

/** Runs `fn` on a connection of its own whose search_path is `schema`. */
async function onSchema<T>(serverUrl: string, schema: string, fn: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: serverUrl });
  await client.connect();
  try {
    await client.query(`set search_path to ${schema}`);
    return await fn(client);
  } finally {
    await client.end();
  }
}

/**
 * Migrated schemas that a test file closed, emptied, for the next test file of this process, as test/support/pglite.ts
 * lends embedded stores: a new schema is the migrations run again (about 0.3 s of the server's and this process's time,
 * some hundred a run), emptying one is a print of its catalog, a truncate and its planner statistics deleted. A schema
 * whose print is not the one it had when freshly migrated (a test created or altered a table, recorded a migration) is
 * left as it is, never lent again, and so is one that could not be emptied (a lock a test left, an error): the next
 * test file gets a new schema, so a refusal costs a migration run, never a test. Why each was refused is recorded
 * (`schemaLending.refused`).
 *
 * Each schema is compared with its own print, not with another schema's: the print holds the schema's name, as
 * PostgreSQL writes every index's table schema-qualified (pg_get_indexdef, since 10.3), and compared with the first
 * migrated schema of the process, every other one was refused. Once that first one was refused for a legitimate reason
 * (open-store.test.ts records a newer migration, prepared-statements.test.ts and others alter a table), its process
 * lent no schema again: lent-stores.test.ts failed when its worker had run such a file before it, which depends on how
 * the files fall between the two workers (a CI run, 2026-11-29).
 */
const lendableSchemas: string[] = [];
const MAX_LENDABLE_SCHEMAS = 4;
/** Each migrated schema's print and emptying statement, read when it was new. */
const migratedSchemas = new Map<string, MigratedSchema>();

async function newMigratedSchema(serverUrl: string): Promise<string> {
  const schema = await newSchema(serverUrl);
  const db = await openOnSchema(serverUrl, schema);
  try {
    await migrate(db);
  } finally {
    await db.close();
  }
  migratedSchemas.set(schema, await onSchema(serverUrl, schema, migratedSchemaOf));
  return schema;
}

async function giveBackSchema(serverUrl: string, schema: string): Promise<void> {
  const facts = migratedSchemas.get(schema)!;
  const kept = await onSchema(serverUrl, schema, async (client) => {
    await client.query(`set lock_timeout to '2s'`); // a connection a test left in a transaction: not lent again, never waited for
    const print = await schemaPrint(client);
    if (print !== facts.print) return refuse({ store: schema, check: 'print', detail: printDifference(facts.print, print) });
    await client.query('begin');
    await client.query(facts.empty);
    // The planner's statistics of the tables, which a truncate keeps (an analyze of an empty table too): a new schema
    // has none, and a file that analyzed thousands of rows (plans-at-scale.test.ts) would plan the next file's
    // statements by them. Deleting them takes a superuser, as CI's and the documented TEST_DATABASE_URL are.
    await client.query(`delete from pg_statistic where starelid in (select oid from pg_class where relnamespace = current_schema()::regnamespace)`);
    await client.query('commit');
    return true;
  }).catch((error: unknown) => refuse(refusalOfError(schema, error)));
  if (kept && lendableSchemas.length < MAX_LENDABLE_SCHEMAS) lendableSchemas.push(schema);
  else migratedSchemas.delete(schema);
}

function refuse(refusal: Refusal): false {
  recordRefusal(schemaLending.refused, refusal);
  return false;
}

/**
 * How many schemas this process migrated, how many it lent again, and why the last few given back were not
 * (test/server/lent-stores.test.ts).
 */
export const schemaLending = { migrated: 0, lentAgain: 0, refused: [] as Refusal[] };

/** A migrated, empty schema on the real server: one an earlier test file gave back, or a new one. */
async function openFreshPostgres(serverUrl: string): Promise<Database> {
  const again = lendableSchemas.pop();
  if (again) schemaLending.lentAgain++;
  else schemaLending.migrated++;
  const schema = again ?? (await newMigratedSchema(serverUrl));
  const db = await openOnSchema(serverUrl, schema);
  let returned = false;
  return {
    ...db,
    async close() {
      if (returned) return; // closed twice (a test's own close, then its cleanup's): given back once
      returned = true;
      await db.close();
      await giveBackSchema(serverUrl, schema);
    },
  };
}

export const DATABASE_KINDS: DatabaseKind[] = [
  {
    name: 'pglite',
    open: openMigratedPglite,
    openUnmigrated: openUnmigratedPglite,
  },
  ...(url ? [{ name: 'postgres' as const, open: () => openFreshPostgres(url), openUnmigrated: () => openEmptyPostgres(url) }] : []),
];
