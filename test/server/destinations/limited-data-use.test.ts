/**
 * Limited Data Use, a connection's choice on the hosted page of Meta and TikTok: off unless chosen; chosen, every
 * conversion (and the connection test) carries the platform's own fields, which the strict fakes check as the
 * platforms document them.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { acceptedEvents, startFakeMeta, type MetaPlan } from '../../../src/demo/fakes/meta';
import { startFakeTikTok, type FakeTikTok } from '../../../src/demo/fakes/tiktok';
import type { FakeServer } from '../../../src/demo/fakes/fake-server';
import { metaPlatform } from '../../../src/server/destinations/meta';
import { tiktokPlatform } from '../../../src/server/destinations/tiktok';
import { redditPlatform } from '../../../src/server/destinations/reddit';
import { NOW, metaContext, metaInput } from './meta/fixtures';
import { tiktokContext, tiktokInput } from './tiktok/fixtures';

const META_FORM = { pixel_id: '1234567890123456', access_token: 'EAA'.padEnd(40, 'x') };
const TIKTOK_FORM = { pixel_code: 'C4CNVDEMO0PIXEL0CODE', access_token: 'a'.repeat(40) };
const LDU_FIELDS = { data_processing_options: ['LDU'], data_processing_options_country: 0, data_processing_options_state: 0 };

describe('the Limited Data Use choice on the connect form', () => {
  it('is offered by Meta and TikTok, off first; Reddit (which needs the visitor’s country) does not offer it', () => {
    for (const platform of [metaPlatform, tiktokPlatform]) {
      const field = platform.fields.find((f) => f.name === 'limited_data_use');
      expect(field?.choices?.map((c) => c.value)).toEqual(['off', 'on']);
      expect(field?.required).toBe(false);
    }
    expect(redditPlatform.fields.some((f) => f.name === 'limited_data_use')).toBe(false);
  });

  it('stores limited_data_use: true when chosen, nothing when off or not sent, and refuses any other value', () => {
    for (const [platform, form] of [[metaPlatform, META_FORM], [tiktokPlatform, TIKTOK_FORM]] as const) {
      const on = platform.parseConnectForm({ ...form, limited_data_use: 'on' }, { signedIn: false });
      expect(on.ok && on.settings.limited_data_use).toBe(true);
      for (const off of [{ ...form, limited_data_use: 'off' }, form]) {
        const parsed = platform.parseConnectForm(off, { signedIn: false });
        expect(parsed.ok && Object.hasOwn(parsed.settings, 'limited_data_use')).toBe(false);
      }
      const bad = platform.parseConnectForm({ ...form, limited_data_use: 'yes' }, { signedIn: false });
      expect(bad.ok === false && bad.errors).toEqual([{ param: 'limited_data_use', message: 'Choose Off or On for Limited Data Use.' }]);
    }
  });
});

describe('Meta with Limited Data Use', () => {
  let fake: FakeServer<MetaPlan>;
  beforeAll(async () => {
    fake = await startFakeMeta({ now: () => NOW });
  });
  afterAll(() => fake.close());
  beforeEach(() => fake.reset());

  it('sends every event with ["LDU"] and country and state 0 (Meta locates the person), and says so in the summary', async () => {
    const outcomes = await metaPlatform.sendBatch([metaInput({ eventId: 'evt_a' }), metaInput({ eventId: 'evt_b', customerEventId: 'b' })], metaContext(fake.url, { settings: { limited_data_use: true } }));
    expect(outcomes.map((o) => o.kind)).toEqual(['delivered', 'delivered']);
    expect(fake.requests[0]!.problems).toEqual([]);
    for (const event of acceptedEvents(fake)) expect(event).toMatchObject(LDU_FIELDS);
    expect(outcomes[0]).toMatchObject({ request: { limited_data_use: true } });
  });

  it('sends none of the fields when the connection did not choose it', async () => {
    const outcomes = await metaPlatform.sendBatch([metaInput()], metaContext(fake.url));
    expect(outcomes[0]?.kind).toBe('delivered');
    const [event] = acceptedEvents(fake);
    expect(Object.keys(event!).filter((k) => k.startsWith('data_processing'))).toEqual([]);
    expect(outcomes[0]?.kind === 'delivered' && outcomes[0].request.limited_data_use).toBeUndefined();
  });

  it('tests the connection with the same fields', async () => {
    const result = await metaPlatform.testConnection(metaContext(fake.url, { settings: { limited_data_use: true } }));
    expect(result.ok).toBe(true);
    expect(fake.requests[0]!.body.data[0]).toMatchObject(LDU_FIELDS);
  });

  it('the fake refuses what Meta documents no value for', async () => {
    const strict = await startFakeMeta({ now: () => NOW });
    try {
      const body = (event: Record<string, unknown>) => ({
        data: [{ event_name: 'Lead', event_time: Math.floor(NOW.getTime() / 1000), action_source: 'other', user_data: { em: ['a'.repeat(64)] }, ...event }],
        access_token: 'EAAfake0cnv0demo0token0000000000',
      });
      const post = (event: Record<string, unknown>) =>
        fetch(`${strict.url}/v24.0/1234567890123456/events`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body(event)) });
      expect((await post({ data_processing_options: ['CCPA'] })).status).toBe(400);
      expect((await post({ data_processing_options: ['LDU'], data_processing_options_country: 44, data_processing_options_state: 0 })).status).toBe(400);
      expect((await post({ data_processing_options: ['LDU'], data_processing_options_country: 1 })).status).toBe(400);
      expect((await post({ data_processing_options: ['LDU'], data_processing_options_country: 1, data_processing_options_state: 1000 })).status).toBe(200);
      expect((await post({ data_processing_options: [] })).status).toBe(200);
    } finally {
      await strict.close();
    }
  });
});

describe('TikTok with Limited Data Use', () => {
  let fake: FakeTikTok;
  beforeAll(async () => {
    fake = await startFakeTikTok({ now: () => NOW });
  });
  afterAll(() => fake.close());
  beforeEach(() => fake.reset());

  it('sends limited_data_use: true on every event when chosen, and nothing when not', async () => {
    const on = await tiktokPlatform.sendBatch([tiktokInput({ eventId: 'evt_a', customerEventId: 'a' })], tiktokContext(fake.url, { settings: { limited_data_use: true } }));
    expect(on[0]).toMatchObject({ kind: 'delivered', request: { limited_data_use: true } });
    expect(fake.requests[0]!.problems).toEqual([]);
    expect(fake.requests[0]!.body.data[0].limited_data_use).toBe(true);
    const off = await tiktokPlatform.sendBatch([tiktokInput({ eventId: 'evt_b', customerEventId: 'b' })], tiktokContext(fake.url));
    expect(off[0]?.kind).toBe('delivered');
    expect(Object.hasOwn(fake.requests[1]!.body.data[0], 'limited_data_use')).toBe(false);
  });

  it('tests the connection with the flag', async () => {
    const result = await tiktokPlatform.testConnection(tiktokContext(fake.url, { settings: { limited_data_use: true } }));
    expect(result.ok).toBe(true);
    expect(fake.requests[0]!.body.data[0].limited_data_use).toBe(true);
  });
});
