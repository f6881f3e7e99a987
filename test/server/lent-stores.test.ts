/**
 * The embedded stores the tests lend from test file to test file (test/support/pglite.ts): what a test gets is what a
 * store loaded from the image holds (no row, sequences at their start, no planner statistics, no session state), and a
 * store a test changed the schema of, or whose connection failed, is never lent again.
 */
import { describe, expect, it } from 'vitest';
import { lending, openMigratedPglite } from '../support/pglite';
import { insertAccount } from '../../src/server/accounts/sql';
import { insertSite } from '../../src/server/api/sites/sql';

/** Opens a store, runs `fn` on it, closes it; says whether it was one lent again. */
async function withStore(fn: (db: Awaited<ReturnType<typeof openMigratedPglite>>) => Promise<void>): Promise<boolean> {
  const before = lending.lentAgain;
  const db = await openMigratedPglite();
  try {
    await fn(db);
  } finally {
    await db.close();
  }
  return lending.lentAgain > before;
}

describe('a store lent again', () => {
  it('holds no row of the test before, restarts its sequences, and keeps neither statistics nor session state', async () => {
    await withStore(async (db) => {
      const account = await insertAccount(db, 'Before');
      await insertSite(db, account.id);
      await db.exec('analyze sites');
      await db.exec(`set timezone = 'Asia/Tokyo'`);
      await db.query('select $1::int as n', [1]); // prepared under a name on its second run
      await db.query('select $1::int as n', [1]);
      await db.exec('begin'); // left open
    });
    const lent = await withStore(async (db) => {
      expect(await db.query('select count(*)::int as n from accounts')).toEqual([{ n: 0 }]);
      expect(await db.query('select count(*)::int as n from sites')).toEqual([{ n: 0 }]);
      const account = await insertAccount(db, 'After');
      expect((await db.query<{ seq: number }>('select seq::int as seq from sites where id = $1', [(await insertSite(db, account.id)).id]))[0]!.seq).toBe(1);
      expect(await db.query(`select count(*)::int as n from pg_statistic where starelid = 'sites'::regclass`)).toEqual([{ n: 0 }]);
      expect(await db.query(`select current_setting('timezone') as tz`)).not.toEqual([{ tz: 'Asia/Tokyo' }]);
      expect(await db.query('select $1::int as n', [2])).toEqual([{ n: 2 }]);
      expect(await db.query('select $1::int as n', [3])).toEqual([{ n: 3 }]);
      expect(await db.query('select count(*)::int as n from schema_migrations')).not.toEqual([{ n: 0 }]);
    });
    expect(lent).toBe(true);
  });

  it('is never one whose schema a test changed', async () => {
    await withStore(async (db) => {
      await db.exec('create table made_by_a_test (id int)');
    });
    await withStore(async (db) => {
      expect(await db.query(`select to_regclass('made_by_a_test') is null as gone`)).toEqual([{ gone: true }]);
    });
    await withStore(async (db) => {
      await db.exec('alter table sites add column made_by_a_test int');
    });
    await withStore(async (db) => {
      expect(await db.query(`select count(*)::int as n from information_schema.columns where column_name = 'made_by_a_test'`)).toEqual([{ n: 0 }]);
    });
  });
});
