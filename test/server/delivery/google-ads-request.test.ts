import { describe, expect, it } from 'vitest';
import type { DeliveryInput } from '../../../src/server/destinations/destination';
import {
  conversionActionResourceName,
  deriveOrderId,
  planUploadRequests,
  prepareClickConversion,
  readGoogleAdsAccount,
  uploadBody,
  type GoogleAdsAccount,
  type PreparedConversion,
} from '../../../src/server/destinations/google-ads/legacy-request';
import { sha256Hex } from '../../../src/server/destinations/hashing';
import { validateUploadBody } from '../../../src/demo/fake-google-ads';
import { settingsFor } from './fixtures';

const settings = settingsFor('https://ads.example.test');

function input(overrides: Partial<DeliveryInput> = {}): DeliveryInput {
  return {
    eventId: 'evt_1',
    eventActionId: 'act_1',
    destination: 'google-ads',
    actionConfig: { conversion: { id: '987654321' } },
    trigger: 'saas_signup',
    occurredAt: new Date('2026-07-04T16:30:15.250Z'),
    siteKey: 'k3y7s1te0001',
    siteTimezone: 'America/New_York',
    customerEventId: 'user-42-signup',
    clickIds: { gclid: 'Cj0KCQgclid', gbraid: 'gbraid-1', wbraid: 'wbraid-1' },
    touchCapturedAt: null,
    cookies: {},
    pageUrl: null,
    userAgent: null,
    ipAddress: null,
    consent: { ad_user_data: null, ad_personalization: null },
    identity: { email: 'Jane.Doe@gmail.com', phone: '+1 800 555 0102', first_name: 'Jane', last_name: 'Doe' },
    value: null,
    currency: null,
    customerId: null,
    ...overrides,
  };
}

/** A connection as the send context carries it, and the access token `ctx.accessToken()` gave. */
interface Connected {
  settings?: Record<string, unknown>;
  credentials?: Record<string, string>;
  accessToken?: string;
}

/** Reads the account of a connection as sendLegacyBatch does: customer 123-456-7890 with access token token-1 by default. */
function readAccount(connected: Connected = {}, serviceSettings = settings) {
  const { settings: stored = { customer_id: '123-456-7890' }, credentials = {}, accessToken = 'token-1' } = connected;
  return readGoogleAdsAccount({ settings: serviceSettings, connection: { id: 'dst_1', settings: stored, credentials } }, accessToken);
}

function account(connected: Connected = {}, serviceSettings = settings): GoogleAdsAccount {
  const read = readAccount(connected, serviceSettings);
  if (!read.ok) throw new Error(`no account: ${read.error.message}`);
  return read.value;
}

function prepare(overrides: Partial<DeliveryInput> = {}, connected: Connected = {}): PreparedConversion {
  const built = prepareClickConversion(input(overrides), account(connected), settings);
  if (!built.ok) throw new Error(`not built: ${built.error.message}`);
  return built.prepared;
}

/** The upload request of one conversion, as the adapter sends it. */
function build(overrides: Partial<DeliveryInput> = {}, connected: Connected = {}) {
  const prepared = prepare(overrides, connected);
  return { ...prepared, body: uploadBody([prepared.conversion]) };
}

describe('the Google Ads click conversion upload', () => {
  it('posts to {base}/{version}/customers/{customer_id}:uploadClickConversions with the OAuth and developer token headers', () => {
    const upload = build({}, { settings: { customer_id: '123-456-7890', login_customer_id: '111-222-3333' } });
    expect(upload.url).toBe(`https://ads.example.test/${settings.googleAdsApiVersion}/customers/1234567890:uploadClickConversions`);
    expect(upload.headers).toEqual({
      'content-type': 'application/json',
      authorization: 'Bearer token-1',
      'developer-token': 'test-developer-token',
      'login-customer-id': '1112223333',
    });
  });

  it('builds one ClickConversion with partialFailure true, in the REST JSON field names, that a Google-like validator accepts', () => {
    const { body } = build();
    expect(body.partialFailure).toBe(true);
    expect(body.conversions).toEqual([
      {
        conversionAction: 'customers/1234567890/conversionActions/987654321',
        conversionDateTime: '2026-07-04 12:30:15-04:00',
        orderId: deriveOrderId('k3y7s1te0001', 'user-42-signup', 'evt_1'),
        gclid: 'Cj0KCQgclid',
        userIdentifiers: [
          { hashedEmail: sha256Hex('janedoe@gmail.com') },
          { hashedPhoneNumber: sha256Hex('+18005550102') },
        ],
      },
    ]);
    expect(validateUploadBody(body, '1234567890')).toEqual([]);
  });

  it('sends no name (Google matches names only within a whole address) and notes why, without the name itself', () => {
    const { body, summary } = build();
    expect(JSON.stringify(body)).not.toContain('addressInfo');
    expect(summary.skipped).toEqual([expect.stringMatching(/^name skipped: .*postal code/)]);
    expect(JSON.stringify(summary)).not.toMatch(/jane|doe/i);
  });

  it('sends exactly one click id: gclid, else gbraid, else wbraid', () => {
    expect(build().body.conversions[0]).toMatchObject({ gclid: 'Cj0KCQgclid' });
    const gbraid = build({ clickIds: { gbraid: 'gbraid-1', wbraid: 'wbraid-1' } }).body.conversions[0]!;
    expect(gbraid.gbraid).toBe('gbraid-1');
    expect(gbraid).not.toHaveProperty('gclid');
    expect(gbraid).not.toHaveProperty('wbraid');
    const wbraid = build({ clickIds: { wbraid: 'wbraid-1', fbclid: 'not-google' } }).body.conversions[0]!;
    expect(Object.keys(wbraid).filter((k) => ['gclid', 'gbraid', 'wbraid'].includes(k))).toEqual(['wbraid']);
  });

  it('uploads with user identifiers only when there is no click id (enhanced conversions for leads)', () => {
    const { body, summary } = build({ clickIds: {} });
    expect(body.conversions[0]).not.toHaveProperty('gclid');
    expect(summary.click_id).toBeNull();
    expect(summary.user_identifiers).toEqual(['hashed_email', 'hashed_phone_number']);
    expect(validateUploadBody(body, '1234567890')).toEqual([]);
  });

  it('derives a stable 32-hex-character order id from site key and customer_event_id that reveals neither', () => {
    const orderId = deriveOrderId('k3y7s1te0001', 'jane@example.com', 'evt_1');
    expect(orderId).toMatch(/^[0-9a-f]{32}$/);
    expect(orderId).toBe(deriveOrderId('k3y7s1te0001', 'jane@example.com', 'evt_other'));
    expect(orderId).not.toBe(deriveOrderId('othersitekey', 'jane@example.com', 'evt_1'));
    expect(deriveOrderId('k3y7s1te0001', null, 'evt_1')).not.toBe(deriveOrderId('k3y7s1te0001', null, 'evt_2'));
  });

  it('uses a conversion action resource name as given, and refuses an id that is neither', () => {
    expect(conversionActionResourceName('1234567890', 'customers/1234567890/conversionActions/55')).toBe('customers/1234567890/conversionActions/55');
    expect(conversionActionResourceName('1234567890', ' 55 ')).toBe('customers/1234567890/conversionActions/55');
    expect(conversionActionResourceName('1234567890', 'signup')).toBeNull();
    const built = prepareClickConversion(input({ actionConfig: {} }), account(), settings);
    expect(built).toMatchObject({ ok: false, error: { code: 'invalid_conversion_action' } });
  });

  it('keeps PII out of the stored summary: hashes are sent, but the summary names only identifier kinds', () => {
    const { summary } = build({ identity: { email: 'jane@example.com', phone: '0800 555 0102' } });
    const text = JSON.stringify(summary);
    expect(text).not.toContain('jane');
    expect(text).not.toContain(sha256Hex('jane@example.com'));
    expect(text).not.toContain('token-1');
    expect(summary.user_identifiers).toEqual(['hashed_email']);
    expect(summary.skipped).toEqual([expect.stringMatching(/^phone skipped: /)]);
  });

  it('sends no request and fails clearly when there is neither a click id nor a usable identifier', () => {
    const built = prepareClickConversion(input({ clickIds: {}, identity: { phone: '555 0102' } }), account(), settings);
    expect(built.ok).toBe(false);
    if (built.ok) return;
    expect(built.error.code).toBe('no_match_keys');
    expect(built.error.message).toMatch(/no click id .* phone skipped/);
  });

  it.each([
    [{ settings: { customer_id: 'abc' }, accessToken: 't' }, 'destination_misconfigured'],
    [{ settings: { customer_id: '1234567890', login_customer_id: 'x' }, accessToken: 't' }, 'destination_misconfigured'],
    [{ settings: { customer_id: '1234567890' }, accessToken: '' }, 'destination_credentials_missing'],
  ] as Array<[Connected, string]>)('refuses the connection %j: %s', (connected, code) => {
    expect(readAccount(connected)).toMatchObject({ ok: false, error: { code } });
  });

  it('refuses to build with an unknown site timezone', () => {
    expect(prepareClickConversion(input({ siteTimezone: 'Nowhere/Special' }), account(), settings)).toMatchObject({ ok: false, error: { code: 'invalid_site_timezone' } });
  });

  it('needs no developer token (Google sunset them), and sends the connection\'s own, else the service\'s, when there is one', () => {
    const none = settingsFor('https://ads.example.test', { CNV_GOOGLE_ADS_DEVELOPER_TOKEN: '' });
    const withoutToken = prepareClickConversion(input(), account({}, none), none);
    expect(withoutToken.ok).toBe(true);
    expect(withoutToken.ok && withoutToken.prepared.headers).not.toHaveProperty('developer-token');
    expect(withoutToken.ok && withoutToken.prepared.url).toBe('https://ads.example.test/v26/customers/1234567890:uploadClickConversions');
    const withToken: Connected = { settings: { customer_id: '1234567890' }, credentials: { developer_token: 'dst-dev' }, accessToken: 't' };
    const fromDestination = prepareClickConversion(input(), account(withToken, none), none);
    expect(fromDestination.ok && fromDestination.prepared.headers['developer-token']).toBe('dst-dev');
    const both = prepareClickConversion(input(), account(withToken, settings), settings);
    expect(both.ok && both.prepared.headers['developer-token']).toBe('dst-dev');
    const serviceOnly = prepareClickConversion(input(), account({}, settings), settings);
    expect(serviceOnly.ok && serviceOnly.prepared.headers['developer-token']).toBe('test-developer-token');
  });

  it('puts conversions of one customer and credentials in one request, and another customer in its own', () => {
    const a1 = { prepared: prepare({ customerEventId: 'a1' }) };
    const a2 = { prepared: prepare({ customerEventId: 'a2' }) };
    const b1 = { prepared: prepare({ customerEventId: 'b1' }, { settings: { customer_id: '2223334444' }, accessToken: 'token-2' }) };
    expect(planUploadRequests([a1, b1, a2])).toEqual([[a1, a2], [b1]]);
  });

  it('never puts two conversions with the same order id for the same action in one request', () => {
    const first = { prepared: prepare({ eventId: 'evt_flow1' }) };
    const repeat = { prepared: prepare({ eventId: 'evt_flow2' }) }; // the same report fanned out to a second flow
    const otherAction = { prepared: prepare({ eventId: 'evt_flow3', actionConfig: { conversion: { id: '111' } } }) };
    expect(planUploadRequests([first, repeat, otherAction])).toEqual([[first, otherAction], [repeat]]);
  });
});
