/**
 * Personal data in what delivery really recorded, with the six platforms' strict fakes: a signup with every identity
 * field and every platform's click id is delivered to all six, whose request summaries then hold hashed identifiers
 * (each platform its own fields). The identity purge past the window leaves no SHA-256 hash in any of them and keeps
 * the rest; an erasure leaves no hash and no click id at all.
 */
import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startRevenueService, type RevenueService } from './support';
import { DEMO } from '../../../src/demo/setup';
import { saasSignupPath } from '../../../src/protocol/webhook';
import { snapshotsPath } from '../../../src/protocol/collector';
import { clearExpiredIdentity } from '../../../src/server/privacy';
import { newToken, snapshotBody } from '../support/fixtures';

const ORIGIN = 'http://localhost:8788';
const DAY = 86_400_000;
/** A SHA-256 hash as platforms take them (hex). */
const HASH = /[0-9a-f]{64}/i;

describe('personal data in the summaries of real deliveries to the six platforms', () => {
  let r: RevenueService;
  beforeAll(async () => {
    r = await startRevenueService();
  });
  afterAll(() => r.close());

  const clicks = (tag: string) => ({
    gclid: `Cj0KCQ-${tag}`, fbclid: `IwAR-${tag}`, msclkid: createHash('md5').update(tag).digest('hex'), li_fat_id: `li-${tag}`,
    rdt_cid: `rdt-${tag}`, ttclid: `tt-${tag}`,
  });

  /** A click on every platform and a signup with every identity field, delivered; returns the event id. */
  async function deliveredSignup(tag: string): Promise<string> {
    const token = newToken();
    const now = Date.now();
    const snapshot = await r.svc.app.inject({
      method: 'POST', url: snapshotsPath(r.setup.site.site_key),
      headers: { origin: ORIGIN, 'content-type': 'text/plain;charset=UTF-8', 'user-agent': `Browser/${tag}`, 'x-forwarded-for': '203.0.113.9' },
      remoteAddress: '203.0.113.9',
      payload: JSON.stringify(snapshotBody({
        correlation_token: token, occurred_at: new Date(now - 120_000).toISOString(), page_url: `${ORIGIN}/signup`,
        touch: { click_ids: clicks(tag), utm: {}, landing_page_url: `${ORIGIN}/`, referrer: null, captured_at: new Date(now - 3_600_000).toISOString() },
        cookies: { _fbp: 'fb.1.1700000000000.42', _rdt_uuid: '1700000000000.7d1e0c52-1f0b-4f0b-9f0b-000000000042', _ttp: `ttp-${tag}` },
      })),
    });
    expect(snapshot.statusCode).toBe(204);
    const customerEventId = `signup-${tag}`;
    const report = await r.post(saasSignupPath(r.setup.site.site_key, DEMO.triggerKey), {
      customer_event_id: customerEventId, correlation_token: token, email: `${tag}@example.com`, phone: '+44 20 7946 0958',
      first_name: 'Ada', last_name: 'Lovelace', customer_id: `cus_${tag}`, value: 29, currency: 'EUR',
    });
    expect(report.status).toBe(200);
    await r.drain();
    const event = (await r.api('GET', `/v1/events?site_id=${r.setup.site.id}&limit=100`)).data.find((e: any) => e.customer_event_id === customerEventId);
    expect(event.actions.map((a: { destination: string; status: string; error: unknown }) => [a.destination, a.status, a.error])).toEqual(DEMO.actions.map((a) => [a.integrationId, 'delivered', null]));
    return event.id;
  }

  /** What delivery recorded of an event (actions' and attempts' request summaries), as text. */
  const recorded = async (eventId: string) =>
    JSON.stringify(await r.svc.db.query(
      `select a.destination, a.status, a.request, (select json_agg(d.request) from delivery_attempts d where d.event_action_id = a.id) as attempts
       from event_actions a where a.event_id = $1 order by a.position`,
      [eventId],
    ));

  it('the identity purge leaves no hashed identifier in any platform summary, and keeps the rest', async () => {
    const eventId = await deliveredSignup('purged');
    const before = await recorded(eventId);
    expect(before).toMatch(HASH);
    const cleared = await clearExpiredIdentity(r.svc.db, 90, new Date(Date.now() + 91 * DAY));
    expect(cleared.events).toBeGreaterThan(0);
    const after = await recorded(eventId);
    expect(after.match(HASH)?.[0] ?? null).toBeNull();
    // The rest of what was sent stays: statuses, the click ids, the dedup ids, the values.
    expect(after).toContain(clicks('purged').gclid);
    expect(after).toContain('removed past the identity retention');
    const event = await r.api('GET', `/v1/events/${eventId}`);
    expect(event).toMatchObject({ status: 'completed', email: null, value: 29, currency: 'EUR', click_ids: clicks('purged') });
  });

  it('an erasure leaves no hash and no click id in what delivery recorded', async () => {
    const eventId = await deliveredSignup('erased');
    expect(await recorded(eventId)).toMatch(HASH);
    const erasure = await r.api('POST', '/v1/erasures', { email: 'erased@example.com' });
    expect(erasure.matched).toMatchObject({ reports: 1, events: 1, snapshots: 1 });
    const after = await recorded(eventId);
    expect(after.match(HASH)?.[0] ?? null).toBeNull();
    for (const value of Object.values(clicks('erased'))) expect(after).not.toContain(value);
    expect(after).not.toContain('ttp-erased');
    const event = await r.api('GET', `/v1/events/${eventId}`);
    expect(event).toMatchObject({ erased: true, click_ids: null, customer_id: null });
    expect(JSON.stringify(event)).not.toMatch(HASH);
  });
});
