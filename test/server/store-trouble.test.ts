/**
 * A store that cannot work (its disk full, the server unreachable) is told apart from a wrong statement: the request is
 * answered 503 store_unavailable with Retry-After, the log says so once and then once a minute with a count, and the
 * health check answers 503 while requests meet it, though the store still answers a read.
 */
import { connect, createServer, type Socket } from 'node:net';
import pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/server/app';
import { openDatabase, type Database } from '../../src/server/db/db';
import { fromTheStore, storeAwareErrorLog, StoreTrouble, STORE_STOPPED_CODE, storeTroubleOf } from '../../src/server/db/store-trouble';
import { HEALTH_PATH } from '../../src/server/health/routes';
import { loadSettings } from '../../src/server/settings';
import { snapshotsPath } from '../../src/protocol/collector';
import { insertAccount } from '../../src/server/accounts/sql';
import { insertSite } from '../../src/server/api/sites/sql';
import { DATABASE_KINDS } from './support/databases';
import { issueSignInLink } from '../../src/server/dashboard';
import { createHandoff } from '../../src/server/api/handoffs/handoffs';
import { snapshotBody } from './support/fixtures';
import { pressSignIn } from './support/dashboard-sign-in';

/** The error PostgreSQL (and PGlite) gives a write when the disk is full, as node-postgres hands it over. */
function diskFull(): Error {
  const error = new pg.DatabaseError('could not extend file "base/5/16411": No space left on device', 0, 'error');
  error.code = '53100';
  return error;
}

/** A page for a person (not the API's JSON) saying the full disk stopped the step, with the retry's wait. */
function expectUnavailablePage(answer: { statusCode: number; headers: Record<string, unknown>; body: string }, heading: string): void {
  expect(answer.statusCode).toBe(503);
  expect(answer.headers['content-type']).toMatch(/^text\/html/);
  expect(answer.headers['retry-after']).toBe('30');
  expect(answer.body).toContain(heading);
  expect(answer.body).toContain('no space left on its disk: nothing was done.');
}

describe('storeTroubleOf', () => {
  const withCode = (code: string) => Object.assign(new Error('x'), { code });
  it('names the store conditions, and only those', () => {
    expect(storeTroubleOf(diskFull())).toBe('disk_full');
    expect(storeTroubleOf(withCode('53200'))).toBe('out_of_memory');
    expect(storeTroubleOf(withCode('53300'))).toBe('too_many_connections');
    expect(storeTroubleOf(withCode('53400'))).toBe('insufficient_resources');
    expect(storeTroubleOf(withCode('58030'))).toBe('disk_error');
    expect(storeTroubleOf(withCode('58P01'))).toBe('disk_error');
    expect(storeTroubleOf(withCode('08006'))).toBe('unreachable');
    expect(storeTroubleOf(fromTheStore(withCode('ECONNREFUSED')))).toBe('unreachable');
    expect(storeTroubleOf(fromTheStore(withCode('ECONNRESET')))).toBe('unreachable');
    // The same codes from an ad platform's API that cannot be reached say nothing of the store.
    expect(storeTroubleOf(withCode('ECONNREFUSED'))).toBeNull();
    expect(storeTroubleOf(fromTheStore(withCode('23505')))).toBeNull();
    expect(storeTroubleOf(new Error('Connection terminated unexpectedly'))).toBe('unreachable');
    expect(storeTroubleOf(new Error('timeout exceeded when trying to connect'))).toBe('unreachable');
    expect(storeTroubleOf(new Error('Client has encountered a connection error and is not queryable'))).toBe('unreachable');
    expect(storeTroubleOf(new Error('Client was closed and is not queryable'))).toBe('shutting_down');
    expect(storeTroubleOf(new Error('Cannot use a pool after calling end on the pool'))).toBe('shutting_down');
    expect(storeTroubleOf(withCode('57P01'))).toBe('shutting_down');
    expect(storeTroubleOf(withCode('57P03'))).toBe('shutting_down');
    expect(storeTroubleOf(withCode(STORE_STOPPED_CODE))).toBe('stopped');
    // A statement that is wrong, or anything else, is not the store's condition.
    for (const other of [withCode('23505'), withCode('22P02'), withCode('57014'), withCode('XX000'), new Error('boom'), null, 'text', 53100]) {
      expect(storeTroubleOf(other)).toBeNull();
    }
  });

  it('paces the log: the first refusal, then one a minute with the count left out, whatever the reasons', () => {
    let now = 1_000_000;
    const trouble = new StoreTrouble(() => now);
    expect(trouble.recent()).toBeNull();
    expect(trouble.record('disk_full')).toEqual({ log: true, unlogged: 0 });
    expect(trouble.record('disk_full')).toEqual({ log: false, unlogged: 1 });
    now += 59_999;
    expect(trouble.record('disk_full')).toEqual({ log: false, unlogged: 2 });
    // Another reason within the minute is the same trouble (a stopping PostgreSQL: shutting down, then unreachable).
    expect(trouble.record('unreachable')).toEqual({ log: false, unlogged: 3 });
    expect(trouble.recent()).toBe('unreachable');
    now += 1;
    expect(trouble.record('disk_full')).toEqual({ log: true, unlogged: 3 });
    expect(trouble.recent()).toBe('disk_full');
    now += 29_999;
    expect(trouble.recent()).toBe('disk_full');
    now += 1;
    expect(trouble.recent()).toBeNull();
  });
});

/** The errors a PostgreSQL that is stopped gives, in order: to the statement under way, then to the next connection. */
function terminated(): Error {
  return Object.assign(new Error('terminating connection due to administrator command'), { code: '57P01' });
}
function refused(): unknown {
  return fromTheStore(Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' }));
}

describe('storeAwareErrorLog (the background loops)', () => {
  const capture = () => {
    const lines: Array<[string, Record<string, unknown>, string]> = [];
    return {
      lines,
      log: {
        error: (fields: object, message: string) => void lines.push(['error', fields as Record<string, unknown>, message]),
        info: (fields: object, message: string) => void lines.push(['info', fields as Record<string, unknown>, message]),
      },
    };
  };
  const SUFFIX = ' (the store cannot work now: said as it starts, then once a minute while it lasts)';

  it('logs other errors every time, and the store\'s condition once a minute with the count left out', () => {
    let now = 0;
    const { lines, log } = capture();
    const loop = storeAwareErrorLog(log, 'delivery', () => now);
    const bug = new Error('boom');
    loop.failed(bug, { rows: 3 }, 'delivery round failed');
    loop.failed(bug, { rows: 3 }, 'delivery round failed');
    for (let i = 0; i < 240; i++) {
      loop.failed(diskFull(), {}, 'delivery round failed');
      now += 250; // a poll every 250 ms: a minute in all
    }
    loop.failed(diskFull(), {}, 'delivery round failed');
    expect(lines.map(([, fields, message]) => [message, fields.reason, fields.unlogged, fields.rows])).toEqual([
      ['delivery round failed', undefined, undefined, 3],
      ['delivery round failed', undefined, undefined, 3],
      [`delivery round failed${SUFFIX}`, 'disk_full', 0, undefined],
      [`delivery round failed${SUFFIX}`, 'disk_full', 239, undefined],
    ]);
    expect(lines[0]![1].err).toBe(bug);
  });

  it('says a stopping PostgreSQL once as it starts (shutting down, then unreachable), and once when a round works again', () => {
    let now = 0;
    const { lines, log } = capture();
    const loop = storeAwareErrorLog(log, 'delivery', () => now);
    loop.worked(); // the store works: nothing to say
    loop.failed(terminated(), {}, 'delivery round failed');
    now += 100;
    loop.failed(refused(), {}, 'delivery round failed');
    for (let i = 0; i < 40; i++) {
      now += 250;
      loop.failed(refused(), {}, i % 2 ? 'adjustment round failed' : 'delivery round failed');
    }
    expect(lines.map(([level, fields, message]) => [level, message, fields.reason])).toEqual([['error', `delivery round failed${SUFFIX}`, 'shutting_down']]);
    loop.worked();
    loop.worked();
    expect(lines.slice(1).map(([level, fields, message]) => [level, message, fields])).toEqual([
      ['info', 'delivery: the store works again', { loop: 'delivery', failures: 42, lastReason: 'unreachable', ms: 10_100 }],
    ]);
    // The next trouble is said again as it starts, even within the minute of the first line.
    now += 1_000;
    loop.failed(refused(), {}, 'delivery round failed');
    expect(lines.slice(2).map(([level, fields, message]) => [level, message, fields.reason, fields.unlogged])).toEqual([
      ['error', `delivery round failed${SUFFIX}`, 'unreachable', 0],
    ]);
  });
});

describe.each(DATABASE_KINDS)('a store whose disk is full ($name)', (kind) => {
  const cleanups: Array<() => Promise<unknown>> = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });

  it('answers 503 with Retry-After, logs once a minute, and the health check says so while it lasts', async () => {
    const store = await kind.open();
    cleanups.push(() => store.close());
    const account = await insertAccount(store, 'full');
    const site = await insertSite(store, account.id, { domain: 'https://example.com' });
    // Reads work, every write fails as on a full disk (in a transaction too).
    const writes = /^\s*(with|insert|update|delete)/i;
    const db: Database = {
      ...store,
      query: (sql, params) => (writes.test(sql) ? Promise.reject(diskFull()) : store.query(sql, params)),
      transaction: (fn) =>
        store.transaction((tx) => fn({ query: (sql, params) => (writes.test(sql) ? Promise.reject(diskFull()) : tx.query(sql, params)) })),
    };
    let now = Date.parse('2026-11-27T09:00:00Z');
    const lines: Array<{ level: number; msg: string; reason?: string; unlogged?: number }> = [];
    // One count for the process's listeners, as the service makes it: the webhook-only listener's check sees it too.
    const storeTrouble = new StoreTrouble(() => now);
    const app = await buildApp({
      db,
      settings: loadSettings({ CNV_DEMO_PORT: 'off' }),
      now: () => new Date(now),
      logger: { level: 'info', stream: { write: (line: string) => void lines.push(JSON.parse(line)) } },
      storeTrouble,
    });
    cleanups.push(() => app.close());
    const hooks = await buildApp({ db, settings: loadSettings({ CNV_DEMO_PORT: 'off' }), surfaces: ['webhook'], storeTrouble });
    cleanups.push(() => hooks.close());
    const post = () =>
      app.inject({
        method: 'POST',
        url: snapshotsPath(site.site_key),
        headers: { origin: 'https://example.com', 'content-type': 'text/plain' },
        payload: JSON.stringify(snapshotBody()),
      });
    const refusals = () => lines.filter((l) => l.msg.startsWith('store unavailable'));

    expect((await app.inject({ method: 'GET', url: HEALTH_PATH })).statusCode).toBe(200);
    for (let i = 0; i < 3; i++) {
      const answer = await post();
      expect(answer.statusCode).toBe(503);
      expect(answer.headers['retry-after']).toBe('30');
      expect(answer.json()).toEqual({
        error: {
          type: 'api_error',
          code: 'store_unavailable',
          message: "The service's store has no space left on its disk: nothing was done. Send it again later.",
        },
      });
    }
    expect(refusals()).toEqual([expect.objectContaining({ level: 50, reason: 'disk_full', unlogged: 0 })]);
    expect(lines.filter((l) => l.msg === 'unhandled error')).toEqual([]);

    // The store answers a read, yet the check is 503 while requests meet the full disk.
    const health = await app.inject({ method: 'GET', url: HEALTH_PATH });
    expect(health.statusCode).toBe(503);
    expect(health.json().error.message).toBe("The service's store has no space left on its disk: requests were refused for it within the last 30 s.");
    expect((await hooks.inject({ method: 'GET', url: HEALTH_PATH })).statusCode).toBe(503);

    now += 60_000;
    expect((await post()).statusCode).toBe(503);
    expect(refusals()).toEqual([
      expect.objectContaining({ unlogged: 0 }),
      expect.objectContaining({ level: 50, reason: 'disk_full', unlogged: 2 }),
    ]);
    // No file name or statement of the store in the log.
    expect(JSON.stringify(refusals())).not.toContain('base/5/16411');

    // A person on the dashboard gets a page that says so, not a JSON envelope or "internal error".
    const link = await issueSignInLink(store, loadSettings({ CNV_DEMO_PORT: 'off', CNV_PUBLIC_URL: 'http://cnv.test' }), account.id);
    const page = await pressSignIn(app, link.url);
    expectUnavailablePage(page, 'The service cannot work now');
    // A new sign-in link would meet the same store: the page says to reload later instead.
    expect(page.body).toContain('Reload this page in a minute, once the service works again.');
    expect(page.body).not.toContain('npx cnv dashboard');
    expect(lines.filter((l) => l.msg === 'dashboard error')).toEqual([]);
    expect(refusals()).toHaveLength(2); // still within the minute of the last line

    // A person completing a hosted step gets a page too, and the same link works once the store does.
    const handoff = await createHandoff(store, loadSettings({ CNV_DEMO_PORT: 'off' }), account.id, { purpose: 'connect_trigger_source', site_id: site.id });
    const step = await app.inject({
      method: 'POST',
      url: new URL(handoff.url).pathname,
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: '',
    });
    expectUnavailablePage(step, 'The service cannot do this now');
    expect(step.body).toContain('This link still works: open it again in a minute.');
    // A client error on that page keeps the service's envelope (a body over the form limit).
    const tooLarge = await app.inject({
      method: 'POST',
      url: new URL(handoff.url).pathname,
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: `x=${'a'.repeat(2_000_000)}`,
    });
    expect(tooLarge.statusCode).toBe(413);
    expect(tooLarge.json().error.code).toBe('payload_too_large');

    // Space made: 30 s without a refusal and the check is 200 again.
    now += 30_000;
    expect((await app.inject({ method: 'GET', url: HEALTH_PATH })).statusCode).toBe(200);
    expect((await hooks.inject({ method: 'GET', url: HEALTH_PATH })).statusCode).toBe(200);
  });
});

describe('a hosted page whose step fails for another reason', () => {
  it('is a page saying so, logged as an error, not the API\'s JSON', async () => {
    const store = await DATABASE_KINDS[0]!.open();
    const account = await insertAccount(store, 'faulty');
    const site = await insertSite(store, account.id, { domain: 'https://example.com' });
    const settings = loadSettings({ CNV_DEMO_PORT: 'off' });
    const handoff = await createHandoff(store, settings, account.id, { purpose: 'connect_trigger_source', site_id: site.id });
    const db: Database = { ...store, query: () => Promise.reject(new Error('a fault of the code')) };
    const lines: Array<{ level: number; msg: string }> = [];
    const app = await buildApp({ db, settings, logger: { level: 'info', stream: { write: (line: string) => void lines.push(JSON.parse(line)) } } });
    try {
      const page = await app.inject({ method: 'GET', url: new URL(handoff.url).pathname });
      expect(page.statusCode).toBe(500);
      expect(page.headers['content-type']).toMatch(/^text\/html/);
      expect(page.body).toContain('Something went wrong');
      expect(page.body).toContain('This link still works');
      expect(lines.filter((l) => l.msg === 'hosted page error')).toEqual([expect.objectContaining({ level: 50 })]);
    } finally {
      await app.close();
      await store.close();
    }
  });
});

const serverUrl = process.env.TEST_DATABASE_URL;

describe.skipIf(!serverUrl)('PostgreSQL gone away', () => {
  it('leaves the service up, and the health check says the store cannot be reached until it is back', async () => {
    // The service reaches PostgreSQL through a proxy this test can cut, as a network partition or a server restart would.
    const target = new URL(serverUrl!);
    const sockets = new Set<Socket>();
    let cut = false;
    const proxy = createServer((client) => {
      if (cut) return client.destroy();
      const upstream = connect(Number(target.port || 5432), target.hostname);
      for (const socket of [client, upstream]) {
        sockets.add(socket);
        socket.on('error', () => undefined);
        socket.on('close', () => sockets.delete(socket));
      }
      client.pipe(upstream).pipe(client);
    });
    await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
    const proxied = new URL(serverUrl!);
    proxied.host = `127.0.0.1:${(proxy.address() as { port: number }).port}`;
    const db = await openDatabase({ databaseUrl: proxied.toString(), poolSize: 2 });
    const app = await buildApp({ db, settings: loadSettings({ CNV_DEMO_PORT: 'off' }), surfaces: ['webhook'] });
    try {
      expect((await app.inject({ method: 'GET', url: HEALTH_PATH })).statusCode).toBe(200);
      // Every connection cut while idle in the pool: node-postgres reports it on the pool, which must not end the process.
      cut = true;
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => setTimeout(resolve, 50));
      const down = await app.inject({ method: 'GET', url: HEALTH_PATH });
      expect(down.statusCode).toBe(503);
      expect(down.json().error.message).toBe('The service cannot reach its store: this process cannot serve now.');
      // Nothing listening any more: a new connection is refused (ECONNREFUSED, the same code a platform's API can give).
      const port = (proxy.address() as { port: number }).port;
      await new Promise((resolve) => proxy.close(resolve));
      const refused = await app.inject({ method: 'GET', url: HEALTH_PATH });
      expect(refused.statusCode).toBe(503);
      expect(refused.json().error.message).toBe('The service cannot reach its store: this process cannot serve now.');
      // The network is back: the pool connects again.
      await new Promise<void>((resolve) => proxy.listen(port, '127.0.0.1', resolve));
      cut = false;
      expect((await app.inject({ method: 'GET', url: HEALTH_PATH })).statusCode).toBe(200);
    } finally {
      await app.close();
      await db.close();
      await new Promise((resolve) => proxy.close(resolve));
    }
  });
});
