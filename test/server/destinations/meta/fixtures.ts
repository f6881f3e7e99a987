/** A DeliveryInput and SendContext for the Meta tests, built inline (no delivery code involved). */
import type { DeliveryInput, SendContext } from '../../../../src/server/destinations/destination';
import { loadSettings } from '../../../../src/server/settings';

export const NOW = new Date('2026-11-21T10:00:00.000Z');

/** A signup reported by the webhook, paired with a browser snapshot that saw a Meta ad click. */
export function metaInput(overrides: Partial<DeliveryInput> = {}): DeliveryInput {
  return {
    eventId: 'evt_01',
    eventActionId: 'eva_01',
    destination: 'meta',
    actionConfig: {},
    trigger: 'saas_signup',
    occurredAt: new Date('2026-11-21T09:30:00.000Z'),
    siteKey: 'site_1',
    siteTimezone: 'Europe/Berlin',
    customerEventId: 'user_42',
    clickIds: { fbclid: 'IwAR2F4-dbP0l7Mn' },
    touchCapturedAt: new Date('2026-11-20T08:00:00.000Z'),
    cookies: { _fbp: 'fb.1.1596403881668.1116446470' },
    pageUrl: 'https://app.example.com/signup',
    userAgent: 'Mozilla/5.0 (X11; Linux x86_64)',
    ipAddress: '203.0.113.7',
    consent: { ad_user_data: null, ad_personalization: null },
    identity: { email: 'Ada@Example.com', phone: '+49 30 9876543', first_name: 'Ada', last_name: 'Lovelace' },
    value: null,
    currency: null,
    customerId: null,
    ...overrides,
  };
}

/** A SendContext against a Graph API base (the fake's url), with a fixed clock. */
export function metaContext(
  graphApiBase: string,
  options: { pixelId?: string; token?: string; now?: Date; timeoutMs?: number; testEventCode?: string } = {},
): SendContext {
  const settings = loadSettings({ CNV_META_GRAPH_API_BASE: graphApiBase });
  return {
    settings,
    connection: {
      id: 'dst_meta',
      settings: { pixel_id: options.pixelId ?? '1234567890123456', ...(options.testEventCode ? { test_event_code: options.testEventCode } : {}) },
      credentials: { access_token: options.token ?? 'EAAfake0cnv0demo0token0000000000' },
    },
    accessToken: () => Promise.reject(new Error('Meta uses the stored token, not OAuth')),
    signal: new AbortController().signal,
    timeoutMs: options.timeoutMs ?? 2000,
    now: () => options.now ?? NOW,
  };
}
