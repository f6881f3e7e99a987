/** Delivery inputs and a SendContext for the Data Manager tests. */
import type { DeliveryInput, SendContext } from '../../../../src/server/destinations/destination';
import { loadSettings } from '../../../../src/server/settings';

/** A delivery input for conversion action 555 with a gclid and an email; override what a test needs. */
export function input(overrides: Partial<DeliveryInput> = {}): DeliveryInput {
  return {
    eventId: 'evt_1',
    eventActionId: 'eva_1',
    destination: 'google-ads',
    actionConfig: { conversion: { id: '555' } },
    trigger: 'saas_signup',
    occurredAt: new Date('2026-11-21T09:30:00.000Z'),
    siteKey: 'sk_test',
    siteTimezone: 'Europe/Paris',
    customerEventId: 'signup-1',
    clickIds: { gclid: 'Cj0KCQ-test-gclid' },
    touchCapturedAt: new Date('2026-11-20T09:00:00.000Z'),
    cookies: {},
    pageUrl: 'https://www.example.com/signup',
    userAgent: null,
    ipAddress: null,
    consent: { ad_user_data: 'granted', ad_personalization: null },
    identity: { email: 'alexz@example.com' },
    value: null,
    currency: null,
    customerId: null,
    ...overrides,
  };
}

/** A SendContext against an API base, with a fixed clock and a given token source. */
export function sendContext(apiBase: string, accessToken: () => Promise<string>, connectionSettings: Record<string, unknown> = { customer_id: '1234567890' }): SendContext {
  return {
    settings: loadSettings({ CNV_GOOGLE_DATA_MANAGER_API_BASE: apiBase }),
    connection: { id: 'dst_1', settings: connectionSettings, credentials: {} },
    accessToken,
    signal: new AbortController().signal,
    timeoutMs: 10_000,
    now: () => new Date('2026-11-21T10:00:00.000Z'),
  };
}
