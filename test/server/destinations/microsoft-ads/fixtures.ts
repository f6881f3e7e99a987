/** Inputs and contexts for the Microsoft Advertising destination tests. */
import { loadSettings } from '../../../../src/server/settings';
import type { DeliveryInput, SendContext } from '../../../../src/server/destinations/destination';

export const NOW = new Date('2026-11-21T10:00:00.000Z');
export const CLICK_ID = '2f1a6b1c9e3d4c5ba0f1e2d3c4b5a697';

/** A signup with a Microsoft click and an email, happening an hour before NOW. */
export function input(overrides: Partial<DeliveryInput> = {}): DeliveryInput {
  return {
    eventId: 'evt_1',
    eventActionId: 'eva_1',
    destination: 'microsoft-ads',
    actionConfig: { conversion_name: 'Signup' },
    trigger: 'saas_signup',
    occurredAt: new Date('2026-11-21T09:00:00.000Z'),
    siteKey: 'site_key_1',
    siteTimezone: 'Europe/Berlin',
    customerEventId: 'cust_1',
    clickIds: { msclkid: CLICK_ID },
    touchCapturedAt: new Date('2026-11-20T08:00:00.000Z'),
    cookies: {},
    pageUrl: 'https://www.example.com/signup',
    userAgent: 'Mozilla/5.0',
    ipAddress: '203.0.113.7',
    consent: { ad_user_data: null, ad_personalization: null },
    identity: { email: 'John@Contoso.com', phone: null },
    value: null,
    currency: null,
    customerId: null,
    ...overrides,
  };
}

/** A SendContext for a connection to `env`'s Microsoft Advertising, whose access token comes from `token()`. */
export function context(env: Record<string, string>, token: () => Promise<string>, overrides: Partial<SendContext> = {}): SendContext {
  return {
    settings: loadSettings({ ...env, CNV_DATA_DIR: '/tmp/cnv-msads-test-unused' }),
    connection: { id: 'dst_ms', settings: { customer_id: '123456789', account_id: '987654321' }, credentials: {} },
    accessToken: token,
    signal: new AbortController().signal,
    timeoutMs: 10_000,
    now: () => NOW,
    ...overrides,
  };
}
