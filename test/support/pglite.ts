/**
 * Fresh PGlite stores for tests, cloned from the migrated image the global setup provides (see pglite-image.ts):
 * every test that needs an empty, migrated embedded store gets it here, never from initdb and the migrations.
 * Only test/server/migrations.test.ts runs the migrations on an empty database.
 */
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { inject } from 'vitest';
import { openDatabase, type Database } from '../../src/server/db/db';
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

/** A fresh in-memory PGlite holding the migrated, empty schema. */
export async function openMigratedPglite(): Promise<Database> {
  return openDatabase({ image: await migratedImage() });
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
