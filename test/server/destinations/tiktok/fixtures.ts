/** A DeliveryInput and SendContext for the TikTok tests, built inline (no delivery code involved). */
import type { DeliveryInput, SendContext } from '../../../../src/server/destinations/destination';
import { FAKE_TIKTOK_PIXEL, FAKE_TIKTOK_TOKEN } from '../../../../src/demo/fakes/tiktok';
import { loadSettings } from '../../../../src/server/settings';

export const NOW = new Date('2026-11-21T10:00:00.000Z');

/** A signup reported by the webhook, paired with a browser snapshot that saw a TikTok ad click. */
export function tiktokInput(overrides: Partial<DeliveryInput> = {}): DeliveryInput {
  return {
    eventId: 'evt_01',
    eventActionId: 'eva_01',
    destination: 'tiktok',
    actionConfig: {},
    trigger: 'saas_signup',
    occurredAt: new Date('2026-11-21T09:30:00.000Z'),
    siteKey: 'site_1',
    siteTimezone: 'Europe/Berlin',
    customerEventId: 'user_42',
    clickIds: { ttclid: 'E.C.P.CqgBmvzXbC1kKPt8L0' },
    touchCapturedAt: new Date('2026-11-20T08:00:00.000Z'),
    cookies: { _ttp: '2F7h37YkS1j57AYSKTI7IHhJPYH' },
    pageUrl: 'https://app.example.com/signup',
    userAgent: 'Mozilla/5.0 (X11; Linux x86_64)',
    ipAddress: '203.0.113.7',
    consent: { ad_user_data: null, ad_personalization: null },
    identity: { email: ' Ada@Example.com ', phone: '+49 30 9876543', first_name: 'Ada', last_name: 'Lovelace' },
    ...overrides,
  };
}

/** A SendContext against a TikTok API base (the fake's url), with a fixed clock. */
export function tiktokContext(apiBase: string, options: { pixelCode?: string; token?: string; testEventCode?: string; timeoutMs?: number } = {}): SendContext {
  return {
    settings: loadSettings({ CNV_TIKTOK_API_BASE: apiBase }),
    connection: {
      id: 'dst_tiktok',
      settings: { pixel_code: options.pixelCode ?? FAKE_TIKTOK_PIXEL, ...(options.testEventCode ? { test_event_code: options.testEventCode } : {}) },
      credentials: { access_token: options.token ?? FAKE_TIKTOK_TOKEN },
    },
    accessToken: () => Promise.reject(new Error('TikTok uses the stored Events API token, not OAuth')),
    signal: new AbortController().signal,
    timeoutMs: options.timeoutMs ?? 2000,
    now: () => NOW,
  };
}
