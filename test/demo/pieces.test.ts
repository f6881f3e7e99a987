import { describe, expect, it } from 'vitest';
import { escapeHtml, html, raw } from '../../src/server/http/html';
import { checkSignupForm, SignupDesk, splitName } from '../../src/demo/signups';
import { uploadsWithOrderId } from '../../src/demo/uploads';
import { localHandoffUrl, webhookSecretOnPage } from '../../src/demo/hosted-handoff';
import { adClickHref } from '../../src/demo/pages/landing';
import { installSnippet } from '../../src/demo/pages/layout';
import { pricingPage } from '../../src/demo/pages/pricing';
import { newDemoClickId } from '../../src/demo/site';
import { triggerSourceConnectedPage } from '../../src/server/api/handoffs/hosted-pages';
import type { CnvClient, ReportSignupInput } from '../../src/client/index';
import type { FakeGoogleAdsRequest } from '../../src/demo/fake-google-ads';

describe('the demo pages', () => {
  it('escape every interpolated value, and keep trusted markup as is', () => {
    expect(escapeHtml(`<a href="x">'&'</a>`)).toBe('&lt;a href=&quot;x&quot;&gt;&#39;&amp;&#39;&lt;/a&gt;');
    const name = '<script>alert(1)</script>';
    expect(html`<p>${name}</p>${raw('<br>')}`.value).toBe('<p>&lt;script&gt;alert(1)&lt;/script&gt;</p><br>');
  });

  it('load the loader with the real install snippet', () => {
    expect(installSnippet({ serviceUrl: 'http://127.0.0.1:8787', siteKey: 'abc123' }).value).toBe(
      '<script async src="http://127.0.0.1:8787/loader.js" data-site-key="abc123"></script>',
    );
  });

  it('mark the signup form as a conversion surface that posts to the demo backend', () => {
    const page = pricingPage({ serviceUrl: 'http://127.0.0.1:8787', siteKey: 'abc123' }).value;
    expect(page).toMatch(/<form class="stack" method="post" action="\/signup" data-service-signup-intent>/);
    expect(page).toContain('name="email"');
    expect(page).toContain('name="name"');
  });

  it('simulate an ad click with a landing URL tagged like Google Ads auto-tagging', () => {
    const gclid = newDemoClickId();
    expect(gclid).toMatch(/^TeSt-[A-Za-z0-9_-]{16}$/);
    expect(adClickHref(gclid)).toBe(`/?gclid=${gclid}&utm_source=google&utm_medium=cpc&utm_campaign=demo`);
  });
});

describe('the demo backend', () => {
  it('splits a full name into first and last name', () => {
    expect(splitName('  Ada   King Lovelace ')).toEqual({ firstName: 'Ada', lastName: 'King Lovelace' });
    expect(splitName('Cher')).toEqual({ firstName: 'Cher', lastName: null });
  });

  it('refuses a signup form without a valid email or a name', () => {
    expect(checkSignupForm({ email: 'nope', name: 'Ada' })).toEqual({ error: 'Please enter a valid email address.' });
    expect(checkSignupForm({ email: 'ada@example.com', name: ' ' })).toEqual({ error: 'Please enter your name.' });
    expect(checkSignupForm({ email: ' ada@example.com ', name: 'Ada' })).toEqual({ email: 'ada@example.com', name: 'Ada' });
  });

  it('reports each signup with the new user id as customer_event_id and the request that carries the cookie', async () => {
    const sent: ReportSignupInput[] = [];
    const client: CnvClient = {
      async reportSignup(input) {
        sent.push(input);
        return {
          ok: true,
          sent: true,
          response: { status: 'promoted', promoted_count: 1, customer_event_id: input.customerEventId },
          attempts: 1,
          correlationToken: 'AAAAAAAAAAAAAAAAAAAAAA',
          tokenProblem: null,
        };
      },
    };
    const desk = new SignupDesk({ webhookBaseUrl: 'http://127.0.0.1:1', siteKey: 'k', triggerKey: 'demo-signup', webhookSecret: 's' }, client);
    const request = { headers: { cookie: 'cnv_signup_correlation=AAAAAAAAAAAAAAAAAAAAAA; other=1' } };
    const { signup, reported } = desk.signUp({ email: 'ada@example.com', name: 'Ada Lovelace', request });
    expect(signup.report).toBeNull();
    expect(await reported).toBe(signup);
    expect(signup.report).toMatchObject({ ok: true, response: { status: 'promoted', customer_event_id: signup.id } });
    expect(signup.id).toMatch(/^usr_/);
    expect(signup.correlationToken).toBe('AAAAAAAAAAAAAAAAAAAAAA');
    expect(sent).toEqual([
      { request, customerEventId: signup.id, email: 'ada@example.com', firstName: 'Ada', lastName: 'Lovelace' },
    ]);
    expect(desk.find(signup.id)).toBe(signup);
    expect(desk.find('usr_unknown')).toBeNull();
  });

  it('records a report that could not even be attempted, instead of losing the signup', async () => {
    const client: CnvClient = { reportSignup: () => Promise.reject(new TypeError('fetch failed oddly')) };
    const desk = new SignupDesk({ webhookBaseUrl: 'http://127.0.0.1:1', siteKey: 'k', triggerKey: 'demo-signup', webhookSecret: 's' }, client);
    const { reported } = desk.signUp({ email: 'ada@example.com', name: 'Ada', request: { headers: {} } });
    const signup = await reported;
    expect(signup).toMatchObject({ report: null, reportError: 'fetch failed oddly', correlationToken: null });
  });
});

describe('the fake destination log', () => {
  it('finds the conversions uploaded under an order id, retries included', () => {
    const request = (orderId: string, status: number): FakeGoogleAdsRequest => ({
      method: 'POST',
      path: '/v22/customers/1234567890:uploadClickConversions',
      headers: {},
      body: { conversions: [{ orderId, gclid: 'g' }], partialFailure: true },
      customerId: '1234567890',
      problems: [],
      answeredStatus: status,
      receivedAt: new Date(),
    });
    const log = { requests: [request('a', 500), request('b', 200), request('a', 200), { ...request('a', 400), body: null }] };
    expect(uploadsWithOrderId(log, 'a').map((u) => u.answeredStatus)).toEqual([500, 200]);
    expect(uploadsWithOrderId(log, 'c')).toEqual([]);
  });
});

describe('completing the hosted trigger source page', () => {
  it('reads the webhook secret from the page the service shows it on', () => {
    const page = triggerSourceConnectedPage(
      {
        kind: 'trigger_source',
        handoff: {} as never,
        site: { id: 'site_1', name: 'Demo store', site_key: 'abc' } as never,
        webhook: { urlTemplate: 'http://127.0.0.1:8787/api/webhook-bridge/saas-signup/abc/{trigger_key}', known: [] },
      },
      'whsec_0123456789abcdefghijABCDEFGHIJ01',
      false,
    );
    expect(webhookSecretOnPage(page)).toBe('whsec_0123456789abcdefghijABCDEFGHIJ01');
    expect(webhookSecretOnPage('<p>no secret here</p>')).toBeNull();
  });

  it('addresses the hosted link to a base this process can reach', () => {
    expect(localHandoffUrl('https://cnv.example.com/handoffs/TOKEN123', 'http://127.0.0.1:8787/')).toBe('http://127.0.0.1:8787/handoffs/TOKEN123');
  });
});
