/**
 * `cnv mcp`: the agent tools over stdio, as an MCP client starts them. The CLI is bundled with esbuild (as build.mjs
 * does, packages external) and run with node; it talks to a service listening on a loopback port through the REST API,
 * with the key in CNV_API_KEY. Driven by the MCP SDK's own Client and StdioClientTransport.
 */
import { mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { createServer } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { build } from 'esbuild';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { DATABASE_KINDS } from './support/databases';
import { createRestService, type RestService } from './support/rest-harness';
import { createCnvClient } from '../../src/client';
import { runCli } from '../../src/cli/run';
import { TOOLS } from '../../src/server/mcp';

type ToolCall = { isError?: boolean; structuredContent?: any; content: Array<{ type: string; text?: string }> };

const root = join(import.meta.dirname, '../..');
/** Inside the checkout, so the bundle's external packages resolve from its node_modules. */
const outDir = join(root, 'node_modules/.cache/cnv-mcp-stdio-test');
const cli = join(outDir, `cnv-${process.pid}.mjs`);

/** A loopback port nothing listens on. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

describe('the agent tools over stdio (cnv mcp)', () => {
  let svc: RestService;
  let base: string;
  const clients: Client[] = [];
  const stderr: string[] = [];
  const seen: string[] = [];

  beforeAll(async () => {
    mkdirSync(outDir, { recursive: true });
    await build({
      entryPoints: [join(root, 'src/cli/cnv.ts')],
      outfile: cli,
      bundle: true,
      platform: 'node',
      format: 'esm',
      target: 'node20',
      packages: 'external',
      logLevel: 'warning',
    });
    svc = await createRestService(DATABASE_KINDS[0]!);
    base = await svc.app.listen({ host: '127.0.0.1', port: 0 });
  });
  afterAll(async () => {
    for (const client of clients) await client.close();
    await svc?.close();
    rmSync(cli, { force: true });
  });

  /** Starts `node cnv.mjs mcp` with the key and the service's address, as an MCP client's configuration would. */
  async function start(env: Record<string, string>): Promise<Client> {
    const transport = new StdioClientTransport({ command: process.execPath, args: [cli, 'mcp'], env, stderr: 'pipe' });
    transport.stderr?.on('data', (chunk: Buffer) => stderr.push(chunk.toString()));
    const client = new Client({ name: 'cnv-test', version: '1.0.0' });
    await client.connect(transport);
    clients.push(client);
    return client;
  }
  async function call(client: Client, name: string, args: Record<string, unknown> = {}): Promise<ToolCall> {
    const result = (await client.callTool({ name, arguments: args })) as ToolCall;
    seen.push(JSON.stringify(result));
    return result;
  }

  it('lists the same tools and input schemas as the table', async () => {
    const client = await start({ CNV_API_KEY: svc.apiKey, CNV_API_URL: base });
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name)).toEqual(TOOLS.map((t) => t.name));
    expect((tools.find((t) => t.name === 'create_flow')!.inputSchema as any).required).toEqual(['site_id', 'name', 'trigger_config', 'actions_config']);
    expect(client.getServerVersion()).toMatchObject({ name: 'cnv' });
    expect(client.getInstructions()).toContain('list_sites');
  });

  it('walks the typical path against the running service, and never shows the webhook secret', async () => {
    const client = await start({ CNV_API_KEY: svc.apiKey, CNV_API_URL: `${base}/` });
    const hosted = async (url: string, form: Record<string, string> = {}) => {
      const res = await fetch(`${base}${new URL(url).pathname}`, {
        method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams(form).toString(),
      });
      expect(res.status).toBe(200);
      return res.text();
    };

    const site = (await call(client, 'list_sites', { limit: 10 })).structuredContent.data[0];
    const updated = await call(client, 'update_site', { id: site.id, domain: 'https://app.example.org' });
    expect(updated.structuredContent.domain).toBe('https://app.example.org');
    // The install snippet carries the service's public address (CNV_PUBLIC_URL), not the one cnv mcp reaches it at.
    expect(updated.content[1]!.text).toContain(`<script async src="https://api.cnv.test/loader.js?site_key=${site.site_key}"></script>`);

    const meta = (await call(client, 'connect_destination', { destination_type: 'meta' })).structuredContent;
    await hosted(meta.url, { pixel_id: '1234567890123456', access_token: 'EAABsecretTokenFromEventsManager123' });
    expect((await call(client, 'get_handoff', { id: meta.id })).structuredContent.status).toBe('completed');

    const trigger = (await call(client, 'connect_trigger_source', { site_id: site.id })).structuredContent;
    const secret = /whsec_[A-Za-z0-9]{32}/.exec(await hosted(trigger.url))![0];
    expect((await call(client, 'get_handoff', { id: trigger.id })).structuredContent.status).toBe('completed');

    const flow = (await call(client, 'create_flow', {
      site_id: site.id, name: 'Signups',
      trigger_config: { type: 'saas_signup', integrationId: 'api', key: 'signup' },
      actions_config: [{ integrationId: 'meta', config: {} }],
    })).structuredContent;
    expect((await call(client, 'publish_flow', { id: flow.id })).structuredContent.status).toBe('live');
    expect((await call(client, 'list_flows', {})).structuredContent.data).toHaveLength(1);

    const reporter = createCnvClient({ webhookBaseUrl: base, siteKey: site.site_key, triggerKey: 'signup', secret, maxAttempts: 1 });
    expect(await reporter.reportSignup({ correlationToken: null, allowUncorrelated: true, customerEventId: 'u1', email: 'u1@example.com' })).toMatchObject({ ok: true });

    const events = (await call(client, 'list_events', { flow_id: flow.id, starting_after: null })).structuredContent;
    expect(events).toMatchObject({ has_more: false, next_cursor: null, data: [expect.objectContaining({ customer_event_id: 'u1' })] });
    const event = (await call(client, 'get_event', { id: events.data[0].id })).structuredContent;
    expect(event).toMatchObject({ flow_name: 'Signups', actions: [expect.objectContaining({ destination: 'meta' })] });

    const unknown = await call(client, 'get_event', { id: 'evt_nothere' });
    expect(unknown).toMatchObject({ isError: true, structuredContent: { error: { code: 'resource_missing' } } });
    const badKey = await call(client, 'create_flow', {
      site_id: site.id, name: 'Bad', trigger_config: { type: 'saas_signup', integrationId: 'api', key: '' }, actions_config: [{ integrationId: 'meta', config: {} }],
    });
    expect(badKey.structuredContent.error).toMatchObject({ code: 'parameter_invalid', param: 'trigger_config.key' });

    // An argument too long for the URL is refused by the route, as over POST /mcp: sent whole, it made the request line
    // too large for the service's HTTP server (headers_too_large, which names nothing the agent sent).
    for (const email of ['x'.repeat(20_000), '😀'.repeat(3_000)]) {
      const long = await call(client, 'list_events', { email });
      expect(long.structuredContent.error).toMatchObject({ code: 'parameter_invalid', param: 'email' });
      expect(long.structuredContent.error.message).toContain('at most 320 characters');
    }
    // An argument with no length limit of its own (a timestamp) is refused by the route too, naming it.
    const longTime = await call(client, 'list_events', { occurred_after: '2026-11-21T09:30:00Z'.repeat(1_000) });
    expect(longTime.structuredContent.error).toMatchObject({ code: 'parameter_invalid', param: 'occurred_after' });
    const longId = await call(client, 'get_event', { id: 'evt_'.repeat(5_000) });
    expect(longId.structuredContent.error).toMatchObject({ code: 'path_too_long' });

    for (const text of [...seen, stderr.join('')]) expect(text).not.toContain(secret);
  });

  it('answers the requests piped in before stdin closed (a script that sends and ends at once), and a line that is not JSON with a parse error', async () => {
    const { spawn } = await import('node:child_process');
    const child = spawn(process.execPath, [cli, 'mcp'], { env: { CNV_API_KEY: svc.apiKey, CNV_API_URL: base }, stdio: ['pipe', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
    const exited = new Promise<number | null>((resolve) => child.on('exit', resolve));
    const line = (message: object) => `${JSON.stringify({ jsonrpc: '2.0', ...message })}\n`;
    child.stdin.end(
      line({ id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'pipe', version: '1' } } }) +
        line({ method: 'notifications/initialized' }) +
        'garbage, not JSON\n' +
        line({ id: 2, method: 'tools/call', params: { name: 'list_sites', arguments: {} } }),
    );
    expect(await exited).toBe(0);
    const answers = out.trim().split('\n').map((text) => JSON.parse(text) as { id?: number | null; result?: { isError?: boolean }; error?: { code: number } });
    // The line that is no JSON is answered at once with JSON-RPC's parse error; the requests around it as usual.
    expect(answers.find((a) => a.id === null)?.error?.code).toBe(-32700);
    expect(answers.filter((a) => a.id !== null).map((a) => a.id)).toEqual([1, 2]);
    expect(answers.find((a) => a.id === 2)!.result?.isError).not.toBe(true);
  });

  it('refuses a number beyond a double (1e999) in an argument naming it, where it once reached the service as null', async () => {
    const { spawn } = await import('node:child_process');
    const flows = async () => (await svc.db.query<{ n: number }>('select count(*)::int as n from flows'))[0]!.n;
    const before = await flows();
    const child = spawn(process.execPath, [cli, 'mcp'], { env: { CNV_API_KEY: svc.apiKey, CNV_API_URL: base }, stdio: ['pipe', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
    const exited = new Promise<number | null>((resolve) => child.on('exit', resolve));
    const line = (message: object) => `${JSON.stringify({ jsonrpc: '2.0', ...message })}\n`;
    // Written as text: JSON.stringify cannot write 1e999.
    const args = `{"site_id":"${svc.site.id}","name":"f","trigger_config":{"integrationId":"html","pageFilter":"all"},"actions_config":[{"integrationId":"google-ads","config":{"conversion":{"id":"1"},"n":1e999}}]}`;
    child.stdin.end(
      line({ id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'pipe', version: '1' } } }) +
        line({ method: 'notifications/initialized' }) +
        `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"create_flow","arguments":${args}}}\n`,
    );
    expect(await exited).toBe(0);
    const answer = out.trim().split('\n').map((text) => JSON.parse(text) as { id?: number; result?: ToolCall }).find((a) => a.id === 2)!;
    expect(answer.result?.isError).toBe(true);
    expect(answer.result?.structuredContent.error).toMatchObject({ code: 'parameter_invalid', param: 'actions_config[0].config.n' });
    expect(await flows()).toBe(before);
  });

  it('answers every tool with an unauthorized error when CNV_API_KEY is wrong', async () => {
    const client = await start({ CNV_API_KEY: 'cnv_sk_wrong', CNV_API_URL: base });
    const result = await call(client, 'list_sites');
    expect(result.isError).toBe(true);
    expect(result.structuredContent.error).toMatchObject({ type: 'authentication_error', code: 'invalid_api_key' });
    expect(result.content[0]!.text).toMatch(/^invalid_api_key: /);
  });

  it("scopes the tools to the key's account", async () => {
    const other = await svc.addTenant('Other');
    const client = await start({ CNV_API_KEY: other.apiKey, CNV_API_URL: base });
    const update = await call(client, 'update_site', { id: svc.site.id, name: 'Taken' });
    expect(update.structuredContent.error).toMatchObject({ code: 'resource_missing' });
    expect((await call(client, 'list_sites')).structuredContent.data.map((s: { id: string }) => s.id)).toEqual([other.site.id]);
  });

  it('says so in a tool error when the service does not answer', async () => {
    const client = await start({ CNV_API_KEY: svc.apiKey, CNV_API_URL: `http://127.0.0.1:${await closedPort()}` });
    const result = await call(client, 'list_sites');
    expect(result).toMatchObject({ isError: true, structuredContent: { error: { code: 'service_unreachable' } } });
    expect(result.content[0]!.text).toContain('CNV_API_URL');
    expect(result.content[0]!.text).not.toContain(svc.apiKey);
  });

  it('refuses to start without CNV_API_KEY or with a CNV_API_URL that is not http(s) (exit 2)', async () => {
    const run = async (env: NodeJS.ProcessEnv) => {
      let err = '';
      const code = await runCli(['mcp'], { out: { write: () => undefined }, err: { write: (t: string) => (err += t) }, env });
      return { code, err };
    };
    expect(await run({})).toMatchObject({ code: 2, err: expect.stringContaining('CNV_API_KEY is not set') });
    expect(await run({ CNV_API_KEY: 'cnv_sk_x', CNV_API_URL: 'ftp://example.com' })).toMatchObject({ code: 2, err: expect.stringContaining('CNV_API_URL') });
  });
});
