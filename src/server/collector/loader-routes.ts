/**
 * Serves the built browser loader with a strong ETag and a short public cache: `/loader.js` (the core, on every page),
 * its optional scripts `/loader-<name>.js` (fetched by the core only on pages that use them), and their source maps.
 */
import { join } from 'node:path';
import type { FastifyInstance, FastifyPluginAsync } from 'fastify';
import { LOADER_PATH, OPTIONAL_SCRIPTS, optionalScriptPath } from '../../protocol/install';
import { ApiError } from '../http/errors';
import { etagMatches, packageRoot, StaticFile } from '../http/static-file';

export interface LoaderScriptOptions {
  /** Folder holding the built loader scripts and their maps; the package's dist/ by default. */
  distDir?: string;
}

/** The loader's scripts by file name: the core and each optional script, as build.mjs writes them to dist/. */
const SCRIPTS = [LOADER_PATH, ...OPTIONAL_SCRIPTS.map(optionalScriptPath)].map((path) => path.slice(1));

/** Every file served, with its content type: each script and its source map. */
const CONTENT_TYPES: Record<string, string> = Object.fromEntries(
  SCRIPTS.flatMap((script) => [
    [script, 'application/javascript; charset=utf-8'],
    [`${script}.map`, 'application/json; charset=utf-8'],
  ]),
);

/** The route plugin for a given dist folder (tests point it at a temporary one). */
export function loaderScriptRoutes(options: LoaderScriptOptions = {}): FastifyPluginAsync {
  return async (app: FastifyInstance) => {
    const distDir = options.distDir ?? join(packageRoot(), 'dist');
    for (const [name, contentType] of Object.entries(CONTENT_TYPES)) {
      const file = new StaticFile(join(distDir, name));
      app.get(`/${name}`, async (request, reply) => {
        const version = await file.current();
        if (!version) {
          const body = new ApiError(
            503, 'api_error', 'loader_not_built', `${name} has not been built: run \`npm run build\` (or \`node build.mjs --loader-only\`).`,
          ).toBody();
          return reply.code(503).header('cache-control', 'no-store').send(body);
        }
        reply
          .header('etag', version.etag)
          // Short, so a fixed loader reaches pages within minutes; revalidation is a cheap 304.
          .header('cache-control', 'public, max-age=300, stale-while-revalidate=86400')
          .header('access-control-allow-origin', '*')
          .header('cross-origin-resource-policy', 'cross-origin')
          .header('x-content-type-options', 'nosniff');
        if (etagMatches(request.headers['if-none-match'], version.etag)) return reply.code(304).send();
        return reply.header('content-type', contentType).send(version.body);
      });
    }
  };
}

/** The loader's scripts and source maps from the package's dist/. */
export default loaderScriptRoutes();
