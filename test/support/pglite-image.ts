/**
 * One migrated PGlite database, built once and cloned by every test that needs a fresh store: a fresh PGlite costs an
 * initdb (seconds of WASM on a busy machine), a clone costs a load. Two forms of the same image:
 * - `tarball`: PGlite's `dumpDataDir` of it without the template databases, for in-memory databases (`loadDataDir`);
 * - `dataDir`: the data directory on disk, for tests that start the service on a data directory (copy it, then start).
 * Beside it, `emptyTarball`: the same cluster before the migrations, for the tests that need a store without tables
 * (the migrations' own) or any store at all (the connection's and the engine's tests): each of those opens was an
 * initdb of its own, 4 to 6 s of CPU.
 * The image is cached under node_modules/.cache, keyed by the PGlite version, the migrations' SQL and the image's
 * format, so a change to any builds a new one and a run with no change builds nothing. No vitest imports here: the
 * global setup uses it.
 */
import { createHash, randomBytes } from 'node:crypto';
import { cpSync, existsSync, mkdirSync, readFileSync, readdirSync, renameSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join, sep } from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { openDatabase } from '../../src/server/db/db';
import { MIGRATIONS, migrate } from '../../src/server/db/migrations';

export interface PgliteImage {
  /** A `dumpDataDir` tarball (uncompressed) of the migrated database. */
  tarball: string;
  /** The migrated data directory, cleanly shut down: copy it, never open it in place. */
  dataDir: string;
  /** A `dumpDataDir` tarball of the cluster before the migrations: no table of ours. */
  emptyTarball: string;
}

const root = join(import.meta.dirname, '..', '..');
const CACHE_ROOT = join(root, 'node_modules', '.cache', 'cnv-test-pglite');

/** How the image is made (see inMemoryTarball): a change to it makes a new image, as a new migration does. */
const IMAGE_FORMAT = 3;

/** What the image depends on: the PGlite build, every migration and how the image is made. */
function imageKey(): string {
  // The package's exports hide its package.json; read it where the package's entry point lives.
  const entry = createRequire(import.meta.url).resolve('@electric-sql/pglite');
  const manifest = join(entry.slice(0, entry.lastIndexOf(`${sep}dist${sep}`)), 'package.json');
  const pgliteVersion = (JSON.parse(readFileSync(manifest, 'utf8')) as { version: string }).version;
  return createHash('sha256').update(JSON.stringify({ pgliteVersion, MIGRATIONS, IMAGE_FORMAT })).digest('hex').slice(0, 16);
}

function imageIn(dir: string): PgliteImage {
  return { tarball: join(dir, 'migrated.tar'), dataDir: join(dir, 'datadir'), emptyTarball: join(dir, 'empty.tar') };
}

/** The cached image, built first when missing. Safe when two runs build it at once (the second rename loses). */
export async function ensurePgliteImage(cacheRoot: string = CACHE_ROOT): Promise<PgliteImage> {
  const key = imageKey();
  const finalDir = join(cacheRoot, key);
  const image = imageIn(finalDir);
  if (existsSync(finalDir)) {
    const now = new Date();
    utimesSync(finalDir, now, now); // in use: see pruneOldImages
    return image;
  }

  const buildDir = `${finalDir}.build-${process.pid}-${randomBytes(4).toString('hex')}`;
  mkdirSync(buildDir, { recursive: true });
  try {
    const built = imageIn(buildDir);
    const initialized = await openDatabase({ dataDir: built.dataDir });
    await initialized.close();
    writeFileSync(built.emptyTarball, await inMemoryTarball(built.dataDir, join(buildDir, 'for-tarball')));
    const db = await openDatabase({ dataDir: built.dataDir });
    await migrate(db);
    await db.close();
    writeFileSync(built.tarball, await inMemoryTarball(built.dataDir, join(buildDir, 'for-tarball')));
    // Only a complete build is ever renamed into place, so the final directory existing means the image is whole.
    renameSync(buildDir, finalDir);
    pruneOldImages(cacheRoot, key);
  } catch (error) {
    rmSync(buildDir, { recursive: true, force: true });
    if (existsSync(finalDir)) return image; // another run finished it first (our rename found it there)
    throw error;
  }
  return image;
}

/**
 * A tarball for in-memory stores: the cluster (migrated or not) without its template databases. An in-memory store is only
 * ever reached through its `postgres` database: nothing creates a database from a template, and the template freeze of
 * maintenance.ts needs a data directory on disk (which keeps them: see `dataDir`). Dropped (by SQL, so the catalog
 * says so too), they took 15 of the tarball's 42 MB, and a store's load 0.75 s of CPU instead of 0.97 s (this 2-core
 * machine, side by side, 2026-11-29); a unit test run loads about 135 stores.
 */
async function inMemoryTarball(dataDir: string, scratch: string): Promise<Buffer> {
  cpSync(dataDir, scratch, { recursive: true });
  const pglite = await PGlite.create(scratch); // dumpDataDir on an instance not yet ready never settles
  try {
    for (const template of ['template1', 'template0']) {
      await pglite.exec(`alter database ${template} is_template false`);
      await pglite.exec(`drop database ${template}`);
    }
    await pglite.exec('checkpoint');
    return Buffer.from(await (await pglite.dumpDataDir('none')).arrayBuffer());
  } finally {
    await pglite.close();
    rmSync(scratch, { recursive: true, force: true });
  }
}

/**
 * Images of other migrations (an edited migration makes a new one) unused for an hour, and builds an interrupted run
 * left behind: removed, they are 80 MB each.
 */
function pruneOldImages(cacheRoot: string, keep: string): void {
  const hourAgo = Date.now() - 3600_000;
  for (const name of readdirSync(cacheRoot)) {
    if (name === keep) continue;
    const dir = join(cacheRoot, name);
    try {
      if (statSync(dir).mtimeMs < hourAgo) rmSync(dir, { recursive: true, force: true });
    } catch {
      // another run pruned it first
    }
  }
}

/**
 * Fills `dir` (new or empty) with the migrated data directory, so a service started on it as CNV_DATA_DIR skips initdb
 * and the migrations. For harnesses outside vitest (the browser tests' services); vitest tests use ./pglite.ts.
 */
export async function copyPgliteImageInto(dir: string, image?: PgliteImage): Promise<void> {
  cpSync((image ?? (await ensurePgliteImage())).dataDir, dir, { recursive: true });
}
