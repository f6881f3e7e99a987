import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { FAKE_TIKTOK_PIXEL, FAKE_TIKTOK_TOKEN, startFakeTikTok, type FakeTikTok } from '../../../src/demo/fakes/tiktok';

const NOW = new Date('2026-11-21T10:00:00.000Z');
const NOW_S = NOW.getTime() / 1000;
const HASH = 'a'.repeat(64);

let fake: FakeTikTok;
beforeAll(async () => {
  fake = await startFakeTikTok({ now: () => NOW });
});
afterAll(() => fake.close());
beforeEach(() => fake.reset());

async function track(body: unknown, token = FAKE_TIKTOK_TOKEN) {
  const res = await fetch(`${fake.url}/open_api/v1.3/event/track/`, { method: 'POST', headers: { 'access-token': token, 'content-type': 'application/json' }, body: JSON.stringify(body) });
  return { status: res.status, body: (await res.json()) as { code: number; message: string; request_id: string } };
}
const event = (overrides: Record<string, unknown> = {}) => ({ event: 'CompleteRegistration', event_time: NOW_S, event_id: 'e1', user: { ttclid: 'E.C.P.x', email: HASH }, ...overrides });

describe('the fake TikTok Events API', () => {
  it('answers code 0 with a request id for a well-formed web event', async () => {
    const res = await track({ event_source: 'web', event_source_id: FAKE_TIKTOK_PIXEL, data: [event({ properties: { value: 9.5, currency: 'EUR' }, page: { url: 'https://x.example/' } })] });
    expect(res).toMatchObject({ status: 200, body: { code: 0, message: 'OK', request_id: expect.any(String) } });
    expect(fake.requests[0]!.problems).toEqual([]);
  });

  it('refuses what TikTok refuses: a wrong token, another pixel, milliseconds, an unhashed email, a value without currency', async () => {
    expect((await track({ event_source: 'web', event_source_id: FAKE_TIKTOK_PIXEL, data: [event()] }, 'wrong')).body.code).toBe(40105);
    expect((await track({ event_source: 'web', event_source_id: 'C4OTHER', data: [event()] })).body.code).toBe(40001);
    for (const bad of [
      event({ event_time: NOW.getTime() }),
      event({ user: { email: 'ada@example.com' } }),
      event({ user: { ip: 'not-an-ip' } }),
      event({ properties: { value: 10 } }),
      event({ page: { url: 'javascript:alert(1)' } }),
      event({ unknown_field: 1 }),
    ]) {
      expect((await track({ event_source: 'web', event_source_id: FAKE_TIKTOK_PIXEL, data: [event(), bad] })).body.code).toBe(40002);
    }
    expect((await track({ event_source: 'app', event_source_id: FAKE_TIKTOK_PIXEL, data: [event()] })).body.code).toBe(40002);
    expect((await track({ event_source: 'web', event_source_id: FAKE_TIKTOK_PIXEL, data: [] })).body.code).toBe(40002);
    expect(fake.counted()).toEqual([]);
  });

  it('plays the rate limit and keeps the first of two events with the same pixel, event and event_id', async () => {
    fake.respondWith('rate_limit');
    expect((await track({ event_source: 'web', event_source_id: FAKE_TIKTOK_PIXEL, data: [event()] })).body.code).toBe(40100);
    await track({ event_source: 'web', event_source_id: FAKE_TIKTOK_PIXEL, data: [event()] });
    await track({ event_source: 'web', event_source_id: FAKE_TIKTOK_PIXEL, data: [event()] });
    expect(fake.counted()).toHaveLength(1);
    expect(fake.duplicates()).toBe(1);
  });
});
