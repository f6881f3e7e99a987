/**
 * The shared fixture harness of the platform tests: one DeliveryInput (a signup reported by the webhook, paired with a
 * browser snapshot that saw the platform's ad click) and one SendContext of a connection whose token is stored, with a
 * fixed clock. Each platform's fixtures.ts holds only what differs (its click id, cookie, identity, settings).
 */
import type { DeliveryInput, SendContext } from '../../../src/server/destinations/destination';
import { loadSettings } from '../../../src/server/settings';

export const NOW = new Date('2026-11-21T10:00:00.000Z');

/** A signup of 09:30 on the fixed day, from a landing the day before, with everything a browser would give. */
export function deliveryInput(platform: Pick<DeliveryInput, 'destination' | 'clickIds' | 'cookies' | 'identity'>, overrides: Partial<DeliveryInput> = {}): DeliveryInput {
  return {
    eventId: 'evt_01',
    eventActionId: 'eva_01',
    actionConfig: {},
    trigger: 'saas_signup',
    occurredAt: new Date('2026-11-21T09:30:00.000Z'),
    siteKey: 'site_1',
    siteTimezone: 'Europe/Berlin',
    customerEventId: 'user_42',
    touchCapturedAt: new Date('2026-11-20T08:00:00.000Z'),
    pageUrl: 'https://app.example.com/signup',
    userAgent: 'Mozilla/5.0 (X11; Linux x86_64)',
    ipAddress: '203.0.113.7',
    consent: { ad_user_data: null, ad_personalization: null },
    value: null,
    currency: null,
    customerId: null,
    ...platform,
    ...overrides,
  };
}

/** The input maker of one platform's tests: `deliveryInput` with the platform's click, cookie and identity. */
export function platformInput(platform: Pick<DeliveryInput, 'destination' | 'clickIds' | 'cookies' | 'identity'>): (overrides?: Partial<DeliveryInput>) => DeliveryInput {
  return (overrides = {}) => deliveryInput(platform, overrides);
}

/**
 * A SendContext of a connection with a stored token (`credentials.access_token`), its settings, the platform's
 * settings from `env` (its API base pointed at a fake), and the fixed clock (or `now`). `accessToken()` refuses: these
 * platforms send the stored token, not an OAuth one.
 */
export function storedTokenContext(
  connection: { id: string; settings: Record<string, unknown>; token: string },
  env: Record<string, string>,
  options: { now?: Date; timeoutMs?: number } = {},
): SendContext {
  return {
    settings: loadSettings(env),
    connection: { id: connection.id, settings: connection.settings, credentials: { access_token: connection.token } },
    accessToken: () => Promise.reject(new Error(`${connection.id} sends its stored token, not an OAuth one`)),
    signal: new AbortController().signal,
    timeoutMs: options.timeoutMs ?? 10_000,
    now: () => options.now ?? NOW,
  };
}
