/**
 * The customer's website for the browser tests: serves e2e/fixtures pages under any host name (the specs use
 * www.example.com, app.example.com and www.evil.example.net, all mapped to 127.0.0.1), fills in the service URL and
 * site keys, and records the signup requests the pages send so a spec can see which cookies reached the site's backend.
 * With a certificate it serves the same pages over https too, on a second port, with one request record for both.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import { readFile } from 'node:fs/promises';
import { join, normalize } from 'node:path';
import type { AddressInfo } from 'node:net';
import type { Certificate } from './tls';

/** The scheme a request arrived over. */
export type FixtureScheme = 'http' | 'https';

/** A request the site's backend received (a form post or a framework's fetch). */
export interface RecordedRequest {
  method: string;
  /** Whether it arrived on the http or the https listener. */
  scheme: FixtureScheme;
  host: string;
  path: string;
  /** The Cookie header as received, '' when none. */
  cookie: string;
  body: string;
}

export interface FixtureServerOptions {
  /** Folder of the fixture pages. */
  dir: string;
  /**
   * Template values for a page served over `scheme`: `{{NAME}}` in a page becomes values.NAME. `{{KEY}}` is the key
   * of the site named by `?site=`, `{{SCHEME}}` the scheme (for links to the other fixture hosts).
   */
  values: (scheme: FixtureScheme) => Record<string, string>;
  /** Site keys by name, for `{{KEY}}`; a page picks one with `?site=<name>`, default `main`. */
  siteKeys: () => Record<string, string>;
  /** Extra read-only JSON endpoints for the specs (reached over loopback), by path, e.g. what the service stored. */
  inspect?: Record<string, (query: URLSearchParams) => Promise<unknown>>;
  /** When given, the pages are also served over https with this certificate (`securePort`). */
  tls?: Certificate;
}

export interface FixtureServer {
  port: number;
  /** The https listener's port, when started with a certificate. */
  securePort?: number;
  close(): Promise<void>;
}

/** Fixture pages served: the top-level ones and the form-tool pages under forms/ (no other folder, no `..`). */
const FIXTURE_PAGE = /^(forms\/)?[a-z0-9-]+\.html$/;
/** Paths whose requests are recorded: the signup endpoints of the customer's backend. */
const RECORDED_PATH = /^\/(signup$|api\/)/;
/** A page may ask for response headers with leading `<!-- header: Name: value -->` lines (e.g. a strict CSP). */
const HEADER_COMMENT = /^\s*<!--\s*header:\s*([A-Za-z-]+):\s*(.*?)\s*-->\s*\n?/;

async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

/** Fills `{{NAME}}` placeholders; an unknown name is an error, so a typo in a fixture fails loudly. */
function fillTemplate(page: string, values: Record<string, string>, file: string): string {
  return page.replace(/\{\{([A-Z_]+)\}\}/g, (_, name: string) => {
    const value = values[name];
    if (value === undefined) throw new Error(`fixture ${file} uses unknown placeholder {{${name}}}`);
    return value;
  });
}

/** Splits the leading header comments off a page. */
function takeHeaders(page: string): { headers: Record<string, string>; html: string } {
  const headers: Record<string, string> = {};
  let html = page;
  for (let m = HEADER_COMMENT.exec(html); m; m = HEADER_COMMENT.exec(html)) {
    headers[m[1]!] = m[2]!;
    html = html.slice(m[0].length);
  }
  return { headers, html };
}

/** Starts the fixture site on 127.0.0.1 (a free port). */
export async function startFixtureServer(options: FixtureServerOptions): Promise<FixtureServer> {
  const recorded: RecordedRequest[] = [];

  async function servePage(url: URL, scheme: FixtureScheme, res: ServerResponse): Promise<void> {
    const file = normalize(url.pathname).replace(/^\/+/, '');
    if (!FIXTURE_PAGE.test(file)) {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('not found');
      return;
    }
    let source: string;
    try {
      source = await readFile(join(options.dir, file), 'utf8');
    } catch {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('not found');
      return;
    }
    const siteName = url.searchParams.get('site') ?? 'main';
    const key = options.siteKeys()[siteName];
    if (!key) {
      res.writeHead(400, { 'content-type': 'text/plain' }).end(`no test site named '${siteName}'`);
      return;
    }
    const { headers, html } = takeHeaders(fillTemplate(source, { ...options.values(scheme), SCHEME: scheme, KEY: key }, file));
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store', ...headers }).end(html);
  }

  async function handle(scheme: FixtureScheme, req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', `${scheme}://${req.headers.host ?? '127.0.0.1'}`);
    if (url.pathname === '/__recorded') {
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(recorded));
      return;
    }
    const inspect = options.inspect?.[url.pathname];
    if (inspect) {
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify((await inspect(url.searchParams)) ?? null));
      return;
    }
    if (url.pathname === '/favicon.ico') {
      res.writeHead(204).end();
      return;
    }
    if (RECORDED_PATH.test(url.pathname)) {
      const entry: RecordedRequest = {
        method: req.method ?? 'GET',
        scheme,
        host: req.headers.host ?? '',
        path: url.pathname + url.search,
        cookie: req.headers.cookie ?? '',
        body: await readBody(req),
      };
      recorded.push(entry);
      if (url.pathname.startsWith('/api/')) {
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ ok: true, cookie: entry.cookie }));
      } else {
        res
          .writeHead(200, { 'content-type': 'text/html; charset=utf-8' })
          .end(`<!doctype html><title>Welcome</title><h1>Account created</h1><pre id="received-cookie">${escapeHtml(entry.cookie)}</pre>`);
      }
      return;
    }
    if (req.method !== 'GET') {
      res.writeHead(405, { 'content-type': 'text/plain' }).end('method not allowed');
      return;
    }
    await servePage(url, scheme, res);
  }

  const handler = (scheme: FixtureScheme) => (req: IncomingMessage, res: ServerResponse) => {
    handle(scheme, req, res).catch((error: unknown) => {
      res.writeHead(500, { 'content-type': 'text/plain' }).end(String(error instanceof Error ? error.message : error));
    });
  };
  const servers: Server[] = [createServer(handler('http'))];
  if (options.tls) servers.push(createHttpsServer(options.tls, handler('https')));
  const ports: number[] = [];
  try {
    for (const server of servers) ports.push(await listen(server));
  } catch (error) {
    await Promise.all(servers.map(stop));
    throw error;
  }
  return {
    port: ports[0]!,
    ...(ports[1] !== undefined ? { securePort: ports[1] } : {}),
    close: async () => {
      await Promise.all(servers.map(stop));
    },
  };
}

/** Listens on 127.0.0.1 (a free port) and returns the port. */
async function listen(server: Server): Promise<number> {
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', resolve);
  });
  return (server.address() as AddressInfo).port;
}

function stop(server: Server): Promise<void> {
  if (!server.listening) return Promise.resolve();
  return new Promise<void>((resolve) => {
    server.closeAllConnections();
    server.close(() => resolve());
  });
}

/** The signup requests the fixture site has received so far (read by the specs over loopback). */
export async function recordedRequests(control: string): Promise<RecordedRequest[]> {
  const res = await fetch(`${control}/__recorded`);
  if (!res.ok) throw new Error(`fixture server answered ${res.status} for its request record`);
  return (await res.json()) as RecordedRequest[];
}

/** Control path under which the global setup exposes what the real service stored for a (site_id, token). */
export const STORED_SNAPSHOT_PATH = '/__stored-snapshot';

/** The snapshot the real service stored for a site's token (JSON as the store returns it), or null. */
export async function storedSnapshot(control: string, siteId: string, token: string): Promise<Record<string, unknown> | null> {
  const query = new URLSearchParams({ site_id: siteId, token });
  const res = await fetch(`${control}${STORED_SNAPSHOT_PATH}?${query}`);
  if (!res.ok) throw new Error(`fixture server answered ${res.status} for the stored snapshot: ${await res.text()}`);
  return (await res.json()) as Record<string, unknown> | null;
}
