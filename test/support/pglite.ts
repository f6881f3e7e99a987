/**
 * Fresh PGlite stores for tests, cloned from the migrated image the global setup provides (see pglite-image.ts):
 * every test that needs an empty, migrated embedded store gets it here, never from initdb and the migrations.
 * Only test/server/migrations.test.ts runs the migrations on an empty database.
 */
import { mkdtempSync, openAsBlob } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { inject } from 'vitest';
import { openDatabase, type Database } from '../../src/server/db/db';
import { copyPgliteImageInto, ensurePgliteImage, type PgliteImage } from './pglite-image';

let image: Promise<PgliteImage> | undefined;
let tarball: Promise<Blob> | undefined;

/** The image the global setup built; built here (once per process) when a run has no global setup. */
function pgliteImage(): Promise<PgliteImage> {
  return (image ??= Promise.resolve(inject('pgliteImage') ?? ensurePgliteImage()));
}

/** A fresh in-memory PGlite holding the migrated, empty schema. */
export async function openMigratedPglite(): Promise<Database> {
  const blob = await (tarball ??= pgliteImage().then((paths) => openAsBlob(paths.tarball)));
  return openDatabase({ image: blob });
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
