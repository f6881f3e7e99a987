/**
 * The set-up the platform-wide delivery tests share (tokens that heal, on sends and on adjustments): one database of
 * the kind, one strict fake per platform for the whole describe block, and delivery workers on an injected clock that
 * are stopped after each test. Call it inside the `describe` block: it registers that block's hooks.
 */
import { afterAll, afterEach, beforeAll } from 'vitest';
import type { Database } from '../../../src/server/db/db';
import { startDeliveryWorker, type DeliveryWorker } from '../../../src/server/delivery/worker';
import { loadSettings } from '../../../src/server/settings';
import type { DatabaseKind } from '../support/databases';
import { TEST_SECRET_KEY, memoryLog, steppableClock } from './fixtures';
import { startPlatform, type PlatformFake } from './platforms';

export interface PlatformWorkers {
  /** The block's database (set by its beforeAll). */
  readonly db: Database;
  /** The running fake of a platform type. */
  fake(type: PlatformFake['type']): PlatformFake;
  /** A worker delivering to `platform`, whose clock runs a minute ahead of the database's, so rows written now are due. */
  worker(platform: PlatformFake): DeliveryWorker & { clock: ReturnType<typeof steppableClock> };
}

export function usePlatformWorkers(kind: DatabaseKind, platforms: readonly PlatformFake['type'][]): PlatformWorkers {
  let db: Database | undefined;
  const fakes = new Map<string, PlatformFake>();
  const workers: Array<{ stop(): Promise<void> }> = [];

  beforeAll(async () => {
    db = await kind.open();
    for (const type of platforms) fakes.set(type, await startPlatform(type));
  });
  afterAll(async () => {
    await Promise.all([db?.close(), ...[...fakes.values()].map((f) => f.close())]);
  });
  afterEach(async () => {
    await Promise.all(workers.splice(0).map((w) => w.stop()));
  });

  return {
    get db() {
      if (!db) throw new Error('usePlatformWorkers: the database is opened in beforeAll');
      return db;
    },
    fake(type) {
      const fake = fakes.get(type);
      if (!fake) throw new Error(`usePlatformWorkers: no fake of ${type} was started`);
      return fake;
    },
    worker(platform) {
      const clock = steppableClock(new Date(Date.now() + 60_000));
      const settings = loadSettings({ CNV_DEMO_PORT: 'off', CNV_SECRET_KEY: TEST_SECRET_KEY, ...platform.env });
      const w = startDeliveryWorker({ db: this.db, settings, log: memoryLog(), now: clock.now, autoStart: false, random: () => 0.5, sendTimeoutMs: 5000 });
      workers.push(w);
      return Object.assign(w, { clock });
    },
  };
}
