/**
 * Serves the browser loader (DESIGN.md, "The loader on the wire"):
 * - `/loader.js?site_key=KEY`: the loader with that site's config inside (the same JSON as the config endpoint), so
 *   it decides at its first act: the lean core (dist/site-loader.js) for a site without form triggers, the full core
 *   (dist/loader.js) for a site with them. `Cache-Control: public, max-age=60, stale-while-revalidate=86400`, so a
 *   domain changed in the service reaches browsers within a minute. An unknown key gets the plain loader. The config
 *   comes from memory (site-configs.ts), so a page view costs the store nothing.
 * - `/loader.js` without a key: the plain loader (the full core with no config: it discovers its key and fetches the
 *   config; the older snippet with data-site-key).
 * - the optional scripts `/loader-<name>.js`, fetched by the core only on pages that use them.
 * Every script is sent compressed (brotli or gzip by Accept-Encoding, identity otherwise), compressed once per content:
 * at the first request after a build, and once per (site, config version) for the per-site loader. Each answer has a
 * strong ETag per encoding, `Vary: Accept-Encoding` and a 304 on If-None-Match; what is served names no source map
 * (the maps stay at `/<script>.map` for whoever wants them).
 */
import { join } from 'node:path';
import type { FastifyInstance, FastifyPluginAsync, FastifyReply } from 'fastify';
import { LOADER_PATH, OPTIONAL_SCRIPTS, optionalScriptPath, SITE_KEY_PARAM } from '../../protocol/install';
import { leanCoreConfig, loaderWithConfig, servedScript } from '../../protocol/loader-script';
import type { Database } from '../db/db';
import { encodeBody, sendEncoded, type EncodedBody } from '../http/encoded-body';
import { ApiError, printable } from '../http/errors';
import { packageRoot, StaticFile } from '../http/static-file';
import type { LoaderConfig } from './config';
import { SiteConfigs } from './site-configs';
import { OriginTraffic } from './origin-traffic';

export interface LoaderScriptOptions {
  /** Folder holding the built loader scripts and their maps; the package's dist/ by default. */
  distDir?: string;
  /** How many per-site loaders (site and config version) are kept compressed in memory; 5,000 by default. */
  maxSiteLoaders?: number;
}

const JAVASCRIPT = 'application/javascript; charset=utf-8';
/** A plain script changes only with a new build: cached a little longer; revalidation is a cheap 304. */
const PLAIN_CACHE = 'public, max-age=300, stale-while-revalidate=86400';
/** A per-site loader carries the site's config: a domain changed in the service reaches browsers within a minute. */
const SITE_CACHE = 'public, max-age=60, stale-while-revalidate=86400';
/** The full core (also the plain loader) and the lean core, as build.mjs writes them to dist/. */
const FULL_CORE = LOADER_PATH.slice(1);
const LEAN_CORE = 'site-loader.js';
/** The optional scripts by file name. */
const OPTIONAL_FILES = OPTIONAL_SCRIPTS.map((name) => optionalScriptPath(name).slice(1));
/** The longest site key looked up (as the collector's paths allow); a longer or unprintable one is unknown. */
const SITE_KEY_MAX = 100;

/** A built script as served: its text without a source map comment, compressed once per build. */
class BuiltScript {
  readonly #file: StaticFile;
  #served: { etag: string; text: string; encoded: EncodedBody } | null = null;

  constructor(path: string) {
    this.#file = new StaticFile(path);
  }

  /** The current build's served text and its encodings (recomputed when the file changed); null while not built. */
  async current(): Promise<{ text: string; encoded: EncodedBody } | null> {
    const version = await this.#file.current();
    if (!version) return null;
    if (this.#served?.etag !== version.etag) {
      const text = servedScript(version.body.toString('utf8'));
      this.#served = { etag: version.etag, text, encoded: encodeBody(text) };
    }
    return this.#served;
  }
}

/** Per-site loaders by (core build, config), compressed once each; the least recently used go beyond `max`. */
class SiteLoaders {
  readonly #entries = new Map<string, EncodedBody>();

  constructor(private readonly max: number) {}

  /** The per-site loader of a core's text and a config, compressed at its first use. */
  get(core: string, coreEtag: string, config: object): EncodedBody {
    const key = `${coreEtag}\n${JSON.stringify(config)}`;
    let entry = this.#entries.get(key);
    if (entry) this.#entries.delete(key);
    else entry = encodeBody(loaderWithConfig(core, config));
    this.#entries.set(key, entry);
    if (this.#entries.size > this.max) this.#entries.delete(this.#entries.keys().next().value!);
    return entry;
  }
}

function notBuilt(reply: FastifyReply, name: string): FastifyReply {
  const body = new ApiError(
    503, 'api_error', 'loader_not_built', `${name} has not been built: run \`npm run build\` (or \`node build.mjs --loader-only\`).`,
  ).toBody();
  return reply.code(503).header('cache-control', 'no-store').send(body);
}

/** Headers every script answer carries: any site may load it (also as a module, in CORS mode). */
function scriptHeaders(reply: FastifyReply, cacheControl: string): FastifyReply {
  return reply
    .header('cache-control', cacheControl)
    .header('access-control-allow-origin', '*')
    .header('cross-origin-resource-policy', 'cross-origin')
    .header('x-content-type-options', 'nosniff');
}

/** The origin of a Referer header (the page that loaded the script), if it has one. */
function originOf(referer: string | undefined): string | undefined {
  try {
    const origin = referer ? new URL(referer).origin : undefined;
    return origin && origin !== 'null' ? origin : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The route plugin for a given dist folder (tests point it at a temporary one). Registered with the app context, it
 * serves per-site loaders from the sites in `db`; without one, `/loader.js` is always the plain loader.
 */
export function loaderScriptRoutes(options: LoaderScriptOptions = {}): FastifyPluginAsync<{ db?: Database }> {
  return async (app: FastifyInstance, ctx: { db?: Database }) => {
    const distDir = options.distDir ?? join(packageRoot(), 'dist');
    const scripts = new Map([FULL_CORE, LEAN_CORE, ...OPTIONAL_FILES].map((name) => [name, new BuiltScript(join(distDir, name))]));
    const siteLoaders = new SiteLoaders(options.maxSiteLoaders ?? 5_000);
    const db = ctx.db;
    const siteConfigs = db && new SiteConfigs(db);
    // The install check: a per-site loader is the config request of the new snippet, counted per page origin.
    const traffic = db && new OriginTraffic(db, { onError: (error) => app.log.warn({ err: error }, 'could not record loader origins') });
    if (traffic) app.addHook('onClose', () => traffic.flush());
    // Compressed at start (and again after a rebuild, at its first request), not per request.
    app.addHook('onReady', async () => {
      await Promise.all([...scripts.values()].map((script) => script.current()));
    });

    /** The site's config for a site_key query value, or null (no key, an unknown one, or the lookup failed). */
    async function configFor(siteKey: unknown, referer: string | undefined): Promise<LoaderConfig | null> {
      if (!siteConfigs || typeof siteKey !== 'string' || !siteKey || siteKey.length > SITE_KEY_MAX || printable(siteKey, SITE_KEY_MAX) !== siteKey) {
        return null;
      }
      try {
        // Kept a few seconds, and read again after a change made through this process (site-configs.ts).
        const found = await siteConfigs.get(siteKey);
        if (!found) return null;
        traffic!.config(found.site, originOf(referer));
        return found.config;
      } catch (error) {
        // The plain loader fetches the config itself: a page still gets a working loader.
        app.log.warn({ err: error }, 'could not read a site config for its loader; serving the plain loader');
        return null;
      }
    }

    app.get(LOADER_PATH, async (request, reply) => {
      const siteKey = (request.query as Record<string, unknown>)[SITE_KEY_PARAM];
      const config = await configFor(siteKey, request.headers.referer);
      const lean = config !== null && !config.forms.length;
      const core = await scripts.get(lean ? LEAN_CORE : FULL_CORE)!.current();
      if (!core) return notBuilt(reply, FULL_CORE);
      scriptHeaders(reply, siteKey === undefined ? PLAIN_CACHE : SITE_CACHE);
      const inside = config && (lean ? leanCoreConfig(config) : config);
      const body = inside ? siteLoaders.get(core.text, core.encoded.etags.identity, inside) : core.encoded;
      return sendEncoded(request, reply, body, JAVASCRIPT);
    });

    for (const name of OPTIONAL_FILES) {
      app.get(`/${name}`, async (request, reply) => {
        const script = await scripts.get(name)!.current();
        if (!script) return notBuilt(reply, name);
        return sendEncoded(request, scriptHeaders(reply, PLAIN_CACHE), script.encoded, JAVASCRIPT);
      });
    }

    // The source maps, for whoever wants them (what is served does not name them).
    for (const name of [FULL_CORE, LEAN_CORE, ...OPTIONAL_FILES].map((script) => `${script}.map`)) {
      const file = new StaticFile(join(distDir, name));
      app.get(`/${name}`, async (_request, reply) => {
        const version = await file.current();
        if (!version) return notBuilt(reply, name);
        return reply.header('content-type', 'application/json; charset=utf-8').header('etag', version.etag).send(version.body);
      });
    }
  };
}

/** The loader's scripts from the package's dist/. */
export default loaderScriptRoutes();
