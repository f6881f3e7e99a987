/**
 * The collector's writer stores a batch whose tokens it has not seen as a plain insert (no conflict check), and
 * upserts it when a token turns out to be stored already: by another instance, before a restart, or forgotten.
 * Either way every snapshot is stored and a repeat merges by the same rules (collector-merge.test.ts).
 */
import { rmSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DATABASE_KINDS } from './support/databases';
import { newToken, snapshotBody } from './support/fixtures';
import { seededDataDir } from '../support/pglite';
import type { Touch } from '../../src/protocol/collector';
import { openDatabase, type Database, type Queryable } from '../../src/server/db/db';
import { insertAccount } from '../../src/server/accounts/sql';
import { insertSite } from '../../src/server/api/sites/sql';
import { findSnapshot, upsertSnapshots, type SnapshotWrite, type UpsertSnapshotsOptions } from '../../src/server/collector/sql';
import { RecentKeys, SnapshotWriter } from '../../src/server/collector/snapshot-writer';

const adTouch = (gclid: string, at: string): Touch => ({ ...snapshotBody().touch!, click_ids: { gclid }, captured_at: at });

/** A writer whose statements are observed: the rows of each and whether it was tried as all new. */
function observedWriter(db: Queryable) {
  const statements: Array<{ tokens: string[]; allNew: boolean }> = [];
  const writer = new SnapshotWriter(db, {
    maxDelayMs: 0,
    insertFirst: true,
    upsert: (q, writes, options?: UpsertSnapshotsOptions) => {
      statements.push({ tokens: writes.map((w) => w.snapshot.correlation_token), allNew: options?.allNew ?? false });
      return upsertSnapshots(q, writes, options);
    },
  });
  return { writer, statements };
}

async function newSite(db: Queryable): Promise<string> {
  return (await insertSite(db, (await insertAccount(db, 'insert-first')).id, { domain: 'https://example.com' })).id;
}

describe.each(DATABASE_KINDS)('snapshots stored insert-first on $name', (kind) => {
  let db: Database;
  let siteId: string;
  beforeAll(async () => {
    db = await kind.open();
    siteId = await newSite(db);
  });
  afterAll(() => db.close());

  const count = async (tokens: string[]) =>
    (await db.query<{ n: number }>('select count(*)::int as n from snapshots where correlation_token = any($1::text[])', [tokens]))[0]!.n;

  it('stores a batch of new tokens, and merges a batch taken for new whose token was stored already, all its rows kept', async () => {
    const fresh = Array.from({ length: 5 }, () => snapshotBody());
    await upsertSnapshots(db, fresh.map((snapshot) => ({ siteId, snapshot })), { allNew: true });
    expect(await count(fresh.map((s) => s.correlation_token))).toBe(5);

    const token = newToken();
    await upsertSnapshots(db, [{ siteId, snapshot: snapshotBody({ correlation_token: token, touch: adTouch('g-1', '2026-11-20T09:00:00.000Z'), occurred_at: '2026-11-20T09:01:00.000Z' }) }]);
    const others = Array.from({ length: 3 }, () => snapshotBody());
    const batch: SnapshotWrite[] = [
      ...others.slice(0, 2).map((snapshot) => ({ siteId, snapshot })),
      { siteId, snapshot: snapshotBody({ correlation_token: token, touch: adTouch('g-2', '2026-11-21T09:00:00.000Z'), occurred_at: '2026-11-21T09:01:00.000Z' }) },
      { siteId, snapshot: others[2]! },
    ];
    await upsertSnapshots(db, batch, { allNew: true });
    expect(await count(others.map((s) => s.correlation_token))).toBe(3);
    const merged = (await findSnapshot(db, siteId, token))!;
    expect(merged.received_click_ids).toEqual({ gclid: ['g-1', 'g-2'] });
    expect(merged.touch!.click_ids).toEqual({ gclid: 'g-2' });
    expect(merged.occurred_at.toISOString()).toBe('2026-11-20T09:01:00.000Z');
  });

  it('fails a batch taken for new on any other error, storing none of it', async () => {
    const good = snapshotBody();
    const bad = snapshotBody({ occurred_at: 'not a time' }); // bypasses validation to make the statement fail
    await expect(upsertSnapshots(db, [{ siteId, snapshot: good }, { siteId, snapshot: bad }], { allNew: true })).rejects.toMatchObject({ code: '22007' });
    expect(await count([good.correlation_token, bad.correlation_token])).toBe(0);
  });

  it('sends the tokens a writer stored to the upsert, and merges a token another writer stored', async () => {
    const here = observedWriter(db);
    const elsewhere = observedWriter(db); // another instance, or this one before a restart
    const [mine, theirs] = [newToken(), newToken()];
    await elsewhere.writer.write({ siteId, snapshot: snapshotBody({ correlation_token: theirs, touch: adTouch('g-a', '2026-11-20T09:00:00.000Z') }) });
    await here.writer.write({ siteId, snapshot: snapshotBody({ correlation_token: mine }) });
    await here.writer.write({ siteId, snapshot: snapshotBody({ correlation_token: mine }) });
    await here.writer.write({ siteId, snapshot: snapshotBody({ correlation_token: theirs, touch: adTouch('g-b', '2026-11-21T09:00:00.000Z') }) });
    await here.writer.write({ siteId, snapshot: snapshotBody({ correlation_token: theirs, touch: adTouch('g-c', '2026-11-22T09:00:00.000Z') }) });
    expect(here.statements).toEqual([
      { tokens: [mine], allNew: true },
      { tokens: [mine], allNew: false },
      { tokens: [theirs], allNew: true }, // not known here: tried as new, found stored, merged
      { tokens: [theirs], allNew: false },
    ]);
    expect((await findSnapshot(db, siteId, theirs))!.received_click_ids).toEqual({ gclid: ['g-a', 'g-b', 'g-c'] });
    expect(await count([mine])).toBe(1);
  });

  it('tries a group commit as new only when none of its tokens is known, its repeats merged in order', async () => {
    const { writer, statements } = observedWriter(db);
    const known = newToken();
    await writer.write({ siteId, snapshot: snapshotBody({ correlation_token: known }) });
    const repeated = newToken();
    const fresh = Array.from({ length: 4 }, () => snapshotBody());
    await Promise.all([
      ...fresh.map((snapshot) => writer.write({ siteId, snapshot })),
      writer.write({ siteId, snapshot: snapshotBody({ correlation_token: repeated, touch: adTouch('g-1', '2026-11-20T09:00:00.000Z') }) }),
      writer.write({ siteId, snapshot: snapshotBody({ correlation_token: repeated, touch: adTouch('g-2', '2026-11-21T09:00:00.000Z') }) }),
    ]);
    await Promise.all([writer.write({ siteId, snapshot: snapshotBody({ correlation_token: known }) }), writer.write({ siteId, snapshot: snapshotBody() })]);
    expect(statements.slice(1).map((s) => [s.tokens.length, s.allNew])).toEqual([
      [5, true], // the four new tokens and the first of the repeated one
      [1, false], // the repeat, after its token was stored
      [2, false], // a known token among new ones
    ]);
    expect((await findSnapshot(db, siteId, repeated))!.received_click_ids).toEqual({ gclid: ['g-1', 'g-2'] });
    expect(await count(fresh.map((s) => s.correlation_token))).toBe(4);
  });
});

describe('a token stored before a restart, on the embedded store behind its worker', () => {
  const dirs: string[] = [];
  afterAll(() => dirs.forEach((dir) => rmSync(dir, { recursive: true, force: true })));

  it('is merged by the writer of the next run, the failed insert answered as an error and the store still serving', async () => {
    const dataDir = await seededDataDir('cnv-insert-first-');
    dirs.push(dataDir);
    const token = newToken();
    const first = await openDatabase({ dataDir, pgliteThread: 'worker' });
    const siteId = await newSite(first);
    await new SnapshotWriter(first, { insertFirst: true }).write({ siteId, snapshot: snapshotBody({ correlation_token: token, touch: adTouch('g-before', '2026-11-20T09:00:00.000Z') }) });
    await first.close();

    const reopened = await openDatabase({ dataDir, pgliteThread: 'worker' });
    try {
      const { writer, statements } = observedWriter(reopened);
      const other = snapshotBody();
      await Promise.all([
        writer.write({ siteId, snapshot: snapshotBody({ correlation_token: token, touch: adTouch('g-after', '2026-11-21T09:00:00.000Z') }) }),
        writer.write({ siteId, snapshot: other }),
      ]);
      expect(statements).toEqual([{ tokens: [token, other.correlation_token], allNew: true }]);
      expect((await findSnapshot(reopened, siteId, token))!.received_click_ids).toEqual({ gclid: ['g-before', 'g-after'] });
      expect(await findSnapshot(reopened, siteId, other.correlation_token)).not.toBeNull();
      expect(await reopened.query('select 1 as one')).toEqual([{ one: 1 }]);
    } finally {
      await reopened.close();
    }
  });
});

it('upserts every batch of a writer not told to insert first (the service on PostgreSQL)', async () => {
  const db = await DATABASE_KINDS[0]!.open();
  try {
    const siteId = await newSite(db);
    const options: Array<UpsertSnapshotsOptions | undefined> = [];
    const writer = new SnapshotWriter(db, { upsert: (q, writes, o) => (options.push(o), upsertSnapshots(q, writes, o)) });
    await writer.write({ siteId, snapshot: snapshotBody() });
    expect(options).toEqual([{ allNew: false }]);
  } finally {
    await db.close();
  }
});

describe('RecentKeys', () => {
  it('remembers the keys added lately and forgets the oldest half once full', () => {
    const keys = new RecentKeys(4);
    ['a', 'b'].forEach((key) => keys.add(key));
    expect(['a', 'b', 'c'].map((key) => keys.has(key))).toEqual([true, true, false]);
    ['c', 'd'].forEach((key) => keys.add(key)); // a and b now the older generation
    expect(['a', 'b', 'c', 'd'].map((key) => keys.has(key))).toEqual([true, true, true, true]);
    keys.add('e'); // c and d become the older generation; a and b are forgotten
    expect(['a', 'b', 'c', 'd', 'e'].map((key) => keys.has(key))).toEqual([false, false, true, true, true]);
  });

  it('tells keys that differ in one character apart', () => {
    const keys = new RecentKeys(1_000);
    keys.add('site_1\u0000token-a');
    expect(keys.has('site_1\u0000token-a')).toBe(true);
    expect(keys.has('site_1\u0000token-b')).toBe(false);
    expect(keys.has('site_2\u0000token-a')).toBe(false);
  });
});
