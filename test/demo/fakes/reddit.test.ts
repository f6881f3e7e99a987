import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { FAKE_REDDIT_PIXEL, FAKE_REDDIT_TOKEN, startFakeReddit, type FakeReddit } from '../../../src/demo/fakes/reddit';
import { hashIdentityForReddit } from '../../../src/server/destinations/reddit/identity';

const NOW = new Date('2026-11-21T10:00:00.000Z');

let fake: FakeReddit;
beforeAll(async () => {
  fake = await startFakeReddit({ now: () => NOW });
});
afterAll(() => fake.close());
beforeEach(() => fake.reset());

async function post(body: unknown, options: { token?: string; pixel?: string; agent?: string } = {}) {
  const res = await fetch(`${fake.url}/api/v3/pixels/${options.pixel ?? FAKE_REDDIT_PIXEL}/conversion_events`, {
    method: 'POST',
    headers: { authorization: `Bearer ${options.token ?? FAKE_REDDIT_TOKEN}`, 'content-type': 'application/json', 'user-agent': options.agent ?? 'cnv-test/1.0' },
    body: JSON.stringify(body),
  });
  return { status: res.status, body: (await res.json()) as any };
}
const event = (overrides: Record<string, unknown> = {}) => ({
  event_at: NOW.getTime(), action_source: 'WEBSITE', type: { tracking_type: 'SIGN_UP' }, click_id: '3184742045291813272', metadata: { conversion_id: 'c1' }, ...overrides,
});

describe('the fake Reddit Conversions API v3', () => {
  it('matches a plain email as Reddit hashes it, the same as cnv’s hash of it (Reddit’s $ example and an underscore)', async () => {
    const plain = ['Al.ice$+Apple@Example.Com', 'John_Doe-Jr@Example.com'];
    const events = plain.flatMap((email, i) => [
      event({ user: { email }, metadata: { conversion_id: `plain${i}` } }),
      event({ user: { email: hashIdentityForReddit({ email }).email }, metadata: { conversion_id: `hashed${i}` } }),
    ]);
    expect((await post({ data: { events } })).status).toBe(200);
    const hashes = fake.counted().map((c) => c.emailHash);
    expect(hashes[0]).toBe('ff8d9819fc0e12bf0d24892e45987e249a28dce836a85cad60e28eaaa8c6d976');
    expect(hashes[1]).toBe(hashes[0]);
    expect(hashes[3]).toBe(hashes[2]);
  });

  it('processes a well-formed request as Reddit answers it', async () => {
    const res = await post({ data: { events: [event({ metadata: { conversion_id: 'c1', value: 12.5, currency: 'USD' } })] } });
    expect(res).toEqual({ status: 200, body: { data: { message: 'Successfully processed 1 conversion events.' } } });
    expect(fake.requests[0]!.problems).toEqual([]);
  });

  it('refuses a wrong token (401), another pixel (403) and a default user agent (429)', async () => {
    expect((await post({ data: { events: [event()] } }, { token: 'nope' })).status).toBe(401);
    expect((await post({ data: { events: [event()] } }, { pixel: 'a2_other' })).body.error.message).toContain('not authorized');
    expect((await post({ data: { events: [event()] } }, { agent: 'node' })).body.error.message).toContain('user agent');
  });

  it('refuses the whole request for one invalid event: seconds, no action_source, a v2 type, value on a PAGE_VISIT, no match key', async () => {
    for (const bad of [
      event({ event_at: Math.floor(NOW.getTime() / 1000) }),
      event({ action_source: undefined }),
      event({ type: { tracking_type: 'SignUp' } }),
      event({ type: { tracking_type: 'CUSTOM', custom_event_name: 'x'.repeat(65) } }),
      event({ type: { tracking_type: 'PAGE_VISIT' }, metadata: { conversion_id: 'c', value: 1, currency: 'USD' } }),
      event({ click_id: undefined }),
      event({ event_at: NOW.getTime() - 8 * 86_400_000 }),
    ]) {
      const res = await post({ data: { events: [event(), bad] } });
      expect(res).toEqual({ status: 400, body: { error: { code: 400, message: 'There were 1 invalid conversion events. None were processed.' } } });
    }
    expect((await post({ events: [event()] })).status).toBe(400); // v2's body, without the data wrapper
    expect(fake.counted()).toEqual([]);
  });

  it('deduplicates on conversion_id and the event type, and plays Retry-After', async () => {
    await post({ data: { events: [event()] } });
    await post({ data: { events: [event()] } });
    expect(fake.counted()).toHaveLength(1);
    expect(fake.duplicates()).toBe(1);
    fake.respondWith({ kind: 'rate_limit', retryAfterSeconds: 7 });
    const res = await fetch(`${fake.url}/api/v3/pixels/${FAKE_REDDIT_PIXEL}/conversion_events`, {
      method: 'POST', headers: { authorization: `Bearer ${FAKE_REDDIT_TOKEN}`, 'content-type': 'application/json', 'user-agent': 'cnv' }, body: '{}',
    });
    expect([res.status, res.headers.get('retry-after')]).toEqual([429, '7']);
  });
});
