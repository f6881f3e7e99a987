/**
 * A start with another CNV_SECRET_KEY than the one that sealed stored secrets (a restore): one warning counting the
 * destinations and notification endpoints whose secrets do not open, saying what to do, without any secret. A start
 * that would make a key for such a store (no CNV_SECRET_KEY, no secret.key) is refused.
 */
import { existsSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { loadSettings } from '../../src/server/settings';
import { startService } from '../../src/server/service';
import { secretBox } from '../../src/server/db/secret-box';
import { sealCredentials, upsertDestination } from '../../src/server/destinations';
import { insertEndpoint } from '../../src/server/notifications';
import { seededDataDir } from '../support/pglite';

const OLD_KEY = '5'.repeat(64);
const NEW_KEY = '6'.repeat(64);
const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

describe('the start with another CNV_SECRET_KEY', () => {
  it('warns once, with how many destinations and notification endpoints no longer open and what to do', async () => {
    const dataDir = await seededDataDir('cnv-unreadable-');
    dirs.push(dataDir);
    const start = (key: string, lines: string[]) =>
      startService(loadSettings({ HOST: '127.0.0.1', PORT: '0', CNV_DATA_DIR: dataDir, CNV_DEMO_PORT: 'off', CNV_PUBLIC_URL: 'https://cnv.example', CNV_SECRET_KEY: key }), {
        logger: { level: 'info', stream: { write: (line: string) => lines.push(line) } } as never,
      });
    const warnings = (lines: string[]) => lines.map((l) => JSON.parse(l) as { level: number; msg: string } & Record<string, unknown>).filter((l) => l.level === 40);

    const first: string[] = [];
    const before = await start(OLD_KEY, first);
    let destinationId: string;
    let endpointId: string;
    try {
      const [account] = await before.db.query<{ id: string }>('select id from accounts limit 1');
      const old = secretBox(Buffer.from(OLD_KEY, 'hex'));
      destinationId = (await upsertDestination(before.db, account!.id, 'meta', { pixel_id: '1' }, sealCredentials(old, { access_token: 'EAAsecret' }))).id;
      endpointId = (await insertEndpoint(before.db, account!.id, 'https://hooks.example.com/cnv', ['event.failed'], old.seal('whsec_secret'))).id;
      expect(warnings(first)).toEqual([]);
    } finally {
      await before.close();
    }

    const second: string[] = [];
    const after = await start(NEW_KEY, second);
    try {
      const said = warnings(second).filter((w) => w.msg.includes('CNV_SECRET_KEY'));
      expect(said).toEqual([
        expect.objectContaining({
          destinations: [destinationId],
          notificationEndpoints: [endpointId],
          msg: expect.stringMatching(/^stored secrets of 1 destination and 1 notification endpoint do not open with the current CNV_SECRET_KEY.*restart with the key that sealed them, or connect those destinations again/),
        }),
      ]);
      expect(second.join('\n')).not.toMatch(/EAAsecret|whsec_secret/);
    } finally {
      await after.close();
    }

    // Neither CNV_SECRET_KEY nor a secret.key (an instance started without the key the others use, a data directory
    // restored without its key file): a key made now would open none of them. Refused, and no key file left behind.
    const keyFile = join(dataDir, 'secret.key');
    expect(existsSync(keyFile)).toBe(false);
    const settings = loadSettings({ HOST: '127.0.0.1', PORT: '0', CNV_DATA_DIR: dataDir, CNV_DEMO_PORT: 'off', CNV_PUBLIC_URL: 'https://cnv.example' });
    await expect(startService(settings, { logger: false })).rejects.toThrow(
      /^CNV_SECRET_KEY is not set and .*secret\.key \(CNV_DATA_DIR\) does not exist, but the store holds 1 destination credential\(s\), 1 notification endpoint secret\(s\) sealed with a key/,
    );
    expect(existsSync(keyFile)).toBe(false);
  }, 120_000);
});
