/**
 * The loopback server behind the loader benchmark: fixture pages, the three scripts, and small stand-ins for what
 * they call (cnv's config endpoint for the older snippet, Plausible's event endpoint, Segment's settings, chunks and
 * tracking API), so every script does its full boot and nothing errors. Every script is served compressed as a CDN
 * serves it, by the request's Accept-Encoding (brotli or gzip, compressed once, with the service's own negotiation),
 * and the server counts the requests and the bytes on the wire of each page view.
 */
import { createServer } from 'node:http';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { segmentChunk } from './loader-scripts.mjs';
import { importTs } from './support/ts-module.mjs';

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

/** The config of the benchmark's cnv site, as the config endpoint answers it and as it goes inside the loader. */
export function cnvSiteConfig(pageOrigin) {
  return { site_key: CNV_SITE_KEY, domain: pageOrigin, cookie_domain: 'example.com', correlation_ttl_seconds: 1800, honor_gpc: true, forms: [] };
}
export const SEGMENT_WRITE_KEY = 'benchWriteKey';

/**
 * Starts the server; `scripts` holds the code of cnv's loader, Plausible's tracker and Segment's standalone bundle (read
 * at each request, so a script can be filled in after the server has started). Returns origins and page URLs.
 */
export async function startLoaderServer(scripts) {
  const { encodeBody, negotiateEncoding } = await importTs('src/server/http/encoded-body.ts');
  /** Each script's encodings, computed once per script text. */
  const encoded = new Map();
  const encodingsOf = (code) => {
    if (!encoded.has(code)) encoded.set(code, encodeBody(code));
    return encoded.get(code);
  };
  /** What the page view since the last reset cost on the wire: requests (page and favicon aside) and body bytes sent. */
  let wire = { requests: 0, bytes: 0, encodings: new Set() };
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
    const counted = !/^\/landing\//.test(path) && path !== '/favicon.ico';
    const send = (status, headers, body) => {
      res.writeHead(status, { 'cache-control': 'no-store', ...headers });
      if (counted) {
        wire.requests++;
        wire.bytes += body ? Buffer.byteLength(body) : 0;
      }
      res.end(body);
    };
    /** A script, in the encoding the request prefers. */
    const sendScript = (code) => {
      const encoding = negotiateEncoding(req.headers['accept-encoding']);
      if (counted) wire.encodings.add(encoding);
      const headers = { 'content-type': JS, vary: 'Accept-Encoding', ...(encoding === 'identity' ? {} : { 'content-encoding': encoding }) };
      return send(200, headers, encodingsOf(code).bodies[encoding]);
    };
    // Drain request bodies (beacons) before answering.
    req.resume();
    req.on('end', () => {
      if (req.method === 'OPTIONS') return send(204, CORS);
      let m;
      if ((m = /^\/landing\/(cnv|plausible|segment)$/.exec(path))) return send(200, { 'content-type': 'text/html; charset=utf-8' }, page(m[1]));
      if (path === '/favicon.ico') return send(204, {});
      if (path === '/loader.js') return sendScript(scripts.cnv);
      if (path === `/collect/v1/sites/${CNV_SITE_KEY}/config`) {
        return send(200, { ...CORS, 'content-type': 'application/json' }, JSON.stringify(cnvSiteConfig(origin(HOSTS.page))));
      }
      if (path === `/collect/v1/sites/${CNV_SITE_KEY}/snapshots`) return send(204, CORS);
      if (path === '/js/plausible.js') return sendScript(scripts.plausible);
      if (path === '/api/event') return send(202, { ...CORS, 'content-type': 'text/plain' }, 'ok');
      if (path === `/analytics.js/v1/${SEGMENT_WRITE_KEY}/analytics.min.js`) return sendScript(scripts.segment);
      if ((m = /^\/analytics-next\/bundles\/([^/]+)$/.exec(path))) {
        const chunk = segmentChunk(m[1]);
        return chunk ? sendScript(chunk.toString('utf8')) : send(404, {}, 'no such chunk');
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
    /** The requests and body bytes sent since the last call (the page and favicon aside), and the script encodings used. */
    takeWire() {
      const taken = { requests: wire.requests, bytes: wire.bytes, encodings: [...wire.encodings].sort() };
      wire = { requests: 0, bytes: 0, encodings: new Set() };
      return taken;
    },
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
