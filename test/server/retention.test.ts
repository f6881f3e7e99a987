import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DATABASE_KINDS } from './support/databases';
import type { Database } from '../../src/server/db/db';
import { insertAccount } from '../../src/server/accounts/sql';
import { insertSite } from '../../src/server/api/sites/sql';
import { purgeExpiredSnapshots } from '../../src/server/collector/retention';
import { loadSettings } from '../../src/server/settings';

describe.each(DATABASE_KINDS)('snapshot retention on $name', (kind) => {
  let db: Database;
  let siteId: string;
  const now = new Date('2026-11-21T12:00:00Z');
  const daysAgo = (days: number) => new Date(now.getTime() - days * 86_400_000);
  beforeAll(async () => {
    db = await kind.open();
    siteId = (await insertSite(db, (await insertAccount(db, 'retention')).id)).id;
  });
  afterAll(() => db.close());

  /** Inserts `count` snapshots last written at `at`, tokens prefixed by `prefix`. */
  async function seed(prefix: string, count: number, at: Date): Promise<void> {
    await db.query(
      `insert into snapshots (site_id, correlation_token, occurred_at, trigger, updated_at)
       select $1, $2 || lpad(g::text, 22 - length($2), '0'), $3, 'api', $3 from generate_series(1, $4::int) g`,
      [siteId, prefix, at, count],
    );
  }

  it('deletes every snapshot older than the retention period, in chunks, and keeps the rest', async () => {
    await seed('old', 1_203, daysAgo(31));
    await seed('edge', 2, daysAgo(29));
    await seed('new', 3, daysAgo(0));
    expect(await purgeExpiredSnapshots(db, 30, now)).toBe(1_203);
    const left = await db.query<{ prefix: string; n: number }>(
      `select left(correlation_token, 3) as prefix, count(*)::int as n from snapshots group by 1 order by 1`,
    );
    expect(left).toEqual([{ prefix: 'edg', n: 2 }, { prefix: 'new', n: 3 }]);
    expect(await purgeExpiredSnapshots(db, 30, now)).toBe(0);
  });
});

describe('the snapshot retention setting', () => {
  it('defaults to 30 days, can be turned off, and refuses less than two days', () => {
    expect(loadSettings({}).snapshotRetentionDays).toBe(30);
    expect(loadSettings({ CNV_SNAPSHOT_RETENTION_DAYS: '7' }).snapshotRetentionDays).toBe(7);
    expect(loadSettings({ CNV_SNAPSHOT_RETENTION_DAYS: 'off' }).snapshotRetentionDays).toBeNull();
    expect(() => loadSettings({ CNV_SNAPSHOT_RETENTION_DAYS: '1' })).toThrow(/at least 2/);
    expect(() => loadSettings({ CNV_SNAPSHOT_RETENTION_DAYS: 'week' })).toThrow(/CNV_SNAPSHOT_RETENTION_DAYS/);
  });
});
