/** The install check's record of page origins: counted per origin and kind, bounded per site, refusals apart. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DATABASE_KINDS } from './support/databases';
import type { Database } from '../../src/server/db/db';
import { insertAccount } from '../../src/server/accounts/sql';
import { insertSite } from '../../src/server/api/sites/sql';
import { addOriginTraffic, listOriginTraffic, ORIGIN_TRAFFIC_ROWS_PER_SITE } from '../../src/server/collector/origin-traffic-sql';

describe.each(DATABASE_KINDS)('origin traffic on $name', (kind) => {
  let db: Database;
  let siteId: string;
  beforeAll(async () => {
    db = await kind.open();
    siteId = (await insertSite(db, (await insertAccount(db, 'origins')).id, { domain: 'https://www.example.com' })).id;
  });
  afterAll(() => db.close());

  const at = (minute: number) => new Date(Date.UTC(2026, 10, 27, 9, minute));

  it('adds counts to the same origin and kind', async () => {
    const row = { site_id: siteId, origin: 'https://www.example.com', kind: 'config' as const, reason: '' as const, domain: 'https://www.example.com', count: 2, last_seen_at: at(0) };
    await addOriginTraffic(db, [row]);
    await addOriginTraffic(db, [{ ...row, count: 3, last_seen_at: at(1) }]);
    const [stored] = (await listOriginTraffic(db, siteId)).filter((r) => r.kind === 'config');
    expect(stored).toMatchObject({ origin: 'https://www.example.com', count: 5, last_seen_at: at(1) });
  });

  it('keeps the served origins when anyone floods it with refused ones, each kept to its own bound', async () => {
    const refused = Array.from({ length: ORIGIN_TRAFFIC_ROWS_PER_SITE + 10 }, (_, i) => ({
      site_id: siteId, origin: `https://fake-${i}.example.net`, kind: 'refused' as const, reason: 'not_covered' as const,
      domain: 'https://www.example.com', count: 1, last_seen_at: at(10 + i),
    }));
    await addOriginTraffic(db, refused);
    const rows = await listOriginTraffic(db, siteId);
    expect(rows.filter((r) => r.kind === 'config')).toHaveLength(1);
    expect(rows.filter((r) => r.kind === 'refused')).toHaveLength(ORIGIN_TRAFFIC_ROWS_PER_SITE);
    expect(rows.some((r) => r.origin === 'https://fake-0.example.net'), 'the oldest refusals go first').toBe(false);
  });
});
