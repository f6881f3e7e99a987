/**
 * One endpoint's backlog never holds back another endpoint's notifications. An account whose conversions all fail
 * (a conversion action deleted in the ad account) queues one `event.failed` per conversion; when its receiver is down
 * or hangs, every round of the notification worker takes the oldest due messages first, and a round lasts as long as
 * its slowest receiver (10 s for one that hangs). Without fairness another account's `destination.reauthorization_required`
 * waited behind that whole backlog, wave after wave of retries. Each round now takes the endpoints in turn: every
 * endpoint's oldest due message before any endpoint's second.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../src/server/db/db';
import { loadSettings } from '../../src/server/settings';
import { insertAccount } from '../../src/server/accounts/sql';
import { serviceSecretBox } from '../../src/server/db/secret-box';
import { enqueueNotification, insertEndpoint, newEndpointSecret } from '../../src/server/notifications';
import { claimNotifications } from '../../src/server/notifications/sql';
import { DATABASE_KINDS } from './support/databases';

const SECRET_KEY = '7'.repeat(64);

describe.each(DATABASE_KINDS)('notification fairness on $name', (kind) => {
  let db: Database;
  const settings = loadSettings({ CNV_DEMO_PORT: 'off', CNV_SECRET_KEY: SECRET_KEY });

  beforeAll(async () => {
    db = await kind.open();
  });
  afterAll(async () => {
    await db.close();
  });

  const endpointOf = async (name: string, path: string) => {
    const account = await insertAccount(db, name);
    const endpoint = await insertEndpoint(db, account.id, `https://hooks.example.com/${path}`, ['event.failed', 'destination.reauthorization_required'], serviceSecretBox(settings).seal(newEndpointSecret()));
    return { accountId: account.id, endpointId: endpoint.id };
  };

  it("claims another endpoint's message in the same round as a backlog queued before it", async () => {
    const storm = await endpointOf('Storm', 'storm');
    const quiet = await endpointOf('Quiet', 'quiet');
    for (let i = 0; i < 50; i++) await enqueueNotification(db, storm.accountId, 'event.failed', { site_id: null, event_id: `evt_storm_${i}`, reason: 'failed' });
    await enqueueNotification(db, quiet.accountId, 'destination.reauthorization_required', { site_id: null, destination: { id: 'dst_q', type: 'google-ads' }, reason: 'refused' });
    const now = new Date(Date.now() + 60_000);
    const first = await claimNotifications(db, { now, leaseMs: 40_000, limit: 20 });
    expect(first).toHaveLength(20);
    expect(first.filter((c) => c.url.endsWith('/quiet'))).toHaveLength(1);
    // The storm's messages go oldest first, each claimed once.
    const stormy = (claims: typeof first) => claims.filter((c) => c.url.endsWith('/storm')).map((c) => Number((JSON.parse(c.payload).data.event_id as string).slice('evt_storm_'.length))).sort((a, b) => a - b);
    expect(stormy(first)).toEqual(Array.from({ length: 19 }, (_, i) => i));
    // A single endpoint with a backlog still fills the round (a healthy receiver drains as fast as before).
    const second = await claimNotifications(db, { now, leaseMs: 40_000, limit: 20 });
    expect(stormy(second)).toEqual(Array.from({ length: 20 }, (_, i) => i + 19));
  });
});
