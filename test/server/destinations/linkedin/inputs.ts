/** Delivery inputs and a send context for the LinkedIn tests. */
import type { DeliveryInput, SendContext } from '../../../../src/server/destinations/destination';
import { loadSettings } from '../../../../src/server/settings';

/** The fixed "now" of every LinkedIn test. */
export const NOW = new Date('2026-11-20T12:00:00.000Z');

/** A conversion an hour before NOW, with an email, names and a li_fat_id click. */
export function input(overrides: Partial<DeliveryInput> = {}): DeliveryInput {
  const eventId = overrides.eventId ?? 'evt_01';
  return {
    eventId,
    eventActionId: 'eva_01',
    destination: 'linkedin',
    actionConfig: { conversion_rule: '104012' },
    trigger: 'saas_signup',
    occurredAt: new Date(NOW.getTime() - 60 * 60 * 1000),
    siteKey: 'site_1',
    siteTimezone: 'UTC',
    // One report per event: its customer_event_id (LinkedIn's eventId) follows the event id unless a test sets it.
    customerEventId: `signup-${eventId}`,
    clickIds: { li_fat_id: 'df5gf5-gh6t7-ph4j7h-fgf6n1' },
    touchCapturedAt: new Date(NOW.getTime() - 2 * 60 * 60 * 1000),
    cookies: {},
    pageUrl: 'https://www.example.com/signup',
    userAgent: null,
    ipAddress: null,
    consent: { ad_user_data: null, ad_personalization: null },
    identity: { email: ' Jane.Doe@Example.com ', first_name: 'Jane', last_name: 'Doe' },
    value: null,
    currency: null,
    customerId: null,
    ...overrides,
  };
}

/** A send context against a fake LinkedIn at `url`, with the given access token (or a token function). */
export function context(url: string, token: string | (() => Promise<string>), extra: { timeoutMs?: number; env?: NodeJS.ProcessEnv } = {}): SendContext {
  return {
    settings: loadSettings({
      CNV_LINKEDIN_API_BASE: url,
      CNV_LINKEDIN_API_VERSION: '202607',
      CNV_LINKEDIN_OAUTH_AUTHORIZE_URL: `${url}/oauth/v2/authorization`,
      CNV_LINKEDIN_OAUTH_TOKEN_URL: `${url}/oauth/v2/accessToken`,
      CNV_LINKEDIN_OAUTH_CLIENT_ID: 'fake-linkedin-client',
      CNV_LINKEDIN_OAUTH_CLIENT_SECRET: 'fake-linkedin-secret',
      ...extra.env,
    }),
    connection: { id: 'dst_li', settings: { ad_account_id: '507404993', ad_account_urn: 'urn:li:sponsoredAccount:507404993' }, credentials: {} },
    accessToken: typeof token === 'string' ? async () => token : token,
    signal: new AbortController().signal,
    timeoutMs: extra.timeoutMs ?? 10_000,
    now: () => NOW,
  };
}
