/**
 * On PostgreSQL, `cnv webhook-secret rotate` and `cnv erase` without CNV_SECRET_KEY and without a secret.key in
 * CNV_DATA_DIR are refused before anything is written: they would otherwise make a new key and seal with it, and the
 * service (which runs with its own key) would refuse the printed webhook secret.
 */
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DATABASE_KINDS } from './support/databases';
import { cnv } from './support/cli-harness';
import type { Database } from '../../src/server/db/db';
import { TEST_SECRET_KEY } from './support/fixtures';

const kind = DATABASE_KINDS[0]!;
// A PostgreSQL setting for the command line; the store itself is the test's (io.db), never this address.
const PG = 'postgres://cnv@127.0.0.1:1/cnv';

describe('cnv commands that need the service key, on PostgreSQL', () => {
  let db: Database;
  let dir: string;
  beforeAll(async () => {
    db = await kind.open();
    dir = mkdtempSync(join(tmpdir(), 'cnv-key-'));
  });
  afterAll(async () => {
    await db.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it.each([
    [['webhook-secret', 'rotate', '--site', 'site_nope']],
    [['erase', '--email', 'ada@example.com']],
  ])('refuses %j without CNV_SECRET_KEY and without a key file, and makes no key', async (argv) => {
    const { code, err } = await cnv(argv, { db, env: { DATABASE_URL: PG, CNV_DATA_DIR: dir } });
    expect(code).toBe(1);
    expect(err).toMatch(/CNV_SECRET_KEY is not set, and .*secret\.key does not exist/);
    expect(err).toMatch(/Nothing was changed/);
    expect(existsSync(join(dir, 'secret.key'))).toBe(false);
  });

  it('goes on with CNV_SECRET_KEY set, or with the data directory key the service uses', async () => {
    const withKey = await cnv(['webhook-secret', 'rotate', '--site', 'site_nope'], { db, env: { DATABASE_URL: PG, CNV_DATA_DIR: dir, CNV_SECRET_KEY: TEST_SECRET_KEY } });
    expect(withKey.err).toMatch(/No such site/);
    const keyDir = mkdtempSync(join(tmpdir(), 'cnv-key-'));
    try {
      writeFileSync(join(keyDir, 'secret.key'), `${TEST_SECRET_KEY}\n`, { mode: 0o600 });
      const withFile = await cnv(['webhook-secret', 'rotate', '--site', 'site_nope'], { db, env: { DATABASE_URL: PG, CNV_DATA_DIR: keyDir } });
      expect(withFile.err).toMatch(/No such site/);
    } finally {
      rmSync(keyDir, { recursive: true, force: true });
    }
  });

  it('leaves the embedded store alone: its service and cnv share the data directory and its key', async () => {
    const { err } = await cnv(['webhook-secret', 'rotate', '--site', 'site_nope'], { db, env: { CNV_DATA_DIR: dir } });
    expect(err).toMatch(/No such site/);
    rmSync(join(dir, 'secret.key'), { force: true });
  });

  it('keeps other commands as they were', async () => {
    const { code } = await cnv(['sites', 'list'], { db, env: { DATABASE_URL: PG, CNV_DATA_DIR: dir } });
    expect(code).toBe(0);
  });
});
