/**
 * The backend recipes of docs/recipes/ (Python, Ruby, PHP, Go) against what stands between a backend and the service
 * in production: a proxy or load balancer that answers an HTML error page, a redirect, a 404 page of another host.
 * Each recipe runs, unchanged, as a child process against a local server that verifies every signature and answers as
 * scripted. A 502 page is transient: the recipe must retry (signed afresh) and print the 200 that follows, not crash
 * on the page's HTML. A redirect is returned, never followed (following it would send a GET without the body to another
 * path). A 404 page is returned as its status with no answer body. A host that answered 503 and then became
 * unreachable fails as unreachable (PHP kept the earlier attempt's status line in $http_response_header).
 *
 * A recipe whose interpreter is missing is skipped on a developer machine; in CI (CI set) it fails instead, as in
 * recipes.test.ts.
 */
import { execFile, spawnSync } from 'node:child_process';
import { createHmac } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';

const RECIPES = resolve(import.meta.dirname, '../../docs/recipes');
const IN_CI = Boolean(process.env.CI) && process.env.CI !== 'false';
const SECRET = 'whsec_recipesTransportTestSecret00';
const SITE_KEY = 'k3v9x0q2m1ab';
const PATH = `/api/webhook-bridge/saas-signup/${SITE_KEY}/signup`;
const PROMOTED = { status: 'promoted', promoted_count: 1, customer_event_id: 'user_42', correlated: false };

function has(command: string, versionArg: string): boolean {
  const probe = spawnSync(command, [versionArg], { stdio: 'ignore' });
  return probe.error === undefined && probe.status === 0;
}

function run(file: string, args: string[], env: Record<string, string>, timeout = 60_000): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((done) => {
    execFile(file, args, { env: { ...process.env, ...env }, timeout }, (error, stdout, stderr) =>
      done({ code: error ? (typeof error.code === 'number' ? error.code : 1) : 0, stdout, stderr }),
    );
  });
}

interface Seen {
  method: string;
  url: string;
  signed: boolean;
}

/** What the server answers to the n-th request (1-based). */
type Script = (n: number, req: IncomingMessage, res: ServerResponse) => void;

const RECIPE_LIST = [
  { language: 'Python', tool: 'python3', versionArg: '--version', file: 'cnv_report.py' },
  { language: 'Ruby', tool: 'ruby', versionArg: '--version', file: 'cnv_report.rb' },
  { language: 'PHP', tool: 'php', versionArg: '--version', file: 'cnv_report.php' },
  { language: 'Go', tool: 'go', versionArg: 'version', file: 'cnv_report.go' },
] as const;

describe('backend recipes behind a proxy: HTML error pages, redirects', () => {
  let server: Server;
  let base: string;
  let workDir: string;
  let seen: Seen[] = [];
  let script: Script = () => {};
  /** The parsed JSON body of the request being answered. */
  let lastBody: unknown = null;
  const commands = new Map<string, { file: string; args: string[] }>();

  beforeAll(async () => {
    workDir = mkdtempSync(join(tmpdir(), 'cnv-recipes-transport-'));
    server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        const body = Buffer.concat(chunks);
        const header = String(req.headers['x-service-signature'] ?? '');
        const t = /t=(\d+)/.exec(header)?.[1];
        const v1 = /v1=([0-9a-f]{64})/.exec(header)?.[1];
        const path = (req.url ?? '').split('?')[0];
        const expected = createHmac('sha256', SECRET).update(`${t}.POST.${path}.`).update(body).digest('hex');
        seen.push({ method: req.method ?? '', url: req.url ?? '', signed: t !== undefined && v1 === expected });
        try {
          lastBody = JSON.parse(body.toString('utf8'));
        } catch {
          lastBody = null;
        }
        script(seen.length, req, res);
      });
    });
    await new Promise<void>((ready) => server.listen(0, '127.0.0.1', ready));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    await new Promise((closed) => server?.close(closed));
    if (workDir) rmSync(workDir, { recursive: true, force: true });
  });
  beforeEach(() => {
    seen = [];
  });

  /** The recipe's command: the Go file is compiled once, the others run through their interpreter. */
  async function commandOf(recipe: (typeof RECIPE_LIST)[number]): Promise<{ file: string; args: string[] }> {
    const known = commands.get(recipe.language);
    if (known) return known;
    let command: { file: string; args: string[] } = { file: recipe.tool, args: [join(RECIPES, recipe.file)] };
    if (recipe.tool === 'go') {
      const binary = join(workDir, 'cnv_report');
      const built = await run('go', ['build', '-o', binary, join(RECIPES, recipe.file)], { GO111MODULE: 'off', GOCACHE: process.env.GOCACHE ?? join(tmpdir(), 'cnv-go-cache') }, 180_000);
      if (built.code !== 0) throw new Error(`go build failed: ${built.stderr}`);
      command = { file: binary, args: [] };
    }
    commands.set(recipe.language, command);
    return command;
  }

  async function report(recipe: (typeof RECIPE_LIST)[number], extra: string[] = []) {
    const { file, args } = await commandOf(recipe);
    const env = { CNV_WEBHOOK_BASE_URL: base, CNV_SITE_KEY: SITE_KEY, CNV_TRIGGER_KEY: 'signup', CNV_WEBHOOK_SECRET: SECRET };
    const result = await run(file, [...args, '--customer-event-id=user_42', '--email=ada@example.com', ...extra], env);
    const last = result.stdout.trim().split('\n').pop() ?? '';
    return { ...result, printed: last ? (JSON.parse(last) as { status: number; body: unknown }) : null };
  }

  // Money from an ORM is a decimal type: json.dumps refuses a Decimal, Ruby's JSON writes a BigDecimal as a string.
  const DECIMALS = [
    {
      language: 'Python', tool: 'python3', versionArg: '--version',
      args: ['-c', 'import sys, json, decimal; sys.path.insert(0, sys.argv[1]); import cnv_report; ' +
        'print(json.dumps(cnv_report.report_signup(None, "user_42", value=decimal.Decimal("29.90"), currency="EUR")))', RECIPES],
    },
    {
      language: 'Ruby', tool: 'ruby', versionArg: '--version',
      args: ['-rbigdecimal', '-e', 'require File.join(ARGV[0], "cnv_report"); ' +
        'puts JSON.generate(CnvReport.report_signup(correlation_token: nil, customer_event_id: "user_42", value: BigDecimal("29.90"), currency: "EUR"))', RECIPES],
    },
  ] as const;
  for (const decimal of DECIMALS) {
    const available = has(decimal.tool, decimal.versionArg);
    it.skipIf(!available && !IN_CI)(`${decimal.language}: a decimal value (an ORM's money column) is sent as a JSON number`, async () => {
      if (!available) throw new Error(`${decimal.tool} is not installed: CI must install it (.ci/run)`);
      const bodies: unknown[] = [];
      script = (_n, _req, res) => {
        bodies.push(lastBody);
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify(PROMOTED));
      };
      const env = { CNV_WEBHOOK_BASE_URL: base, CNV_SITE_KEY: SITE_KEY, CNV_TRIGGER_KEY: 'signup', CNV_WEBHOOK_SECRET: SECRET };
      const result = await run(decimal.tool, [...decimal.args], env);
      expect(result.stderr).toBe('');
      expect(result.code, result.stdout).toBe(0);
      expect(bodies).toEqual([expect.objectContaining({ value: 29.9, currency: 'EUR' })]);
      expect(seen).toEqual([{ method: 'POST', url: PATH, signed: true }]);
    }, 120_000);
  }

  for (const recipe of RECIPE_LIST) {
    const available = has(recipe.tool, recipe.versionArg);
    describe(recipe.language, () => {
      it.skipIf(!available && !IN_CI)('a proxy\'s 502 HTML page is retried, signed afresh, and the 200 after it printed', async () => {
        if (!available) throw new Error(`${recipe.tool} is not installed: CI must install it (.ci/run)`);
        script = (n, _req, res) => {
          if (n === 1) {
            res.writeHead(502, { 'content-type': 'text/html' });
            res.end('<html><body><h1>502 Bad Gateway</h1></body></html>');
            return;
          }
          res.writeHead(200, { 'content-type': 'application/json' });
          res.end(JSON.stringify(PROMOTED));
        };
        const result = await report(recipe);
        expect(result.stderr).toBe('');
        expect(result.code, result.stdout).toBe(0);
        expect(result.printed).toEqual({ status: 200, body: PROMOTED });
        expect(seen).toEqual([
          { method: 'POST', url: PATH, signed: true },
          { method: 'POST', url: PATH, signed: true },
        ]);
      }, 120_000);

      it.skipIf(!available && !IN_CI)('reads the token from a Cookie header among other cookies, with the standard library alone', async () => {
        if (!available) throw new Error(`${recipe.tool} is not installed: CI must install it (.ci/run)`);
        const bodies: unknown[] = [];
        script = (_n, _req, res) => {
          bodies.push(lastBody);
          res.writeHead(200, { 'content-type': 'application/json' });
          res.end(JSON.stringify(PROMOTED));
        };
        const token = 'Tok3n_for-the-Recipes0';
        const result = await report(recipe, [`--cookie=theme=dark; cnv_signup_correlation="${token}"; other="x y"`]);
        expect(result.stderr).toBe('');
        expect(result.code, result.stdout).toBe(0);
        expect(bodies).toEqual([expect.objectContaining({ correlation_token: token, allow_uncorrelated: false })]);
      }, 120_000);

      it.skipIf(!available && !IN_CI)('a redirect is returned as it is, not followed (no GET to another path)', async () => {
        if (!available) throw new Error(`${recipe.tool} is not installed: CI must install it (.ci/run)`);
        script = (_n, req, res) => {
          if ((req.url ?? '').startsWith('/elsewhere')) {
            res.writeHead(200, { 'content-type': 'application/json' });
            res.end(JSON.stringify(PROMOTED));
            return;
          }
          res.writeHead(302, { location: `/elsewhere${req.url}` });
          res.end();
        };
        const result = await report(recipe);
        expect(result.stderr).toBe('');
        expect(result.code).toBe(1);
        expect(result.printed).toEqual({ status: 302, body: null });
        expect(seen).toEqual([{ method: 'POST', url: PATH, signed: true }]);
      }, 120_000);

      it.skipIf(!available && !IN_CI)('a 503, then the host unreachable: it fails as unreachable, not with the earlier 503', async () => {
        if (!available) throw new Error(`${recipe.tool} is not installed: CI must install it (.ci/run)`);
        // A server of its own, closed after its one answer: every later attempt is refused.
        const gone = createServer((_req, res) => {
          res.writeHead(503, { connection: 'close' });
          res.end();
          gone.close();
          gone.closeAllConnections();
        });
        await new Promise<void>((ready) => gone.listen(0, '127.0.0.1', ready));
        const { file, args } = await commandOf(recipe);
        const env = {
          CNV_WEBHOOK_BASE_URL: `http://127.0.0.1:${(gone.address() as AddressInfo).port}`,
          CNV_SITE_KEY: SITE_KEY, CNV_TRIGGER_KEY: 'signup', CNV_WEBHOOK_SECRET: SECRET,
        };
        const result = await run(file, [...args, '--customer-event-id=user_42'], env);
        expect(result.code).not.toBe(0);
        expect(result.stdout.trim()).toBe('');
        expect(result.stderr).not.toBe('');
      }, 120_000);

      it.skipIf(!available && !IN_CI)('another host\'s 404 HTML page is printed as its status, without a crash or a retry', async () => {
        if (!available) throw new Error(`${recipe.tool} is not installed: CI must install it (.ci/run)`);
        script = (_n, _req, res) => {
          res.writeHead(404, { 'content-type': 'text/html' });
          res.end('<html><body>Not Found</body></html>');
        };
        const result = await report(recipe);
        expect(result.stderr).toBe('');
        expect(result.code).toBe(1);
        expect(result.printed).toEqual({ status: 404, body: null });
        expect(seen).toHaveLength(1);
      }, 120_000);
    });
  }
});
