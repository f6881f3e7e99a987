import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { DATABASE_KINDS } from './support/databases';
import { TEST_SECRET_KEY, connectApiTrigger, insertApiFlow, signedReport } from './support/fixtures';
import { openTwoHandles } from './delivery/fixtures';
import { buildApp } from '../../src/server/app';
import { loadSettings } from '../../src/server/settings';
import { insertAccount } from '../../src/server/accounts/sql';
import { insertSite, type SiteRow } from '../../src/server/api/sites/sql';

const SECRET_A = 'whsec_site_a_000000000000000000000000';
const SECRET_B = 'whsec_site_b_000000000000000000000000';

describe.each(DATABASE_KINDS)('webhook reports arriving together on $name', (kind) => {
  let handles: Awaited<ReturnType<typeof openTwoHandles>>;
  let apps: FastifyInstance[];
  let siteA: SiteRow;
  let siteB: SiteRow;

  beforeAll(async () => {
    handles = await openTwoHandles(kind);
    const db = handles.first;
    siteA = await insertSite(db, (await insertAccount(db, 'a')).id);
    siteB = await insertSite(db, (await insertAccount(db, 'b')).id);
    await connectApiTrigger(db, siteA, SECRET_A);
    await connectApiTrigger(db, siteB, SECRET_B);
    await insertApiFlow(db, siteA, { triggerKey: 'signup', name: 'a1' });
    await insertApiFlow(db, siteA, { triggerKey: 'signup', name: 'a2' });
    await insertApiFlow(db, siteB, { triggerKey: 'signup', name: 'b1' });
    // Two services on one database (on PostgreSQL: two connection pools, as two processes would have).
    apps = await Promise.all([handles.first, handles.second].map(async (handle) => {
      const app = await buildApp({ db: handle, settings: loadSettings({ CNV_DEMO_PORT: 'off', CNV_SECRET_KEY: TEST_SECRET_KEY }), logger: false });
      await app.ready();
      return app;
    }));
  });
  afterAll(async () => {
    await Promise.all(apps.map((app) => app.close()));
    await handles.close();
  });

  const reportsOf = (siteId: string, ids: string[]) =>
    handles.first.query<{ customer_event_id: string; events: number }>(
      `select r.customer_event_id, (select count(*)::int from events e where e.report_id = r.id) as events
       from reports r where r.site_id = $1 and r.customer_event_id = any($2::text[]) order by r.customer_event_id`,
      [siteId, ids],
    );

  it('answers each report of a burst on its own merits: a bad signature, body or site fails alone', async () => {
    const app = apps[0]!;
    const good = (site: SiteRow, secret: string, id: string) =>
      app.inject(signedReport(site.site_key, 'signup', { customer_event_id: id, correlation_token: null, allow_uncorrelated: true }, secret));
    const responses = await Promise.all([
      good(siteA, SECRET_A, 'burst-a1'),
      good(siteB, SECRET_B, 'burst-b1'),
      good(siteA, SECRET_B, 'burst-wrong-secret'),
      app.inject(signedReport(siteA.site_key, 'signup', { customer_event_id: '', correlation_token: null }, SECRET_A)),
      app.inject(signedReport('nosuchsite00', 'signup', { customer_event_id: 'burst-nowhere', correlation_token: null }, SECRET_A)),
      good(siteA, SECRET_A, 'burst-a2'),
      good(siteB, SECRET_B, 'burst-a1'), // the same customer_event_id on another site is another report
    ]);
    expect(responses.map((r) => r.statusCode)).toEqual([200, 200, 401, 400, 404, 200, 200]);
    expect(responses[0]!.json()).toMatchObject({ status: 'promoted', promoted_count: 2 });
    expect(responses[1]!.json()).toMatchObject({ status: 'promoted', promoted_count: 1 });
    expect(responses[6]!.json()).toMatchObject({ status: 'promoted', promoted_count: 1, customer_event_id: 'burst-a1' });
    expect(await reportsOf(siteA.id, ['burst-a1', 'burst-a2', 'burst-wrong-secret'])).toEqual([
      { customer_event_id: 'burst-a1', events: 2 },
      { customer_event_id: 'burst-a2', events: 2 },
    ]);
    expect(await reportsOf(siteB.id, ['burst-a1', 'burst-b1'])).toEqual([
      { customer_event_id: 'burst-a1', events: 1 },
      { customer_event_id: 'burst-b1', events: 1 },
    ]);
  });

  it('records twenty identical reports sent at once to two services on one database once, answering all alike', async () => {
    const body = { correlation_token: null, customer_event_id: 'twice-twenty', email: 'ada@example.com', allow_uncorrelated: true };
    const responses = await Promise.all(
      Array.from({ length: 20 }, (_, i) => apps[i % 2]!.inject(signedReport(siteA.site_key, 'signup', body, SECRET_A))),
    );
    expect(responses.map((r) => r.statusCode)).toEqual(Array(20).fill(200));
    for (const r of responses) expect(r.json()).toEqual({ status: 'promoted', promoted_count: 2, customer_event_id: 'twice-twenty', correlated: false });
    expect(await reportsOf(siteA.id, ['twice-twenty'])).toEqual([{ customer_event_id: 'twice-twenty', events: 2 }]);
  });
});
