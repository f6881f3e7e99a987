import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startFakeGoogle, validateIngestBody, type FakeGoogle } from '../../../src/demo/fakes/google';

let google: FakeGoogle;
const START = new Date('2026-11-21T10:00:00Z');

const HASH = 'a'.repeat(64);
const destination = { operatingAccount: { accountType: 'GOOGLE_ADS', accountId: '1234567890' }, productDestinationId: '555' };
const event = (overrides: Record<string, unknown> = {}) => ({
  transactionId: 't1',
  eventTimestamp: '2026-11-21T09:30:00.000Z',
  eventSource: 'WEB',
  adIdentifiers: { gclid: 'abc' },
  ...overrides,
});
const body = (overrides: Record<string, unknown> = {}) => ({ destinations: [destination], events: [event()], encoding: 'HEX', ...overrides });

async function ingest(payload: unknown, token?: string) {
  const response = await fetch(`${google.url}/v1/events:ingest`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${token ?? google.issueAccessToken().accessToken}` },
    body: JSON.stringify(payload),
  });
  return { status: response.status, json: (await response.json()) as any };
}

beforeAll(async () => {
  google = await startFakeGoogle({ now: START });
});
afterAll(() => google.close());
beforeEach(() => {
  google.server.reset();
  google.setNow(START);
});

describe('the fake Data Manager API', () => {
  it('accepts a well-formed request, answers a request id and keeps the event', async () => {
    const before = google.ingested().length;
    const answer = await ingest(body({ events: [event({ transactionId: 'keep-me', userData: { userIdentifiers: [{ emailAddress: HASH }] } })] }));
    expect(answer.status).toBe(200);
    expect(answer.json.requestId).toMatch(/[0-9a-f-]{36}/);
    expect(google.ingested().length).toBe(before + 1);
    expect(google.server.requests[0]!.problems).toEqual([]);
  });

  it('records nothing for a validate-only request and answers no result', async () => {
    const before = google.ingested().length;
    const answer = await ingest(body({ validateOnly: true, events: [event({ transactionId: 'validate' })] }));
    expect(answer).toEqual({ status: 200, json: {} });
    expect(google.ingested().length).toBe(before);
  });

  it('refuses the whole request and names the bad event, as fail-fast Google does', async () => {
    const answer = await ingest(body({ events: [event(), event({ eventTimestamp: '2026-11-21 09:30:00' })] }));
    expect(answer.status).toBe(400);
    expect(answer.json.error.status).toBe('INVALID_ARGUMENT');
    const badRequest = answer.json.error.details.find((d: any) => d['@type'].endsWith('BadRequest'));
    expect(badRequest.fieldViolations[0].field).toBe('events[1].eventTimestamp');
  });

  it.each([
    ['an unknown field', body({ events: [event({ conversionDateTime: 'x' })] }), 'events[0].conversionDateTime'],
    ['two ad identifiers', body({ events: [event({ adIdentifiers: { gclid: 'a', wbraid: 'b' } })] }), 'events[0].adIdentifiers'],
    ['no identifier at all', body({ events: [event({ adIdentifiers: undefined })] }), 'events[0]'],
    ['a hash that is not hex SHA-256', body({ events: [event({ userData: { userIdentifiers: [{ emailAddress: 'alex@example.com' }] } })] }), 'events[0].userData.userIdentifiers[0].emailAddress'],
    ['an incomplete address', body({ events: [event({ userData: { userIdentifiers: [{ address: { givenName: HASH, familyName: HASH } }] } })] }), 'events[0].userData.userIdentifiers[0].address.regionCode'],
    ['a destination without account type', body({ destinations: [{ operatingAccount: { accountId: '1234567890' }, productDestinationId: '555' }] }), 'destinations[0].operatingAccount.accountType'],
  ])('refuses %s', (_name, payload, field) => {
    const violations = validateIngestBody(JSON.parse(JSON.stringify(payload)));
    expect(violations.map((v) => v.field)).toContain(field);
  });

  it('refuses, when it knows the accounts’ conversion actions, a conversion action the account does not have', async () => {
    const strict = await startFakeGoogle({ now: START, conversionActions: { '1234567890': ['555', '556'] } });
    try {
      const send = async (productDestinationId: string, accountId = '1234567890') => {
        const response = await fetch(`${strict.url}/v1/events:ingest`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', authorization: `Bearer ${strict.issueAccessToken().accessToken}` },
          body: JSON.stringify(body({ destinations: [{ ...destination, operatingAccount: { accountType: 'GOOGLE_ADS', accountId }, productDestinationId }] })),
        });
        return { status: response.status, json: (await response.json()) as any };
      };
      expect((await send('556')).status).toBe(200);
      for (const [id, account] of [['111111111', '1234567890'], ['555', '9999999999']] as const) {
        const refused = await send(id, account);
        expect(refused.status).toBe(400);
        const info = refused.json.error.details.find((d: any) => d['@type'].endsWith('ErrorInfo'));
        expect(info.reason).toBe('INVALID_CONVERSION_ACTION_ID');
        const badRequest = refused.json.error.details.find((d: any) => d['@type'].endsWith('BadRequest'));
        expect(badRequest.fieldViolations[0].field).toBe('destinations[0].productDestinationId');
      }
      expect(strict.ingested()).toHaveLength(1);
    } finally {
      await strict.close();
    }
  });

  it('refuses more than 2,000 events in one request', () => {
    const violations = validateIngestBody(body({ events: Array.from({ length: 2001 }, () => event()) }));
    expect(violations).toMatchObject([{ field: 'events', reason: 'TOO_MANY_EVENTS' }]);
  });

  it('refuses a token it did not issue and a token that has expired', async () => {
    expect((await ingest(body(), 'ya29.stolen')).status).toBe(401);
    const { accessToken } = google.issueAccessToken();
    google.setNow(new Date(START.getTime() + 3600_000));
    const answer = await ingest(body(), accessToken);
    expect(answer.status).toBe(401);
    expect(answer.json.error.status).toBe('UNAUTHENTICATED');
  });

  it('answers planned faults: 500, 429 with Retry-After, and an error reason for an event', async () => {
    google.server.respondWith({ kind: 'serverError' }, { kind: 'rateLimited', retryAfterSeconds: 12 }, { kind: 'eventError', index: 0, reason: 'NO_IDENTIFIERS_PROVIDED' });
    expect((await ingest(body())).status).toBe(500);
    const limited = await fetch(`${google.url}/v1/events:ingest`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${google.issueAccessToken().accessToken}` },
      body: JSON.stringify(body()),
    });
    expect([limited.status, limited.headers.get('retry-after')]).toEqual([429, '12']);
    const named = await ingest(body());
    expect(named.json.error.details[0].reason).toBe('NO_IDENTIFIERS_PROVIDED');
  });

  it('reports the status of an accepted request', async () => {
    const { accessToken } = google.issueAccessToken();
    const { json } = await ingest(body({ events: [event({ transactionId: 'status-1' })] }), accessToken);
    const response = await fetch(`${google.url}/v1/requestStatus:retrieve?requestId=${json.requestId}`, { headers: { authorization: `Bearer ${accessToken}` } });
    const status = (await response.json()) as any;
    expect(status.requestStatusPerDestination[0]).toMatchObject({ requestStatus: 'SUCCESS', eventsIngestionStatus: { recordCount: '1' } });
  });
});

describe('the fake Google OAuth server', () => {
  it('refuses an authorize request without a PKCE challenge', async () => {
    const url = new URL(google.urls.authorize);
    for (const [k, v] of Object.entries({ client_id: google.client.id, response_type: 'code', scope: 'https://www.googleapis.com/auth/datamanager', redirect_uri: 'http://x/cb' })) url.searchParams.set(k, v);
    const response = await fetch(url, { redirect: 'manual' });
    expect(response.status).toBe(400);
    expect(google.server.requests[0]!.problems.join()).toMatch(/code_challenge/);
  });
});
