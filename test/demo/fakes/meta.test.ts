import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { FAKE_META_PIXEL_ID, FAKE_META_TOKEN, startFakeMeta, type MetaPlan } from '../../../src/demo/fakes/meta';
import type { FakeServer } from '../../../src/demo/fakes/fake-server';

const NOW = new Date('2026-11-21T10:00:00Z');
const NOW_S = Math.floor(NOW.getTime() / 1000);
const HASH = 'a'.repeat(64);

let fake: FakeServer<MetaPlan>;
beforeAll(async () => {
  fake = await startFakeMeta({ now: () => NOW });
});
afterAll(() => fake.close());
beforeEach(() => fake.reset());

function event(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    event_name: 'Lead',
    event_time: NOW_S - 60,
    event_id: 'sub_1',
    action_source: 'website',
    event_source_url: 'https://www.example.com/contact',
    user_data: { em: [HASH], client_user_agent: 'Mozilla/5.0', client_ip_address: '2001:db8::1', fbp: 'fb.1.1596403881668.1116446470' },
    ...overrides,
  };
}

async function post(body: unknown, { path = `/v24.0/${FAKE_META_PIXEL_ID}/events`, query = '' } = {}) {
  const response = await fetch(`${fake.url}${path}${query}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  return { status: response.status, json: (await response.json()) as any, headers: response.headers };
}

describe('the fake Meta events endpoint', () => {
  it('answers like Meta for a valid request, with the token in the body', async () => {
    const { status, json } = await post({ data: [event(), event({ event_id: 'sub_2' })], access_token: FAKE_META_TOKEN });
    expect(status).toBe(200);
    expect(json).toEqual({ events_received: 2, messages: [], fbtrace_id: expect.any(String) });
    expect(fake.requests[0]?.problems).toEqual([]);
  });

  it('accepts the token as a query parameter too, as Meta documents', async () => {
    const { status } = await post({ data: [event()] }, { query: `?access_token=${FAKE_META_TOKEN}` });
    expect(status).toBe(200);
  });

  it('refuses a wrong token with Graph error 190', async () => {
    const { status, json } = await post({ data: [event()], access_token: 'nope' });
    expect(status).toBe(400);
    expect(json.error).toMatchObject({ code: 190, type: 'OAuthException', fbtrace_id: expect.any(String) });
  });

  it('refuses an unknown dataset with 100/33 and another version with 2635', async () => {
    expect((await post({ data: [event()], access_token: FAKE_META_TOKEN }, { path: '/v24.0/42/events' })).json.error).toMatchObject({
      code: 100,
      error_subcode: 33,
    });
    expect((await post({ data: [event()], access_token: FAKE_META_TOKEN }, { path: `/v19.0/${FAKE_META_PIXEL_ID}/events` })).json.error.code).toBe(2635);
  });

  it('refuses the whole request for one event older than 7 days by its clock', async () => {
    const { status, json } = await post({ data: [event(), event({ event_time: NOW_S - 7 * 86400 - 1 })], access_token: FAKE_META_TOKEN });
    expect(status).toBe(400);
    expect(json.error).toMatchObject({ code: 100, is_transient: false });
    expect(fake.requests[0]?.problems).toEqual(['data[1].event_time is more than 7 days in the past']);
  });

  it('refuses unhashed contact fields, milliseconds, a bad fbc, a hashed IP and unknown keys', async () => {
    await post({
      data: [
        event({
          event_time: NOW.getTime(),
          colour: 'red',
          user_data: { em: ['ada@example.com'], fbc: 'IwAR2F4', client_ip_address: HASH, client_user_agent: 'UA', favourite: 1 },
        }),
      ],
      access_token: FAKE_META_TOKEN,
    });
    expect(fake.requests[0]?.problems).toEqual([
      'data[0].colour is not a server event parameter',
      'data[0].event_time looks like milliseconds, not seconds',
      'data[0].user_data.em must be SHA-256 hashes (64 lower-case hex characters)',
      'data[0].user_data.favourite is not a customer information parameter',
      'data[0].user_data.fbc must look like fb.1.<creation time ms>.<value>',
      'data[0].user_data.client_ip_address must be an IPv4 or IPv6 address, unhashed',
    ]);
  });

  it('requires a user agent and a page for website events', async () => {
    await post({ data: [event({ event_source_url: undefined })], access_token: FAKE_META_TOKEN });
    expect(fake.requests[0]?.problems).toEqual(['data[0]: website events require client_user_agent and event_source_url']);
  });

  it('refuses more than 1,000 events', async () => {
    await post({ data: Array.from({ length: 1001 }, () => event()), access_token: FAKE_META_TOKEN });
    expect(fake.requests[0]?.problems).toEqual(['data must be an array of 1 to 1,000 server events']);
  });

  it('answers planned faults: 500, rate limit with a usage header, invalid token, hang', async () => {
    fake.respondWith('server_error', 'rate_limit', 'invalid_token');
    const body = { data: [event()], access_token: FAKE_META_TOKEN };
    const first = await post(body);
    expect(first.status).toBe(500);
    expect(first.json.error).toMatchObject({ code: 2, is_transient: true });
    const second = await post(body);
    expect(second.json.error.code).toBe(80004);
    expect(JSON.parse(second.headers.get('x-business-use-case-usage') ?? '{}')).toMatchObject({
      [FAKE_META_PIXEL_ID]: [{ estimated_time_to_regain_access: 3 }],
    });
    expect((await post(body)).json.error.code).toBe(190);

    fake.respondWith('hang');
    const abort = new AbortController();
    const hung = fetch(`${fake.url}/v24.0/${FAKE_META_PIXEL_ID}/events`, { method: 'POST', body: '{}', signal: abort.signal });
    await fake.waitForRequests(4);
    abort.abort();
    await expect(hung).rejects.toThrow();
    expect(fake.requests.at(-1)?.answeredStatus).toBeNull();
  });
});
