import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DATABASE_KINDS } from './support/databases';
import type { Database } from '../../src/server/db/db';
import { bootstrap } from '../../src/server/accounts/bootstrap';
import { findAccountByApiKey } from '../../src/server/accounts/sql';

describe.each(DATABASE_KINDS)('first-start bootstrap on $name', (kind) => {
  let db: Database;
  beforeAll(async () => {
    db = await kind.open();
  });
  afterAll(() => db.close());

  it('creates exactly one account, key and site even when several starters race', async () => {
    const results = await Promise.all(Array.from({ length: 5 }, () => bootstrap(db)));
    const created = results.filter((r) => r.created);
    expect(created).toHaveLength(1);
    const counts = await db.query<{ accounts: number; keys: number; sites: number }>(
      `select (select count(*)::int from accounts) as accounts, (select count(*)::int from api_keys) as keys,
              (select count(*)::int from sites) as sites`,
    );
    expect(counts[0]).toEqual({ accounts: 1, keys: 1, sites: 1 });
    const first = created[0]!;
    if (!first.created) throw new Error('unreachable');
    expect((await findAccountByApiKey(db, first.apiKey))?.id).toBe(first.account.id);
    expect(first.site).toMatchObject({ name: 'My Website', timezone: 'America/New_York', domain: null });
    expect(first.site.site_key).not.toBe(first.site.id);
  });

  it('creates nothing on a later start', async () => {
    expect(await bootstrap(db)).toEqual({ created: false });
    expect((await db.query<{ n: number }>('select count(*)::int as n from accounts'))[0]!.n).toBe(1);
  });
});
