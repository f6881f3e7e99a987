/**
 * GET /healthz: 200 while the store answers, 503 with the error envelope when it fails or does not answer in time, on
 * every listener, without a key and without anything of the data; one log line per change of state.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/server/app';
import type { Database } from '../../src/server/db/db';
import { loadSettings } from '../../src/server/settings';
import { HEALTH_PATH } from '../../src/server/health/routes';
import { DATABASE_KINDS } from './support/databases';

const cleanups: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function appOn(db: Database, options: { surfaces?: Array<'webhook'>; healthStoreTimeoutMs?: number } = {}) {
  const lines: Array<{ level: number; msg: string; reason?: string }> = [];
  const app = await buildApp({
    db,
    settings: loadSettings({ CNV_DEMO_PORT: 'off' }),
    logger: { level: 'info', stream: { write: (line: string) => void lines.push(JSON.parse(line)) } },
    ...options,
  });
  cleanups.push(() => app.close());
  return { app, lines };
}

describe.each(DATABASE_KINDS)('GET /healthz ($name)', (kind) => {
  it('answers 200 without a key while the store answers, uncached, on the webhook-only listener too', async () => {
    const db = await kind.open();
    cleanups.push(() => db.close());
    for (const surfaces of [undefined, ['webhook' as const]]) {
      const { app, lines } = await appOn(db, surfaces ? { surfaces } : {});
      const answer = await app.inject({ method: 'GET', url: HEALTH_PATH });
      expect(answer.statusCode).toBe(200);
      expect(answer.json()).toEqual({ status: 'ok' });
      expect(answer.headers['cache-control']).toBe('no-store');
      expect((await app.inject({ method: 'HEAD', url: HEALTH_PATH })).statusCode).toBe(200);
      expect(lines.filter((l) => l.msg.startsWith('health check'))).toEqual([]);
    }
  });

  it('answers 503 with the envelope once the store fails, and logs that once, never the error itself', async () => {
    const db = await kind.open();
    const { app, lines } = await appOn(db);
    expect((await app.inject({ method: 'GET', url: HEALTH_PATH })).statusCode).toBe(200);
    await db.close(); // every statement now fails at once
    for (let i = 0; i < 3; i++) {
      const answer = await app.inject({ method: 'GET', url: HEALTH_PATH });
      expect(answer.statusCode).toBe(503);
      expect(answer.json()).toEqual({
        error: { type: 'api_error', code: 'store_unavailable', message: "The service's store is shutting down or starting: this process cannot serve now." },
      });
    }
    const logged = lines.filter((l) => l.msg.startsWith('health check'));
    expect(logged).toEqual([expect.objectContaining({ level: 40, msg: 'health check: the store does not answer', reason: 'shutting_down' })]);
    expect(JSON.stringify(logged)).not.toMatch(/postgres:|password|Client was closed|ended/i);
  });
});

describe('GET /healthz on the embedded store', () => {
  it('answers 503 when the store does not answer within the time limit, and 200 with one info line once it does', async () => {
    const store = await DATABASE_KINDS[0]!.open();
    cleanups.push(() => store.close());
    const checks: string[] = [];
    const db: Database = { ...store, query: (sql, params) => (checks.push(sql), store.query(sql, params)) };
    const { app, lines } = await appOn(db, { healthStoreTimeoutMs: 100 });
    // The embedded store has one connection: a transaction that waits holds every other statement back.
    let finish!: () => void;
    const held = store.transaction(() => new Promise<void>((resolve) => (finish = resolve)));
    await new Promise((resolve) => setTimeout(resolve, 20));
    const [first, second] = await Promise.all([
      app.inject({ method: 'GET', url: HEALTH_PATH }),
      app.inject({ method: 'GET', url: HEALTH_PATH }),
    ]);
    for (const answer of [first!, second!]) {
      expect(answer.statusCode).toBe(503);
      expect(answer.json().error).toEqual({
        type: 'api_error', code: 'store_unavailable', message: 'The store did not answer within 0.1 s: this process cannot serve now.',
      });
    }
    finish();
    await held;
    expect(checks.filter((sql) => sql === 'select 1')).toHaveLength(1); // the two checks shared one statement
    await new Promise((resolve) => setTimeout(resolve, 20)); // the checks' statement, queued behind it, runs
    expect((await app.inject({ method: 'GET', url: HEALTH_PATH })).statusCode).toBe(200);
    expect(lines.filter((l) => l.msg.startsWith('health check')).map((l) => [l.level, l.msg, l.reason])).toEqual([
      [40, 'health check: the store does not answer', 'timeout'],
      [30, 'health check: the store answers again', undefined],
    ]);
  });
});
