import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DATABASE_KINDS } from '../support/databases';
import { startDeliveryWorker } from '../../../src/server/delivery/worker';
import { startFakeGoogle, type FakeGoogle } from '../../../src/demo/fakes/google';
import { createDeliveryFixture, insertReportedEvent, memoryLog, openTwoHandles, settingsFor } from './fixtures';

describe.each(DATABASE_KINDS)('two delivery workers on one $name database', (kind) => {
  let handles: Awaited<ReturnType<typeof openTwoHandles>>;
  let fake: FakeGoogle;
  beforeAll(async () => {
    [handles, fake] = await Promise.all([openTwoHandles(kind), startFakeGoogle()]);
  });
  afterAll(async () => {
    await Promise.all([handles.close(), fake.close()]);
  });

  it('never send the same row twice, and together deliver every row', async () => {
    const fx = await createDeliveryFixture(handles.first, { api: 'data_manager', refreshToken: fake.issueRefreshToken() });
    const count = 60;
    const eventIds: string[] = [];
    for (let i = 0; i < count; i++) eventIds.push((await insertReportedEvent(handles.first, fx, { customerEventId: `signup-${i}` })).eventId);

    // Two "processes": separate connection pools on PostgreSQL, small batches so their claims interleave.
    const settings = settingsFor('http://legacy.invalid', {}, fake);
    const a = startDeliveryWorker({ db: handles.first, settings, log: memoryLog(), autoStart: false, batchSize: 4 });
    const b = startDeliveryWorker({ db: handles.second, settings, log: memoryLog(), autoStart: false, batchSize: 4 });
    const [fromA, fromB] = await Promise.all([a.drain(), b.drain()]);
    await Promise.all([a.stop(), b.stop()]);

    expect(fromA.length + fromB.length).toBe(count);
    expect([...fromA, ...fromB].filter((r) => r.result !== 'delivered')).toEqual([]);
    const ingests = fake.server.requests.filter((r) => r.path === '/v1/events:ingest');
    const orderIds = ingests.flatMap((r) => (r.body.events as Array<{ transactionId: string }>).map((e) => e.transactionId));
    expect(orderIds).toHaveLength(count);
    expect(new Set(orderIds).size).toBe(count);
    const statuses = await handles.first.query<{ status: string; n: number }>(
      'select status, count(*)::int as n from events where id = any($1::text[]) group by status',
      [eventIds],
    );
    expect(statuses).toEqual([{ status: 'completed', n: count }]);
    if (kind.name === 'postgres') {
      // Both processes took part (otherwise the test would not show anything about concurrency).
      expect(fromA.length).toBeGreaterThan(0);
      expect(fromB.length).toBeGreaterThan(0);
    }
  });
});
