/**
 * The backend recipes of docs/recipes/ (Python, Ruby, PHP, Go), each EXECUTED as a child process against the real
 * service listening on a free port: a browser snapshot with a gclid is stored under a fresh token, the recipe gets the
 * signup request's Cookie header, reads the token from it, signs and sends the report with a value and a customer id,
 * and must be answered 200; the delivery worker then delivers the conversion, with that gclid and value, to the strict
 * fake of Google's Data Manager API. Then the recipe reports a later stage by the customer id alone (answered with
 * `match: identity`, delivered with the signup's gclid) and restates the signup (answered `accepted`, applied under the
 * signup's transactionId); an adjustment of an unknown conversion is answered 404.
 *
 * A recipe whose interpreter is missing is skipped on a developer machine; in CI (CI set) it fails instead: .ci/run
 * installs Debian's python3, ruby, php-cli and golang-go.
 */
import { execFile, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DATABASE_KINDS } from '../server/support/databases';
import { createRestService, type RestService } from '../server/support/rest-harness';
import { connectGoogleAds, googleSettings } from '../server/support/google-connection';
import { newToken, snapshotBody } from '../server/support/fixtures';
import { startFakeGoogle, type FakeGoogle } from '../../src/demo/fakes/google';
import { startDeliveryWorker } from '../../src/server/delivery/worker';
import { CORRELATION_COOKIE } from '../../src/protocol/cookies';

const RECIPES = resolve(import.meta.dirname, '../../docs/recipes');
const IN_CI = Boolean(process.env.CI) && process.env.CI !== 'false';

function has(command: string, versionArg: string): boolean {
  const probe = spawnSync(command, [versionArg], { stdio: 'ignore' });
  return probe.error === undefined && probe.status === 0;
}

interface Recipe {
  language: string;
  /** The interpreter (or compiler) the recipe needs, and how to ask its version. */
  tool: string;
  versionArg: string;
  /** Prepares the command once (the Go recipe is compiled once, then the binary runs). */
  command(workDir: string): Promise<{ file: string; args: string[] }>;
}

function run(file: string, args: string[], env: Record<string, string>, timeout = 60_000): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((done) => {
    execFile(file, args, { env: { ...process.env, ...env }, timeout }, (error, stdout, stderr) =>
      done({ code: error ? (typeof error.code === 'number' ? error.code : 1) : 0, stdout, stderr }),
    );
  });
}

const RECIPE_LIST: Recipe[] = [
  { language: 'Python', tool: 'python3', versionArg: '--version', command: async () => ({ file: 'python3', args: [join(RECIPES, 'cnv_report.py')] }) },
  { language: 'Ruby', tool: 'ruby', versionArg: '--version', command: async () => ({ file: 'ruby', args: [join(RECIPES, 'cnv_report.rb')] }) },
  { language: 'PHP', tool: 'php', versionArg: '--version', command: async () => ({ file: 'php', args: [join(RECIPES, 'cnv_report.php')] }) },
  {
    language: 'Go',
    tool: 'go',
    versionArg: 'version',
    // `go run` would compile on every call: build once into the work directory and run the binary.
    async command(workDir) {
      const binary = join(workDir, 'cnv_report');
      const built = await run('go', ['build', '-o', binary, join(RECIPES, 'cnv_report.go')], { GO111MODULE: 'off', GOCACHE: process.env.GOCACHE ?? join(tmpdir(), 'cnv-go-cache') }, 180_000);
      if (built.code !== 0) throw new Error(`go build failed: ${built.stderr}`);
      return { file: binary, args: [] };
    },
  },
];

describe('backend recipes in other languages, executed against the real service', () => {
  let svc: RestService;
  let google: FakeGoogle;
  let base: string;
  let siteKey: string;
  let secret: string;
  let workDir: string;

  beforeAll(async () => {
    workDir = mkdtempSync(join(tmpdir(), 'cnv-recipes-'));
    google = await startFakeGoogle();
    svc = await createRestService(DATABASE_KINDS[0]!, googleSettings(google));
    base = await svc.app.listen({ host: '127.0.0.1', port: 0 });
    const api = async (method: 'GET' | 'POST' | 'PATCH', path: string, body?: unknown) => {
      const res = await fetch(`${base}${path}`, {
        method,
        headers: { authorization: `Bearer ${svc.apiKey}`, ...(body ? { 'content-type': 'application/json' } : {}) },
        ...(body ? { body: JSON.stringify(body) } : {}),
      });
      return (await res.json()) as any;
    };
    // Set up as a user does: the domain, Google Ads and the API trigger through their handoffs, a published flow.
    await api('PATCH', `/v1/sites/${svc.site.id}`, { domain: 'https://www.example.com' });
    siteKey = svc.site.site_key;
    const ads = await api('POST', '/v1/handoffs', { purpose: 'connect_destination', destination_type: 'google-ads' });
    const connected = await connectGoogleAds((path, init) => fetch(`${base}${path}`, init), ads.url, { customer_id: '123-456-7890' });
    expect(connected.status).toBe(200);
    const trigger = await api('POST', '/v1/handoffs', { purpose: 'connect_trigger_source' });
    const page = await fetch(`${base}${new URL(trigger.url).pathname}`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: '' });
    secret = /whsec_[A-Za-z0-9]{32}/.exec(await page.text())![0];
    const flow = await api('POST', '/v1/flows', {
      site_id: svc.site.id, name: 'Signups', trigger_config: { type: 'saas_signup', integrationId: 'api', key: 'signup' },
      actions_config: [{ integrationId: 'google-ads', config: { conversion: { id: '987654321' } } }],
    });
    expect((await api('POST', `/v1/flows/${flow.id}/publish`)).status).toBe('live');
    const paid = await api('POST', '/v1/flows', {
      site_id: svc.site.id, name: 'First payment', trigger_config: { type: 'conversion', integrationId: 'api', key: 'paid' },
      actions_config: [{ integrationId: 'google-ads', config: { conversion: { id: '987654322' } } }],
    });
    expect((await api('POST', `/v1/flows/${paid.id}/publish`)).status).toBe('live');
  });
  afterAll(async () => {
    await svc?.close();
    await google?.close();
    rmSync(workDir, { recursive: true, force: true });
  });

  for (const recipe of RECIPE_LIST) {
    const available = has(recipe.tool, recipe.versionArg);
    // Skipped only on a developer machine without the language; in CI a missing interpreter fails the test.
    it.skipIf(!available && !IN_CI)(
      `${recipe.language}: signup (cookie, value, customer id), later stage and adjustment, each answered as the contract says and delivered to Google`,
      async () => {
        if (!available) throw new Error(`${recipe.tool} is not installed: CI must install it (.ci/run)`);
        const token = newToken();
        const gclid = `Cj0KCQ-${recipe.language.toLowerCase()}-${token.slice(0, 8)}`;
        const now = Date.now();
        const snapshot = snapshotBody({
          correlation_token: token,
          occurred_at: new Date(now - 60_000).toISOString(),
          touch: {
            click_ids: { gclid },
            utm: { utm_source: 'google' },
            landing_page_url: `https://www.example.com/?gclid=${gclid}`,
            referrer: null,
            captured_at: new Date(now - 3_600_000).toISOString(),
          },
        });
        const stored = await fetch(`${base}/collect/v1/sites/${siteKey}/snapshots`, {
          method: 'POST',
          headers: { origin: 'https://www.example.com', 'content-type': 'text/plain;charset=UTF-8' },
          body: JSON.stringify(snapshot),
        });
        expect(stored.status).toBe(204);

        const { file, args } = await recipe.command(workDir);
        const env = { CNV_WEBHOOK_BASE_URL: base, CNV_SITE_KEY: siteKey, CNV_TRIGGER_KEY: 'signup', CNV_WEBHOOK_SECRET: secret };
        /** Runs the recipe with some arguments; returns its printed answer. */
        const call = async (...extra: string[]) => {
          const result = await run(file, [...args, ...extra], env);
          expect(result.stderr).toBe('');
          expect(result.code, result.stdout).toBe(0);
          return JSON.parse(result.stdout.trim().split('\n').pop()!) as { status: number; body: Record<string, unknown> };
        };
        const quiet = { info() {}, warn() {}, error() {} };
        const drain = async () => {
          const worker = startDeliveryWorker({ db: svc.db, settings: svc.settings, log: quiet, autoStart: false });
          try {
            return await worker.drain();
          } finally {
            await worker.stop();
          }
        };
        const tag = `${recipe.language.toLowerCase()}_${token.slice(0, 6)}`;
        const customerEventId = `user_${tag}`;
        const customerId = `cus_${tag}`;

        // The signup, with its value and the customer id that links its later stages.
        expect(await call(
          `--cookie=theme=dark; ${CORRELATION_COOKIE}=${token}; other="x y"`,
          `--customer-event-id=${customerEventId}`,
          `--email=Ada.${recipe.language}@Example.com`,
          '--first-name=Ada',
          `--customer-id=${customerId}`,
          '--value=29.5',
          '--currency=EUR',
        )).toEqual({ status: 200, body: { status: 'promoted', promoted_count: 1, customer_event_id: customerEventId, correlated: true } });
        expect(await drain()).toEqual([expect.objectContaining({ result: 'delivered' })]);
        const delivered = google.ingested().filter((ingested) => ingested.event.adIdentifiers?.gclid === gclid);
        expect(delivered).toHaveLength(1);
        expect(delivered[0]!.destination).toMatchObject({ operatingAccountId: '1234567890', productDestinationId: '987654321' });
        expect(delivered[0]!.event).toMatchObject({ conversionValue: 29.5, currency: 'EUR' });

        // A later stage, by the customer id alone (no cookie: it happens in the billing code): it finds the signup's click.
        const invoice = `inv_${tag}`;
        expect(await call('--call=conversion', '--stage=paid', `--customer-event-id=${invoice}`, `--customer-id=${customerId}`, '--value=49', '--currency=EUR'))
          .toEqual({ status: 200, body: { status: 'promoted', promoted_count: 1, customer_event_id: invoice, correlated: true, match: 'identity' } });
        // The signup upgraded: restated to its new total.
        const adjustmentId = `upgrade_${tag}`;
        expect(await call('--call=adjustment', `--adjustment-id=${adjustmentId}`, `--customer-event-id=${customerEventId}`, '--type=restate', '--value=39', '--currency=EUR'))
          .toEqual({ status: 200, body: { status: 'accepted', adjustment_id: adjustmentId, events: 1 } });
        // Both reach Google: the stage with the signup's gclid and its value, the restatement under the signup's transactionId.
        const results = (await drain()).map((r) => r.result).sort();
        expect(results).toEqual(['adjusted', 'delivered']);
        const stage = google.ingested().filter((i) => i.event.adIdentifiers?.gclid === gclid && i.destination.productDestinationId === '987654322');
        expect(stage).toHaveLength(1);
        expect(stage[0]!.event).toMatchObject({ conversionValue: 49, currency: 'EUR' });
        const restated = google.adjusted().filter((a) => a.event.transactionId === delivered[0]!.event.transactionId);
        expect(restated).toHaveLength(1);
        expect(restated[0]!.event).toMatchObject({ conversionValue: 39, currency: 'EUR' });
        // A retract of an unknown conversion is a 404, as the contract says (the recipe returns it, exit status 1).
        const unknown = await run(file, [...args, '--call=adjustment', `--adjustment-id=refund_${tag}`, '--customer-event-id=no_such_event', '--type=retract'], env);
        expect(unknown.code).toBe(1);
        expect(JSON.parse(unknown.stdout.trim().split('\n').pop()!)).toMatchObject({ status: 404, body: { error: { type: expect.any(String) } } });
      },
      240_000,
    );
  }
});
