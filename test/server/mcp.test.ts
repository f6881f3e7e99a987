/**
 * The agent tools over POST /mcp (Streamable HTTP), driven by the MCP SDK's own Client: the tool list and its input
 * schemas (the REST routes' own), the typical path through the hosted pages and the signed webhook, errors as tool
 * errors, the account scope of the Bearer key, and a webhook secret that no tool result or log line ever carries.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { DATABASE_KINDS } from './support/databases';
import { secretBox } from '../../src/server/db/secret-box';
import { forgetClientRefused, oauthClientRefusedError, recordClientRefused } from '../../src/server/destinations';
import { createRestService, type RestService, type Tenant } from './support/rest-harness';
import { createCnvClient } from '../../src/client';
import { SiteFields } from '../../src/server/api/sites';
import { CreateFlowBody } from '../../src/server/api/flows';
import { ListEventsQuery } from '../../src/server/api/events';
import { upsertDestination } from '../../src/server/destinations/sql';
import { connectTriggerSource } from '../../src/server/webhook/secret-sql';
import { serviceSecretBox } from '../../src/server/db/secret-box';

const TOOL_NAMES = [
  'list_sites', 'update_site', 'create_site', 'connect_destination', 'connect_trigger_source', 'get_handoff', 'list_destinations',
  'list_flows', 'create_flow', 'publish_flow', 'get_flow', 'update_flow', 'unpublish_flow', 'list_events', 'get_event',
  'redeliver_event', 'redeliver_destination',
];

type ToolCall = { isError?: boolean; structuredContent?: any; content: Array<{ type: string; text?: string }> };

/** A schema as JSON (TypeBox's symbols and the service's Ajv-only `errorCode` annotation dropped). */
const plain = (schema: unknown) => JSON.parse(JSON.stringify(schema, (key, value) => (key === 'errorCode' ? undefined : value)));

describe('the agent tools over POST /mcp', () => {
  let svc: RestService;
  let base: string;
  const logs: string[] = [];
  /** Every tool result seen, as text: searched for the webhook secret at the end. */
  const seen: string[] = [];
  const clients: Client[] = [];

  beforeAll(async () => {
    svc = await createRestService(DATABASE_KINDS[0]!, {}, { level: 'debug', stream: { write: (line: string) => logs.push(line) } });
    base = await svc.app.listen({ host: '127.0.0.1', port: 0 });
  });
  afterAll(async () => {
    for (const client of clients) await client.close();
    await svc.close();
  });

  async function connect(authorization: string): Promise<Client> {
    const client = new Client({ name: 'cnv-test', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${base}/mcp`), { requestInit: { headers: { authorization } } }));
    clients.push(client);
    return client;
  }
  /** Calls a tool and keeps its result for the secret search. */
  async function call(client: Client, name: string, args: Record<string, unknown> = {}): Promise<ToolCall> {
    const result = (await client.callTool({ name, arguments: args })) as ToolCall;
    seen.push(JSON.stringify(result));
    return result;
  }
  /** Submits a hosted page's form as a browser would (the public URL of the test is not this listener: take its path). */
  async function submitHosted(url: string, form: Record<string, string> = {}): Promise<{ status: number; html: string }> {
    const res = await fetch(`${base}${new URL(url).pathname}`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams(form).toString(),
    });
    return { status: res.status, html: await res.text() };
  }

  it('lists the seventeen tools, each with a description for a model and the REST route’s own input schema', async () => {
    const client = await connect(svc.auth.authorization);
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name)).toEqual(TOOL_NAMES);
    for (const tool of tools) {
      expect(tool.description!.length).toBeGreaterThan(80);
      expect(tool.inputSchema.type).toBe('object');
    }
    const byName = Object.fromEntries(tools.map((t) => [t.name, t]));
    const updateSite = byName.update_site!.inputSchema as any;
    expect(updateSite.required).toEqual(['id']);
    expect(updateSite.additionalProperties).toBe(false);
    expect(updateSite.properties.domain).toEqual(plain(SiteFields.properties.domain));
    expect(plain(byName.create_flow!.inputSchema)).toEqual(plain(CreateFlowBody));
    expect((byName.create_site!.inputSchema as any).properties).toEqual(plain(SiteFields.properties));
    expect(byName.create_site!.annotations).toMatchObject({ readOnlyHint: false, destructiveHint: false });
    expect(byName.connect_trigger_source!.description).toContain('open this url in their browser');
    expect(byName.connect_trigger_source!.description).toContain('never shown to you');
    // Finishing it again rotates the secret the backend holds: the description says so before an agent repeats it.
    expect(byName.connect_trigger_source!.description).toContain("finishing it again replaces the site's webhook secret");
    expect(Object.keys((byName.connect_destination!.inputSchema as any).properties)).toEqual(['destination_type']);
    // One destination per platform for all the account's sites: connecting again replaces it for every site.
    expect(byName.connect_destination!.description).toContain('replaces that connection (its ad account, pixel or credentials) for every site of the account');
    const listEvents = byName.list_events!.inputSchema as any;
    // The route's own validation, described for a tool: it writes the query itself, so nothing is URL-encoded by the
    // caller (a %2B would reach the route as the three characters), and there is no ending_before to combine with.
    const { description: _restDescription, ...startingAfter } = plain(ListEventsQuery.properties.starting_after);
    expect(listEvents.properties.starting_after).toEqual({ ...startingAfter, description: expect.any(String) });
    expect(listEvents.properties).not.toHaveProperty('ending_before');
    expect(JSON.stringify(tools)).not.toMatch(/URL-encode a|%2B|ending_before|GET \/v1/);
    expect(listEvents.properties.occurred_after.description).toContain('do not URL-encode it');
    expect(byName.list_sites!.annotations).toMatchObject({ readOnlyHint: true });
    expect(byName.publish_flow!.annotations).toMatchObject({ readOnlyHint: false });
    // MCP's hints, which a client may use to ask the user first: destructive is anything but additive (a site's domain
    // cleared, a flow's actions replaced, a live flow stopped); open world reaches outside cnv (the ad platforms).
    const hinted = (hint: 'destructiveHint' | 'openWorldHint') => tools.filter((t) => t.annotations?.[hint] === true).map((t) => t.name);
    expect(hinted('destructiveHint')).toEqual(['update_site', 'update_flow', 'unpublish_flow']);
    expect(hinted('openWorldHint')).toEqual(['redeliver_event', 'redeliver_destination']);
    for (const tool of tools) expect(tool.annotations).toMatchObject({ destructiveHint: expect.any(Boolean), openWorldHint: expect.any(Boolean) });
  });

  it('walks the typical path: site domain, Meta, the API trigger, a published flow, a reported signup, its events', async () => {
    const client = await connect(svc.auth.authorization);

    const sites = await call(client, 'list_sites');
    expect(sites.isError).toBeFalsy();
    expect(sites.structuredContent).toMatchObject({ has_more: false, next_cursor: null });
    const site = sites.structuredContent.data[0];
    expect(site.id).toBe(svc.site.id);

    // A site without a domain is told to get one; with it, the user is given the install snippet (DESIGN.md: the agent
    // tools print it), at the service's public address: without it on the pages no ad click is captured.
    expect(site.domain).toBeNull();
    expect(sites.content[1]!.text).toContain(`Site ${site.id} ("${site.name}") has no domain yet`);
    expect(sites.content[1]!.text).toContain('call update_site');
    const snippet = `<script async src="https://api.cnv.test/loader.js?site_key=${site.site_key}"></script>`;
    const updated = await call(client, 'update_site', { id: site.id, domain: 'https://www.example.com' });
    expect(updated.structuredContent).toMatchObject({ id: site.id, domain: 'https://www.example.com' });
    expect(updated.content[1]!.text).toContain('into the <head> of every page of the website');
    expect(updated.content[1]!.text).toContain(snippet);
    expect((await call(client, 'list_sites')).content[1]!.text).toContain(snippet);
    // The empty page past the last site is the end of the list, not an account without sites.
    const pastTheEnd = await call(client, 'list_sites', { starting_after: site.id });
    expect(pastTheEnd.structuredContent).toMatchObject({ data: [], has_more: false });
    expect(pastTheEnd.content).toHaveLength(1);

    const meta = await call(client, 'connect_destination', { destination_type: 'meta' });
    expect(meta.structuredContent).toMatchObject({ status: 'pending', url: expect.stringMatching(/^https:\/\/api\.cnv\.test\/handoffs\//) });
    expect(meta.content.map((c) => c.text).join('\n')).toContain('open it in their browser');
    const metaPage = await submitHosted(meta.structuredContent.url, { pixel_id: '1234567890123456', access_token: 'EAABsecretTokenFromEventsManager123' });
    expect(metaPage.status).toBe(200);
    expect((await call(client, 'get_handoff', { id: meta.structuredContent.id })).structuredContent).toMatchObject({ status: 'completed' });

    const trigger = await call(client, 'connect_trigger_source', {});
    expect(trigger.structuredContent).toMatchObject({ status: 'pending', purpose: 'connect_trigger_source', site_id: site.id });
    const pending = await call(client, 'get_handoff', { id: trigger.structuredContent.id });
    expect(pending.structuredContent.status).toBe('pending');
    expect(pending.content[1]!.text).toContain('still pending');
    const page = await submitHosted(trigger.structuredContent.url);
    expect(page.status).toBe(200);
    const secret = /whsec_[A-Za-z0-9]{32}/.exec(page.html)![0];
    const done = await call(client, 'get_handoff', { id: trigger.structuredContent.id });
    expect(done.structuredContent).toMatchObject({ status: 'completed', completed_at: expect.any(String) });
    expect(done.content[1]!.text).toContain('is completed');

    const flow = await call(client, 'create_flow', {
      site_id: site.id,
      name: 'Signups to Meta',
      trigger_config: { type: 'saas_signup', integrationId: 'api', key: 'signup' },
      actions_config: [{ integrationId: 'meta', config: {} }],
    });
    expect(flow.isError).toBeFalsy();
    expect(flow.structuredContent).toMatchObject({ status: 'draft', site_id: site.id });
    const published = await call(client, 'publish_flow', { id: flow.structuredContent.id });
    expect(published.structuredContent).toMatchObject({ id: flow.structuredContent.id, status: 'live' });
    expect(published.content[1]!.text).toBe(
      // The site's own webhook path and key (an account with several sites has one per site), never a {site_key} to guess.
      `Flow ${flow.structuredContent.id} is live: it fires when the user's backend reports a signup through the site ${site.id}'s ` +
        `("${site.name}") signed webhook .../api/webhook-bridge/saas-signup/${site.site_key}/signup (with the cnv client: ` +
        `siteKey '${site.site_key}', triggerKey 'signup'). Ask the user ` +
        `for a test conversion, then call list_events with flow_id '${flow.structuredContent.id}' to see it arrive and get_event for its deliveries.`,
    );
    const flows = await call(client, 'list_flows', { site_id: site.id });
    expect(flows.structuredContent.data.map((f: { id: string }) => f.id)).toEqual([flow.structuredContent.id]);

    // What a fix takes (redeliver_event's "a conversion id"): a live flow changes only through unpublish, update, publish.
    const flowId = flow.structuredContent.id;
    const liveEdit = await call(client, 'update_flow', { id: flowId, actions_config: [{ integrationId: 'meta', config: { event_name: 'Lead' } }] });
    expect(liveEdit.isError).toBe(true);
    expect(liveEdit.structuredContent.error).toMatchObject({ code: 'flow_live' });
    // The route's message names POST /v1/flows/…/unpublish; the tool adds the same steps in tools.
    expect(liveEdit.content[1]!.text).toBe(
      `With the tools: call unpublish_flow with id '${flowId}', then update_flow with the same input again, then publish_flow to make it deliver again.`,
    );
    const draft = await call(client, 'unpublish_flow', { id: flowId });
    expect(draft.structuredContent).toMatchObject({ id: flowId, status: 'draft' });
    expect(draft.content[1]!.text).toContain('update_flow');
    const edited = await call(client, 'update_flow', { id: flowId, actions_config: [{ integrationId: 'meta', config: { event_name: 'Lead' } }] });
    expect(edited.isError).toBeFalsy();
    expect(edited.content[1]!.text).toContain('call publish_flow');
    expect((await call(client, 'publish_flow', { id: flowId })).structuredContent.status).toBe('live');
    const read = await call(client, 'get_flow', { id: flowId });
    expect(read.structuredContent).toMatchObject({ id: flowId, status: 'live', actions_config: [{ integrationId: 'meta', config: { event_name: 'Lead' } }] });
    expect((await call(client, 'update_flow', { id: flowId, colour: 'blue' })).structuredContent.error).toMatchObject({ code: 'parameter_unknown' });

    // The connected platforms, and what to do when one needs connecting again.
    const destinations = await call(client, 'list_destinations');
    expect(destinations.structuredContent.data).toEqual([expect.objectContaining({ type: 'meta', status: 'connected' })]);
    expect(destinations.content).toHaveLength(1);
    await svc.db.query(`update destinations set status = 'reauthorization_required' where account_id = $1`, [svc.accountId]);
    const refused = await call(client, 'list_destinations');
    expect(refused.content[1]!.text).toBe('Needs connecting again: meta. Call connect_destination with that destination_type and give the user the url.');
    await svc.db.query(`update destinations set status = 'connected' where account_id = $1`, [svc.accountId]);
    // A platform refusing the service's own OAuth client: the operator's to fix, said as such.
    await recordClientRefused(svc.db, 'meta', oauthClientRefusedError({ type: 'meta', label: 'Meta' }, 'invalid_client', 401), new Date());
    const operator = await call(client, 'list_destinations');
    expect(operator.content[1]!.text).toMatch(/^Waiting for the cnv service's operator: meta \(the platform refuses the service's own OAuth client/);
    await forgetClientRefused(svc.db, 'meta');

    const reporter = createCnvClient({ webhookBaseUrl: base, siteKey: site.site_key, triggerKey: 'signup', secret, maxAttempts: 1 });
    for (const user of ['user_1', 'user_2']) {
      const result = await reporter.reportSignup({ correlationToken: null, allowUncorrelated: true, customerEventId: user, email: `${user}@example.com` });
      expect(result).toMatchObject({ ok: true });
    }

    // Two events, read one page at a time with the REST cursors.
    const first = await call(client, 'list_events', { site_id: site.id, limit: 1 });
    expect(first.structuredContent).toMatchObject({ has_more: true, next_cursor: expect.any(String) });
    expect(first.structuredContent.data).toHaveLength(1);
    const second = await call(client, 'list_events', { site_id: site.id, limit: 1, starting_after: first.structuredContent.next_cursor });
    expect(second.structuredContent.data).toHaveLength(1);
    const events = [first.structuredContent.data[0], second.structuredContent.data[0]];
    expect(events.map((e) => e.customer_event_id).sort()).toEqual(['user_1', 'user_2']);
    const event = await call(client, 'get_event', { id: events[0].id });
    expect(event.structuredContent).toMatchObject({
      id: events[0].id, site_key: site.site_key, flow_name: 'Signups to Meta', actions: [expect.objectContaining({ destination: 'meta' })],
    });

    // Meta refused both (as if a permission was missing), then the user fixed it: both go again, a batch at a time.
    const metaId = destinations.structuredContent.data[0].id;
    await svc.db.query(
      `update event_actions set status = 'failed', error = '{"code": "permission_denied", "message": "refused"}'::jsonb
       where event_id = any($1::text[])`,
      [events.map((e) => e.id)],
    );
    await svc.db.query(`delete from outbox where event_action_id in (select id from event_actions where event_id = any($1::text[]))`, [events.map((e) => e.id)]);
    await svc.db.query(`update events set status = 'failed' where id = any($1::text[])`, [events.map((e) => e.id)]);
    const batch = await call(client, 'redeliver_destination', { id: metaId, site_id: site.id, limit: 1 });
    expect(batch.structuredContent).toEqual({ destination: metaId, events: 1, actions: 1, has_more: true });
    expect(batch.content[1]!.text).toContain('call redeliver_destination again');
    const rest = await call(client, 'redeliver_destination', { id: metaId, site_id: site.id, limit: 1 });
    expect(rest.structuredContent).toMatchObject({ events: 1, has_more: false });
    expect(rest.content).toHaveLength(1);
    expect((await call(client, 'get_event', { id: events[1].id })).structuredContent).toMatchObject({ status: 'queued', actions: [{ status: 'queued' }] });
    expect((await call(client, 'redeliver_destination', { id: metaId, limit: 0 })).structuredContent.error).toMatchObject({ code: 'parameter_invalid', param: 'limit' });

    // The secret was only ever on the hosted page: in no tool result, and in no log line of the service.
    expect(seen.length).toBeGreaterThan(10);
    for (const text of seen) expect(text).not.toContain(secret);
    expect(logs.join('\n')).not.toContain(secret);
    expect(logs.join('\n')).not.toContain('EAABsecretTokenFromEventsManager123');

    // A form trigger's flow, once live, fires in the browser: on the pages that carry the install snippet.
    const form = await call(client, 'create_flow', {
      site_id: site.id, name: 'Demo requests', trigger_config: { integrationId: 'gravity-forms', pageFilter: '/demo' },
      actions_config: [{ integrationId: 'meta', config: {} }],
    });
    const formLive = await call(client, 'publish_flow', { id: form.structuredContent.id });
    expect(formLive.content[1]!.text).toContain("it fires on a submission of a gravity-forms form on the pages '/demo' of the site, which must carry the install snippet");
  });

  it('tells the assistant, for each status of a handoff, what to do next: an expired one’s link is dead, make a new one', async () => {
    const client = await connect(svc.auth.authorization);
    const age = (id: string) => svc.db.query(`update handoffs set created_at = now() - interval '25 hours' where id = $1`, [id]);

    const destination = await call(client, 'connect_destination', { destination_type: 'tiktok' });
    const trigger = await call(client, 'connect_trigger_source', { site_id: svc.site.id });
    for (const made of [destination, trigger]) {
      expect(made.structuredContent.status).toBe('pending');
      expect(made.content[1]!.text).toContain(`open it in their browser: ${made.structuredContent.url}`);
      const pending = await call(client, 'get_handoff', { id: made.structuredContent.id });
      expect(pending.content[1]!.text).toContain('still pending');
      expect(pending.content[1]!.text).toContain(made.structuredContent.url);
      await age(made.structuredContent.id);
    }

    const expiredDestination = await call(client, 'get_handoff', { id: destination.structuredContent.id });
    expect(expiredDestination.structuredContent.status).toBe('expired');
    const destinationStep = expiredDestination.content[1]!.text!;
    expect(destinationStep).not.toContain('pending');
    expect(destinationStep).toContain('no longer works');
    expect(destinationStep).toContain("call connect_destination with destination_type 'tiktok' for a fresh link");
    // The link is indeed dead: its hosted page answers 410.
    expect((await fetch(`${base}${new URL(expiredDestination.structuredContent.url).pathname}`)).status).toBe(410);

    const expiredTrigger = await call(client, 'get_handoff', { id: trigger.structuredContent.id });
    expect(expiredTrigger.structuredContent.status).toBe('expired');
    expect(expiredTrigger.content[1]!.text).toContain('no longer works');
    expect(expiredTrigger.content[1]!.text).toContain(`call connect_trigger_source with site_id '${svc.site.id}' for a fresh link`);
    expect(expiredTrigger.content[1]!.text).not.toContain('pending');
  });

  it('says what to do with a pending handoff whose link cannot be shown (sealed under another CNV_SECRET_KEY), never "null"', async () => {
    const client = await connect(svc.auth.authorization);
    const made = await call(client, 'connect_destination', { destination_type: 'tiktok' });
    const other = secretBox(Buffer.from('d'.repeat(64), 'hex'));
    await svc.db.query('update handoffs set token = $2 where id = $1', [made.structuredContent.id, other.seal('some-token')]);
    const pending = await call(client, 'get_handoff', { id: made.structuredContent.id });
    expect(pending.structuredContent).toMatchObject({ status: 'pending', url: null });
    const step = pending.content[1]!.text!;
    expect(step).toContain('can no longer show its url');
    expect(step).toContain("call connect_destination with destination_type 'tiktok' for a fresh link");
    expect(step).not.toContain('null');
  });

  it('answers a bad input with a tool error carrying the envelope’s code and message', async () => {
    const client = await connect(svc.auth.authorization);

    const unknownSite = await call(client, 'update_site', { id: 'site_doesnotexist', domain: 'https://www.example.com' });
    expect(unknownSite.isError).toBe(true);
    expect(unknownSite.structuredContent.error).toMatchObject({ type: 'not_found_error', code: 'resource_missing' });
    expect(unknownSite.content[0]!.text).toMatch(/^resource_missing: No such site: 'site_doesnotexist'/);

    const badKey = await call(client, 'create_flow', {
      site_id: svc.site.id, name: 'Bad key',
      trigger_config: { type: 'saas_signup', integrationId: 'api', key: 'not a key!' },
      actions_config: [{ integrationId: 'meta', config: {} }],
    });
    expect(badKey.isError).toBe(true);
    expect(badKey.structuredContent.error).toMatchObject({ code: 'parameter_invalid', param: 'trigger_config.key' });

    const badDomain = await call(client, 'update_site', { id: svc.site.id, domain: 'https://www.example.com/path' });
    expect(badDomain.structuredContent.error).toMatchObject({ type: 'invalid_request_error', param: 'domain' });

    const unknownField = await call(client, 'update_site', { id: svc.site.id, colour: 'blue' });
    expect(unknownField.structuredContent.error).toMatchObject({ code: 'parameter_unknown' });

    const noId = await call(client, 'get_event', {});
    expect(noId.structuredContent.error).toMatchObject({ code: 'parameter_missing', param: 'id' });

    // A + offset is sent as it is (the tool encodes the query); a bad timestamp's error does not advise encoding it.
    const offset = await call(client, 'list_events', { occurred_after: '2026-11-21T10:30:00+01:00', occurred_before: '2099-01-01T00:00:00-05:00' });
    expect(offset.isError).toBeFalsy();
    const badTime = await call(client, 'list_events', { starting_after: 'yesterday' });
    expect(badTime.structuredContent.error).toMatchObject({ code: 'invalid_cursor', param: 'starting_after' });
    expect(badTime.structuredContent.error.message).toContain('The next_cursor of the previous page');
    expect(badTime.structuredContent.error.message).not.toContain('%2B');
    expect(badTime.content[0]!.text).not.toContain('%2B');

    const badCursor = await call(client, 'list_sites', { starting_after: 'site_nothere' });
    expect(badCursor.structuredContent.error).toMatchObject({ code: 'invalid_cursor', param: 'starting_after' });

    const unsupported = await call(client, 'connect_destination', { destination_type: 'myspace' });
    expect(unsupported.structuredContent.error).toMatchObject({ code: 'parameter_invalid', param: 'destination_type' });

    await expect(client.callTool({ name: 'delete_everything', arguments: {} })).rejects.toThrow(/^MCP error -32602: Unknown tool 'delete_everything'; the tools are: list_sites, /);
  });

  it('says, when the account has no site, to create one with create_site', async () => {
    const siteless: Tenant = await svc.addTenant('Siteless');
    await svc.db.query('delete from sites where account_id = $1', [siteless.accountId]);
    const client = await connect(siteless.auth.authorization);
    const none = await call(client, 'list_sites');
    expect(none.structuredContent.data).toEqual([]);
    expect(none.content[1]!.text).toMatch(/^The account has no site\. Call create_site with the website's domain/);
    const refused = await call(client, 'connect_trigger_source', {});
    expect(refused.structuredContent.error).toMatchObject({ code: 'no_site', param: 'site_id' });
    expect(refused.content[1]!.text).toContain('Call create_site');
    const created = await call(client, 'create_site', { name: 'Brand', domain: 'https://Acme.example' });
    expect(created.isError).toBeFalsy();
    expect(created.structuredContent).toMatchObject({ name: 'Brand', domain: 'https://acme.example', site_key: expect.any(String) });
    expect((await call(client, 'list_sites')).structuredContent.data.map((s: { id: string }) => s.id)).toEqual([created.structuredContent.id]);
  });

  it('lets an assistant add the sites of one client (a landing-page domain), each with its own webhook, in its account only', async () => {
    const agency: Tenant = await svc.addTenant('Client with three websites');
    const other: Tenant = await svc.addTenant('Another client');
    const client = await connect(agency.auth.authorization);
    const landing = await call(client, 'create_site', { name: 'Offers', domain: 'https://offers.example', timezone: 'Europe/Berlin' });
    expect(landing.isError).toBeFalsy();
    const site = landing.structuredContent;
    expect(site).toMatchObject({ id: expect.stringMatching(/^site_/), name: 'Offers', domain: 'https://offers.example', timezone: 'Europe/Berlin' });
    // The next step: the snippet of this site, and its id for the per-site tools.
    expect(landing.content[1]!.text).toContain(`loader.js?site_key=${site.site_key}`);
    expect(landing.content[1]!.text).toContain(`pass site_id '${site.id}' to connect_trigger_source, create_flow`);
    const sites = (await call(client, 'list_sites')).structuredContent.data.map((s: { id: string }) => s.id);
    expect(sites).toEqual([agency.site.id, site.id]);
    // Two sites now: the trigger source needs a site id, and the new site's is its own handoff.
    expect((await call(client, 'connect_trigger_source', {})).structuredContent.error).toMatchObject({ code: 'parameter_missing', param: 'site_id' });
    expect((await call(client, 'connect_trigger_source', { site_id: site.id })).structuredContent).toMatchObject({ site_id: site.id, status: 'pending' });
    // Another client's key neither sees it nor counts it.
    const theirs = await connect(other.auth.authorization);
    expect((await call(theirs, 'list_sites')).structuredContent.data.map((s: { id: string }) => s.id)).toEqual([other.site.id]);
    expect((await call(theirs, 'update_site', { id: site.id, name: 'Mine' })).structuredContent.error).toMatchObject({ code: 'resource_missing' });
    // The route's own validation: a domain with a path is refused, naming the parameter; nothing is created.
    const bad = await call(client, 'create_site', { domain: 'https://offers.example/landing' });
    expect(bad.isError).toBe(true);
    expect(bad.structuredContent.error).toMatchObject({ code: 'parameter_invalid', param: 'domain' });
    const unknown = await call(client, 'create_site', { site_id: site.id });
    expect(unknown.structuredContent.error).toMatchObject({ code: 'parameter_unknown' });
    expect((await call(client, 'list_sites')).structuredContent.data).toHaveLength(2);
  });

  it('tells the assistant to warn the user when a published flow double-counts in Google Ads with another live flow', async () => {
    const tenant: Tenant = await svc.addTenant('Doubles');
    await upsertDestination(svc.db, tenant.accountId, 'google-ads', { customer_id: '1234567890' });
    await connectTriggerSource(svc.db, serviceSecretBox(svc.settings), tenant.accountId, tenant.site.id, 'api');
    const client = await connect(tenant.auth.authorization);
    const publishNew = async (name: string) => {
      const flow = await call(client, 'create_flow', {
        site_id: tenant.site.id, name, trigger_config: { type: 'saas_signup', integrationId: 'api', key: 'signup' },
        actions_config: [{ integrationId: 'google-ads', config: { conversion: { id: '123456789' } } }],
      });
      return { id: flow.structuredContent.id as string, published: await call(client, 'publish_flow', { id: flow.structuredContent.id }) };
    };
    const first = await publishNew('Signups');
    expect(first.published.structuredContent.warnings).toEqual([]);
    expect(first.published.content[1]!.text).not.toContain('Tell the user');
    const second = await publishNew('Signups again');
    expect(second.published.structuredContent).toMatchObject({ status: 'live', warnings: [{ code: 'double_counted', flow_id: first.id }] });
    expect(second.published.content[1]!.text).toContain(
      `Tell the user before anything else (the flow is live): This flow and the live flow 'Signups' (${first.id}) both send each conversion to Google Ads conversion action 123456789`,
    );
  });

  it('refuses a missing or wrong API key with 401 and the envelope', async () => {
    const initialize = JSON.stringify({
      jsonrpc: '2.0', id: 1, method: 'initialize',
      params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'cnv-test', version: '1.0.0' } },
    });
    const headers = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
    const missing = await fetch(`${base}/mcp`, { method: 'POST', headers, body: initialize });
    expect(missing.status).toBe(401);
    expect(((await missing.json()) as any).error).toMatchObject({ type: 'authentication_error', code: 'missing_api_key' });
    expect(missing.headers.get('www-authenticate')).toBe('Bearer');
    const wrong = await fetch(`${base}/mcp`, { method: 'POST', headers: { ...headers, authorization: 'Bearer cnv_sk_wrong' }, body: initialize });
    expect(wrong.status).toBe(401);
    expect(((await wrong.json()) as any).error).toMatchObject({ type: 'authentication_error', code: 'invalid_api_key' });
    expect(wrong.headers.get('www-authenticate')).toBe('Bearer error="invalid_token"');

    const client = new Client({ name: 'cnv-test', version: '1.0.0' });
    const transport = new StreamableHTTPClientTransport(new URL(`${base}/mcp`), { requestInit: { headers: { authorization: 'Bearer cnv_sk_wrong' } } });
    await expect(client.connect(transport)).rejects.toThrow(/401|invalid_api_key|Unauthorized/i);

    const get = await fetch(`${base}/mcp`, { headers: { authorization: svc.auth.authorization, accept: 'text/event-stream' } });
    expect(get.status).toBe(405);
  });

  it('answers every method but POST with 405 method_not_allowed and Allow: POST, with or without a key', async () => {
    const methods = ['GET', 'HEAD', 'PUT', 'PATCH', 'DELETE', 'OPTIONS', 'TRACE', 'QUERY'] as const;
    const answers: Record<string, unknown> = {};
    for (const method of methods) {
      for (const headers of [{ authorization: svc.auth.authorization }, {}, { 'content-type': 'text/plain' }, { origin: 'https://a.example', 'access-control-request-method': 'POST' }]) {
        const withBody = method !== 'GET' && method !== 'HEAD' && method !== 'TRACE';
        const res = await svc.app.inject({ method, url: '/mcp?x=1', headers, ...(withBody ? { payload: '{"jsonrpc":' } : {}) });
        const key = `${method} ${JSON.stringify(headers)}`;
        answers[key] = {
          status: res.statusCode,
          allow: res.headers.allow,
          error: method === 'HEAD' ? undefined : (res.json() as any).error?.code,
        };
      }
    }
    for (const [key, answer] of Object.entries(answers)) {
      expect(answer, key).toEqual({ status: 405, allow: 'POST', error: key.startsWith('HEAD') ? undefined : 'method_not_allowed' });
    }
    // Over a real connection too (HEAD answers no body; Node's fetch refuses TRACE, inject covers it).
    for (const method of ['HEAD', 'PUT', 'OPTIONS']) {
      const res = await fetch(`${base}/mcp`, { method });
      expect([method, res.status, res.headers.get('allow')]).toEqual([method, 405, 'POST']);
      if (method !== 'HEAD') expect(((await res.json()) as any).error).toMatchObject({ type: 'invalid_request_error', code: 'method_not_allowed' });
    }
  });

  it("scopes the tools to the key's account: another account's ids are not found", async () => {
    const other: Tenant = await svc.addTenant('Other');
    const mine = await connect(svc.auth.authorization);
    const theirs = await connect(other.auth.authorization);

    const theirSites = await call(theirs, 'list_sites');
    expect(theirSites.structuredContent.data.map((s: { id: string }) => s.id)).toEqual([other.site.id]);

    const theirHandoff = await call(theirs, 'connect_trigger_source', {});
    const theirFlow = await call(theirs, 'create_flow', {
      site_id: other.site.id, name: 'Theirs',
      trigger_config: { type: 'saas_signup', integrationId: 'api', key: 'signup' },
      actions_config: [{ integrationId: 'meta', config: {} }],
    });
    expect(theirFlow.isError).toBeFalsy();

    const attempts = await Promise.all([
      call(mine, 'update_site', { id: other.site.id, name: 'Mine now' }),
      call(mine, 'get_handoff', { id: theirHandoff.structuredContent.id }),
      call(mine, 'publish_flow', { id: theirFlow.structuredContent.id }),
      call(mine, 'get_flow', { id: theirFlow.structuredContent.id }),
      call(mine, 'update_flow', { id: theirFlow.structuredContent.id, name: 'Mine now' }),
      call(mine, 'unpublish_flow', { id: theirFlow.structuredContent.id }),
      call(mine, 'connect_trigger_source', { site_id: other.site.id }),
      call(mine, 'create_flow', {
        site_id: other.site.id, name: 'Into theirs',
        trigger_config: { type: 'saas_signup', integrationId: 'api', key: 'signup' },
        actions_config: [{ integrationId: 'meta', config: {} }],
      }),
    ]);
    for (const attempt of attempts) {
      expect(attempt.isError).toBe(true);
      expect(attempt.structuredContent.error).toMatchObject({ type: 'not_found_error', code: 'resource_missing' });
      // What to do next: the id is not this account's; the tool that lists this account's ids of that kind.
      expect(attempt.content[1]!.text).toMatch(/^No (site|handoff|flow) with this id belongs to this account \(the account of the API key you use/);
      expect(attempt.content[1]!.text).toMatch(/call list_sites|call list_flows|connect_destination or connect_trigger_source/);
    }
    expect(attempts[2]!.content[1]!.text).toContain('call list_flows for the ids of its flows');
    // A site_key where a site id belongs (both are on a site): said so.
    const byKey = await call(mine, 'list_events', { site_id: other.site.site_key });
    expect(byKey.structuredContent.error).toMatchObject({ code: 'resource_missing', param: 'site_id' });
    expect(byKey.content[1]!.text).toContain(`'${other.site.site_key}' is not a site id (those start with site_): a site_key, the install snippet's key, is not one.`);
    const noDestination = await call(mine, 'redeliver_destination', { id: 'dst_nothere' });
    expect(noDestination.content[1]!.text).toContain('call list_destinations for the ids of its destinations');
    const mineFlows = await call(mine, 'list_flows', { site_id: other.site.id });
    expect(mineFlows.isError || mineFlows.structuredContent.data.length === 0).toBe(true);
  });
});
