import { describe, expect, it } from 'vitest';
import { escapeHtml, html, raw } from '../../src/server/http/html';
import { checkSignupForm, paidEventId, PlanChangeRefused, refundId, SignupDesk, splitName } from '../../src/demo/signups';
import { platformRequestFinder, shownRequest } from '../../src/demo/platform-requests';
import { eventFacts } from '../../src/demo/event-facts';
import { localHandoffUrl, signInHref, webhookSecretOnPage } from '../../src/demo/hosted-handoff';
import { adClickHref } from '../../src/demo/pages/landing';
import { installSnippet } from '../../src/demo/pages/layout';
import { pricingPage } from '../../src/demo/pages/pricing';
import { newDemoClickIds } from '../../src/demo/site';
import { triggerSourceConnectedPage } from '../../src/server/api/handoffs/hosted-pages';
import type { AdjustConversionInput, CnvClient, ReportConversionInput, ReportSignupInput } from '../../src/client/index';
import type { FakeRequest } from '../../src/demo/fakes/fake-server';

const REPORTER = { webhookBaseUrl: 'http://127.0.0.1:1', siteKey: 'k', triggerKey: 'demo-signup', webhookSecret: 's' };
const PAID = { key: 'demo-paid', value: 29, currency: 'EUR' };
const unusedLaterReports: Pick<CnvClient, 'reportConversion' | 'adjustConversion'> = {
  reportConversion: () => Promise.reject(new Error('not expected')),
  adjustConversion: () => Promise.reject(new Error('not expected')),
};

describe('the demo pages', () => {
  it('escape every interpolated value, and keep trusted markup as is', () => {
    expect(escapeHtml(`<a href="x">'&'</a>`)).toBe('&lt;a href=&quot;x&quot;&gt;&#39;&amp;&#39;&lt;/a&gt;');
    const name = '<script>alert(1)</script>';
    expect(html`<p>${name}</p>${raw('<br>')}`.value).toBe('<p>&lt;script&gt;alert(1)&lt;/script&gt;</p><br>');
  });

  it('load the loader with the real install snippet', () => {
    expect(installSnippet({ serviceUrl: 'http://127.0.0.1:8787', siteKey: 'abc123' }).value).toBe(
      '<script async src="http://127.0.0.1:8787/loader.js?site_key=abc123"></script>',
    );
  });

  it('mark the signup form as a conversion surface that posts to the demo backend', () => {
    const page = pricingPage({ serviceUrl: 'http://127.0.0.1:8787', siteKey: 'abc123' }).value;
    expect(page).toMatch(/<form class="stack" method="post" action="\/signup" data-service-signup-intent>/);
    expect(page).toContain('name="email"');
    expect(page).toContain('name="name"');
  });

  it('simulate an ad click whose landing URL carries each platform’s click id, shaped as the platform issues it', () => {
    const ids = newDemoClickIds();
    expect(ids.gclid).toMatch(/^TeSt-[A-Za-z0-9_-]{16}$/);
    expect(ids.fbclid).toMatch(/^TeSt-fb-[A-Za-z0-9_-]{16}$/);
    expect(ids.msclkid).toMatch(/^[0-9a-f]{32}$/);
    expect(ids.li_fat_id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
    expect(ids.rdt_cid).toMatch(/^[0-9]{1,20}$/);
    expect(ids.ttclid).toMatch(/^E\.C\.P\.TeSt-tt-[A-Za-z0-9_-]{16}$/);
    expect(adClickHref(ids)).toBe(
      `/?gclid=${ids.gclid}&fbclid=${ids.fbclid}&msclkid=${ids.msclkid}&li_fat_id=${ids.li_fat_id}&rdt_cid=${ids.rdt_cid}&ttclid=${ids.ttclid}` +
        '&utm_source=demo-ads&utm_medium=cpc&utm_campaign=demo',
    );
  });
});

describe('the demo backend', () => {
  it('splits a full name into first and last name', () => {
    expect(splitName('  Ada   King Lovelace ')).toEqual({ firstName: 'Ada', lastName: 'King Lovelace' });
    expect(splitName('Cher')).toEqual({ firstName: 'Cher', lastName: null });
  });

  it('refuses a signup form without a valid email or a name', () => {
    expect(checkSignupForm({ email: 'nope', name: 'Ada' })).toEqual({ errors: { email: 'Please enter a valid email address.' } });
    expect(checkSignupForm({ email: 'ada@example.com', name: ' ' })).toEqual({ errors: { name: 'Please enter your name.' } });
    expect(checkSignupForm({ email: 'nope', name: '' })).toEqual({ errors: { email: 'Please enter a valid email address.', name: 'Please enter your name.' } });
    expect(checkSignupForm({ email: ' ada@example.com ', name: 'Ada' })).toEqual({ email: 'ada@example.com', name: 'Ada' });
  });

  it('reports each signup with the new user id as customer_event_id and the request that carries the cookie', async () => {
    const sent: ReportSignupInput[] = [];
    const client: CnvClient = {
      ...unusedLaterReports,
      async reportSignup(input) {
        sent.push(input);
        return {
          ok: true,
          sent: true,
          response: { status: 'promoted', promoted_count: 1, customer_event_id: input.customerEventId, correlated: true },
          attempts: 1,
          correlationToken: 'AAAAAAAAAAAAAAAAAAAAAA',
          tokenProblem: null,
        };
      },
    };
    const desk = new SignupDesk(REPORTER, PAID, client);
    const request = { headers: { cookie: 'cnv_signup_correlation=AAAAAAAAAAAAAAAAAAAAAA; other=1' } };
    const { signup, reported } = desk.signUp({ email: 'ada@example.com', name: 'Ada Lovelace', request });
    expect(signup.report).toBeNull();
    expect(await reported).toBe(signup);
    expect(signup.report).toMatchObject({ ok: true, response: { status: 'promoted', customer_event_id: signup.id } });
    expect(signup.id).toMatch(/^usr_/);
    expect(signup.correlationToken).toBe('AAAAAAAAAAAAAAAAAAAAAA');
    expect(sent).toEqual([
      { request, customerEventId: signup.id, customerId: signup.id, email: 'ada@example.com', firstName: 'Ada', lastName: 'Lovelace' },
    ]);
    expect(desk.find(signup.id)).toBe(signup);
    expect(desk.find('usr_unknown')).toBeNull();
  });

  it('records a report that could not even be attempted, instead of losing the signup', async () => {
    const client: CnvClient = { ...unusedLaterReports, reportSignup: () => Promise.reject(new TypeError('fetch failed oddly')) };
    const desk = new SignupDesk(REPORTER, PAID, client);
    const { reported } = desk.signUp({ email: 'ada@example.com', name: 'Ada', request: { headers: {} } });
    const signup = await reported;
    expect(signup).toMatchObject({ report: null, reportError: 'fetch failed oddly', correlationToken: null });
  });

  it('reports the upgrade as the paid-plan stage with the customer id only, then the refund as its retraction, each once', async () => {
    const conversions: Array<[string, ReportConversionInput]> = [];
    const adjustments: AdjustConversionInput[] = [];
    const client: CnvClient = {
      reportSignup: async (input) => ({ ok: true, sent: true, response: { status: 'promoted', promoted_count: 1, customer_event_id: input.customerEventId, correlated: false }, attempts: 1, correlationToken: null, tokenProblem: null }),
      reportConversion: async (key, input) => {
        conversions.push([key, input]);
        return { ok: true, sent: true, response: { status: 'promoted', promoted_count: 1, customer_event_id: input.customerEventId, correlated: false, match: 'identity' }, attempts: 1, correlationToken: null, tokenProblem: 'missing' };
      },
      adjustConversion: async (input) => {
        adjustments.push(input);
        return { ok: true, sent: true, response: { status: 'accepted', adjustment_id: input.adjustmentId, events: 1 }, attempts: 1, correlationToken: null, tokenProblem: 'missing' };
      },
    };
    const desk = new SignupDesk(REPORTER, PAID, client);
    const { signup, reported } = desk.signUp({ email: 'ada@example.com', name: 'Ada Lovelace', request: { headers: {} } });
    expect(() => desk.refund(signup)).toThrow(PlanChangeRefused);
    await reported;
    await desk.upgrade(signup).reported;
    expect(() => desk.upgrade(signup)).toThrow('already on the paid plan');
    expect(conversions).toEqual([
      ['demo-paid', { customerEventId: paidEventId(signup.id), customerId: signup.id, value: 29, currency: 'EUR', email: 'ada@example.com', firstName: 'Ada', lastName: 'Lovelace' }],
    ]);
    expect(signup.upgrade).toMatchObject({ id: paidEventId(signup.id), result: { ok: true, response: { match: 'identity' } }, error: null });
    await desk.refund(signup).reported;
    expect(() => desk.refund(signup)).toThrow('already been refunded');
    expect(adjustments).toEqual([{ adjustmentId: refundId(signup.id), customerEventId: paidEventId(signup.id), type: 'retract' }]);
    expect(signup.refund).toMatchObject({ id: refundId(signup.id), result: { ok: true }, error: null });
  });

  it('refuses an upgrade before the signup reached cnv, in words for the visitor', () => {
    const client: CnvClient = { ...unusedLaterReports, reportSignup: () => new Promise(() => {}) };
    const desk = new SignupDesk(REPORTER, PAID, client);
    const { signup } = desk.signUp({ email: 'ada@example.com', name: 'Ada', request: { headers: {} } });
    expect(() => desk.upgrade(signup)).toThrow(/not reached cnv yet/);
    expect(signup.upgrade).toBeNull();
  });
});

describe('the fake platforms’ request log', () => {
  const request = (path: string, body: unknown, query = ''): FakeRequest => ({
    method: 'POST',
    path,
    query: new URLSearchParams(query),
    headers: { authorization: 'Bearer secret-token' },
    text: JSON.stringify(body),
    body,
    problems: [],
    answeredStatus: 200,
    answer: undefined,
    receivedAt: new Date(),
  });
  const event = eventFacts({
    id: 'evt_1',
    site_key: 'k',
    occurred_at: '2026-11-21T09:30:00.000Z',
    customer_event_id: 'usr_1',
    click_ids: { gclid: 'g-1' },
  });

  it('shows a request without its access token, in the query or the body', () => {
    const shown = shownRequest(request('/v24.0/123/events', { data: [{ event_id: 'usr_1' }], access_token: 'EAA-secret' }, 'access_token=EAA-secret&x=1'));
    expect(shown).toMatchObject({ method: 'POST', path: '/v24.0/123/events?x=1', body: { data: [{ event_id: 'usr_1' }] } });
    expect(JSON.stringify(shown)).not.toContain('secret');
  });

  it('finds each platform’s requests for an event by what cnv puts in them, retries included', () => {
    const other = { ...event, id: 'evt_2', occurredAt: '2026-11-21T09:31:00.000Z', customerEventId: 'usr_2', clickIds: {} };
    const sources = {
      google: { server: { requests: [request('/v1/events:ingest', { events: [{ eventTimestamp: event.occurredAt, adIdentifiers: { gclid: 'g-1' } }] }), request('/v1/events:ingest', { events: [{ eventTimestamp: other.occurredAt }] })] } },
      meta: { requests: [request('/v24.0/123/events', { data: JSON.stringify([{ event_id: 'usr_1' }]) })] },
      microsoft: { requests: [request('/CampaignManagement/v13/OfflineConversions/Apply', { OfflineConversions: [{ ConversionTime: event.occurredAt }] })] },
      linkedin: { requests: [request('/rest/conversionEvents', { elements: [{ eventId: 'usr_1' }] }), request('/rest/conversionEvents', { elements: [{ eventId: 'usr_1' }] })] },
      reddit: { requests: [request('/api/v3/pixels/a2_x/conversion_events', { data: { events: [{ metadata: { conversion_id: 'usr_1' } }] } })] },
      tiktok: { requests: [request('/open_api/v1.3/event/track/', { event_source: 'web', data: [{ event_id: 'usr_2' }] })] },
    };
    const find = platformRequestFinder(sources);
    expect(find('google-ads', event)).toHaveLength(1);
    expect(find('google-ads', other)).toHaveLength(1);
    expect(find('meta', event)[0]!.body).toEqual({ data: [{ event_id: 'usr_1' }] });
    expect(find('meta', other)).toEqual([]);
    expect(find('microsoft-ads', event)).toHaveLength(1);
    expect(find('linkedin', event)).toHaveLength(2);
    expect(find('reddit', event)).toHaveLength(1);
    expect(find('reddit', other)).toEqual([]);
    expect(find('tiktok', event)).toEqual([]);
    expect(find('tiktok', other)).toHaveLength(1);
    expect(find('snapchat', event)).toEqual([]);
  });
});

describe('completing the hosted trigger source page', () => {
  it('reads the webhook secret from the page the service shows it on', () => {
    const page = triggerSourceConnectedPage(
      {
        kind: 'trigger_source',
        handoff: {} as never,
        site: { id: 'site_1', name: 'Demo store', site_key: 'abc' } as never,
        webhook: {
          urlTemplate: 'http://127.0.0.1:8787/api/webhook-bridge/saas-signup/abc/{trigger_key}',
          stageUrlTemplate: 'http://127.0.0.1:8787/api/webhook-bridge/conversion/abc/{stage_key}',
          known: [],
        },
        accountName: 'Demo',
      },
      'whsec_0123456789abcdefghijABCDEFGHIJ01',
      false,
    );
    expect(webhookSecretOnPage(page)).toBe('whsec_0123456789abcdefghijABCDEFGHIJ01');
    expect(webhookSecretOnPage('<p>no secret here</p>')).toBeNull();
  });

  it('addresses the hosted link to a base this process can reach', () => {
    expect(localHandoffUrl('https://cnv.example.com/handoffs/TOKEN123', 'http://127.0.0.1:8787/')).toBe('http://127.0.0.1:8787/handoffs/TOKEN123');
    expect(localHandoffUrl('https://cnv.example.com/handoffs/oauth/callback?code=c&state=s', 'http://127.0.0.1:8787')).toBe(
      'http://127.0.0.1:8787/handoffs/oauth/callback?code=c&state=s',
    );
  });

  it('finds the “Sign in with …” link of a destination page that still needs the platform’s consent', () => {
    expect(signInHref('<p><a class="button" href="/handoffs/TOKEN123/authorize">Sign in with Google Ads</a></p>')).toBe('/handoffs/TOKEN123/authorize');
    expect(signInHref('<form method="post"></form>')).toBeNull();
    // With a choice asked before the sign-in (Google's API), the form's preselected value goes along.
    const withChoice = `<form method="get" action="/handoffs/TOKEN123/authorize">
<select id="api" name="api"><option value="data_manager">Data Manager API</option><option value="google_ads_api" selected>Google Ads API</option></select>
<button type="submit">Sign in with Google Ads</button></form>`;
    expect(signInHref(withChoice)).toBe('/handoffs/TOKEN123/authorize?api=google_ads_api');
  });
});

describe('the demo lines of the start banner', () => {
  it('say where to click, both flows and their triggers, and where each platform fake listens', async () => {
    const { demoBannerLines } = await import('../../src/demo/banner');
    const fake = (port: number) => ({ url: `http://127.0.0.1:${port}` });
    const lines = demoBannerLines({
      url: 'http://localhost:8788',
      setup: { site: { name: 'Demo store', site_key: 'k123' } },
      fakes: { google: fake(1), meta: fake(2), microsoft: fake(3), linkedin: fake(4), reddit: fake(5), tiktok: fake(6) },
    } as unknown as Parameters<typeof demoBannerLines>[0]).join('\n');
    expect(lines).toContain('http://localhost:8788/?gclid=');
    expect(lines).toContain('http://localhost:8788/events');
    expect(lines).toMatch(/flow "Demo signups":\n\s+API trigger demo-signup -> Google Ads, Meta, Microsoft Advertising, LinkedIn, Reddit, TikTok;/);
    expect(lines).toContain('flow "Demo paid plans": conversion trigger demo-paid (29 EUR) -> the same six.');
    expect(lines).toContain('"Upgrade to paid"');
    expect(lines).toContain('Google http://127.0.0.1:1, Meta http://127.0.0.1:2');
  });
});
