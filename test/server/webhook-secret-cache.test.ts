import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { DATABASE_KINDS } from './support/databases';
import { connectApiTrigger, TEST_SECRET_BOX } from './support/fixtures';
import { parseSecretKey, secretBox, type SecretBox } from '../../src/server/db/secret-box';
import type { Database, Queryable } from '../../src/server/db/db';
import { insertAccount } from '../../src/server/accounts/sql';
import { insertSite, type SiteRow } from '../../src/server/api/sites/sql';
import { WebhookSecretCache, WEBHOOK_SECRET_CACHE_TTL_MS } from '../../src/server/webhook/secret-cache';
import { verifySignature } from '../../src/server/webhook/signature';
import { generateTestSignatureHeader } from '../../src/protocol/hmac-node';
import { rotateWebhookSecret } from '../../src/server/webhook/secret-sql';

const PATH = '/api/webhook-bridge/saas-signup/key/signup';
const BODY = '{"customer_event_id":"c1","correlation_token":null}';

/** The verification the route runs, for a body signed with `secret`. */
const signedWith = (secret: string) => {
  const header = generateTestSignatureHeader({ secret, path: PATH, body: BODY });
  return (secrets: readonly string[]) => verifySignature({ rawBody: BODY, header, secrets, path: PATH });
};

describe('webhook secret cache', () => {
  let db: Database;
  let site: SiteRow;
  let reads: number;
  let opens: number;
  /** The test services' box, counting the values it opens. */
  const box: SecretBox = {
    seal: (plain) => TEST_SECRET_BOX.seal(plain),
    open(sealed) {
      opens++;
      return TEST_SECRET_BOX.open(sealed);
    },
  };
  let clock: number;
  let cache: WebhookSecretCache;
  /** The database, counting reads of trigger_sources. */
  const counting: Queryable = {
    query(sql, params) {
      if (sql.includes('from trigger_sources')) reads++;
      return db.query(sql, params);
    },
  };

  beforeAll(async () => {
    db = await DATABASE_KINDS[0]!.open();
  });
  afterAll(() => db.close());
  beforeEach(async () => {
    site = await insertSite(db, (await insertAccount(db, 'a')).id);
    await connectApiTrigger(db, site, 'whsec_first');
    reads = 0;
    opens = 0;
    clock = Date.now();
    cache = new WebhookSecretCache(counting, box, WEBHOOK_SECRET_CACHE_TTL_MS, () => clock);
  });

  it("reads a site's secrets once while they are fresh, and again once the TTL has passed", async () => {
    for (let i = 0; i < 3; i++) expect(await cache.verify(site.id, signedWith('whsec_first'))).toMatchObject({ ok: true, secretIndex: 0 });
    expect(reads).toBe(1);
    // The secrets are stored sealed and opened once per fill of the cache, never per request (the webhook's hot path).
    expect(opens).toBe(1);
    clock += WEBHOOK_SECRET_CACHE_TTL_MS;
    await cache.verify(site.id, signedWith('whsec_first'));
    expect(reads).toBe(2);
    expect(opens).toBe(2);
  });

  it('refuses as a wrong secret (no_signature_match) a secret that does not open with the key, or one stored in clear', async () => {
    const otherKey = secretBox(parseSecretKey('6'.repeat(64)));
    await connectApiTrigger(db, site, 'whsec_first', undefined, otherKey);
    expect(await cache.verify(site.id, signedWith('whsec_first'))).toMatchObject({ ok: false, code: 'no_signature_match' });
    // A value in clear (as an older version stored it) is not accepted either: the start seals those (secret-upgrade.ts).
    await db.query(`update trigger_sources set secret = 'whsec_first' where site_id = $1`, [site.id]);
    expect(await cache.verify(site.id, signedWith('whsec_first'))).toMatchObject({ ok: false, code: 'no_signature_match' });
  });

  it('accepts a secret rotated after the cache was filled at once, by reading the store again before refusing', async () => {
    await cache.verify(site.id, signedWith('whsec_first'));
    const rotated = await rotateWebhookSecret(db, box, site.id);
    expect(await cache.verify(site.id, signedWith(rotated!.secret))).toMatchObject({ ok: true, secretIndex: 0 });
    // The old one is now the previous secret, in its grace period.
    expect(await cache.verify(site.id, signedWith('whsec_first'))).toMatchObject({ ok: true, secretIndex: 1 });
  });

  it('refuses a previous secret whose grace period was cut short in the store at once', async () => {
    await connectApiTrigger(db, site, 'whsec_new', { secret: 'whsec_first', expiresAt: new Date(Date.now() + 3600_000) });
    expect(await cache.verify(site.id, signedWith('whsec_first'))).toMatchObject({ ok: true, secretIndex: 1 });
    await connectApiTrigger(db, site, 'whsec_new', { secret: 'whsec_first', expiresAt: new Date(Date.now() - 1000) });
    expect(await cache.verify(site.id, signedWith('whsec_first'))).toMatchObject({ ok: false, code: 'no_signature_match' });
  });

  it('refuses a wrong signature after one fresh read, not more', async () => {
    await cache.verify(site.id, signedWith('whsec_first'));
    expect(await cache.verify(site.id, signedWith('whsec_wrong'))).toMatchObject({ ok: false, code: 'no_signature_match' });
    expect(reads).toBe(2);
  });

  it('says a site has no secret (null) without caching that, so a secret connected next works at once', async () => {
    const bare = await insertSite(db, site.account_id);
    expect(await cache.verify(bare.id, signedWith('whsec_later'))).toBeNull();
    await connectApiTrigger(db, bare, 'whsec_later');
    expect(await cache.verify(bare.id, signedWith('whsec_later'))).toMatchObject({ ok: true });
  });

  it('may accept a secret retired by two quick rotations until the TTL has passed, and not after', async () => {
    await cache.verify(site.id, signedWith('whsec_first'));
    await rotateWebhookSecret(db, box, site.id);
    await rotateWebhookSecret(db, box, site.id); // whsec_first is neither current nor previous now
    expect(await cache.verify(site.id, signedWith('whsec_first'))).toMatchObject({ ok: true });
    clock += WEBHOOK_SECRET_CACHE_TTL_MS;
    expect(await cache.verify(site.id, signedWith('whsec_first'))).toMatchObject({ ok: false, code: 'no_signature_match' });
  });
});
