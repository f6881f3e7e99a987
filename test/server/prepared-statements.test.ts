/**
 * Both stores run repeated statements prepared (db/db.ts): the results must be those of an unprepared run, a
 * transaction must own the embedded store's one connection, and a prepared statement a migration made stale must
 * still run.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DATABASE_KINDS } from './support/databases';
import { MAX_PREPARED_STATEMENTS, StatementNames, type Database } from '../../src/server/db/db';

describe('StatementNames', () => {
  it('names a text at its second use and keeps that name', () => {
    const names = new StatementNames();
    expect(names.nameFor('select 1')).toBeUndefined();
    const name = names.nameFor('select 1');
    expect(name).toBeDefined();
    expect(names.nameFor('select 1')).toBe(name);
    expect(names.nameFor('select 2')).toBeUndefined();
  });

  it('gives a text a fresh name when its statement went stale, and never the name of another text', () => {
    const names = new StatementNames();
    names.nameFor('select 1');
    const first = names.nameFor('select 1');
    names.nameFor('select 2');
    const other = names.nameFor('select 2');
    const renamed = names.rename('select 1');
    expect(renamed).not.toBe(first);
    expect(renamed).not.toBe(other);
    expect(names.nameFor('select 1')).toBe(renamed);
    expect(names.rename('never seen')).toBeUndefined();
  });

  it('prepares at most MAX_PREPARED_STATEMENTS texts; the rest run unprepared', () => {
    const names = new StatementNames();
    for (let i = 0; i < MAX_PREPARED_STATEMENTS; i++) {
      names.nameFor(`select ${i}`);
      expect(names.nameFor(`select ${i}`)).toBeDefined();
    }
    names.nameFor('select -1');
    expect(names.nameFor('select -1')).toBeUndefined();
    expect(names.nameFor('select 0')).toBeDefined();
  });
});

describe.each(DATABASE_KINDS)('prepared statements on $name', (kind) => {
  let db: Database;
  beforeAll(async () => {
    db = await kind.open();
    await db.exec('create table prep_t (id text primary key, v int)');
  });
  afterAll(() => db.close());

  it('returns the same rows on every run of a statement, with its parameters of the run', async () => {
    await db.query('insert into prep_t (id, v) select * from unnest($1::text[], $2::int[])', [['a', 'b', 'c'], [1, 2, 3]]);
    for (const [ids, expected] of [[['a'], [1]], [['b', 'c'], [2, 3]], [[], []], [['c', 'a'], [1, 3]]] as const) {
      const rows = await db.query<{ v: number }>('select v from prep_t where id = any($1::text[]) order by v', [ids]);
      expect(rows.map((r) => r.v)).toEqual(expected);
    }
  });

  it('keeps a transaction to itself: statements from outside wait until it commits or rolls back', async () => {
    const seen: number[] = [];
    let inside!: () => void;
    const entered = new Promise<void>((resolve) => (inside = resolve));
    const tx = db.transaction(async (t) => {
      await t.query(`insert into prep_t (id, v) values ('tx', 10)`);
      inside();
      // Give the outside statement every chance to run now, inside this transaction, if it could.
      await new Promise((resolve) => setTimeout(resolve, 50));
      throw new Error('roll back');
    });
    await entered;
    const outside = db.query<{ n: number }>(`select count(*)::int as n from prep_t where id = 'tx'`).then((rows) => seen.push(rows[0]!.n));
    await expect(tx).rejects.toThrow('roll back');
    await outside;
    expect(seen).toEqual([0]);
  });

  it('runs a prepared statement again after a migration changed the columns it returns', async () => {
    const read = () => db.query<Record<string, unknown>>(`select * from prep_t where id = $1`, ['a']);
    await read();
    expect(Object.keys((await read())[0]!).sort()).toEqual(['id', 'v']);
    await db.exec('alter table prep_t add column w int');
    expect(Object.keys((await read())[0]!).sort()).toEqual(['id', 'v', 'w']);
  });
});
