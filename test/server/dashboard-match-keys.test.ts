/**
 * The event page names the match keys each platform got, from the request summary the platform's own builder stored,
 * and says what to do when none of them can tie the conversion to an ad or a person. A landing with a gclid is
 * `match_quality: high`, yet Meta gets no click id from it: the page must not let that pass for a matched conversion.
 */
import { describe, expect, it } from 'vitest';
import type { EventActionRecord, EventRecord } from '../../src/server/api/events';
import { eventPage } from '../../src/server/dashboard/pages/event';
import { matchKeysOf } from '../../src/server/dashboard/pages/match-keys';
import { prepareEvent } from '../../src/server/destinations/google-ads/data-manager-request';
import { buildConversionEvent } from '../../src/server/destinations/linkedin/request';
import { buildServerEvent } from '../../src/server/destinations/meta/request';
import { prepareConversion } from '../../src/server/destinations/microsoft-ads/request';
import { buildRedditEvent } from '../../src/server/destinations/reddit/request';
import { buildTikTokEvent } from '../../src/server/destinations/tiktok/request';
import type { RequestSummary } from '../../src/server/destinations/destination';
import { input as googleInput } from './destinations/google-ads/inputs';
import { input as linkedInInput, NOW as LINKEDIN_NOW } from './destinations/linkedin/inputs';
import { metaInput, NOW } from './destinations/meta/fixtures';
import { input as microsoftInput, NOW as MICROSOFT_NOW } from './destinations/microsoft-ads/fixtures';
import { redditInput } from './destinations/reddit/fixtures';
import { tiktokInput } from './destinations/tiktok/fixtures';

const session = { accountId: 'acct_1', accountName: 'Acme', csrfToken: 'csrf', sessionToken: 'tok' };
const noBrowser = { clickIds: {}, cookies: {}, identity: {}, userAgent: null, ipAddress: null, pageUrl: null } as const;

function summaryOf(built: { summary: RequestSummary } | { ok: true; prepared: { summary: RequestSummary } } | { ok: false; outcome: { request?: RequestSummary } }): RequestSummary {
  if ('summary' in built) return built.summary;
  if (built.ok) return built.prepared.summary;
  return built.outcome.request ?? {};
}

function action(destination: string, request: RequestSummary, status: EventActionRecord['status'] = 'delivered'): EventActionRecord {
  return { destination, status, conversion_id: null, attempts: 1, error: null, request, delivered_at: '2026-11-21T09:30:02.000Z' } as EventActionRecord;
}

function page(actions: EventActionRecord[]): string {
  const event: EventRecord = {
    id: 'evt_1', site_id: 'site_1', site_key: 'k', occurred_at: '2026-11-21T09:30:00.000Z', flow_id: 'flow_1', flow_name: 'Signups',
    trigger: 'api', trigger_type: 'saas_signup', status: 'completed', match_quality: 'high', email: null, customer_event_id: 'user_42',
    value: null, currency: null, current_value: null, current_currency: null, customer_id: null, click_ids: { gclid: 'g' }, utm: null,
    created_at: '2026-11-21T09:30:01.000Z', actions,
  } as unknown as EventRecord;
  return eventPage(session, event);
}

describe('match keys of each delivery', () => {
  it("names every platform's keys as its builder sent them, its own click id first", () => {
    const meta = summaryOf(buildServerEvent(metaInput(), '1234567890123456', NOW));
    expect(matchKeysOf('meta', meta)).toEqual({
      keys: ['Meta click id (fbc)', 'email', 'phone', 'name', 'Meta browser id (fbp)', 'IP address', 'user agent'], click: true, strong: true,
    });
    expect(matchKeysOf('tiktok', summaryOf(buildTikTokEvent(tiktokInput(), 'C4CNVDEMO0PIXEL0CODE')))?.keys[0]).toBe('TikTok click id (ttclid)');
    expect(matchKeysOf('reddit', summaryOf(buildRedditEvent(redditInput(), 'a2_pixel', NOW)))?.keys[0]).toBe('Reddit click id (rdt_cid)');
    expect(matchKeysOf('google-ads', summaryOf(prepareEvent(googleInput(), { customerId: '1234567890', loginCustomerId: null })))).toEqual({
      keys: ['Google click id (gclid)', 'email'], click: true, strong: true,
    });
    const linkedIn = buildConversionEvent(linkedInInput(), LINKEDIN_NOW);
    expect(linkedIn.ok).toBe(true);
    expect(matchKeysOf('linkedin', summaryOf(linkedIn))).toEqual({ keys: ['LinkedIn click id (li_fat_id)', 'email', 'name'], click: true, strong: true });
    expect(matchKeysOf('microsoft-ads', summaryOf(prepareConversion(microsoftInput(), MICROSOFT_NOW) as never))).toEqual({
      keys: ['Microsoft click id (msclkid)', 'email'], click: true, strong: true,
    });
  });

  it('shows a gclid-only signup as having no Meta click id, and one with only a browser\'s IP address as unlikely to be credited', () => {
    // The landing had a gclid only: Meta gets its browser id, IP and user agent, no click id.
    const gclidOnly = summaryOf(buildServerEvent(metaInput({ clickIds: { gclid: 'g' }, identity: {} }), '1234567890123456', NOW));
    const fewKeys = summaryOf(buildTikTokEvent(tiktokInput({ ...noBrowser, userAgent: 'Mozilla/5.0', ipAddress: '203.0.113.7' }), 'C4CNVDEMO0PIXEL0CODE'));
    const html = page([action('meta', gclidOnly), action('tiktok', fewKeys)]);
    expect(html).toContain('Meta browser id (fbp) · IP address · user agent');
    expect(html).toContain('No Meta click id: Meta matches this conversion on the keys above only');
    expect(html).toContain('IP address · user agent');
    expect(html).toContain('Few match keys: no click id, email, phone or TikTok browser id went, so TikTok is unlikely to credit an ad');
    // The event's match quality no longer says a click id was sent with it, which Meta's delivery contradicts.
    expect(html).not.toContain('A click id is sent with the conversion.');
    expect(html).toContain('Each platform gets only its own');
  });

  it('shows no match keys for a delivery held back by consent, nor for one with no request', () => {
    const denied = summaryOf(buildServerEvent(metaInput({ consent: { ad_user_data: 'denied', ad_personalization: null } }), '1234567890123456', NOW));
    const html = page([action('meta', denied, 'skipped'), { ...action('tiktok', {}), request: null } as EventActionRecord]);
    expect(html).not.toContain('Match keys');
  });
});
