import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DATABASE_KINDS } from './support/databases';
import { insertApiFlow, newToken, snapshotBody } from './support/fixtures';
import type { Snapshot, Touch } from '../../src/protocol/collector';
import type { Database, Queryable } from '../../src/server/db/db';
import { newId } from '../../src/server/db/ids';
import { insertAccount } from '../../src/server/accounts/sql';
import { insertSite, type SiteRow } from '../../src/server/api/sites/sql';
import { findSnapshot, upsertSnapshots, type SnapshotClient, type SnapshotWrite } from '../../src/server/collector/sql';
import { SnapshotWriter } from '../../src/server/collector/snapshot-writer';
import { purgeExpiredSnapshots } from '../../src/server/collector/retention';
import { formWatchesOf, loadSiteConfig } from '../../src/server/collector/config';
import { cookieDomainOf } from '../../src/server/collector/cookie-domain';
import { clientIp, snapshotClientOf, USER_AGENT_MAX } from '../../src/server/collector/snapshot-client';

/** An ad touch with one click id, captured at `at`. */
function adTouch(clickIds: Touch['click_ids'], at: string, utmSource = 'google'): Touch {
  return { ...snapshotBody().touch!, click_ids: clickIds, utm: { utm_source: utmSource }, captured_at: at };
}

const CLIENT: SnapshotClient = { userAgent: 'Mozilla/5.0 (first)', ipAddress: '203.0.113.7' };

describe.each(DATABASE_KINDS)('snapshot merge on $name', (kind) => {
  let db: Database;
  let siteId: string;
  beforeAll(async () => {
    db = await kind.open();
    siteId = (await insertSite(db, (await insertAccount(db, 'merge')).id, { domain: 'https://example.com' })).id;
  });
  afterAll(() => db.close());

  async function storeInTurn(...writes: Array<Snapshot | Omit<SnapshotWrite, 'siteId'>>) {
    for (const write of writes) {
      const item = 'snapshot' in write ? { siteId, ...write } : { siteId, snapshot: write };
      await upsertSnapshots(db, [item]);
    }
    const first = writes[0]!;
    return (await findSnapshot(db, siteId, ('snapshot' in first ? first.snapshot : first).correlation_token))!;
  }

  it('delivers the touch with the newer captured_at, whole, and keeps the older click id', async () => {
    const token = newToken();
    const older = adTouch({ gclid: 'g-old' }, '2026-11-20T09:00:00.000Z', 'old-campaign');
    const newer = adTouch({ fbclid: 'fb-new' }, '2026-11-21T09:00:00.000Z', 'facebook');
    const row = await storeInTurn(snapshotBody({ correlation_token: token, touch: older }), snapshotBody({ correlation_token: token, touch: newer }));
    expect(row.touch).toEqual(newer);
    expect(row.received_click_ids).toEqual({ gclid: ['g-old'], fbclid: ['fb-new'] });
  });

  it('keeps the newer touch when an older one arrives after it, and still keeps the older click id', async () => {
    const token = newToken();
    const older = adTouch({ gclid: 'g-1' }, '2026-11-20T09:00:00.000Z');
    const newer = adTouch({ gclid: 'g-2' }, '2026-11-21T09:00:00.000Z');
    const row = await storeInTurn(snapshotBody({ correlation_token: token, touch: newer }), snapshotBody({ correlation_token: token, touch: older }));
    expect(row.touch).toEqual(newer);
    expect(row.received_click_ids).toEqual({ gclid: ['g-2', 'g-1'] });
  });

  it('never lets a UTM-only touch replace an ad touch, even a newer one', async () => {
    const token = newToken();
    const ad = adTouch({ gclid: 'g-1' }, '2026-11-20T09:00:00.000Z');
    const newsletter = adTouch({}, '2026-11-21T09:00:00.000Z', 'newsletter');
    const row = await storeInTurn(snapshotBody({ correlation_token: token, touch: ad }), snapshotBody({ correlation_token: token, touch: newsletter }));
    expect(row.touch).toEqual(ad);
  });

  it('counts a click id received twice once', async () => {
    const token = newToken();
    const touch = adTouch({ gclid: 'g-1' }, '2026-11-20T09:00:00.000Z');
    const row = await storeInTurn(snapshotBody({ correlation_token: token, touch }), snapshotBody({ correlation_token: token, touch }));
    expect(row.received_click_ids).toEqual({ gclid: ['g-1'] });
  });

  it('merges snapshots of one token group-committed in one batch as if they had come one by one', async () => {
    const batches: SnapshotWrite[][] = [];
    const writer = new SnapshotWriter(db, {
      maxDelayMs: 20,
      upsert: (q: Queryable, writes) => {
        batches.push([...writes]);
        return upsertSnapshots(q, writes);
      },
    });
    const token = newToken();
    const touches = [
      adTouch({ gclid: 'g-a' }, '2026-11-21T08:00:00.000Z'),
      adTouch({ gclid: 'g-c', msclkid: 'ms-c' }, '2026-11-21T10:00:00.000Z'),
      adTouch({ gclid: 'g-b' }, '2026-11-21T09:00:00.000Z'),
    ];
    const others = Array.from({ length: 10 }, () => snapshotBody());
    await Promise.all([
      ...touches.map((touch, i) =>
        writer.write({ siteId, snapshot: snapshotBody({ correlation_token: token, touch, occurred_at: `2026-11-21T11:0${i}:00.000Z` }) }),
      ),
      ...others.map((snapshot) => writer.write({ siteId, snapshot })),
    ]);
    // One group commit, split into rounds so that no statement updates the token's row twice.
    expect(batches.flat()).toHaveLength(13);
    for (const batch of batches) expect(batch.filter((w) => w.snapshot.correlation_token === token).length).toBeLessThanOrEqual(1);
    const row = (await findSnapshot(db, siteId, token))!;
    expect(row.touch).toEqual(touches[1]);
    expect(row.received_click_ids).toEqual({ gclid: ['g-a', 'g-c', 'g-b'], msclkid: ['ms-c'] });
    expect(row.occurred_at.toISOString()).toBe('2026-11-21T11:00:00.000Z');
    for (const s of others) expect(await findSnapshot(db, siteId, s.correlation_token)).not.toBeNull();
  });

  it('records the user agent and IP address of the first snapshot that had them; a later one only fills what was missing', async () => {
    const token = newToken();
    const row = await storeInTurn(
      { snapshot: snapshotBody({ correlation_token: token }) },
      { snapshot: snapshotBody({ correlation_token: token }), client: CLIENT },
      { snapshot: snapshotBody({ correlation_token: token }), client: { userAgent: 'Other/1.0', ipAddress: '198.51.100.1' } },
    );
    expect(row).toMatchObject({ user_agent: CLIENT.userAgent, ip_address: CLIENT.ipAddress });
  });

  it('keeps the latest consent answer of each signal, and an answer a later snapshot does not give', async () => {
    const token = newToken();
    const row = await storeInTurn(
      snapshotBody({ correlation_token: token }),
      snapshotBody({ correlation_token: token, consent: { ad_user_data: 'granted', ad_personalization: 'granted' } }),
      snapshotBody({ correlation_token: token, consent: { ad_user_data: 'denied', ad_personalization: null } }),
    );
    expect(row.consent).toEqual({ ad_user_data: 'denied', ad_personalization: 'granted' });
  });

  it('deletes the user agent and IP address with the snapshot after the retention period', async () => {
    const token = newToken();
    await upsertSnapshots(db, [{ siteId, snapshot: snapshotBody({ correlation_token: token }), client: CLIENT }]);
    await purgeExpiredSnapshots(db, 30, new Date(Date.now() + 31 * 86_400_000)); // 31 days later
    expect(await db.query('select 1 from snapshots where ip_address = $1 and correlation_token = $2', [CLIENT.ipAddress, token])).toEqual([]);
  });
});

describe.each(DATABASE_KINDS)('loader config on $name', (kind) => {
  let db: Database;
  let site: SiteRow;
  beforeAll(async () => {
    db = await kind.open();
    site = await insertSite(db, (await insertAccount(db, 'config')).id, { domain: 'https://www.example.co.uk' });
  });
  afterAll(() => db.close());

  async function insertFormFlow(trigger: Record<string, unknown>, status: 'live' | 'draft' = 'live'): Promise<void> {
    await db.query(
      `insert into flows (id, account_id, site_id, name, trigger_config, actions_config, status, published_at)
       values ($1, $2, $3, 'Form flow', $4, '[]', $5, case when $5 = 'live' then now() end)`,
      [newId('flow'), site.account_id, site.id, JSON.stringify(trigger), status],
    );
  }

  it('lists the form integrations of live form-trigger flows only, once each, and the registrable cookie domain', async () => {
    expect(await loadSiteConfig(db, site)).toMatchObject({ cookie_domain: 'example.co.uk', forms: [] });
    await insertFormFlow({ integrationId: 'gravity-forms', pageFilter: 'all' });
    await insertFormFlow({ integrationId: 'hubspot', pageFilter: '/pricing/*' });
    await insertFormFlow({ integrationId: 'gravity-forms', pageFilter: 'ALL' });
    await insertFormFlow({ integrationId: 'typeform', pageFilter: 'all' }, 'draft');
    await insertApiFlow(db, site, { triggerKey: 'signup' });
    expect((await loadSiteConfig(db, site)).forms).toEqual([
      { integration: 'gravity-forms', page_filter: 'all' },
      { integration: 'hubspot', page_filter: '/pricing/*' },
    ]);
  });
});

describe('the config pieces', () => {
  it.each<[string | null, string | null]>([
    ['https://www.example.co.uk', 'example.co.uk'],
    ['https://example.com', 'example.com'],
    ['https://app.example.com:8443', 'example.com'],
    ['https://shop.myapp.herokuapp.com', 'myapp.herokuapp.com'],
    ['http://localhost:3000', null],
    ['http://app.localhost:3000', null],
    ['http://127.0.0.1:8080', null],
    ['http://[::1]:8080', null],
    [null, null],
  ])('gives %s the cookie domain %s', (domain, expected) => {
    expect(cookieDomainOf(domain)).toBe(expected);
  });

  it('leaves out form triggers the loader cannot act on', () => {
    expect(formWatchesOf([
      { integrationId: 'no-such-tool', pageFilter: 'all' },
      { integrationId: 'webflow', pageFilter: 'signup' },
      { integrationId: 'webflow', pageFilter: ' /signup ' },
    ])).toEqual([{ integration: 'webflow', page_filter: '/signup' }]);
  });
});

describe('snapshotClientOf', () => {
  it('takes the user agent and the IP address of the request, capped and in the form ad platforms expect', () => {
    expect(snapshotClientOf({ headers: { 'user-agent': ' Mozilla/5.0 ' }, ip: '::ffff:203.0.113.7' })).toEqual({
      userAgent: 'Mozilla/5.0', ipAddress: '203.0.113.7',
    });
    expect(snapshotClientOf({ headers: { 'user-agent': 'x'.repeat(5000) }, ip: '2001:DB8::1' })).toEqual({
      userAgent: 'x'.repeat(USER_AGENT_MAX), ipAddress: '2001:db8::1',
    });
    expect(snapshotClientOf({ headers: {}, ip: undefined })).toEqual({ userAgent: null, ipAddress: null });
  });

  it('refuses what is not an IP address', () => {
    expect(clientIp('unknown')).toBeNull();
    expect(clientIp('fe80::1%eth0')).toBe('fe80::1');
  });
});
