import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startService, type RunningService } from '../../src/server/service';
import { startupBanner } from '../../src/server/banner';
import { recordedPublicUrl } from '../../src/server/db/service-facts';
import { runningServiceAddress } from '../../src/server/db/data-dir-lock';
import { loadSettings } from '../../src/server/settings';
import { seededDataDir } from '../support/pglite';
import { createConnection } from 'node:net';
import { setSiteDomain, snapshotBody } from './support/fixtures';
import { snapshotsPath, SNAPSHOT_CONTENT_TYPE } from '../../src/protocol/collector';

const TEST_TIMEOUT = 120_000;

describe('startService on the embedded store', () => {
  let dir: string;
  let first: RunningService | undefined;
  const settings = () =>
    loadSettings({ HOST: '127.0.0.1', PORT: '0', CNV_DATA_DIR: dir, CNV_DEMO_PORT: 'off', CNV_PUBLIC_URL: 'https://cnv.example', LOG_LEVEL: 'silent' });

  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'cnv-service-'));
  });
  afterAll(async () => {
    await first?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('bootstraps on first start, listens, and answers the REST API with the printed key', async () => {
    first = await startService(settings());
    expect(first.apiKey).toMatch(/^cnv_sk_/);
    expect(first.site).toMatchObject({ name: 'My Website', domain: null, timezone: 'America/New_York' });
    const res = await fetch(`${first.urls.listening}/v1/sites`, { headers: { authorization: `Bearer ${first.apiKey}` } });
    expect(res.status).toBe(200);
    expect(((await res.json()) as { data: Array<{ id: string }> }).data.map((s) => s.id)).toEqual([first.site.id]);
    const banner = startupBanner(first);
    expect(banner).toContain(first.apiKey);
    expect(banner).toContain(`<script async src="https://cnv.example/loader.js?site_key=${first.site.site_key}"></script>`);
    expect(banner).toContain('https://cnv.example/v1');
    // cnv on the same store prints this address without being told it: the service recorded it there.
    expect(await recordedPublicUrl(first.db)).toBe('https://cnv.example');
    // And beside the store's lock, for cnv commands that ask the running service (its store is closed to them).
    expect(runningServiceAddress(dir)).toBe('https://cnv.example');
    expect(banner).toContain(
      'Operator commands: run them with the same DATABASE_URL / CNV_DATA_DIR; their links and snippets use https://cnv.example, recorded there by this service.\n' +
        'On the embedded store, stop the service first, or run dashboard, erase and mcp through it with CNV_API_URL=https://cnv.example CNV_API_KEY=<API key>:',
    );
  }, TEST_TIMEOUT);

  it('refuses a second service on the same data directory while the first runs', async () => {
    await expect(startService(settings())).rejects.toThrow(/in use by the cnv service/);
  }, TEST_TIMEOUT);

  it('creates nothing on a later start: no new key is printed, the same site and key still work', async () => {
    const key = first!.apiKey!;
    const site = first!.site;
    await first!.close();
    first = await startService(settings());
    expect(first.apiKey).toBeUndefined();
    expect(first.site).toEqual(site);
    const banner = startupBanner(first);
    expect(banner).not.toMatch(/cnv_sk_/);
    expect(banner).toContain(site.site_key);
    const res = await fetch(`${first.urls.listening}/v1/sites`, { headers: { authorization: `Bearer ${key}` } });
    expect(res.status).toBe(200);
  }, TEST_TIMEOUT);

  it('closes cleanly and can be closed twice', async () => {
    await first!.close();
    await first!.close();
    await expect(fetch(`${first!.urls.listening}/v1/sites`)).rejects.toThrow();
    expect(runningServiceAddress(dir)).toBeNull();
    first = undefined;
  }, TEST_TIMEOUT);
});

/** One raw HTTP/1.1 connection: what it writes, and everything the service answered until it closed. */
function connection(address: string) {
  const { hostname, port } = new URL(address);
  const socket = createConnection({ host: hostname, port: Number(port) });
  let received = '';
  socket.setEncoding('latin1').on('data', (chunk: string) => (received += chunk));
  const ended = new Promise<string>((resolve) => socket.on('close', () => resolve(received)));
  return { write: (text: string) => socket.write(text), ended };
}
/** The status lines and bodies of the HTTP responses in `text`, in order, with their Connection headers. */
function responses(text: string): Array<{ status: number; connection: string | null; body: string }> {
  const out: Array<{ status: number; connection: string | null; body: string }> = [];
  let rest = text;
  while (rest.startsWith('HTTP/1.1 ')) {
    const headEnd = rest.indexOf('\r\n\r\n');
    const head = rest.slice(0, headEnd);
    const length = Number(/\r\ncontent-length: (\d+)/i.exec(head)?.[1] ?? 0);
    out.push({ status: Number(head.slice(9, 12)), connection: /\r\nconnection: ([^\r]+)/i.exec(head)?.[1] ?? null, body: rest.slice(headEnd + 4, headEnd + 4 + length) });
    rest = rest.slice(headEnd + 4 + length);
  }
  return out;
}

describe('startService with a webhook port', () => {
  let dir: string;
  let svc: RunningService;
  beforeAll(async () => {
    // A migrated store already there (the first start from nothing is the describe above): no second initdb.
    dir = await seededDataDir('cnv-service-hooks-');
    const { createServer } = await import('node:net');
    const port = await new Promise<number>((resolve) => {
      const probe = createServer().listen(0, '127.0.0.1', () => {
        const address = probe.address() as { port: number };
        probe.close(() => resolve(address.port));
      });
    });
    svc = await startService(
      loadSettings({ HOST: '127.0.0.1', PORT: '0', CNV_WEBHOOK_PORT: String(port), CNV_DATA_DIR: dir, CNV_DEMO_PORT: 'off', LOG_LEVEL: 'silent' }),
    );
  }, TEST_TIMEOUT);
  afterAll(async () => {
    await svc?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('serves only the webhook bridge on the second listener', async () => {
    expect(svc.urls.webhookListening).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    const rest = await fetch(`${svc.urls.webhookListening}/v1/sites`, { headers: { authorization: `Bearer ${svc.apiKey}` } });
    expect(rest.status).toBe(404);
    const hook = await fetch(`${svc.urls.webhookListening}/api/webhook-bridge/saas-signup/${svc.site.site_key}/k`, {
      method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}',
    });
    expect(hook.status).toBe(401); // unsigned: the bridge answered
    expect(startupBanner(svc)).toContain(`own listener on ${svc.urls.webhookListening}`);
  });

  it('once its listener closes, answers what is under way with Connection: close, its health check 503 shutting_down', async () => {
    // A rolling restart's SIGTERM (last in this describe: it closes the service).
    await setSiteDomain(svc.db, svc.site.id, 'https://www.example.com');
    const body = JSON.stringify(snapshotBody());
    // Two connections a proxy keeps open as the SIGTERM comes: a snapshot under way (its body not all sent), and a
    // health check waiting for the store's answer.
    const busy = connection(svc.urls.listening);
    const health = connection(svc.urls.listening);
    const query = svc.db.query.bind(svc.db);
    let storeAnswers = () => undefined as void;
    const held = new Promise<void>((resolve) => (storeAnswers = resolve));
    const checking = new Promise<void>((resolve) => {
      svc.db.query = (async (text: string, ...rest: unknown[]) => {
        if (text === 'select 1') {
          resolve();
          await held;
        }
        return (query as (...args: unknown[]) => Promise<unknown>)(text, ...rest);
      }) as typeof svc.db.query;
    });
    const arrived = new Promise<void>((resolve) => svc.app.server.once('request', () => resolve()));
    busy.write(
      `POST ${snapshotsPath(svc.site.site_key)} HTTP/1.1\r\nHost: cnv\r\nOrigin: https://www.example.com\r\n` +
        `Content-Type: ${SNAPSHOT_CONTENT_TYPE}\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body.slice(0, 10)}`,
    );
    await arrived;
    health.write('GET /healthz HTTP/1.1\r\nHost: cnv\r\n\r\n');
    await checking;
    const closed = svc.close();
    while (svc.app.server.listening) await new Promise((resolve) => setImmediate(resolve));
    busy.write(body.slice(10));
    storeAnswers();
    const [served, checked] = (await Promise.all([busy.ended, health.ended])).map(responses);
    await closed;
    // Stored (the store closes after the listeners), and the connection closed: kept alive, it held the shutdown for
    // Node's keep-alive timeout (73 s).
    expect(served!.map((r) => [r.status, r.connection])).toEqual([[204, 'close']]);
    expect(checked!.map((r) => [r.status, r.connection])).toEqual([[503, 'close']]);
    expect(JSON.parse(checked![0]!.body)).toEqual({
      error: { type: 'api_error', code: 'shutting_down', message: 'This process is shutting down: send requests to another one.' },
    });
  }, TEST_TIMEOUT);
});

const pgUrl = process.env.TEST_DATABASE_URL;
describe.skipIf(!pgUrl)('startService on PostgreSQL (DATABASE_URL)', () => {
  let url: string;
  const running: RunningService[] = [];
  beforeAll(async () => {
    const { randomBytes } = await import('node:crypto');
    const pg = (await import('pg')).default;
    const schema = `svc_${randomBytes(6).toString('hex')}`;
    const admin = new pg.Client({ connectionString: pgUrl });
    await admin.connect();
    await admin.query(`create schema ${schema}`);
    await admin.end();
    url = `${pgUrl}${pgUrl!.includes('?') ? '&' : '?'}options=${encodeURIComponent(`-c search_path=${schema}`)}`;
  });
  afterAll(async () => {
    for (const svc of running) await svc.close();
  });

  it('lets several service processes start at once on one empty database, migrating and bootstrapping it once', async () => {
    const settings = loadSettings({ HOST: '127.0.0.1', PORT: '0', DATABASE_URL: url, CNV_DEMO_PORT: 'off', LOG_LEVEL: 'silent' });
    // At once, on an empty database (a deployment's instances started together): migrated and bootstrapped once.
    running.push(...(await Promise.all([startService(settings), startService(settings)])));
    const keys = running.map((svc) => svc.apiKey).filter(Boolean);
    expect(keys).toHaveLength(1);
    expect(running[0]!.site).toEqual(running[1]!.site);
    for (const svc of running) {
      const res = await fetch(`${svc.urls.listening}/v1/sites`, { headers: { authorization: `Bearer ${keys[0]}` } });
      expect(res.status).toBe(200);
    }
  }, TEST_TIMEOUT);
});

describe('the trusted proxy warning', () => {
  it('warns once at start when every X-Forwarded-For hop is trusted (the visitor writes the first), and not by default or with named proxies', async () => {
    const started: RunningService[] = [];
    const dirs: string[] = [];
    const warningsOf = async (env: Record<string, string>) => {
      const dir = await seededDataDir('cnv-service-proxy-');
      dirs.push(dir);
      const lines: Array<{ level: number; msg: string }> = [];
      const svc = await startService(loadSettings({ PORT: '0', CNV_DATA_DIR: dir, CNV_DEMO_PORT: 'off', ...env }), {
        logger: { level: 'info', stream: { write: (line: string) => void lines.push(JSON.parse(line)) } },
      });
      started.push(svc);
      return lines.filter((line) => line.level === 40 && /CNV_TRUST_PROXY/.test(line.msg));
    };
    try {
      // Behind a proxy on this machine too: it appends to the header what it saw, after what the visitor sent.
      expect(await warningsOf({ HOST: '127.0.0.1', CNV_TRUST_PROXY: 'true' })).toHaveLength(1);
      expect(await warningsOf({ HOST: '0.0.0.0', CNV_TRUST_PROXY: '10.0.0.0/8' })).toHaveLength(0);
      expect(await warningsOf({ HOST: '0.0.0.0' })).toHaveLength(0);
    } finally {
      for (const svc of started) await svc.close();
      for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
    }
  }, TEST_TIMEOUT);
});
