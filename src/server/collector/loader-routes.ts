/** Serves the built browser loader, `/loader.js` and its source map, with a strong ETag and a short public cache. */
import { join } from 'node:path';
import type { FastifyInstance, FastifyPluginAsync } from 'fastify';
import { ApiError } from '../http/errors';
import { etagMatches, packageRoot, StaticFile } from '../http/static-file';

export interface LoaderScriptOptions {
  /** Folder holding loader.js and loader.js.map; the package's dist/ by default. */
  distDir?: string;
}

const CONTENT_TYPES = {
  'loader.js': 'application/javascript; charset=utf-8',
  'loader.js.map': 'application/json; charset=utf-8',
} as const;

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

/** `/loader.js` and `/loader.js.map` from the package's dist/. */
export default loaderScriptRoutes();
