import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtemp, rm, utimes, writeFile } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import Fastify, { type FastifyInstance } from 'fastify';
import { loaderScriptRoutes } from '../../src/server/collector/loader-routes';
import { negotiateEncoding } from '../../src/server/http/encoded-body';
import { etagMatches, packageRoot } from '../../src/server/http/static-file';
import { OPTIONAL_SCRIPTS, optionalScriptPath } from '../../src/protocol/install';
import { loaderWithConfig, scriptJson, servedScript } from '../../src/protocol/loader-script';
import { configPath } from '../../src/protocol/collector';
import { insertSite } from '../../src/server/api/sites/sql';
import { createTestService, type TestService } from './support/harness';
import { insertFormFlow, setSiteDomain } from './support/fixtures';

const MAP = '{"version":3,"sources":[],"mappings":""}';
/** Stand-ins for the two cores as build.mjs writes them: functions of the config called with null, a map comment after. */
const FULL = '//# allFunctionsCalledOnLoad\n(z=>{window.__full=z})(null);\n//# sourceMappingURL=loader.js.map\n';
const LEAN = '//# allFunctionsCalledOnLoad\n(z=>{window.__lean=z})(null);\n//# sourceMappingURL=site-loader.js.map\n';
const optional = (name: string) => `const ${name}=()=>{};export{${name} as default};\n//# sourceMappingURL=loader-${name}.js.map\n`;
const CHROME = 'gzip, deflate, br, zstd';

describe('the loader on the wire', () => {
  let dir: string;
  let svc: TestService;
  let app: FastifyInstance;
  const get = (url: string, headers: Record<string, string> = {}) => app.inject({ method: 'GET', url, headers });
  /** The body as the browser reads it, decoded from its Content-Encoding. */
  const decoded = (res: Awaited<ReturnType<typeof get>>) => {
    const raw = res.rawPayload;
    const encoding = res.headers['content-encoding'];
    return (encoding === 'br' ? brotliDecompressSync(raw) : encoding === 'gzip' ? gunzipSync(raw) : raw).toString('utf8');
  };
  const configOf = async (siteKey: string) => (await svc.app.inject({ method: 'GET', url: configPath(siteKey) })).json();

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'cnv-loader-'));
    await writeFile(join(dir, 'loader.js'), FULL);
    await writeFile(join(dir, 'site-loader.js'), LEAN);
    for (const name of ['loader.js', 'site-loader.js']) await writeFile(join(dir, `${name}.map`), MAP);
    for (const name of OPTIONAL_SCRIPTS) {
      await writeFile(join(dir, `loader-${name}.js`), optional(name));
      await writeFile(join(dir, `loader-${name}.js.map`), MAP);
    }
    svc = await createTestService();
    await setSiteDomain(svc.db, svc.site.id, 'https://www.example.com');
    app = Fastify();
    await app.register(loaderScriptRoutes({ distDir: dir }), { db: svc.db });
    await app.ready();
  });
  afterAll(async () => {
    await app.close();
    await svc.close();
    await rm(dir, { recursive: true, force: true });
  });

  describe('/loader.js?site_key=KEY', () => {
    it("is the lean loader with the site's config inside: the config endpoint's JSON less what it says by default", async () => {
      const res = await get(`/loader.js?site_key=${svc.site.site_key}`);
      expect(res.statusCode).toBe(200);
      expect(res.headers['content-type']).toBe('application/javascript; charset=utf-8');
      const config = await configOf(svc.site.site_key);
      expect(config).toMatchObject({ domain: 'https://www.example.com', honor_gpc: true, forms: [] });
      const { forms: _forms, honor_gpc: _honorGpc, ...inside } = config;
      expect(res.body).toBe(loaderWithConfig(servedScript(LEAN), inside));
      expect(res.body).toContain(`})(${JSON.stringify(inside)});`);
      expect(res.body).not.toContain('sourceMappingURL');
    });

    it('keeps "honor_gpc": false inside the lean loader (true, the default, is left out)', async () => {
      const site = await insertSite(svc.db, svc.accountId, { domain: 'https://nogpc.example', honor_gpc: false });
      const res = await get(`/loader.js?site_key=${site.site_key}`);
      const { forms: _forms, ...inside } = await configOf(site.site_key);
      expect(inside.honor_gpc).toBe(false);
      expect(res.body).toBe(loaderWithConfig(servedScript(LEAN), inside));
    });

    it('is cacheable for a minute, revalidated in the background for a day, with an ETag and Vary', async () => {
      const res = await get(`/loader.js?site_key=${svc.site.site_key}`);
      expect(res.headers['cache-control']).toBe('public, max-age=60, stale-while-revalidate=86400');
      expect(res.headers.etag).toMatch(/^"[A-Za-z0-9_-]+"$/);
      expect(res.headers.vary).toBe('Accept-Encoding');
      expect(res.headers['access-control-allow-origin']).toBe('*');
      expect(res.headers['cross-origin-resource-policy']).toBe('cross-origin');
    });

    it('is sent as brotli or gzip by Accept-Encoding, each encoding with its own ETag, and 304 on a match', async () => {
      const url = `/loader.js?site_key=${svc.site.site_key}`;
      const identity = await get(url);
      const br = await get(url, { 'accept-encoding': CHROME });
      const gzip = await get(url, { 'accept-encoding': 'br;q=0.5, gzip' });
      expect(br.headers['content-encoding']).toBe('br');
      expect(gzip.headers['content-encoding']).toBe('gzip');
      expect(identity.headers['content-encoding']).toBeUndefined();
      expect(decoded(br)).toBe(identity.body);
      expect(decoded(gzip)).toBe(identity.body);
      expect(new Set([identity.headers.etag, br.headers.etag, gzip.headers.etag]).size).toBe(3);
      const again = await get(url, { 'accept-encoding': CHROME, 'if-none-match': String(br.headers.etag) });
      expect(again.statusCode).toBe(304);
      expect(again.body).toBe('');
      expect(again.headers.etag).toBe(br.headers.etag);
      expect(again.headers.vary).toBe('Accept-Encoding');
    });

    it('carries a domain changed in the service at the next fetch, under a new ETag (the old one no longer matches)', async () => {
      const site = await insertSite(svc.db, svc.accountId, { domain: 'https://old.example' });
      const url = `/loader.js?site_key=${site.site_key}`;
      const before = await get(url, { 'accept-encoding': CHROME });
      expect(decoded(before)).toContain('"domain":"https://old.example"');
      await setSiteDomain(svc.db, site.id, 'https://new.example');
      const after = await get(url, { 'accept-encoding': CHROME, 'if-none-match': String(before.headers.etag) });
      expect(after.statusCode).toBe(200);
      expect(decoded(after)).toContain('"domain":"https://new.example"');
      expect(after.headers.etag).not.toBe(before.headers.etag);
      expect(after.headers['cache-control']).toBe('public, max-age=60, stale-while-revalidate=86400');
    });

    it('is the full loader, config inside, for a site with form triggers', async () => {
      const site = await insertSite(svc.db, svc.accountId, { domain: 'https://forms.example' });
      await insertFormFlow(svc.db, site, 'gravity-forms');
      const res = await get(`/loader.js?site_key=${site.site_key}`);
      const config = await configOf(site.site_key);
      expect(config.forms).toEqual([{ integration: 'gravity-forms', page_filter: 'all' }]);
      expect(res.body).toBe(loaderWithConfig(servedScript(FULL), config));
    });

    it.each([['an unknown key', 'nosuchkey123'], ['an empty key', ''], ['an over-long key', 'k'.repeat(101)], ['a key with a control character', 'a%00b']])(
      'serves the plain loader for %s',
      async (_case, key) => {
        const res = await get(`/loader.js?site_key=${key}`);
        expect(res.statusCode).toBe(200);
        expect(res.body).toBe(servedScript(FULL));
        expect(res.headers['cache-control']).toBe('public, max-age=60, stale-while-revalidate=86400');
      },
    );
  });

  describe('/loader.js and the optional scripts', () => {
    it('without a site_key, /loader.js is the plain loader (the full core called with null), without its map comment', async () => {
      const res = await get('/loader.js');
      expect(res.statusCode).toBe(200);
      expect(res.body).toBe(FULL.replace(/\n\/\/# sourceMappingURL=.*\n$/, ''));
      expect(res.headers['cache-control']).toMatch(/^public, max-age=300, stale-while-revalidate=86400$/);
      expect(res.headers.vary).toBe('Accept-Encoding');
    });

    it.each(OPTIONAL_SCRIPTS.map((name) => [name, optionalScriptPath(name)]))(
      'serves the optional script %s at %s compressed like the loader, with a 304 on a match',
      async (name, path) => {
        const res = await get(path, { 'accept-encoding': 'gzip' });
        expect(res.statusCode).toBe(200);
        expect(res.headers['content-encoding']).toBe('gzip');
        expect(decoded(res)).toBe(servedScript(optional(name)));
        expect(decoded(res)).not.toContain('sourceMappingURL');
        expect(res.headers['content-type']).toBe('application/javascript; charset=utf-8');
        expect(res.headers['access-control-allow-origin']).toBe('*');
        const again = await get(path, { 'accept-encoding': 'gzip', 'if-none-match': String(res.headers.etag) });
        expect(again.statusCode).toBe(304);
        const map = await get(`${path}.map`);
        expect(map.headers['content-type']).toBe('application/json; charset=utf-8');
      },
    );

    it('serves a rebuilt script with a new ETag without a restart', async () => {
      const before = (await get('/loader-links.js')).headers.etag;
      await writeFile(join(dir, 'loader-links.js'), `${optional('links')}/* v2 */\n`);
      const later = new Date(Date.now() + 5000);
      await utimes(join(dir, 'loader-links.js'), later, later);
      const res = await get('/loader-links.js', { 'if-none-match': String(before) });
      expect(res.statusCode).toBe(200);
      expect(res.body).toContain('/* v2 */');
      expect(res.headers.etag).not.toBe(before);
    });

    it('answers HEAD with the headers only', async () => {
      const res = await app.inject({ method: 'HEAD', url: '/loader.js' });
      expect(res.statusCode).toBe(200);
      expect(res.headers.etag).toBeDefined();
      expect(res.body).toBe('');
    });

    it('answers 503 with a hint to build when the loader has not been built', async () => {
      const empty = Fastify();
      await empty.register(loaderScriptRoutes({ distDir: join(dir, 'missing') }));
      const res = await empty.inject({ method: 'GET', url: '/loader.js' });
      expect(res.statusCode).toBe(503);
      expect(res.json().error).toMatchObject({ code: 'loader_not_built' });
      expect(res.json().error.message).toMatch(/npm run build/);
      expect((await empty.inject({ method: 'GET', url: '/loader-forms.js' })).statusCode).toBe(503);
      await empty.close();
    });
  });
});

describe('content negotiation', () => {
  it.each([
    ['gzip, deflate, br, zstd', 'br'],
    ['gzip', 'gzip'],
    ['br;q=0.5, gzip;q=0.8', 'gzip'],
    ['gzip;q=0, br;q=0', 'identity'],
    ['*', 'br'],
    ['deflate', 'identity'],
    ['*;q=0', 'identity'],
    [undefined, 'identity'],
  ])('Accept-Encoding %s gets %s', (header, expected) => {
    expect(negotiateEncoding(header)).toBe(expected);
  });
});

describe('the config inside the loader', () => {
  it('is JSON that cannot end a script element or hold a raw line separator', () => {
    const text = scriptJson({ domain: 'https://x.example/</script><!--', note: 'a\u2028b\u2029c' });
    expect(text).not.toMatch(/[<>\u2028\u2029]/);
    // Still the same value, read as JavaScript.
    expect(new Function(`return ${text}`)()).toEqual({ domain: 'https://x.example/</script><!--', note: 'a\u2028b\u2029c' });
  });

  it('replaces the null the core is called with, and refuses a text that is not a core build', () => {
    expect(loaderWithConfig('(z=>{f(z)})(null);', { a: 1 })).toBe('(z=>{f(z)})({"a":1});');
    expect(() => loaderWithConfig('(()=>{})();', { a: 1 })).toThrow(/must end with/);
  });
});

describe('the loader bundles', () => {
  it('build.mjs builds both cores and exactly the optional scripts the protocol names, each with a gzip budget', async () => {
    // build.mjs is plain JavaScript: imported by URL, typed here by what the test reads.
    const { LOADER_BUNDLES, LOADER_GZIP_BUDGET } = (await import(new URL('../../build.mjs', import.meta.url).href)) as {
      LOADER_BUNDLES: Record<string, { budget: number }>;
      LOADER_GZIP_BUDGET: number;
    };
    expect(Object.keys(LOADER_BUNDLES)).toEqual(['site-loader.js', 'loader.js', ...OPTIONAL_SCRIPTS.map((name) => optionalScriptPath(name).slice(1))]);
    expect(LOADER_BUNDLES['site-loader.js']!.budget).toBe(LOADER_GZIP_BUDGET);
    for (const bundle of Object.values(LOADER_BUNDLES)) expect(bundle.budget).toBeGreaterThan(0);
  });
});

describe('loader file helpers', () => {
  it('finds the package root from the source tree', () => {
    expect(existsSync(join(packageRoot(), 'build.mjs'))).toBe(true);
  });

  it('matches If-None-Match lists, weak forms and *', () => {
    expect(etagMatches('"a", W/"b"', '"b"')).toBe(true);
    expect(etagMatches('*', '"b"')).toBe(true);
    expect(etagMatches('"a"', '"b"')).toBe(false);
    expect(etagMatches(undefined, '"b"')).toBe(false);
  });
});
