/**
 * Rate limits of the public endpoints, on both stores: the collector's POSTs and the webhook bridge, per client address
 * and per site, answered 429 with Retry-After and the error envelope; two instances on one PostgreSQL share the counts.
 * The windows run on an injected clock, and sharing is driven by calling sync(): nothing here waits for time to pass.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import pg from 'pg';
import { DATABASE_KINDS } from './support/databases';
import { connectApiTrigger, insertApiFlow, setSiteDomain, signedReport, snapshotBody } from './support/fixtures';
import { collectorPath, snapshotsPath, SNAPSHOT_CONTENT_TYPE } from '../../src/protocol/collector';
import { adjustmentPath, conversionPath, saasSignupPath } from '../../src/protocol/webhook';
import { buildApp } from '../../src/server/app';
import { loadSettings, type Settings } from '../../src/server/settings';
import { openDatabase, type Database } from '../../src/server/db/db';
import { migrate } from '../../src/server/db/migrations';
import { insertAccount } from '../../src/server/accounts/sql';
import { insertSite, type SiteRow } from '../../src/server/api/sites/sql';
import { findSnapshot } from '../../src/server/collector/sql';
import { createRateLimits, type RateLimits } from '../../src/server/rate-limits';
import { createCnvClient } from '../../src/client';

const ORIGIN = 'https://www.example.com';
const SECRET = 'whsec_ratelimit_0000000000000000000000';
/** 10 s into a minute: a 60 s window has 50 s left. */
const START = Date.UTC(2026, 10, 26, 2, 0, 10);

const LIMITS = {
  CNV_RATE_LIMIT_COLLECTOR_PER_ADDRESS: '5',
  CNV_RATE_LIMIT_COLLECTOR_PER_SITE: '8',
  CNV_RATE_LIMIT_WEBHOOK_PER_ADDRESS: '3',
  CNV_RATE_LIMIT_WEBHOOK_PER_SITE: '4',
};

function settingsWith(env: Record<string, string> = {}): Settings {
  return loadSettings({ CNV_DEMO_PORT: 'off', CNV_SECRET_KEY: '5'.repeat(64), ...LIMITS, ...env });
}

/** A clock the windows read; tests move it. `nextWindow` goes 10 s into the next minute (50 s left in that window). */
function clock(start = START) {
  const c = {
    ms: start,
    now: () => c.ms,
    nextWindow: () => {
      c.ms = (Math.floor(c.ms / 60_000) + 1) * 60_000 + 10_000;
    },
  };
  return c;
}

interface Instance {
  app: FastifyInstance;
  limits: RateLimits;
}

async function instance(db: Database, settings: Settings, now: () => number): Promise<Instance> {
  const limits = createRateLimits({ settings, db, now });
  const app = await buildApp({ db, settings, logger: false, rateLimits: limits });
  await app.ready();
  return { app, limits };
}

function snapshot(app: FastifyInstance, site: SiteRow, address: string): Promise<LightMyRequestResponse> {
  return app.inject({
    method: 'POST',
    url: snapshotsPath(site.site_key),
    remoteAddress: address,
    headers: { 'content-type': SNAPSHOT_CONTENT_TYPE, origin: ORIGIN },
    payload: JSON.stringify(snapshotBody()),
  });
}

/** Sends `n` snapshots from `address`; returns their statuses. */
async function flood(app: FastifyInstance, site: SiteRow, address: string, n: number): Promise<number[]> {
  const statuses: number[] = [];
  for (let i = 0; i < n; i++) statuses.push((await snapshot(app, site, address)).statusCode);
  return statuses;
}

function expectLimited(res: LightMyRequestResponse, what: RegExp, retryAfter = '50'): void {
  expect(res.statusCode).toBe(429);
  expect(res.headers['retry-after']).toBe(retryAfter);
  expect(res.headers['content-type']).toMatch(/^application\/json/);
  expect(res.json()).toEqual({ error: { type: 'rate_limit_error', code: 'rate_limited', message: expect.stringMatching(what) } });
}

async function siteOf(db: Database, accountId: string): Promise<SiteRow> {
  const site = await insertSite(db, accountId);
  await setSiteDomain(db, site.id, 'https://example.com');
  return site;
}

describe.each(DATABASE_KINDS)('rate limits on $name', (kind) => {
  let db: Database;
  let accountId: string;
  beforeAll(async () => {
    db = await kind.open();
    accountId = (await insertAccount(db, 'Limits')).id;
  });
  afterAll(() => db.close());

  describe('collector', () => {
    let svc: Instance;
    let time: ReturnType<typeof clock>;
    let site: SiteRow;
    let other: SiteRow;
    beforeAll(async () => {
      time = clock();
      svc = await instance(db, settingsWith(), time.now);
      site = await siteOf(db, accountId);
      other = await siteOf(db, accountId);
    });
    afterAll(() => svc.app.close());

    it('limits a flood of snapshots from one address, while other addresses and sites go on; a new window lets it in again', async () => {
      const flooder = '203.0.113.7';
      expect(await flood(svc.app, site, flooder, 5)).toEqual([204, 204, 204, 204, 204]);
      const refused = await snapshot(svc.app, site, flooder);
      expectLimited(refused, /^Too many requests from this address: the collector takes at most 5 requests a minute from one client address\. Retry after 50 s/);
      // The loader's page can read the answer (CORS), like every collector error.
      expect(refused.headers['access-control-allow-origin']).toBe('*');
      // The same address is refused on another site too (the limit is the address's), form submissions included.
      expect((await snapshot(svc.app, other, flooder)).statusCode).toBe(429);
      const form = await svc.app.inject({
        method: 'POST', url: collectorPath(site.site_key, 'form-submissions'), remoteAddress: flooder,
        headers: { 'content-type': SNAPSHOT_CONTENT_TYPE, origin: ORIGIN }, payload: '{}',
      });
      expect(form.statusCode).toBe(429);

      // Another address's snapshot, to the same site and to another, is stored as usual.
      const body = snapshotBody();
      const res = await svc.app.inject({
        method: 'POST', url: snapshotsPath(site.site_key), remoteAddress: '198.51.100.20',
        headers: { 'content-type': SNAPSHOT_CONTENT_TYPE, origin: ORIGIN }, payload: JSON.stringify(body),
      });
      expect(res.statusCode).toBe(204);
      expect(await findSnapshot(db, site.id, body.correlation_token)).not.toBeNull();
      expect((await snapshot(svc.app, other, '198.51.100.21')).statusCode).toBe(204);

      // Retry-After counts down with the window; the next window starts afresh.
      time.ms += 30_000;
      expect((await snapshot(svc.app, site, flooder)).headers['retry-after']).toBe('20');
      time.ms += 20_000;
      expect(await flood(svc.app, site, flooder, 2)).toEqual([204, 204]);
    });

    it('counts IPv6 clients per /64 (one network)', async () => {
      time.nextWindow();
      const statuses: number[] = [];
      for (let i = 1; i <= 6; i++) statuses.push((await snapshot(svc.app, other, `2001:db8:1:2::${i.toString(16)}`)).statusCode);
      expect(statuses).toEqual([204, 204, 204, 204, 204, 429]);
      expect((await snapshot(svc.app, other, '2001:db8:1:3::1')).statusCode).toBe(204);

    });

    it('counts a forwarded client by its own address (X-Forwarded-For, as trustProxy reads it), never by the proxy\'s', async () => {
      time.nextWindow();
      // By default the trusted proxy is one on this machine (CNV_TRUST_PROXY=loopback).
      const viaProxy = (client: string) =>
        svc.app.inject({
          method: 'POST', url: snapshotsPath(other.site_key), remoteAddress: '127.0.0.1',
          headers: { 'content-type': SNAPSHOT_CONTENT_TYPE, origin: ORIGIN, 'x-forwarded-for': client },
          payload: JSON.stringify(snapshotBody()),
        });
      const statuses: number[] = [];
      for (let i = 0; i < 6; i++) statuses.push((await viaProxy('192.0.2.50')).statusCode);
      expect(statuses).toEqual([204, 204, 204, 204, 204, 429]);
      expect((await viaProxy('192.0.2.51')).statusCode).toBe(204);
    });

    it('by default, records the address the proxy on this machine appended, never an X-Forwarded-For entry the visitor wrote', async () => {
      time.nextWindow();
      const sent = async (from: string, forwardedFor: string) => {
        const body = snapshotBody();
        const res = await svc.app.inject({
          method: 'POST', url: snapshotsPath(site.site_key), remoteAddress: from,
          headers: { 'content-type': SNAPSHOT_CONTENT_TYPE, origin: ORIGIN, 'x-forwarded-for': forwardedFor },
          payload: JSON.stringify(body),
        });
        expect(res.statusCode).toBe(204);
        // The address the snapshot keeps is what Meta, TikTok and Reddit receive as the visitor's.
        return (await findSnapshot(db, site.id, body.correlation_token))!.ip_address;
      };
      // nginx ($proxy_add_x_forwarded_for) and most load balancers append what they saw after what the visitor sent.
      expect(await sent('127.0.0.1', '192.0.2.66, 198.51.100.23')).toBe('198.51.100.23');
      expect(await sent('::ffff:127.0.0.1', '192.0.2.66, 198.51.100.24')).toBe('198.51.100.24');
      // A client that reaches the service directly names no address but its own.
      expect(await sent('198.51.100.25', '192.0.2.66')).toBe('198.51.100.25');
    });

    it('limits a site flooded from many addresses, without touching another site', async () => {
      time.nextWindow();
      const statuses: number[] = [];
      for (let i = 1; i <= 9; i++) statuses.push((await snapshot(svc.app, site, `198.51.100.${i}`)).statusCode);
      expect(statuses).toEqual([204, 204, 204, 204, 204, 204, 204, 204, 429]);
      expectLimited(await snapshot(svc.app, site, '198.51.100.77'), /^Too many requests for this site: the collector takes at most 8 requests a minute for one site\./);
      expect((await snapshot(svc.app, other, '198.51.100.77')).statusCode).toBe(204);
    });

    it('never counts what an address limit refused against the site, so one address cannot use up a site', async () => {
      time.nextWindow();
      expect(await flood(svc.app, site, '203.0.113.9', 40)).toEqual([...Array(5).fill(204), ...Array(35).fill(429)]);
      // The site has counted 5 of its 8: three more visitors get in.
      const others: number[] = [];
      for (let i = 1; i <= 4; i++) others.push((await snapshot(svc.app, site, `198.51.100.${100 + i}`)).statusCode);
      expect(others).toEqual([204, 204, 204, 429]);
    });

    it('answers a malformed site key with the usual 4xx envelope, limits or not', async () => {
      time.nextWindow();
      const res = await svc.app.inject({
        method: 'POST', url: snapshotsPath('nosuchsite'), remoteAddress: '203.0.113.50',
        headers: { 'content-type': SNAPSHOT_CONTENT_TYPE, origin: ORIGIN }, payload: JSON.stringify(snapshotBody()),
      });
      expect(res.statusCode).toBe(404);
      expect(res.json().error.code).toBe('site_not_found');
    });
  });

  describe('webhook bridge', () => {
    let svc: Instance;
    let time: ReturnType<typeof clock>;
    let site: SiteRow;
    beforeAll(async () => {
      time = clock();
      svc = await instance(db, settingsWith(), time.now);
      site = await siteOf(db, accountId);
      await connectApiTrigger(db, site, SECRET);
      await insertApiFlow(db, site, { triggerKey: 'signup' });
    });
    afterAll(() => svc.app.close());

    it('limits every route of the bridge per address (signed or not), and another address goes on', async () => {
      const backend = '198.51.100.200';
      const signed = signedReport(site.site_key, 'signup', { customer_event_id: 'u-1', email: 'a@example.com' }, SECRET);
      const ok = await svc.app.inject({ ...signed, remoteAddress: backend });
      expect(ok.statusCode).toBe(200);
      // Unsigned floods count too: the limit is checked before the signature.
      const conversion = await svc.app.inject({ method: 'POST', url: conversionPath(site.site_key, 'paid'), remoteAddress: backend, payload: '{}', headers: { 'content-type': 'application/json' } });
      expect(conversion.statusCode).toBe(401);
      const adjustment = await svc.app.inject({ method: 'POST', url: adjustmentPath(site.site_key), remoteAddress: backend, payload: '{}', headers: { 'content-type': 'application/json' } });
      expect(adjustment.statusCode).toBe(401);
      for (const url of [saasSignupPath(site.site_key, 'signup'), conversionPath(site.site_key, 'paid'), adjustmentPath(site.site_key)]) {
        const res = await svc.app.inject({ method: 'POST', url, remoteAddress: backend, payload: '{}', headers: { 'content-type': 'application/json' } });
        expectLimited(res, /^Too many requests from this address: the webhook bridge takes at most 3 requests a minute from one client address\./);
      }
      const fromElsewhere = signedReport(site.site_key, 'signup', { customer_event_id: 'u-2', email: 'b@example.com' }, SECRET);
      expect((await svc.app.inject({ ...fromElsewhere, remoteAddress: '198.51.100.201' })).statusCode).toBe(200);
    });

    it('limits a site per window across addresses', async () => {
      time.nextWindow();
      const statuses: number[] = [];
      for (let i = 1; i <= 5; i++) {
        const report = signedReport(site.site_key, 'signup', { customer_event_id: `s-${i}` }, SECRET);
        statuses.push((await svc.app.inject({ ...report, remoteAddress: `192.0.2.${i}` })).statusCode);
      }
      expect(statuses).toEqual([200, 200, 200, 200, 429]);
    });

    it('the Node client waits out the 429 (Retry-After) and its report then arrives', async () => {
      time.nextWindow();
      // The client's fetch reaches the app in-process; its sleep moves the windows' clock.
      const waits: number[] = [];
      const client = createCnvClient({
        webhookBaseUrl: 'https://hooks.example.com',
        siteKey: site.site_key,
        triggerKey: 'signup',
        secret: SECRET,
        random: () => 0,
        sleep: async (ms) => {
          waits.push(ms);
          time.ms += ms;
        },
        fetch: (async (url: string | URL, init?: RequestInit) => {
          const res = await svc.app.inject({
            method: 'POST', url: new URL(String(url)).pathname, remoteAddress: '198.51.100.250',
            headers: init?.headers as Record<string, string>, payload: Buffer.from(init?.body as Uint8Array),
          });
          return new Response(res.payload, { status: res.statusCode, headers: res.headers as Record<string, string> });
        }) as typeof fetch,
      });
      for (let i = 1; i <= 3; i++) {
        const sent = await client.reportSignup({ customerEventId: `c-${i}`, allowUncorrelated: true });
        expect(sent.ok).toBe(true);
      }
      expect(waits).toEqual([]);
      const late = await client.reportSignup({ customerEventId: 'c-4', allowUncorrelated: true });
      expect(late.ok).toBe(true);
      // One wait of the whole Retry-After (50 s left in the window), then the report went through.
      expect(waits).toEqual([50_000]);
    });
  });

  it('counts a script that forges X-Forwarded-For by its own address once CNV_TRUST_PROXY names the real proxies', async () => {
    const time = clock();
    const site = await siteOf(db, accountId);
    const forged = (app: FastifyInstance, from: string, n: number) =>
      app.inject({
        method: 'POST', url: snapshotsPath(site.site_key), remoteAddress: from,
        headers: { 'content-type': SNAPSHOT_CONTENT_TYPE, origin: ORIGIN, 'x-forwarded-for': `192.0.2.${n}` },
        payload: JSON.stringify(snapshotBody()),
      });
    for (const trust of ['false', '10.0.0.0/8', '0']) {
      if (trust === '0') {
        expect(() => settingsWith({ CNV_TRUST_PROXY: trust })).toThrow(/CNV_TRUST_PROXY must be/);
        continue;
      }
      time.nextWindow();
      const svc = await instance(db, settingsWith({ CNV_TRUST_PROXY: trust }), time.now);
      // Six requests straight from one script, each claiming another forwarded address: counted as the script's.
      const statuses: number[] = [];
      for (let i = 1; i <= 6; i++) statuses.push((await forged(svc.app, '203.0.113.66', i)).statusCode);
      expect(statuses).toEqual([204, 204, 204, 204, 204, 429]);
      if (trust !== 'false') {
        // Through the trusted proxy, the forwarded address is the client's.
        expect((await forged(svc.app, '10.1.2.3', 50)).statusCode).toBe(204);
        expect((await forged(svc.app, '10.1.2.3', 51)).statusCode).toBe(204);
      }
      await svc.app.close();
    }
  });

  it('with CNV_TRUST_PROXY=1 (one proxy hop), takes the address the proxy appended, not what the client wrote before it', async () => {
    const time = clock();
    const site = await siteOf(db, accountId);
    const svc = await instance(db, settingsWith({ CNV_TRUST_PROXY: '1' }), time.now);
    const statuses: number[] = [];
    for (let i = 1; i <= 6; i++) {
      const res = await svc.app.inject({
        method: 'POST', url: snapshotsPath(site.site_key), remoteAddress: '10.0.0.1',
        // The client forged the first entry; the proxy (10.0.0.1) appended the address it saw.
        headers: { 'content-type': SNAPSHOT_CONTENT_TYPE, origin: ORIGIN, 'x-forwarded-for': `192.0.2.${i}, 198.51.100.99` },
        payload: JSON.stringify(snapshotBody()),
      });
      statuses.push(res.statusCode);
    }
    expect(statuses).toEqual([204, 204, 204, 204, 204, 429]);
    await svc.app.close();
  });

  it('turns limits off with CNV_RATE_LIMITS=off', async () => {
    const time = clock();
    const svc = await instance(db, settingsWith({ CNV_RATE_LIMITS: 'off' }), time.now);
    const site = await siteOf(db, accountId);
    expect(await flood(svc.app, site, '203.0.113.99', 12)).toEqual(Array(12).fill(204));
    await svc.app.close();
  });
});

describe('settings', () => {
  it('has defaults no real site reaches, per 60 s window, and refuses nonsense naming the setting', () => {
    expect(loadSettings({}).rateLimits).toEqual({
      windowSeconds: 60, collectorPerAddress: 600, collectorPerSite: 60_000, webhookPerAddress: 12_000, webhookPerSite: 12_000, syncMs: 1000,
    });
    expect(loadSettings({ CNV_RATE_LIMIT_COLLECTOR_PER_SITE: 'off' }).rateLimits.collectorPerSite).toBeNull();
    expect(() => loadSettings({ CNV_RATE_LIMIT_WEBHOOK_PER_ADDRESS: '0' })).toThrow(/CNV_RATE_LIMIT_WEBHOOK_PER_ADDRESS/);
    expect(() => loadSettings({ CNV_RATE_LIMITS: 'maybe' })).toThrow(/CNV_RATE_LIMITS must be on or off/);
    expect(() => loadSettings({ CNV_RATE_LIMIT_SYNC_MS: '5' })).toThrow(/CNV_RATE_LIMIT_SYNC_MS/);
    expect(loadSettings({}).trustProxy).toEqual(['loopback']);
    expect(loadSettings({ CNV_TRUST_PROXY: 'true' }).trustProxy).toBe(true);
    expect(loadSettings({ CNV_TRUST_PROXY: '2' }).trustProxy).toBe(2);
    expect(loadSettings({ CNV_TRUST_PROXY: '10.0.0.1, 192.168.0.0/16, loopback, ::1' }).trustProxy).toEqual(['10.0.0.1', '192.168.0.0/16', 'loopback', '::1']);
    expect(() => loadSettings({ CNV_TRUST_PROXY: '10.0.0.0/33' })).toThrow(/CNV_TRUST_PROXY/);
    expect(() => loadSettings({ CNV_TRUST_PROXY: 'proxy.internal' })).toThrow(/CNV_TRUST_PROXY/);
  });
});

const url = process.env.TEST_DATABASE_URL;

describe.runIf(url)('two instances on one PostgreSQL', () => {
  const dbs: Database[] = [];
  let a: Instance;
  let b: Instance;
  let site: SiteRow;
  const time = clock();

  /** A second connection pool to the same fresh schema, as a second service process would open. */
  async function openSchema(schemaUrl: string): Promise<Database> {
    const db = await openDatabase({ databaseUrl: schemaUrl });
    dbs.push(db);
    return db;
  }

  beforeAll(async () => {
    const schema = `t_${randomBytes(6).toString('hex')}`;
    const admin = new pg.Client({ connectionString: url });
    await admin.connect();
    await admin.query(`create schema ${schema}`);
    await admin.end();
    const schemaUrl = `${url}${url!.includes('?') ? '&' : '?'}options=${encodeURIComponent(`-c search_path=${schema}`)}`;
    const first = await openSchema(schemaUrl);
    await migrate(first);
    const second = await openSchema(schemaUrl);
    const accountId = (await insertAccount(first, 'Shared')).id;
    site = await siteOf(first, accountId);
    const settings = settingsWith();
    a = await instance(first, settings, time.now);
    b = await instance(second, settings, time.now);
  });
  afterAll(async () => {
    await a?.app.close();
    await b?.app.close();
    for (const db of dbs) await db.close();
  });

  it('share one address limit: what one instance let in counts on the other after a sync', async () => {
    expect(a.limits.shared && b.limits.shared).toBe(true);
    const flooder = '203.0.113.7';
    expect(await flood(a.app, site, flooder, 3)).toEqual([204, 204, 204]);
    expect(await flood(b.app, site, flooder, 2)).toEqual([204, 204]);
    await a.limits.sync();
    await b.limits.sync();
    // b knows the total (5) from its own batch; a learns it at its next sync.
    expectLimited(await snapshot(b.app, site, flooder), /from this address/);
    await a.limits.sync();
    expectLimited(await snapshot(a.app, site, flooder), /from this address/);
    // Another address is not affected on either.
    expect((await snapshot(a.app, site, '198.51.100.1')).statusCode).toBe(204);
    expect((await snapshot(b.app, site, '198.51.100.2')).statusCode).toBe(204);
  });

  it('an instance that never saw an address refuses it once the others have reached its limit', async () => {
    time.nextWindow();
    expect(await flood(a.app, site, '203.0.113.8', 5)).toEqual([204, 204, 204, 204, 204]);
    await a.limits.sync();
    await b.limits.sync();
    expect((await snapshot(b.app, site, '203.0.113.8')).statusCode).toBe(429);
  });

  it('stores no client address in the shared table, and deletes the windows that ended', async () => {
    const rows = await dbs[0]!.query<{ key_id: string; window_start: string }>('select key_id, window_start from rate_limit_counts');
    expect(rows.length).toBeGreaterThan(0);
    for (const row of rows) expect(row.key_id).toMatch(/^[0-9a-f]{32}$/);
    time.ms += 120_000;
    await snapshot(a.app, site, '198.51.100.9');
    await a.limits.sync();
    const left = await dbs[0]!.query<{ window_start: string }>('select distinct window_start from rate_limit_counts');
    expect(left.map((r) => Number(r.window_start))).toEqual([Math.floor(time.ms / 60_000) * 60_000]);
  });
});
