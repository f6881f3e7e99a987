import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtemp, rm, utimes, writeFile } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import Fastify, { type FastifyInstance } from 'fastify';
import { loaderScriptRoutes } from '../../src/server/collector/loader-routes';
import { etagMatches, packageRoot } from '../../src/server/http/static-file';
import { OPTIONAL_SCRIPTS, optionalScriptPath } from '../../src/protocol/install';

describe('GET /loader.js and the optional scripts', () => {
  let dir: string;
  let app: FastifyInstance;
  const script = '(()=>{window.__service=window.__service||{}})();\n//# sourceMappingURL=loader.js.map\n';
  const optional = (name: string) => `const ${name}=()=>{};export{${name} as default};\n`;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'cnv-loader-'));
    await writeFile(join(dir, 'loader.js'), script);
    await writeFile(join(dir, 'loader.js.map'), '{"version":3,"sources":[],"mappings":""}');
    for (const name of OPTIONAL_SCRIPTS) {
      await writeFile(join(dir, `loader-${name}.js`), optional(name));
      await writeFile(join(dir, `loader-${name}.js.map`), '{"version":3,"sources":[],"mappings":""}');
    }
    app = Fastify();
    await app.register(loaderScriptRoutes({ distDir: dir }));
    await app.ready();
  });
  afterAll(async () => {
    await app.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('serves the built loader as JavaScript, cacheable by any site, with a strong ETag', async () => {
    const res = await app.inject({ method: 'GET', url: '/loader.js?site_key=abc' });
    expect(res.statusCode).toBe(200);
    expect(res.body).toBe(script);
    expect(res.headers['content-type']).toBe('application/javascript; charset=utf-8');
    expect(res.headers.etag).toMatch(/^"[A-Za-z0-9_-]+"$/);
    expect(res.headers['cache-control']).toMatch(/^public, max-age=300/);
    expect(res.headers['access-control-allow-origin']).toBe('*');
    expect(res.headers['cross-origin-resource-policy']).toBe('cross-origin');
  });

  it('answers 304 without a body when the ETag still matches', async () => {
    const { etag } = (await app.inject({ method: 'GET', url: '/loader.js' })).headers;
    const res = await app.inject({ method: 'GET', url: '/loader.js', headers: { 'if-none-match': `"other", ${etag}` } });
    expect(res.statusCode).toBe(304);
    expect(res.body).toBe('');
    expect(res.headers.etag).toBe(etag);
  });

  it('serves a rebuilt loader with a new ETag without a restart', async () => {
    const before = (await app.inject({ method: 'GET', url: '/loader.js' })).headers.etag;
    const rebuilt = `${script}/* v2 */\n`;
    await writeFile(join(dir, 'loader.js'), rebuilt);
    const later = new Date(Date.now() + 5000);
    await utimes(join(dir, 'loader.js'), later, later);
    const res = await app.inject({ method: 'GET', url: '/loader.js', headers: { 'if-none-match': String(before) } });
    expect(res.statusCode).toBe(200);
    expect(res.body).toBe(rebuilt);
    expect(res.headers.etag).not.toBe(before);
  });

  it('serves the source map as JSON', async () => {
    const res = await app.inject({ method: 'GET', url: '/loader.js.map' });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(res.json()).toMatchObject({ version: 3 });
  });

  it('answers HEAD with the headers only', async () => {
    const res = await app.inject({ method: 'HEAD', url: '/loader.js' });
    expect(res.statusCode).toBe(200);
    expect(res.headers.etag).toBeDefined();
    expect(res.body).toBe('');
  });

  it.each(OPTIONAL_SCRIPTS.map((name) => [name, optionalScriptPath(name)]))(
    'serves the optional script %s at %s like the loader: JavaScript, a strong ETag, cacheable by any site, 304 on a match',
    async (name, path) => {
      const res = await app.inject({ method: 'GET', url: path });
      expect(res.statusCode).toBe(200);
      expect(res.body).toBe(optional(name));
      expect(res.headers['content-type']).toBe('application/javascript; charset=utf-8');
      expect(res.headers.etag).toMatch(/^"[A-Za-z0-9_-]+"$/);
      expect(res.headers['cache-control']).toMatch(/^public, max-age=300/);
      expect(res.headers['access-control-allow-origin']).toBe('*');
      expect(res.headers['cross-origin-resource-policy']).toBe('cross-origin');
      const again = await app.inject({ method: 'GET', url: path, headers: { 'if-none-match': String(res.headers.etag) } });
      expect(again.statusCode).toBe(304);
      expect(again.body).toBe('');
      const map = await app.inject({ method: 'GET', url: `${path}.map` });
      expect(map.statusCode).toBe(200);
      expect(map.headers['content-type']).toBe('application/json; charset=utf-8');
    },
  );

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

describe('the loader bundles', () => {
  it('build.mjs builds the core and exactly the optional scripts the protocol names, each with a gzip budget', async () => {
    // build.mjs is plain JavaScript: imported by URL, typed here by what the test reads.
    const { LOADER_BUNDLES, LOADER_GZIP_BUDGET } = (await import(new URL('../../build.mjs', import.meta.url).href)) as {
      LOADER_BUNDLES: Record<string, { budget: number }>;
      LOADER_GZIP_BUDGET: number;
    };
    expect(Object.keys(LOADER_BUNDLES)).toEqual(['loader.js', ...OPTIONAL_SCRIPTS.map((name) => optionalScriptPath(name).slice(1))]);
    expect(LOADER_BUNDLES['loader.js']!.budget).toBe(LOADER_GZIP_BUDGET);
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
