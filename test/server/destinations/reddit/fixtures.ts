/** A DeliveryInput and SendContext for the Reddit tests, built inline (no delivery code involved). */
import type { DeliveryInput, SendContext } from '../../../../src/server/destinations/destination';
import { FAKE_REDDIT_PIXEL, FAKE_REDDIT_TOKEN } from '../../../../src/demo/fakes/reddit';
import { loadSettings } from '../../../../src/server/settings';

export const NOW = new Date('2026-11-21T10:00:00.000Z');

/** A signup reported by the webhook, paired with a browser snapshot that saw a Reddit ad click. */
export function redditInput(overrides: Partial<DeliveryInput> = {}): DeliveryInput {
  return {
    eventId: 'evt_01',
    eventActionId: 'eva_01',
    destination: 'reddit',
    actionConfig: {},
    trigger: 'saas_signup',
    occurredAt: new Date('2026-11-21T09:30:00.000Z'),
    siteKey: 'site_1',
    siteTimezone: 'Europe/Berlin',
    customerEventId: 'user_42',
    clickIds: { rdt_cid: '3184742045291813272' },
    touchCapturedAt: new Date('2026-11-20T08:00:00.000Z'),
    cookies: { _rdt_uuid: '1677712978045.b8f7eb7d-b357-437b-8bd3-e1c8166c7132' },
    pageUrl: 'https://app.example.com/signup',
    userAgent: 'Mozilla/5.0 (X11; Linux x86_64)',
    ipAddress: '203.0.113.7',
    consent: { ad_user_data: null, ad_personalization: null },
    identity: { email: 'Al.ice$+Apple@Example.Com', phone: '+1 (555) 444-1234', first_name: 'Alice', last_name: 'Liddell' },
    ...overrides,
  };
}

/** A SendContext against a Reddit API base (the fake's url), with a fixed clock. */
export function redditContext(apiBase: string, options: { pixelId?: string; token?: string; testId?: string; timeoutMs?: number } = {}): SendContext {
  return {
    settings: loadSettings({ CNV_REDDIT_API_BASE: apiBase }),
    connection: {
      id: 'dst_reddit',
      settings: { pixel_id: options.pixelId ?? FAKE_REDDIT_PIXEL, ...(options.testId ? { test_id: options.testId } : {}) },
      credentials: { access_token: options.token ?? FAKE_REDDIT_TOKEN },
    },
    accessToken: () => Promise.reject(new Error('Reddit uses the stored conversion access token, not OAuth')),
    signal: new AbortController().signal,
    timeoutMs: options.timeoutMs ?? 2000,
    now: () => NOW,
  };
}
