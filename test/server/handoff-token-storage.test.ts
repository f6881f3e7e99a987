/**
 * Handoff links are credentials for a day: the store holds their tokens sealed with the service key and finds them by
 * hash (docs/operations.md, Backups), so a backup never holds a live link. The start seals, once, those an earlier
 * version stored in clear.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DATABASE_KINDS } from './support/databases';
import { TEST_SECRET_KEY } from './support/fixtures';
import type { Database } from '../../src/server/db/db';
import { loadSettings } from '../../src/server/settings';
import { insertAccount } from '../../src/server/accounts/sql';
import { insertSite } from '../../src/server/api/sites/sql';
import { MIGRATIONS } from '../../src/server/db/migrations';
import { newId, newUrlToken } from '../../src/server/db/ids';
import { looksSealed, parseSecretKey, secretBox } from '../../src/server/db/secret-box';
import { createHandoff, getHandoff } from '../../src/server/api/handoffs/handoffs';
import { sealHandoffTokensAtStart } from '../../src/server/api/handoffs';
import { openHostedHandoff } from '../../src/server/api/handoffs/completion';

const settings = loadSettings({ CNV_SECRET_KEY: TEST_SECRET_KEY, CNV_DEMO_PORT: 'off', CNV_PUBLIC_URL: 'https://cnv.example' });
const tokenOf = (url: string) => url.slice(url.lastIndexOf('/') + 1);

describe.each(DATABASE_KINDS)('handoff tokens in the store ($name)', (kind) => {
  let db: Database;
  const storedRows = async () => (await db.query<{ row: string }>('select h::text as row from handoffs h')).map((r) => r.row).join('\n');
  const newSite = async () => insertSite(db, (await insertAccount(db, 'a')).id);

  beforeAll(async () => {
    db = await kind.open();
  });
  afterAll(() => db.close());

  it('creates a handoff without its token in clear; polling returns the same url and the link opens', async () => {
    const site = await newSite();
    const created = await createHandoff(db, settings, site.account_id, { purpose: 'connect_trigger_source', site_id: site.id });
    const token = tokenOf(created.url);
    expect(await storedRows()).not.toContain(token);
    expect((await getHandoff(db, settings, site.account_id, created.id)).url).toBe(created.url);
    expect((await openHostedHandoff(db, settings, token))?.handoff.id).toBe(created.id);
    expect(await openHostedHandoff(db, settings, newUrlToken())).toBeNull();
  });

  it('seals the tokens an earlier version stored in clear at the next start, once, even with two starts at once', async () => {
    const site = await newSite();
    const token = newUrlToken();
    const id = newId('hdf');
    // A row as an earlier version wrote it (no token_hash), then migration 29 run over it.
    await db.query('alter table handoffs alter column token_hash drop not null');
    await db.query(`insert into handoffs (id, account_id, purpose, trigger_source, site_id, token) values ($1, $2, 'connect_trigger_source', 'api', $3, $4)`, [
      id,
      site.account_id,
      site.id,
      token,
    ]);
    await db.exec(MIGRATIONS.find((m) => m.version === 29)!.sql);
    expect(await openHostedHandoff(db, settings, token)).not.toBeNull();

    const box = secretBox(parseSecretKey(TEST_SECRET_KEY));
    const starts = await Promise.all([sealHandoffTokensAtStart(db, box), sealHandoffTokensAtStart(db, box)]);
    expect(starts[0]! + starts[1]!).toBe(1);
    expect(await storedRows()).not.toContain(token);
    const rows = await db.query<{ token: string }>('select token from handoffs');
    expect(rows.every((row) => looksSealed(row.token))).toBe(true);
    expect(await sealHandoffTokensAtStart(db, box)).toBe(0);
    expect((await getHandoff(db, settings, site.account_id, id)).url).toBe(`https://cnv.example/handoffs/${token}`);
    expect((await openHostedHandoff(db, settings, token))?.handoff.id).toBe(id);
  });

  it('gives a null url for a token sealed under another key; its link still opens', async () => {
    const site = await newSite();
    const created = await createHandoff(db, settings, site.account_id, { purpose: 'connect_trigger_source', site_id: site.id });
    const token = tokenOf(created.url);
    const other = secretBox(parseSecretKey('6'.repeat(64)));
    await db.query('update handoffs set token = $2 where id = $1', [created.id, other.seal(token)]);
    expect((await getHandoff(db, settings, site.account_id, created.id)).url).toBeNull();
    expect((await openHostedHandoff(db, settings, token))?.handoff.id).toBe(created.id);
  });
});
