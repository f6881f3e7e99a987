/**
 * Webhook secrets are stored sealed with the service key (docs/operations.md, Backups): a connect and a rotation never
 * write one in clear, and the start seals, once, those an earlier version stored in clear.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DATABASE_KINDS } from './support/databases';
import { TEST_SECRET_BOX } from './support/fixtures';
import type { Database } from '../../src/server/db/db';
import { insertAccount } from '../../src/server/accounts/sql';
import { insertSite, type SiteRow } from '../../src/server/api/sites/sql';
import { newId } from '../../src/server/db/ids';
import { looksSealed, parseSecretKey, secretBox } from '../../src/server/db/secret-box';
import { activeWebhookSecrets, connectTriggerSource, rotateWebhookSecret } from '../../src/server/webhook/secret-sql';
import { sealWebhookSecretsAtStart } from '../../src/server/webhook';

const box = TEST_SECRET_BOX;

describe.each(DATABASE_KINDS)('webhook secrets in the store ($name)', (kind) => {
  let db: Database;
  const newSite = async (): Promise<SiteRow> => insertSite(db, (await insertAccount(db, 'a')).id);
  /** Every stored trigger source row, as text. */
  const storedRows = async () => (await db.query<{ row: string }>('select t::text as row from trigger_sources t')).map((r) => r.row).join('\n');

  beforeAll(async () => {
    db = await kind.open();
  });
  afterAll(() => db.close());

  it('connects and rotates without writing a secret in clear; the current and previous secrets still verify', async () => {
    const site = await newSite();
    const { secret: first } = await connectTriggerSource(db, box, site.account_id, site.id);
    const rotated = await rotateWebhookSecret(db, box, site.id);
    const second = rotated!.secret;
    const stored = await storedRows();
    expect(stored).not.toContain(first);
    expect(stored).not.toContain(second);
    expect(stored).not.toContain('whsec_');
    expect(await activeWebhookSecrets(db, box, site.id)).toEqual([second, first]);
  });

  it('seals the secrets an earlier version stored in clear at the next start, once, even with two starts at once', async () => {
    const a = await newSite();
    const b = await newSite();
    const inClear = async (site: SiteRow, secret: string, previous: string | null) =>
      db.query(
        `insert into trigger_sources (id, account_id, site_id, type, secret, previous_secret, previous_secret_expires_at)
         values ($1, $2, $3, 'api', $4, $5, $6)`,
        [newId('trs'), site.account_id, site.id, secret, previous, previous ? new Date(Date.now() + 3600_000) : null],
      );
    await inClear(a, 'whsec_clear_current_a', 'whsec_clear_previous_a');
    await inClear(b, 'whsec_clear_current_b', null);
    // A clear value is not accepted as a secret before the start seals it.
    expect(await activeWebhookSecrets(db, box, a.id)).toEqual([]);

    const starts = await Promise.all([sealWebhookSecretsAtStart(db, box), sealWebhookSecretsAtStart(db, box)]);
    expect(starts[0]!.sealed + starts[1]!.sealed).toBe(3);
    expect(await storedRows()).not.toContain('whsec_');
    expect(await activeWebhookSecrets(db, box, a.id)).toEqual(['whsec_clear_current_a', 'whsec_clear_previous_a']);
    expect(await activeWebhookSecrets(db, box, b.id)).toEqual(['whsec_clear_current_b']);
    const rows = await db.query<{ secret: string }>('select secret from trigger_sources');
    expect(rows.every((row) => looksSealed(row.secret))).toBe(true);

    // A later start has nothing to seal (a sealed value is never sealed again).
    expect(await sealWebhookSecretsAtStart(db, box)).toEqual({ sealed: 0, notOpening: 0 });
    expect(await activeWebhookSecrets(db, box, a.id)).toEqual(['whsec_clear_current_a', 'whsec_clear_previous_a']);
  });

  it('counts, at start, the secrets that do not open with the key (CNV_SECRET_KEY changed)', async () => {
    const otherKey = secretBox(parseSecretKey('6'.repeat(64)));
    const site = await newSite();
    await connectTriggerSource(db, otherKey, site.account_id, site.id);
    const start = await sealWebhookSecretsAtStart(db, box);
    expect(start).toEqual({ sealed: 0, notOpening: 1 });
    expect(await activeWebhookSecrets(db, box, site.id)).toEqual([]);
  });
});
