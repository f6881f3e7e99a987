/**
 * Fresh PGlite stores for tests, cloned from the migrated image the global setup provides (see pglite-image.ts):
 * every test that needs an empty, migrated embedded store gets it here, never from initdb and the migrations.
 * Only test/server/migrations.test.ts runs the migrations on an empty database.
 */
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { inject } from 'vitest';
import pg from 'pg';
import { openDatabase, type Database } from '../../src/server/db/db';
import { pgliteClientConfig, type ProtocolEndpoint } from '../../src/server/db/pglite-connection';
import { pgliteHere } from '../../src/server/db/pglite-thread';
import { migratedSchemaOf, printDifference, recordRefusal, refusalOfError, schemaPrint, type MigratedSchema, type Refusal } from './schema-print';
import { copyPgliteImageInto, ensurePgliteImage, type PgliteImage } from './pglite-image';

let image: Promise<PgliteImage> | undefined;
let tarball: Promise<Blob> | undefined;
let emptyTarball: Promise<Blob> | undefined;

/** The image the global setup built; built here (once per process) when a run has no global setup. */
function pgliteImage(): Promise<PgliteImage> {
  return (image ??= Promise.resolve(inject('pgliteImage') ?? ensurePgliteImage()));
}

/**
 * The image's tarball as a Blob that hands PGlite its bytes in one copy. PGlite reads the tarball it loads with
 * `arrayBuffer()`, which Node 20 assembles from the Blob's stream chunk by chunk: 250 to 400 ms of CPU for the image's
 * 42 MB, whether the Blob is backed by the file (`openAsBlob`) or by memory, about a third of a store's whole open.
 * A copy of bytes kept in memory takes a few milliseconds (a store's open went from about 0.9 to 0.6 s of CPU, side by
 * side); every test file opens one or more, some 110 a run.
 */
class ImageBlob extends Blob {
  readonly #bytes: Uint8Array<ArrayBuffer>;
  constructor(bytes: Uint8Array<ArrayBuffer>) {
    super([bytes]);
    this.#bytes = bytes;
  }
  override arrayBuffer(): Promise<ArrayBuffer> {
    return Promise.resolve(this.#bytes.slice().buffer); // a copy: PGlite may keep views of what it was given
  }
}

/** The migrated image as a Blob to hand PGlite as its `loadDataDir` (or openDatabase as its `image`). */
export function migratedImage(): Promise<Blob> {
  return (tarball ??= pgliteImage().then((paths) => new ImageBlob(readFileSync(paths.tarball))));
}

/**
 * The cluster before the migrations, as a Blob like migratedImage's: for a store without our tables, or any store at
 * all, without the initdb (4 to 6 s of CPU) of an in-memory PGlite opened without one.
 */
export function emptyImage(): Promise<Blob> {
  return (emptyTarball ??= pgliteImage().then((paths) => new ImageBlob(readFileSync(paths.emptyTarball))));
}

/**
 * PGlites that a test file closed, emptied, for the next test file of this process to use (the files of a vitest
 * worker run one after another in one process: vitest.config.ts). Opening the test image takes 0.5 to 0.8 s of CPU, and
 * a unit test run opens some 135 stores; emptying one takes a few milliseconds.
 *
 * Lent only as the image made it: at its return, a store whose schema or migrations differ from the image's (a test
 * created a table, altered one, recorded a migration) is closed instead, and so is one whose connection failed; the
 * tables are emptied (their sequences restarted), their planner statistics and activity counters cleared. What a
 * return keeps of the store is what no test of the image may rely on: its transaction ids, its WAL position and the
 * memory PGlite grew to; tests about the store's upkeep open a store of their own (`fresh`).
 */
const lendable: ProtocolEndpoint[] = [];
/** At most this many wait to be lent again (each holds its WASM memory, 100 to 300 MB). */
const MAX_LENDABLE = 2;

/** The image's print and the statement that empties its tables (all but the migrations' record), found once. */
let imageFacts: Promise<MigratedSchema> | undefined;

/** Runs statements on a PGlite's connection through node-postgres, as the stores do. */
async function onConnection<T>(endpoint: ProtocolEndpoint, fn: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client(pgliteClientConfig(endpoint));
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

function factsOf(endpoint: ProtocolEndpoint): Promise<MigratedSchema> {
  return (imageFacts ??= onConnection(endpoint, migratedSchemaOf));
}

/** A lent PGlite back from a test file: emptied and kept for the next one, or closed when it is not the image's any more. */
async function giveBack(endpoint: ProtocolEndpoint): Promise<void> {
  const kept = await onConnection(endpoint, async (client) => {
    await client.query('rollback'); // a transaction the test left open (outside one: a warning)
    await client.query('discard all'); // prepared statements, settings, temporary tables, advisory locks, LISTEN
    const facts = await factsOf(endpoint);
    const print = await schemaPrint(client);
    if (print !== facts.print) return refuse({ store: 'pglite', check: 'print', detail: printDifference(facts.print, print) });
    await client.query(facts.empty);
    // What the planner and the embedded store's upkeep read of the tables: as the image had it (a table analyzed by
    // one test file would plan another's statements by rows since gone).
    await client.query(`delete from pg_statistic where starelid in (select oid from pg_class where relnamespace = 'public'::regnamespace)`);
    await client.query('select pg_stat_reset()');
    return true;
  }).catch((error: unknown) => refuse(refusalOfError('pglite', error)));
  if (kept && lendable.length < MAX_LENDABLE) lendable.push(endpoint);
  else await endpoint.close();
}

function refuse(refusal: Refusal): false {
  recordRefusal(lending.refused, refusal);
  return false;
}

/**
 * How many stores this process loaded from the image, how many it lent again, and why the last few given back were not
 * (test/server/lent-stores.test.ts).
 */
export const lending = { loaded: 0, lentAgain: 0, refused: [] as Refusal[] };

/** A PGlite holding the migrated, empty schema: one given back by an earlier test file, or the image loaded. */
async function lentEndpoint(): Promise<ProtocolEndpoint> {
  const again = lendable.pop();
  if (again) lending.lentAgain++;
  else lending.loaded++;
  const endpoint = again ?? (await pgliteHere({ image: await migratedImage() }));
  await factsOf(endpoint); // read on the image as loaded, before any test changed it
  let returned = false;
  return {
    exec: (messages) => endpoint.exec(messages),
    close: () => (returned ? Promise.resolve() : ((returned = true), giveBack(endpoint))),
    // A store whose connection failed (its state unknown) is never lent again, nor asked to close (it may never
    // answer): left to the garbage collector, as the stores leave a PGlite of this thread that failed.
    abandon: () => ((returned = true), Promise.resolve()),
  };
}

/**
 * A fresh in-memory PGlite holding the migrated, empty schema: lent from the test files before (see `lendable`), or
 * with `fresh`, one no test used before (its statistics, transaction ids and WAL start from the image's).
 */
export async function openMigratedPglite(options: { fresh?: boolean } = {}): Promise<Database> {
  if (options.fresh) return openDatabase({ image: await migratedImage() });
  return openDatabase({ endpoint: lentEndpoint });
}

/** A fresh in-memory PGlite without any table (no migration run). */
export async function openUnmigratedPglite(): Promise<Database> {
  return openDatabase({ image: await emptyImage() });
}

/**
 * A new temporary data directory holding the migrated, empty store, for tests that start the service (or the CLI) on
 * CNV_DATA_DIR: the service's own open then finds a migrated database and skips initdb. The caller removes it.
 */
export async function seededDataDir(prefix = 'cnv-test-data-'): Promise<string> {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  await copyPgliteImageInto(dir, await pgliteImage());
  return dir;
}
