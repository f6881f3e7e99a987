/**
 * The loopback server behind the loader benchmark: fixture pages, the three scripts, and small stand-ins for what
 * they call (cnv's config endpoint, Plausible's event endpoint, Segment's settings, chunks and tracking API), so every
 * script does its full boot and nothing errors.
 */
import { createServer } from 'node:http';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { segmentChunk } from './loader-scripts.mjs';

const pagesDir = new URL('./pages/', import.meta.url).pathname;
const CORS = { 'access-control-allow-origin': '*', 'access-control-allow-headers': '*', 'access-control-allow-methods': 'GET, POST, OPTIONS' };
const JS = 'application/javascript; charset=utf-8';

/** Host names (mapped to 127.0.0.1 by the browser's host rules) for the page, our service, Plausible and Segment. */
export const HOSTS = {
  page: 'www.example.com',
  cnv: 'svc.cnv.test',
  plausible: 'plausible.cnv.test',
  segmentCdn: 'cdn.example.net',
  segmentApi: 'api.example.net',
};

export const CNV_SITE_KEY = 'benchsitekey';
export const SEGMENT_WRITE_KEY = 'benchWriteKey';

/**
 * Starts the server; `scripts` holds the code of cnv's loader, Plausible's tracker and Segment's standalone bundle (read
 * at each request, so a script can be filled in after the server has started). Returns origins and page URLs.
 */
export async function startLoaderServer(scripts) {
  let port = 0;
  const origin = (host) => `http://${host}:${port}`;
  // Network activity as the server sees it (the benchmark enables no Network domain in the browser, and keepalive
  // beacons, which Plausible and Segment send, would keep a browser-side idle check from settling).
  let inFlight = 0;
  let lastActivity = Date.now();
  /** Requests received, by path: a benchmark checks that each script's own request (config, pageview) really arrived. */
  const hits = new Map();

  const server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://local');
    const path = url.pathname;
    hits.set(path, (hits.get(path) ?? 0) + 1);
    inFlight++;
    lastActivity = Date.now();
    res.on('close', () => {
      inFlight--;
      lastActivity = Date.now();
    });
    const send = (status, headers, body) => {
      res.writeHead(status, { 'cache-control': 'no-store', ...headers });
      res.end(body);
    };
    // Drain request bodies (beacons) before answering.
    req.resume();
    req.on('end', () => {
      if (req.method === 'OPTIONS') return send(204, CORS);
      let m;
      if ((m = /^\/landing\/(cnv|plausible|segment)$/.exec(path))) return send(200, { 'content-type': 'text/html; charset=utf-8' }, page(m[1]));
      if (path === '/favicon.ico') return send(204, {});
      if (path === '/loader.js') return send(200, { 'content-type': JS }, scripts.cnv);
      if (path === `/collect/v1/sites/${CNV_SITE_KEY}/config`) {
        const config = { site_key: CNV_SITE_KEY, domain: origin(HOSTS.page), correlation_ttl_seconds: 1800, honor_gpc: true };
        return send(200, { ...CORS, 'content-type': 'application/json' }, JSON.stringify(config));
      }
      if (path === `/collect/v1/sites/${CNV_SITE_KEY}/snapshots`) return send(204, CORS);
      if (path === '/js/plausible.js') return send(200, { 'content-type': JS }, scripts.plausible);
      if (path === '/api/event') return send(202, { ...CORS, 'content-type': 'text/plain' }, 'ok');
      if (path === `/analytics.js/v1/${SEGMENT_WRITE_KEY}/analytics.min.js`) return send(200, { 'content-type': JS }, scripts.segment);
      if ((m = /^\/analytics-next\/bundles\/([^/]+)$/.exec(path))) {
        const chunk = segmentChunk(m[1]);
        return chunk ? send(200, { 'content-type': JS }, chunk) : send(404, {}, 'no such chunk');
      }
      if (path === `/v1/projects/${SEGMENT_WRITE_KEY}/settings`) return send(200, { ...CORS, 'content-type': 'application/json' }, JSON.stringify(segmentSettings()));
      if (/^\/v1\/(t|p|i|g|a|s|m|b|batch)$/.test(path)) return send(200, { ...CORS, 'content-type': 'application/json' }, '{"success":true}');
      return send(404, {}, 'not found');
    });
  });

  const templates = {
    landing: readFileSync(join(pagesDir, 'landing.html'), 'utf8'),
    heads: Object.fromEntries(['cnv', 'plausible', 'segment'].map((v) => [v, readFileSync(join(pagesDir, `head-${v}.html`), 'utf8')])),
  };
  function page(variant) {
    const values = {
      PAGE_ORIGIN: origin(HOSTS.page),
      CNV_ORIGIN: origin(HOSTS.cnv),
      CNV_SITE_KEY,
      PLAUSIBLE_ORIGIN: origin(HOSTS.plausible),
      SEGMENT_CDN: origin(HOSTS.segmentCdn),
      SEGMENT_WRITE_KEY,
    };
    const fill = (text) => text.replace(/\{\{(\w+)\}\}/g, (_, key) => values[key]);
    return fill(templates.landing.replace('<!--HEAD-->', templates.heads[variant].trim()));
  }
  // What Segment's CDN answers for a source with no destinations but its own API (sent here, over http).
  function segmentSettings() {
    return {
      integrations: { 'Segment.io': { apiKey: SEGMENT_WRITE_KEY, apiHost: `${HOSTS.segmentApi}:${port}/v1`, protocol: 'http' } },
      plan: { track: { __default: { enabled: true } }, identify: { __default: { traits: {} } } },
      edgeFunction: {},
      analyticsNextEnabled: true,
      middlewareSettings: {},
      enabledMiddleware: {},
      metrics: { sampleRate: 0 },
      legacyVideoPluginsEnabled: false,
      remotePlugins: [],
    };
  }

  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = server.address().port;
  return {
    port,
    origin,
    /** How many requests reached `path` so far. */
    hits: (path) => hits.get(path) ?? 0,
    /** Every path requested so far (Segment's lazy chunks are found among them). */
    paths: () => [...hits.keys()],
    /** The landing URL of a variant: an ad click (gclid and UTM), so every script reads a real landing. */
    pageUrl: (variant) => `${origin(HOSTS.page)}/landing/${variant}?gclid=bench-gclid-123&utm_source=google&utm_medium=cpc&utm_campaign=spring`,
    /** Resolves once no request has been open for `quietMs` (checked every 25 ms), or after `timeoutMs` anyway. */
    async waitForQuiet(quietMs, timeoutMs = 10_000) {
      const start = Date.now();
      while (Date.now() - start < timeoutMs) {
        if (inFlight === 0 && Date.now() - lastActivity >= quietMs) return true;
        await new Promise((resolve) => setTimeout(resolve, 25));
      }
      return false;
    },
    close: () => new Promise((resolve) => { server.closeAllConnections(); server.close(resolve); }),
  };
}
