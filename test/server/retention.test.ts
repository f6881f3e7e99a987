import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DATABASE_KINDS } from './support/databases';
import type { Database } from '../../src/server/db/db';
import { insertAccount } from '../../src/server/accounts/sql';
import { insertSite } from '../../src/server/api/sites/sql';
import { purgeExpiredSnapshots } from '../../src/server/collector/retention';
import { lastSnapshotIdReceivedBefore, purgeSnapshotsBefore } from '../../src/server/collector/sql';
import { loadSettings } from '../../src/server/settings';
import { openMigratedPglite } from '../support/pglite';

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

  /** Inserts `count` snapshots received at `at` and last written at `writtenAt` (by default then too), tokens prefixed by `prefix`. */
  async function seed(prefix: string, count: number, at: Date, writtenAt: Date = at): Promise<void> {
    await db.query(
      `insert into snapshots (site_id, correlation_token, occurred_at, trigger, received_at, updated_at)
       select $1, $2 || lpad(g::text, 22 - length($2), '0'), $3, 'api', $3, $5 from generate_series(1, $4::int) g order by g`,
      [siteId, prefix, at, count, writtenAt],
    );
  }
  const idRange = async (prefix: string) =>
    (await db.query<{ lo: string; hi: string }>(`select min(id) as lo, max(id) as hi from snapshots where correlation_token like $1 || '%'`, [prefix]))[0]!;

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

  it('keeps a snapshot received long ago but written again within the period', async () => {
    await db.query('delete from snapshots');
    await seed('ret', 2, daysAgo(40), daysAgo(1)); // its token came back yesterday
    await seed('exp', 3, daysAgo(35));
    expect(await purgeExpiredSnapshots(db, 30, now)).toBe(3);
    expect(await db.query(`select count(*)::int as n from snapshots where correlation_token like 'ret%'`)).toEqual([{ n: 2 }]);
  });

  it('finds the last snapshot received before the cutoff by bisecting the ids, without reading the table', async () => {
    await db.query('delete from snapshots');
    expect(await lastSnapshotIdReceivedBefore(db, daysAgo(30))).toBeNull(); // empty
    await seed('aaa', 700, daysAgo(45));
    await seed('bbb', 301, daysAgo(31));
    await seed('ccc', 450, daysAgo(10));
    await seed('ddd', 5, daysAgo(0));
    expect(await lastSnapshotIdReceivedBefore(db, daysAgo(30))).toBe(Number((await idRange('bbb')).hi));
    expect(await lastSnapshotIdReceivedBefore(db, daysAgo(40))).toBe(Number((await idRange('aaa')).hi));
    expect(await lastSnapshotIdReceivedBefore(db, daysAgo(5))).toBe(Number((await idRange('ccc')).hi));
    expect(await lastSnapshotIdReceivedBefore(db, daysAgo(60))).toBeNull(); // every one received after it
    expect(await lastSnapshotIdReceivedBefore(db, new Date(now.getTime() + 1))).toBe(Number((await idRange('ddd')).hi)); // every one before it
    // Gaps in the ids (deleted rows) do not mislead it.
    await db.query(`delete from snapshots where correlation_token like 'bbb%' and id % 3 <> 0`);
    expect(await lastSnapshotIdReceivedBefore(db, daysAgo(30))).toBe(Number((await idRange('bbb')).hi));
  });

  it('deletes only up to the id it is given, so a statement never reads past the old end of the table', async () => {
    await db.query('delete from snapshots');
    await seed('old', 10, daysAgo(40));
    const upTo = Number((await idRange('old')).lo) + 3;
    expect(await purgeSnapshotsBefore(db, daysAgo(30), 500, upTo)).toBe(4);
    expect(await purgeExpiredSnapshots(db, 30, now)).toBe(6);
  });
});

describe('snapshot retention on the embedded store (no autovacuum there)', () => {
  it('gives the purged rows\' space to the next ones: snapshots and form submissions kept to their retention period stop growing', async () => {
    const db = await openMigratedPglite();
    try {
      const siteId = (await insertSite(db, (await insertAccount(db, 'reuse')).id)).id;
      const now = new Date('2026-11-21T12:00:00Z');
      const seed = (prefix: string, at: Date) =>
        db.query(
          `insert into snapshots (site_id, correlation_token, occurred_at, trigger, page_url, received_at, updated_at)
           select $1, $2 || lpad(g::text, 22 - length($2), '0'), $3, 'api', 'https://example.com/' || repeat('p', 300), $3, $3
           from generate_series(1, 2000) g order by g`,
          [siteId, prefix, at],
        );
      const seedSubmissions = (prefix: string, at: Date) =>
        db.query(
          `insert into form_submissions (id, site_id, submission_id, integration, occurred_at, page_url, received_at)
           select $2 || g, $1, $2 || g, 'hubspot', $3, 'https://example.com/' || repeat('p', 300), $3
           from generate_series(1, 2000) g order by g`,
          [siteId, prefix, at],
        );
      const bytes = async (table: string) => Number((await db.query<{ n: string }>(`select pg_relation_size($1) as n`, [table]))[0]!.n);
      const monthAndTenDaysAgo = new Date(now.getTime() - 40 * 86_400_000);
      await seed('old', monthAndTenDaysAgo);
      await seedSubmissions('old', monthAndTenDaysAgo);
      const before = { snapshots: await bytes('snapshots'), submissions: await bytes('form_submissions') };
      expect(before.snapshots).toBeGreaterThan(80 * 8192);
      expect(before.submissions).toBeGreaterThan(80 * 8192);
      expect(await purgeExpiredSnapshots(db, 30, now)).toBe(4000);
      await seed('new', now);
      await seedSubmissions('new', now);
      // The new rows took the old ones' pages, not new ones.
      expect(await bytes('snapshots')).toBeLessThanOrEqual(before.snapshots);
      expect(await bytes('form_submissions')).toBeLessThanOrEqual(before.submissions);
    } finally {
      await db.close();
    }
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
