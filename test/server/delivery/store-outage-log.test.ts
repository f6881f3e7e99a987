/**
 * The delivery worker while its store cannot work: one error line as the trouble starts (a stopping PostgreSQL refuses
 * first as shutting down, then as unreachable: still one line), one a minute while it lasts, one info line when a round
 * reaches the store again. A store that fails on demand and a clock the test steps; the poll's timer is faked.
 */
import { afterEach, expect, it, vi } from 'vitest';
import type { Database, Queryable } from '../../../src/server/db/db';
import { fromTheStore } from '../../../src/server/db/store-trouble';
import { startDeliveryWorker } from '../../../src/server/delivery/worker';
import { TEST_SECRET_KEY, memoryLog } from './fixtures';
import { loadSettings } from '../../../src/server/settings';

afterEach(() => {
  vi.useRealTimers();
});

/** An empty store (every statement answers no row) that, while `down`, fails as a PostgreSQL being stopped does. */
function failingStore() {
  const state = { down: false, failures: 0, statements: 0 };
  const refusal = (): unknown => {
    state.failures++;
    // The statement under way when the server stops, then every connection tried while it is down.
    if (state.failures === 1) return Object.assign(new Error('terminating connection due to administrator command'), { code: '57P01' });
    return fromTheStore(Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' }));
  };
  const query = async <T>(): Promise<T[]> => {
    state.statements++;
    if (state.down) throw refusal();
    return [];
  };
  const tx: Queryable = { query };
  const db: Database = {
    kind: 'postgres',
    query,
    transaction: async (fn) => {
      if (state.down) throw refusal();
      return fn(tx);
    },
    exec: async () => undefined,
    close: async () => undefined,
  };
  return { db, state };
}

it('says a store outage once as it starts, once a minute while it lasts, and once when it is over', async () => {
  vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval'] });
  const { db, state } = failingStore();
  let nowMs = Date.parse('2026-11-27T09:00:00Z');
  const log = memoryLog();
  const worker = startDeliveryWorker({
    db, settings: loadSettings({ CNV_DEMO_PORT: 'off', CNV_SECRET_KEY: TEST_SECRET_KEY }), log, now: () => new Date(nowMs), pollIntervalMs: 250,
  });
  /** `ms` of polls, the clock stepped with them. */
  const polls = async (ms: number) => {
    for (let t = 0; t < ms; t += 250) {
      nowMs += 250;
      await vi.advanceTimersByTimeAsync(250);
    }
  };
  const lines = (): Array<Record<string, unknown>> => log.lines.map(({ level, msg, obj }) => ({ level, msg, ...obj }));
  try {
    await polls(1_000);
    expect(log.lines).toEqual([]);

    state.down = true;
    await polls(2_000);
    expect(state.failures).toBeGreaterThanOrEqual(8); // a round each poll, each refused
    expect(lines()).toEqual([
      expect.objectContaining({
        level: 'error',
        msg: 'delivery round failed (the store cannot work now: said as it starts, then once a minute while it lasts)',
        reason: 'shutting_down',
        unlogged: 0,
      }),
    ]);

    await polls(60_000);
    expect(lines().slice(1)).toEqual([expect.objectContaining({ level: 'error', reason: 'unreachable', unlogged: expect.any(Number) })]);

    state.down = false;
    const failures = state.failures;
    await polls(2_000);
    expect(lines().slice(2)).toEqual([
      { level: 'info', msg: 'delivery: the store works again', loop: 'delivery', failures, lastReason: 'unreachable', ms: expect.any(Number) },
    ]);
    expect(lines()[2]!.ms).toBeGreaterThanOrEqual(60_000);
    // Nothing of the store's address or any statement's values in the lines' fields beyond the error itself.
    expect(JSON.stringify(log.lines.map(({ obj }) => ({ ...obj, err: undefined })))).not.toMatch(/127\.0\.0\.1|5432|secret|token/i);
  } finally {
    await worker.stop();
  }
});
