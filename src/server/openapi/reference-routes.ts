/**
 * `GET /v1/openapi.json` (the document, no key needed) and `GET /docs/api`, the API reference rendered by Swagger UI
 * from the npm package swagger-ui-dist, served by the service itself: no third-party host, a CSP that allows only the
 * service's own origin.
 */
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { etagMatches, StaticFile } from '../http/static-file';
import { html, htmlDocument } from '../http/html';
import { sendHtml } from '../http/page';
import { OPENAPI_PATH } from './document';

/** Where the reference page lives. */
export const REFERENCE_PATH = '/docs/api';

/**
 * The reference page's policy: scripts and styles from the service only (Swagger UI sets some styles inline), images
 * from the service or data: URLs, requests ("Try it out") to the service itself.
 */
const REFERENCE_CSP =
  "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; font-src 'self' data:; " +
  "connect-src 'self'; form-action 'none'; base-uri 'none'; frame-ancestors 'none'";

const SWAGGER_UI_DIR = dirname(createRequire(import.meta.url).resolve('swagger-ui-dist/package.json'));

/** The files of the page: Swagger UI's own bundle and stylesheet, and our start script. */
const ASSETS: Record<string, { file: StaticFile | string; type: string }> = {
  'swagger-ui.css': { file: new StaticFile(join(SWAGGER_UI_DIR, 'swagger-ui.css')), type: 'text/css; charset=utf-8' },
  'swagger-ui-bundle.js': { file: new StaticFile(join(SWAGGER_UI_DIR, 'swagger-ui-bundle.js')), type: 'application/javascript; charset=utf-8' },
  // No inline script under the CSP: the start is a file of its own. The validator badge would call a third-party host.
  'start.js': {
    file: `window.addEventListener('load', function () {
  window.ui = SwaggerUIBundle({
    url: ${JSON.stringify(OPENAPI_PATH)},
    dom_id: '#reference',
    deepLinking: true,
    validatorUrl: null,
    tryItOutEnabled: false,
    persistAuthorization: false,
    defaultModelsExpandDepth: 0,
    docExpansion: 'list'
  });
});
`,
    type: 'application/javascript; charset=utf-8',
  },
};

const PAGE = htmlDocument({
  title: 'cnv API reference',
  style: 'body { margin: 0; background: #fff; } .topbar { display: none; }',
  head: html`<link rel="stylesheet" href="${REFERENCE_PATH}/swagger-ui.css">`,
  body: html`<div id="reference"></div>
<noscript><p>The reference needs JavaScript. The document itself: <a href="${OPENAPI_PATH}">${OPENAPI_PATH}</a>.</p></noscript>
<script src="${REFERENCE_PATH}/swagger-ui-bundle.js"></script>
<script src="${REFERENCE_PATH}/start.js"></script>`,
});

async function sendAsset(request: FastifyRequest<{ Params: { file: string } }>, reply: FastifyReply) {
  // Own names only: `constructor`, `__proto__` and the like are not assets.
  const asset = Object.hasOwn(ASSETS, request.params.file) ? ASSETS[request.params.file] : undefined;
  if (!asset) return reply.callNotFound();
  const version = typeof asset.file === 'string' ? { body: Buffer.from(asset.file), etag: null } : await asset.file.current();
  if (!version) return reply.callNotFound();
  reply.header('content-type', asset.type).header('cache-control', 'public, max-age=300').header('x-content-type-options', 'nosniff');
  if (version.etag) {
    reply.header('etag', version.etag);
    if (etagMatches(request.headers['if-none-match'], version.etag)) return reply.status(304).send();
  }
  return reply.send(version.body);
}

/** Registers the document and the reference page (at the root: no API key). */
export default async function referenceRoutes(app: FastifyInstance): Promise<void> {
  app.get(OPENAPI_PATH, async (_request, reply) =>
    reply.header('access-control-allow-origin', '*').header('cache-control', 'no-cache').send(app.swagger()),
  );
  app.get(REFERENCE_PATH, async (_request, reply) => sendHtml(reply, 200, PAGE, REFERENCE_CSP));
  app.get(`${REFERENCE_PATH}/:file`, sendAsset);
}
