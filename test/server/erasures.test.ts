/**
 * Erasure of a person (POST /v1/erasures, GET /v1/erasures) on both stores, through the real surfaces: a snapshot
 * through the collector, signed webhook reports, a form submission, then an erasure. Afterwards no REST, agent tool or
 * dashboard response (and no stored row) holds the erased values; counts are right; a repeat is recognised and changes
 * nothing; another person and another account are untouched; a report racing the erasure lands wholly before or after.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { DATABASE_KINDS } from './support/databases';
import { createRestService, errorOf, json, type RestService, type Tenant } from './support/rest-harness';
import { connectApiTrigger, insertApiFlow, newToken, setSiteDomain, signedReport, snapshotBody } from './support/fixtures';
import { adjustmentPath, conversionPath, SIGNATURE_HEADER } from '../../src/protocol/webhook';
import { generateTestSignatureHeader } from '../../src/protocol/hmac-node';
import { enqueueNotification } from '../../src/server/notifications';
import { snapshotsPath, SNAPSHOT_CONTENT_TYPE } from '../../src/protocol/collector';
import { formSubmissionsPath, type FormSubmissionPayload } from '../../src/protocol/forms';
import { issueSignInLink } from '../../src/server/dashboard';
import { newId } from '../../src/server/db/ids';
import { pressSignIn } from './support/dashboard-sign-in';
import { LOCAL_RECEIVERS } from './support/receiver';

const ORIGIN = 'https://www.example.com';
const SECRET = 'whsec_erasure_test_secret_0123456789';

/** What of Ada must be gone everywhere afterwards (compared case-insensitively). */
const ADA = {
  email: 'Ada.Lovelace@Example.com',
  phone: '+44 20 7946 0958',
  first: 'Augusta',
  last: 'Byronlovelace',
  gclid: 'Cj0KCQ-ada-click',
  ip: '203.0.113.77',
  ua: 'AdaBrowser/1.0',
};
// What of Ada is stored before the erasure (the phone as the form tool sent it), and, after it, also the phone's other
// forms (as reported, as normalised). Not its digits alone: '7946' turned up once inside a microsecond timestamp.
const ERASED = ['ada.lovelace@example.com', '7946-0958', 'augusta', 'byronlovelace', ADA.gclid.toLowerCase(), ADA.ip, 'adabrowser'];
const GONE = [...ERASED, '7946 0958', '2079460958'];

describe.each(DATABASE_KINDS)('erasure on $name', (kind) => {
  let svc: RestService;
  let base: string;
  beforeAll(async () => {
    svc = await createRestService(kind, LOCAL_RECEIVERS);
    base = await svc.app.listen({ host: '127.0.0.1', port: 0 });
  });
  afterAll(() => svc.close());

  async function prepare(who: Tenant, triggerKey: string): Promise<void> {
    await setSiteDomain(svc.db, who.site.id, ORIGIN);
    await connectApiTrigger(svc.db, { id: who.site.id, account_id: who.accountId }, SECRET);
    await insertApiFlow(svc.db, { id: who.site.id, account_id: who.accountId }, { triggerKey });
    // A live form-trigger flow too.
    await svc.db.query(
      `insert into flows (id, account_id, site_id, name, trigger_config, actions_config, status, published_at)
       values ($1, $2, $3, 'Leads', '{"integrationId": "html", "pageFilter": "all"}', $4, 'live', now())`,
      [newId('flow'), who.accountId, who.site.id, JSON.stringify([{ integrationId: 'google-ads', config: { conversion: { id: '42' } } }])],
    );
  }
  const snapshot = (who: Tenant, token: string, gclid: string, ip: string, ua: string) =>
    svc.app.inject({
      method: 'POST',
      url: snapshotsPath(who.site.site_key),
      headers: { 'content-type': SNAPSHOT_CONTENT_TYPE, origin: ORIGIN, 'user-agent': ua, 'x-forwarded-for': ip },
      remoteAddress: ip,
      payload: JSON.stringify(snapshotBody({
        correlation_token: token,
        touch: { click_ids: { gclid }, utm: {}, landing_page_url: `${ORIGIN}/?gclid=${gclid}`, referrer: null, captured_at: '2026-11-21T09:00:00.000Z' },
      })),
    });
  const report = (who: Tenant, triggerKey: string, body: Record<string, unknown>) =>
    svc.app.inject(signedReport(who.site.site_key, triggerKey, { allow_uncorrelated: true, correlation_token: null, ...body }, SECRET));
  const formSubmission = (who: Tenant, fields: FormSubmissionPayload['fields'], ip: string) =>
    svc.app.inject({
      method: 'POST',
      url: formSubmissionsPath(who.site.site_key),
      headers: { 'content-type': SNAPSHOT_CONTENT_TYPE, origin: ORIGIN, 'user-agent': 'AdaBrowser/1.0' },
      remoteAddress: ip,
      payload: JSON.stringify({
        submission_id: newToken(), integration: 'html', form_id: 'contact', occurred_at: '2026-11-21T09:40:00.000Z',
        page_url: `${ORIGIN}/contact`, referrer: null, touch: null, cookies: {}, consent: { ad_user_data: 'granted', ad_personalization: null },
        fields,
      }),
    });
  const erase = (who: Tenant, body: unknown) =>
    svc.app.inject({ method: 'POST', url: '/v1/erasures', headers: { ...who.auth, 'content-type': 'application/json' }, payload: JSON.stringify(body) });

  /** Every stored row of the personal-data tables, as lower-cased text. */
  async function storedText(): Promise<string> {
    const tables = ['reports', 'events', 'snapshots', 'form_submissions', 'event_actions', 'delivery_attempts', 'erasures', 'outbox',
      'adjustments', 'adjustment_results', 'notifications', 'notification_attempts'];
    const parts: string[] = [];
    for (const table of tables) parts.push(JSON.stringify(await svc.db.query(`select * from ${table}`)));
    return parts.join('\n').toLowerCase();
  }

  /** Every stored row of one account in the tables that may hold a person's data, as lower-cased text. */
  async function accountText(accountId: string): Promise<string> {
    const queries = [
      'select r.* from reports r join sites s on s.id = r.site_id where s.account_id = $1',
      'select * from events where account_id = $1',
      'select n.* from snapshots n join sites s on s.id = n.site_id where s.account_id = $1',
      'select f.* from form_submissions f join sites s on s.id = f.site_id where s.account_id = $1',
      'select a.* from event_actions a join events e on e.id = a.event_id where e.account_id = $1',
      'select d.* from delivery_attempts d join event_actions a on a.id = d.event_action_id join events e on e.id = a.event_id where e.account_id = $1',
      'select j.* from adjustments j join sites s on s.id = j.site_id where s.account_id = $1',
      'select r.* from adjustment_results r join event_actions a on a.id = r.event_action_id join events e on e.id = a.event_id where e.account_id = $1',
      'select * from notifications where account_id = $1',
      'select t.* from notification_attempts t join notifications n on n.id = t.notification_id where n.account_id = $1',
      'select * from erasures where account_id = $1',
    ];
    const parts: string[] = [];
    for (const query of queries) parts.push(JSON.stringify(await svc.db.query(query, [accountId])));
    return parts.join('\n').toLowerCase();
  }

  /** What the account's REST API, agent tools and dashboard show of its events, as lower-cased text. */
  async function everythingShown(who: Tenant): Promise<string> {
    const shown: string[] = [];
    const list = json(await svc.app.inject({ method: 'GET', url: '/v1/events?limit=100', headers: who.auth }));
    shown.push(JSON.stringify(list));
    for (const event of list.data as Array<{ id: string }>) {
      shown.push((await svc.app.inject({ method: 'GET', url: `/v1/events/${event.id}`, headers: who.auth })).body);
    }
    shown.push((await svc.app.inject({ method: 'GET', url: '/v1/erasures', headers: who.auth })).body);
    shown.push((await svc.app.inject({ method: 'GET', url: '/v1/notification_endpoints', headers: who.auth })).body);
    // The agent tools.
    const client = new Client({ name: 'erasure-test', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${base}/mcp`), { requestInit: { headers: who.auth } }));
    try {
      const listed = await client.callTool({ name: 'list_events', arguments: { limit: 100 } });
      shown.push(JSON.stringify(listed));
      for (const event of list.data as Array<{ id: string }>) shown.push(JSON.stringify(await client.callTool({ name: 'get_event', arguments: { id: event.id } })));
    } finally {
      await client.close();
    }
    // The dashboard, signed in.
    const link = new URL((await issueSignInLink(svc.db, svc.settings, who.accountId)).url);
    const signIn = await pressSignIn(svc.app, link);
    const cookie = String(signIn.headers['set-cookie']).split(';')[0]!;
    for (const url of ['/', '/dashboard/events', '/dashboard/flows', '/dashboard/privacy', '/dashboard/notifications', ...(list.data as Array<{ id: string }>).map((e) => `/dashboard/events/${e.id}`)]) {
      const page = await svc.app.inject({ method: 'GET', url, headers: { cookie } });
      expect(page.statusCode, url).toBe(200);
      shown.push(page.body);
    }
    return shown.join('\n').toLowerCase();
  }

  it('erases a person from every site of the account, through identity and links, and nothing else', async () => {
    const tenant = await svc.addTenant('Erasing');
    const other = await svc.addTenant('Other account');
    const secondSite = await svc.db.query<{ id: string; site_key: string }>(
      `insert into sites (id, account_id, site_key) values ($1, $2, $3) returning id, site_key`,
      [newId('site'), tenant.accountId, `k${Date.now().toString(36)}`],
    );
    const second: Tenant = { ...tenant, site: { ...tenant.site, id: secondSite[0]!.id, site_key: secondSite[0]!.site_key } };
    for (const who of [tenant, second, other]) await prepare(who, 'signup');

    // Ada: a click and a signup on the first site (email, names), a phone-only report on the second site, a form.
    const token = newToken();
    expect((await snapshot(tenant, token, ADA.gclid, ADA.ip, ADA.ua)).statusCode).toBe(204);
    expect((await report(tenant, 'signup', {
      customer_event_id: 'signup-1', correlation_token: token, email: ` ${ADA.email} `, first_name: ADA.first, last_name: ADA.last,
    })).statusCode).toBe(200);
    expect((await report(second, 'signup', { customer_event_id: 'signup-2', phone: '0044 (20) 7946-0958' })).statusCode).toBe(200);
    expect((await formSubmission(tenant, { email: 'ADA.LOVELACE@example.com', phone: null, first_name: null, last_name: null }, ADA.ip)).statusCode).toBe(204);
    // A customer_event_id that holds her email cannot stay either.
    expect((await report(tenant, 'signup', { customer_event_id: `order-${ADA.email}`, email: ADA.email })).statusCode).toBe(200);
    // Bob on the same site, and Ada's email in another account: both kept.
    const bobToken = newToken();
    expect((await snapshot(tenant, bobToken, 'Cj0KCQ-bob-click', '198.51.100.9', 'BobBrowser/2.0')).statusCode).toBe(204);
    expect((await report(tenant, 'signup', { customer_event_id: 'signup-bob', correlation_token: bobToken, email: 'bob@example.com' })).statusCode).toBe(200);
    expect((await report(other, 'signup', { customer_event_id: 'signup-1', email: ADA.email })).statusCode).toBe(200);
    // Delivery recorded a (hashed) summary of what it sent for Ada's first event.
    await svc.db.query(
      `update event_actions set request = '{"user_identifiers": ["emailAddress:5f1c…"], "gclid": "${ADA.gclid}"}'::jsonb
       where event_id in (select id from events where report_id in (select id from reports where customer_event_id = 'signup-1' and site_id = $1))`,
      [tenant.site.id],
    );
    await svc.db.query(
      `insert into delivery_attempts (event_action_id, attempt, at, outcome, request)
       select a.id, 1, now(), 'retry', a.request from event_actions a where a.request is not null`,
    );
    const before = await storedText();
    for (const value of ERASED) expect(before.includes(value), value).toBe(true);

    const res = await erase(tenant, { email: '  ADA.Lovelace@example.COM ', phone: '+44 20 7946 0958' });
    expect(res.statusCode).toBe(200);
    const body = json(res);
    expect(body).toEqual({
      id: expect.stringMatching(/^era_/), created_at: expect.any(String), fields: ['email', 'phone'], repeat_of: null,
      matched: { reports: 3, events: 4, snapshots: 1, form_submissions: 1 },
    });

    // Nothing of Ada shown by any surface of the account, and nothing stored in it: the other account still has its row.
    const shown = await everythingShown(tenant);
    for (const value of GONE) expect(shown.includes(value), `${value}: ${shown.slice(Math.max(0, shown.indexOf(value) - 300), shown.indexOf(value) + 100)}`).toBe(false);
    const stored = await svc.db.query<{ t: string }>(
      `select (select json_agg(r)::text from reports r join sites s on s.id = r.site_id where s.account_id = $1)
         || (select json_agg(e)::text from events e where e.account_id = $1)
         || coalesce((select json_agg(n)::text from snapshots n join sites s on s.id = n.site_id where s.account_id = $1), '')
         || (select json_agg(f)::text from form_submissions f join sites s on s.id = f.site_id where s.account_id = $1)
         || coalesce((select json_agg(d)::text from delivery_attempts d), '')
         || (select json_agg(a)::text from event_actions a join events e on e.id = a.event_id where e.account_id = $1) as t`,
      [tenant.accountId],
    );
    for (const value of GONE) expect(stored[0]!.t.toLowerCase().includes(value), value).toBe(false);
    // Bob is untouched; the other account's Ada is untouched.
    const bob = json(await svc.app.inject({ method: 'GET', url: '/v1/events?email=bob@example.com', headers: tenant.auth })).data;
    expect(bob).toHaveLength(1);
    expect(bob[0]).toMatchObject({ email: 'bob@example.com', click_ids: { gclid: 'Cj0KCQ-bob-click' } });
    expect((await svc.db.query(`select 1 from snapshots where correlation_token = $1`, [bobToken]))).toHaveLength(1);
    const kept = json(await svc.app.inject({ method: 'GET', url: `/v1/events?email=${encodeURIComponent(ADA.email)}`, headers: other.auth })).data;
    expect(kept).toHaveLength(1);
    // Her events remain as anonymous records (the count of conversions stays right), their queued sends cancelled.
    const events = json(await svc.app.inject({ method: 'GET', url: '/v1/events?limit=100', headers: tenant.auth })).data as Array<Record<string, any>>;
    const erased = events.filter((e) => e.erased === true);
    expect(erased).toHaveLength(4);
    for (const event of erased) {
      expect(event).toMatchObject({ email: null, click_ids: null, status: 'failed' });
      expect(event.actions.every((a: { status: string; error: { code: string } | null; request: unknown }) =>
        a.status === 'failed' && a.error?.code === 'erased' && a.request === null)).toBe(true);
    }
    expect((await svc.db.query(`select 1 from outbox o join event_actions a on a.id = o.event_action_id join events e on e.id = a.event_id where e.erased_at is not null`))).toHaveLength(0);
    // A retry of the report is still a repeat: nothing new is written.
    const retry = await report(tenant, 'signup', { customer_event_id: 'signup-1', correlation_token: token, email: ADA.email });
    expect(json(retry)).toMatchObject({ status: 'promoted', customer_event_id: 'signup-1' });
    expect((await storedText()).includes('augusta')).toBe(false);

    // The same erasure again: recognised as a repeat, zero counts, nothing changed.
    const again = json(await erase(tenant, { email: ADA.email }));
    expect(again).toMatchObject({ fields: ['email'], repeat_of: body.id, matched: { reports: 0, events: 0, snapshots: 0, form_submissions: 0 } });
    // The audit list: paginated like other lists, never the values.
    const page1 = json(await svc.app.inject({ method: 'GET', url: '/v1/erasures?limit=1', headers: tenant.auth }));
    expect(page1).toMatchObject({ has_more: true, next_cursor: body.id, data: [{ id: body.id }] });
    const page2 = json(await svc.app.inject({ method: 'GET', url: `/v1/erasures?starting_after=${body.id}`, headers: tenant.auth }));
    expect(page2).toMatchObject({ has_more: false, next_cursor: null, data: [{ id: again.id, repeat_of: body.id }] });
    expect(JSON.stringify([page1, page2]).toLowerCase()).not.toContain('lovelace');
    // Another account sees none of them.
    expect(json(await svc.app.inject({ method: 'GET', url: '/v1/erasures', headers: other.auth })).data).toEqual([]);
  });

  /** A signed POST of `body` to a webhook path (later stages, adjustments). */
  const signedPost = (path: string, body: unknown) => {
    const payload = JSON.stringify(body);
    return svc.app.inject({
      method: 'POST', url: path, payload,
      headers: { 'content-type': 'application/json', [SIGNATURE_HEADER]: generateTestSignatureHeader({ secret: SECRET, path, body: payload }) },
    });
  };

  it("erases a person's later stages (found by the customer id alone), adjustments and notifications, and nothing else", async () => {
    const tenant = await svc.addTenant('Stages');
    await prepare(tenant, 'signup');
    await svc.db.query(
      `insert into flows (id, account_id, site_id, name, trigger_config, actions_config, status, trigger_key, published_at)
       values ($1, $2, $3, 'Paid', '{"type": "conversion", "integrationId": "api", "key": "paid"}', $4, 'live', 'paid', now())`,
      [newId('flow'), tenant.accountId, tenant.site.id, JSON.stringify([{ integrationId: 'google-ads', config: { conversion: { id: '43' } } }])],
    );
    const endpoint = json(await svc.app.inject({
      method: 'POST', url: '/v1/notification_endpoints', headers: { ...tenant.auth, 'content-type': 'application/json' },
      payload: JSON.stringify({ url: 'http://127.0.0.1:9/hooks/cnv', kinds: ['event.failed'] }),
    }));
    expect(endpoint.id).toMatch(/^nep_/);

    // Ada: a trial reported by her customer id before anything else (so it found no signup: nothing links it to her
    // but that id), a click, a signup with her email, phone and customer id, then a later stage and a refund.
    const trial = await signedPost(conversionPath(tenant.site.site_key, 'paid'), { customer_event_id: 'stage-trial', customer_id: 'cus_ada_7946', allow_uncorrelated: true });
    expect(json(trial)).toMatchObject({ status: 'promoted', match: 'none' });
    const token = newToken();
    expect((await snapshot(tenant, token, ADA.gclid, ADA.ip, ADA.ua)).statusCode).toBe(204);
    expect((await report(tenant, 'signup', {
      customer_event_id: 'stage-signup', correlation_token: token, email: ADA.email, phone: ADA.phone, last_name: ADA.last, customer_id: 'cus_ada_7946',
    })).statusCode).toBe(200);
    const paid = await signedPost(conversionPath(tenant.site.site_key, 'paid'), { customer_event_id: 'stage-paid', customer_id: 'cus_ada_7946', value: 29, currency: 'EUR' });
    expect(json(paid)).toMatchObject({ status: 'promoted', match: 'identity' });
    const refund = await signedPost(adjustmentPath(tenant.site.site_key), {
      adjustment_id: `refund-${ADA.email}`, customer_event_id: 'stage-paid', type: 'restate', value: 19, currency: 'EUR',
    });
    expect(json(refund)).toEqual({ status: 'accepted', adjustment_id: `refund-${ADA.email}`, events: 1 });
    // Bob, on the same site: kept.
    const bobToken = newToken();
    expect((await snapshot(tenant, bobToken, 'Cj0KCQ-bob-stage', '198.51.100.10', 'BobBrowser/2.0')).statusCode).toBe(204);
    expect((await report(tenant, 'signup', { customer_event_id: 'stage-bob', correlation_token: bobToken, email: 'bob@example.com', customer_id: 'cus_bob' })).statusCode).toBe(200);

    // What delivery recorded meanwhile: the stage was delivered (its summary holds the click), a Google answer that
    // quoted the click failed the signup, the refund was applied, and the account was told of the failure.
    const [stageEvent] = await svc.db.query<{ id: string; click_ids: Record<string, string> }>(
      `select id, click_ids from events where account_id = $1 and data ->> 'customer_event_id' = 'stage-paid'`, [tenant.accountId]);
    expect(stageEvent!.click_ids).toEqual({ gclid: ADA.gclid });
    const [signupEvent] = await svc.db.query<{ id: string }>(
      `select id from events where account_id = $1 and data ->> 'customer_event_id' = 'stage-signup'`, [tenant.accountId]);
    const [bobEvent] = await svc.db.query<{ id: string }>(
      `select id from events where account_id = $1 and data ->> 'customer_event_id' = 'stage-bob'`, [tenant.accountId]);
    const summary = JSON.stringify({ api: 'google-data-manager', clickId: ADA.gclid, userIdentifiers: ['emailAddress'] });
    const quoted = JSON.stringify({ code: 'invalid_format', message: `Google: invalid click id ${ADA.gclid}`, hint: 'Nothing can be resent.' });
    await svc.db.query(`update event_actions set status = 'delivered', request = $2::jsonb, delivered_at = now() where event_id = $1`, [stageEvent!.id, summary]);
    await svc.db.query(`update event_actions set status = 'failed', request = $2::jsonb, error = $3::jsonb where event_id = $1`, [signupEvent!.id, summary, quoted]);
    await svc.db.query(`update event_actions set status = 'failed', error = $2::jsonb where event_id = $1`, [bobEvent!.id, quoted.replace(ADA.gclid, 'Cj0KCQ-bob-stage')]);
    // The trial's conversion was retracted before it was sent: its action is settled as skipped.
    const [trialEvent] = await svc.db.query<{ id: string }>(
      `select id from events where account_id = $1 and data ->> 'customer_event_id' = 'stage-trial'`, [tenant.accountId]);
    const retracted = JSON.stringify({ code: 'retracted', message: 'The conversion was retracted before it was sent.', hint: null });
    await svc.db.query(`update event_actions set status = 'skipped', error = $2::jsonb where event_id = $1`, [trialEvent!.id, retracted]);
    await svc.db.query(`update events set status = 'completed' where id = $1`, [trialEvent!.id]);
    await svc.db.query(`delete from outbox where event_action_id in (select id from event_actions where event_id = $1)`, [trialEvent!.id]);
    await svc.db.query(
      `insert into delivery_attempts (event_action_id, attempt, at, outcome, error, request)
       select a.id, 1, now(), a.status, a.error, a.request from event_actions a join events e on e.id = a.event_id where e.account_id = $1`,
      [tenant.accountId],
    );
    await svc.db.query(
      `update adjustment_results set status = 'adjusted', attempts = 1, request = $2::jsonb
       where event_action_id in (select id from event_actions where event_id = $1)`,
      [stageEvent!.id, JSON.stringify({ api: 'google-data-manager', clickId: ADA.gclid, adjustment: 'restate', adjustment_id: `refund-${ADA.email}` })],
    );
    for (const [event, gclid] of [[signupEvent!.id, ADA.gclid], [bobEvent!.id, 'Cj0KCQ-bob-stage']] as const) {
      await enqueueNotification(svc.db, tenant.accountId, 'event.failed', {
        site_id: tenant.site.id, event_id: event, destination: { id: null, type: 'google-ads' }, reason: `Google: invalid click id ${gclid}`,
      });
    }
    const stages = ['cus_ada_7946', `refund-${ADA.email}`.toLowerCase(), ADA.gclid.toLowerCase(), ADA.email.toLowerCase(), ADA.last.toLowerCase(), ADA.ip];
    const before = await accountText(tenant.accountId);
    for (const value of stages) expect(before.includes(value), value).toBe(true);

    // Erased by her phone alone: the stages (the paid one carries her email and click, got from the signup; the trial
    // only her customer id) and the refund go with the signup.
    const res = await erase(tenant, { phone: ADA.phone });
    expect(json(res).matched).toEqual({ reports: 3, events: 3, snapshots: 1, form_submissions: 0 });
    const shown = await everythingShown(tenant);
    for (const value of stages) expect(shown.includes(value), value).toBe(false);
    const stored = await accountText(tenant.accountId);
    for (const value of stages) expect(stored.includes(value), value).toBe(false);
    // What stays says what happened, without anyone in it.
    const stage = json(await svc.app.inject({ method: 'GET', url: `/v1/events/${stageEvent!.id}`, headers: tenant.auth }));
    expect(stage).toMatchObject({
      erased: true, trigger_type: 'conversion', customer_id: null, click_ids: null, value: 29, currency: 'EUR',
      actions: [{ status: 'delivered', request: null }],
      adjustments: [{ adjustment_id: expect.stringMatching(/^erased_/), type: 'restate', results: [{ status: 'adjusted' }] }],
    });
    const signupShown = json(await svc.app.inject({ method: 'GET', url: `/v1/events/${signupEvent!.id}`, headers: tenant.auth }));
    expect(signupShown.actions[0]).toMatchObject({ status: 'failed', request: null, error: { code: 'invalid_format', hint: 'Nothing can be resent.' } });
    // A settled action keeps its status and its reason's code: the retracted trial stays skipped, its event completed.
    const trialShown = json(await svc.app.inject({ method: 'GET', url: `/v1/events/${trialEvent!.id}`, headers: tenant.auth }));
    expect(trialShown).toMatchObject({ erased: true, status: 'completed', actions: [{ status: 'skipped', request: null, error: { code: 'retracted' } }] });
    const [told] = await svc.db.query<{ payload: { data: Record<string, unknown> } }>(`select payload from notifications where payload -> 'data' ->> 'event_id' = $1`, [signupEvent!.id]);
    expect(told!.payload.data).toMatchObject({ event_id: signupEvent!.id, destination: { type: 'google-ads' }, reason: expect.stringContaining('removed with the person') });
    // Bob's failure and its notification are untouched.
    const bob = json(await svc.app.inject({ method: 'GET', url: `/v1/events/${bobEvent!.id}`, headers: tenant.auth }));
    expect(bob).toMatchObject({ email: 'bob@example.com', customer_id: 'cus_bob', actions: [{ error: { message: 'Google: invalid click id Cj0KCQ-bob-stage' } }] });
    expect(stored).toContain('google: invalid click id cj0kcq-bob-stage');
    // A later stage of her customer id now finds no click.
    const later = await signedPost(conversionPath(tenant.site.site_key, 'paid'), { customer_event_id: 'stage-renewal', customer_id: 'cus_ada_7946', allow_uncorrelated: true });
    expect(json(later)).toMatchObject({ match: 'none', correlated: false });
  });

  it("deletes the person's browser snapshots on the account's other sites too (a token carried there by data-linker)", async () => {
    const tenant = await svc.addTenant('Linked domains');
    const other = await svc.addTenant('Linked, other account');
    const appSite = await svc.db.query<{ id: string; site_key: string }>(
      `insert into sites (id, account_id, site_key) values ($1, $2, $3) returning id, site_key`,
      [newId('site'), tenant.accountId, `l${Date.now().toString(36)}`],
    );
    const app: Tenant = { ...tenant, site: { ...tenant.site, id: appSite[0]!.id, site_key: appSite[0]!.site_key } };
    for (const who of [tenant, app, other]) await prepare(who, 'signup');
    // Intent on the marketing site, then on the app with the same token (data-linker), reported to the app.
    const token = newToken();
    expect((await snapshot(tenant, token, 'Cj0KCQ-linked-click', '203.0.113.91', 'LinkedBrowser/1.0')).statusCode).toBe(204);
    expect((await snapshot(app, token, 'Cj0KCQ-linked-click', '203.0.113.91', 'LinkedBrowser/1.0')).statusCode).toBe(204);
    // The same token in another account is another account's (never touched).
    expect((await snapshot(other, token, 'Cj0KCQ-linked-click', '203.0.113.91', 'LinkedBrowser/1.0')).statusCode).toBe(204);
    expect((await report(app, 'signup', { customer_event_id: 'linked-1', correlation_token: token, email: 'linked.person@example.com' })).statusCode).toBe(200);

    const res = await erase(tenant, { email: 'linked.person@example.com' });
    expect(json(res).matched).toEqual({ reports: 1, events: 1, snapshots: 2, form_submissions: 0 });
    const left = await svc.db.query<{ site_id: string }>('select site_id from snapshots where correlation_token = $1', [token]);
    expect(left.map((r) => r.site_id)).toEqual([other.site.id]);
  });

  it('answers a person found nowhere with zero counts and still records the audit entry', async () => {
    const tenant = await svc.addTenant('Nobody');
    const res = await erase(tenant, { phone: '+1 (800) 555-0100', customer_id: 'cus_404' });
    expect(res.statusCode).toBe(200);
    expect(json(res)).toMatchObject({ fields: ['phone', 'customer_id'], repeat_of: null, matched: { reports: 0, events: 0, snapshots: 0, form_submissions: 0 } });
    const listed = json(await svc.app.inject({ method: 'GET', url: '/v1/erasures', headers: tenant.auth }));
    expect(listed.data).toHaveLength(1);
    expect(JSON.stringify(listed)).not.toMatch(/8005550100|cus_404/);
    // The same phone written another way is the same person: a repeat.
    expect(json(await erase(tenant, { phone: '0018005550100' })).repeat_of).toBe(listed.data[0].id);
  });

  it('the dashboard confirms what will be removed before erasing, then lists the erasure without the values', async () => {
    const tenant = await svc.addTenant('Dashboard');
    await prepare(tenant, 'signup');
    expect((await report(tenant, 'signup', { customer_event_id: 'dash-1', email: 'dash.person@example.com', last_name: 'Dashwood' })).statusCode).toBe(200);
    const link = new URL((await issueSignInLink(svc.db, svc.settings, tenant.accountId)).url);
    const cookie = String((await pressSignIn(svc.app, link)).headers['set-cookie']).split(';')[0]!;
    const page = await svc.app.inject({ method: 'GET', url: '/dashboard/privacy', headers: { cookie } });
    expect(page.body).toContain('Email, phone, names and customer ids are kept 90 days');
    const csrf = /name="_csrf" value="([^"]+)"/.exec(page.body)![1]!;
    const post = (url: string, form: Record<string, string>) =>
      svc.app.inject({ method: 'POST', url, headers: { cookie, 'content-type': 'application/x-www-form-urlencoded' }, payload: new URLSearchParams({ ...form, _csrf: csrf }).toString() });

    // A malformed phone: the form again, with the message, nothing erased.
    const bad = await post('/dashboard/privacy/preview', { email: '', phone: '555 0100', customer_id: '' });
    expect(bad.statusCode).toBe(400);
    expect(bad.body).toContain('Enter the phone number with its country code, starting with + or 00, e.g. +1 202 555 0143.');
    expect(bad.body).not.toContain('phone must');
    expect(bad.body).toMatch(/<input[^>]*id="erase-phone"[^>]*aria-invalid="true"/);
    // Nothing given: said above the form, in the form's words, with no field marked.
    const empty = await post('/dashboard/privacy/preview', { email: ' ', phone: '', customer_id: '' });
    expect(empty.statusCode).toBe(400);
    expect(empty.body).toContain('Give at least one of email, phone and customer id.');
    expect(empty.body).not.toContain('customer_id.');
    expect(empty.body).not.toContain('aria-invalid="true"');
    // A value too long, checked by the REST route's schema: its field marked, the message without the API's names.
    const long = await post('/dashboard/privacy/preview', { email: '', phone: '', customer_id: 'c'.repeat(300) });
    expect(long.statusCode).toBe(400);
    expect(long.body).toMatch(/<input[^>]*id="erase-customer_id"[^>]*aria-invalid="true"/);
    expect(long.body).toContain('The customer id must be at most 200 characters.');
    expect(long.body).not.toMatch(/customer_id must|body\//);
    // The confirmation says what will go; nothing has gone yet.
    const preview = await post('/dashboard/privacy/preview', { email: 'Dash.Person@example.com', phone: '', customer_id: '' });
    expect(preview.statusCode).toBe(200);
    expect(preview.body).toContain('Erase this person?');
    expect(preview.body).toMatch(/<strong>1 report<\/strong>[\s\S]*<strong>1 event<\/strong>[\s\S]*<strong>0 browser snapshots<\/strong>[\s\S]*<strong>0 form submissions<\/strong>/);
    expect(preview.body).toContain('Conversions already delivered to ad platforms are not called back');
    expect((await svc.db.query(`select 1 from events where email = 'dash.person@example.com'`))).toHaveLength(1);
    // Erase: done, listed, and the values are nowhere in the page.
    const erased = await post('/dashboard/privacy/erase', { email: 'Dash.Person@example.com', phone: '', customer_id: '' });
    expect(erased.statusCode).toBe(303);
    expect(erased.headers.location).toBe('/dashboard/privacy?done=erased');
    const after = await svc.app.inject({ method: 'GET', url: '/dashboard/privacy?done=erased', headers: { cookie } });
    expect(after.body).toContain('1 report, 1 event, 0 browser snapshots, 0 form submissions');
    expect(after.body.toLowerCase()).not.toMatch(/dash\.person|dashwood/);
    expect((await svc.db.query(`select 1 from events where email = 'dash.person@example.com'`))).toHaveLength(0);
    // Without the CSRF token nothing happens.
    const forged = await svc.app.inject({
      method: 'POST', url: '/dashboard/privacy/erase', headers: { cookie, 'content-type': 'application/x-www-form-urlencoded' },
      payload: 'email=someone%40example.com',
    });
    expect(forged.statusCode).toBe(403);
  });

  it('refuses an erasure with no identity or a malformed one with a 400 naming the field, recording nothing', async () => {
    const tenant = await svc.addTenant('Bad input');
    const cases: Array<[unknown, string]> = [
      [{}, 'email'],
      [{ email: 'not an address' }, 'email'],
      [{ email: '' }, 'email'],
      [{ email: 42 }, 'email'],
      // Not an address: a mailto: link, a domain without a dot.
      [{ email: 'mailto:a@example.com' }, 'email'],
      [{ email: 'a@b' }, 'email'],
      [{ email: 'a@localhost' }, 'email'],
      [{ email: 'a@example.' }, 'email'],
      [{ phone: '020 7946 0958' }, 'phone'],
      [{ phone: '+12' }, 'phone'],
      [{ customer_id: '   ' }, 'customer_id'],
      [{ customer_id: 'x'.repeat(201) }, 'customer_id'],
      [{ email: 'a@example.com', name: 'Ada' }, 'name'],
    ];
    for (const [body, param] of cases) {
      const res = await erase(tenant, body);
      expect(res.statusCode, JSON.stringify(body)).toBe(400);
      expect(errorOf(res).param, JSON.stringify(body)).toBe(param);
      expect(res.body).not.toContain('7946');
    }
    expect(errorOf(await erase(tenant, { email: 'mailto:a@example.com' })).message).toContain('without a mailto: prefix');
    const noBody = await svc.app.inject({ method: 'POST', url: '/v1/erasures', headers: tenant.auth });
    expect(noBody.statusCode).toBe(400);
    expect(json(await svc.app.inject({ method: 'GET', url: '/v1/erasures', headers: tenant.auth })).data).toEqual([]);
    expect((await svc.app.inject({ method: 'POST', url: '/v1/erasures', payload: { email: 'a@example.com' } })).statusCode).toBe(401);
  });

  it('a report racing an erasure of the same person lands wholly before (erased) or wholly after (kept)', async () => {
    const tenant = await svc.addTenant('Race');
    await prepare(tenant, 'race');
    const email = 'race.person@example.com';
    const reports = Array.from({ length: 12 }, (_, i) => report(tenant, 'race', { customer_event_id: `race-${i}`, email, first_name: 'Racer' }));
    const erasure = erase(tenant, { email });
    const results = await Promise.all([...reports, erasure]);
    for (const res of results) expect(res.statusCode).toBe(200);
    const rows = await svc.db.query<{ id: string; identity: Record<string, string>; erased: number; kept: number }>(
      `select r.id, r.identity,
         count(*) filter (where e.erased_at is not null)::int as erased,
         count(*) filter (where e.erased_at is null and e.email = $2)::int as kept
       from reports r join sites s on s.id = r.site_id join events e on e.report_id = r.id
       where s.account_id = $1 group by r.id, r.identity`,
      [tenant.accountId, email],
    );
    expect(rows).toHaveLength(12);
    for (const row of rows) {
      if (Object.keys(row.identity).length === 0) expect(row, 'erased wholly').toMatchObject({ erased: 1, kept: 0 });
      else expect(row, 'kept wholly').toMatchObject({ identity: { email, first_name: 'Racer' }, erased: 0, kept: 1 });
    }
    const { matched } = json(results[results.length - 1]!);
    expect(matched.reports).toBe(rows.filter((r) => Object.keys(r.identity).length === 0).length);
    expect(matched.events).toBe(matched.reports);
  });
});
