/**
 * The first run never loses the key: a start that cannot listen creates nothing; the start that creates the key prints
 * it with a dashboard link; a later start says how to get a key. Plus the start-up's clear errors and messages.
 */
import { spawn } from 'node:child_process';
import { rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { defaultLoggerOptions, startService, type RunningService } from '../../src/server/service';
import { startupBanner } from '../../src/server/banner';
import { loadSettings } from '../../src/server/settings';
import { openStore, redactDatabaseUrl } from '../../src/server/db/open-store';
import { lockDataDir } from '../../src/server/db/data-dir-lock';
import { formToken } from './support/dashboard-sign-in';
import { runCli } from '../../src/cli/run';
import { createRestService } from './support/rest-harness';
import { DATABASE_KINDS } from './support/databases';
import { seededDataDir } from '../support/pglite';

const TIMEOUT = 120_000;
const cleanups: Array<() => unknown> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function dataDir(): Promise<string> {
  const dir = await seededDataDir('cnv-first-run-');
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

function settingsFor(dir: string, env: Record<string, string> = {}) {
  return loadSettings({ HOST: '127.0.0.1', PORT: '0', CNV_DATA_DIR: dir, CNV_DEMO_PORT: 'off', LOG_LEVEL: 'silent', ...env });
}

async function started(service: Promise<RunningService>): Promise<RunningService> {
  const running = await service;
  cleanups.push(() => running.close());
  return running;
}

function occupyPort(): Promise<Server & { port: number }> {
  return new Promise((resolve) => {
    const server = createServer();
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      resolve(Object.assign(server, { port: typeof address === 'object' && address ? address.port : 0 }));
    });
  });
}

async function accountCount(dir: string): Promise<number> {
  const store = await openStore({ dataDir: dir, databaseUrl: undefined }, 'the test');
  try {
    return (await store.db.query('select id from accounts')).length;
  } finally {
    await store.close();
  }
}

function collect() {
  let text = '';
  return { out: { write: (t: string) => (text += t) }, text: () => text };
}

describe('the first start', () => {
  it('with PORT taken says so, naming PORT, and creates no account or key; the next start prints the key and a sign-in link', async () => {
    const dir = await dataDir();
    const busy = await occupyPort();
    cleanups.push(() => new Promise((r) => busy.close(r)));
    const failed = startService(settingsFor(dir, { PORT: String(busy.port) }));
    await expect(failed).rejects.toThrow(new RegExp(`Port ${busy.port} on 127\\.0\\.0\\.1 is already in use by another process \\(PORT=${busy.port}\\)`));
    expect(await accountCount(dir)).toBe(0);

    const service = await started(startService(settingsFor(dir)));
    expect(service.apiKey).toMatch(/^cnv_sk_/);
    expect(service.dashboardLink?.url).toMatch(/\/dashboard\/sign-in\?token=[A-Za-z0-9]{32}$/);
    const banner = startupBanner(service);
    expect(banner).toContain(service.apiKey!);
    expect(banner).toContain(service.dashboardLink!.url);
    // The link opens its page (with the Sign in button), and that button's POST signs in.
    const link = new URL(service.dashboardLink!.url);
    const page = await fetch(`${service.urls.listening}${link.pathname}${link.search}`, { redirect: 'manual' });
    expect(page.status).toBe(200);
    const signIn = await fetch(`${service.urls.listening}/dashboard/sign-in`, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/x-www-form-urlencoded', 'sec-fetch-site': 'same-origin' },
      body: new URLSearchParams({ token: formToken(await page.text())! }).toString(),
    });
    expect(signIn.status).toBe(303);
  }, TIMEOUT);

  it('tells what it does, step by step, while it starts', async () => {
    const dir = await dataDir();
    const steps: string[] = [];
    await started(startService(settingsFor(dir), { onProgress: (step) => steps.push(step) }));
    expect(steps[0]).toMatch(/^opening the embedded store in /);
    expect(steps).toEqual(expect.arrayContaining([expect.stringMatching(/^store ready \(\d+\.\d s\)$/), expect.stringMatching(/^listening on 127\.0\.0\.1:0/), 'first start: created an account, its API key and a site', expect.stringMatching(/^ready/)]));
    // A directory without a store: the first step says it is created, the slow part. That start is then refused at
    // once (another process holds the directory), so the test waits for no initdb; service.test.ts runs a whole one.
    const fresh = join(await dataDir(), 'new');
    const release = lockDataDir(fresh, 'the cnv service');
    cleanups.push(release);
    const creating: string[] = [];
    await expect(startService(settingsFor(fresh), { onProgress: (step) => creating.push(step) })).rejects.toThrow(/in use by the cnv service/);
    expect(creating[0]).toMatch(/^creating the embedded store in .*first start only/);
  }, TIMEOUT);

  it('a later start prints no key but says how to get one, and on a terminal a fresh sign-in link', async () => {
    const dir = await dataDir();
    const first = await startService(settingsFor(dir));
    await first.close();
    const later = await started(startService(settingsFor(dir)));
    expect(later.apiKey).toBeUndefined();
    expect(later.dashboardLink).toBeUndefined();
    const banner = startupBanner(later);
    expect(banner).not.toMatch(/cnv_sk_/);
    expect(banner).toContain('cnv keys create');
    expect(banner).toContain('npx cnv dashboard');
    await later.close();
    const onTerminal = await started(startService(settingsFor(dir), { dashboardLinkEveryStart: true }));
    expect(startupBanner(onTerminal)).toContain(onTerminal.dashboardLink!.url);
    // The command printed works as it is: `cnv` is told where the service is unless it runs at cnv's default address.
    const elsewhere = { ...onTerminal, urls: { ...onTerminal.urls, api: 'http://127.0.0.1:18787' } };
    expect(startupBanner(elsewhere)).toContain('CNV_API_URL=http://127.0.0.1:18787 CNV_API_KEY=<API key> npx cnv dashboard');
    const atDefault = { ...onTerminal, urls: { ...onTerminal.urls, api: 'http://127.0.0.1:8787' } };
    expect(startupBanner(atDefault)).toContain(': CNV_API_KEY=<API key> npx cnv dashboard');
  }, TIMEOUT);
});

describe('logs', () => {
  it('are human-readable on a terminal and JSON otherwise, or when LOG_FORMAT=json', () => {
    const withStream = (options: unknown) => typeof (options as { stream?: unknown }).stream === 'object';
    expect(withStream(defaultLoggerOptions(loadSettings({}), true))).toBe(true);
    expect(withStream(defaultLoggerOptions(loadSettings({}), false))).toBe(false);
    expect(withStream(defaultLoggerOptions(loadSettings({ LOG_FORMAT: 'json' }), true))).toBe(false);
    expect(withStream(defaultLoggerOptions(loadSettings({ LOG_FORMAT: 'pretty' }), false))).toBe(true);
    expect(() => loadSettings({ LOG_FORMAT: 'xml' })).toThrow(/LOG_FORMAT must be json, pretty or auto \(auto, like unset:/);
    expect(loadSettings({ LOG_FORMAT: 'auto' }).logFormat).toBeUndefined();
  });
});

describe('clear start-up errors', () => {
  it('DATABASE_URL that is not a PostgreSQL URL, naming the setting and not echoing it', () => {
    expect(() => loadSettings({ DATABASE_URL: 'mysql://root:hunter2@db/cnv' })).toThrow(/^DATABASE_URL must be a PostgreSQL URL .*got a mysql: URL/);
    expect(() => loadSettings({ DATABASE_URL: 'mysql://root:hunter2@db/cnv' })).not.toThrow(/hunter2/);
    expect(loadSettings({ DATABASE_URL: 'postgresql://u@h/d' }).databaseUrl).toBe('postgresql://u@h/d');
  });

  it('DATABASE_URL that cannot be reached, naming the setting without its password', async () => {
    const closed = await occupyPort();
    await new Promise((r) => closed.close(r));
    const url = `postgres://cnv:s3cret@127.0.0.1:${closed.port}/cnv`;
    const error = await startService(loadSettings({ PORT: '0', DATABASE_URL: url, CNV_DEMO_PORT: 'off' })).catch((e: Error) => e);
    expect((error as Error).message).toMatch(/^DATABASE_URL cannot be reached: the connection failed \(ECONNREFUSED\)/);
    expect((error as Error).message).not.toContain('s3cret');
  }, TIMEOUT);

  it('DATABASE_URL with its password (or the key file\'s) in the query string, never echoed', async () => {
    const closed = await occupyPort();
    await new Promise((r) => closed.close(r));
    // node-postgres takes password, sslpassword and the rest from the query string as well (pg-connection-string).
    const url = `postgres://cnv@127.0.0.1:${closed.port}/cnv?password=s3cret-q&sslpassword=k3y-pass&application_name=cnv&sslmode=disable`;
    const error = await startService(loadSettings({ PORT: '0', DATABASE_URL: url, CNV_DEMO_PORT: 'off' })).catch((e: Error) => e);
    const message = (error as Error).message;
    expect(message).toMatch(/^DATABASE_URL cannot be reached/);
    expect(message).not.toContain('s3cret-q');
    expect(message).not.toContain('k3y-pass');
    expect(redactDatabaseUrl(url)).toBe(`postgres://cnv@127.0.0.1:${closed.port}/cnv?password=***&sslpassword=***&application_name=cnv&sslmode=disable`);
    expect(redactDatabaseUrl('postgres://u:p%40ss@h/d?PassWord=x&options=-c%20x%3D1&sslkey=%2Fk')).toBe('postgres://u:***@h/d?PassWord=***&options=-c+x%3D1&sslkey=***');
  }, TIMEOUT);

  it('a damaged embedded store, naming its directory', async () => {
    const dir = await dataDir();
    writeFileSync(join(dir, 'global', 'pg_control'), Buffer.alloc(8192, 7));
    const error = await startService(settingsFor(dir)).catch((e: Error) => e);
    expect((error as Error).message).toContain(`The embedded store in ${dir} (CNV_DATA_DIR) cannot be opened: its files look damaged`);
    expect((error as Error).message).toContain(`mv ${dir} ${dir}.damaged`);
  }, TIMEOUT);

  it('a stale cnv.lock naming a live process that is not cnv', async () => {
    const dir = await dataDir();
    const sleeper = spawn('sleep', ['60'], { stdio: 'ignore' });
    cleanups.push(() => sleeper.kill());
    writeFileSync(join(dir, 'cnv.lock'), JSON.stringify({ pid: sleeper.pid, owner: 'the cnv service', since: new Date().toISOString() }));
    const error = await startService(settingsFor(dir)).catch((e: Error) => e);
    expect((error as Error).message).toContain(`The data directory ${dir} has a stale lock: ${join(dir, 'cnv.lock')} names process ${sleeper.pid}, which is running 'sleep 60', not cnv`);
    expect((error as Error).message).toContain(`delete ${join(dir, 'cnv.lock')}`);
  }, TIMEOUT);

  it('a REST request without Content-Type: application/json says which to send', async () => {
    const svc = await createRestService(DATABASE_KINDS[0]!);
    cleanups.push(() => svc.close());
    for (const headers of [{ 'content-type': 'text/plain' }, { 'content-type': 'application/x-www-form-urlencoded' }, {}]) {
      const res = await svc.app.inject({ method: 'POST', url: '/v1/sites', headers: { ...svc.auth, ...headers }, payload: '{"name":"x"}' });
      expect(res.statusCode).toBe(415);
      expect(res.json().error).toMatchObject({ code: 'unsupported_media_type', message: expect.stringContaining('Content-Type: application/json') });
    }
  });
});

describe('cnv', () => {
  it('<command> --help prints that command\'s usage; a group --help lists its commands', async () => {
    const keys = collect();
    expect(await runCli(['keys', '--help'], { out: keys.out, err: keys.out })).toBe(0);
    expect(keys.text()).toContain('cnv keys create [--account acct_…] [--label …]');
    expect(keys.text()).toContain('cnv keys revoke --key key_…');
    const create = collect();
    expect(await runCli(['keys', 'create', '--help'], { out: create.out, err: create.out })).toBe(0);
    expect(create.text()).toMatch(/^cnv keys create: Issue a new API key/);
    expect(create.text()).toContain('--label');
    const viaHelp = collect();
    expect(await runCli(['help', 'dashboard'], { out: viaHelp.out, err: viaHelp.out })).toBe(0);
    expect(viaHelp.text()).toContain('cnv dashboard [--account acct_…]');
  });

  it('dashboard prints a one-time sign-in link of the account', async () => {
    const dir = await dataDir();
    const first = await startService(settingsFor(dir, { CNV_PUBLIC_URL: 'https://cnv.example' }));
    await first.close();
    const out = collect();
    const code = await runCli(['dashboard'], { out: out.out, err: out.out, env: { CNV_DATA_DIR: dir, CNV_PUBLIC_URL: 'https://cnv.example' } });
    expect(out.text()).toMatch(/Dashboard sign-in link for acct_\w+ \(My Account\):\n\n {2}https:\/\/cnv\.example\/dashboard\/sign-in\?token=[A-Za-z0-9]{32}\n/);
    expect(code).toBe(0);
  }, TIMEOUT);

  it("prints the links of the service's own address, which the service recorded, without being told its PORT", async () => {
    const dir = await dataDir();
    const service = await startService(settingsFor(dir, { PORT: '47811' }));
    await service.close();
    for (const argv of [['dashboard'], ['sites', 'create', '--name', 'Shop']]) {
      const out = collect();
      const err = collect();
      const code = await runCli(argv, { out: out.out, err: err.out, env: { CNV_DATA_DIR: dir, CNV_DEMO_PORT: 'off' } });
      expect(code, err.text()).toBe(0);
      expect(out.text()).toContain('http://127.0.0.1:47811/');
      expect(out.text()).not.toContain(':8787');
      expect(err.text()).toBe('');
    }
  }, TIMEOUT);
});
