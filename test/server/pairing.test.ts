import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DATABASE_KINDS } from './support/databases';
import { newToken, snapshotBody } from './support/fixtures';
import { describeMatch, pairingDeadline, pairingWindowOpen, PAIRING_WINDOW_MS } from '../../src/server/pairing/pairing';
import { settlePairing, type PairableEvent } from '../../src/server/pairing/late-pairing';
import type { Database } from '../../src/server/db/db';
import type { SnapshotRow } from '../../src/server/collector/sql';
import { upsertSnapshots } from '../../src/server/collector/sql';
import { insertAccount } from '../../src/server/accounts/sql';
import { insertSite, type SiteRow } from '../../src/server/api/sites/sql';
import { insertEvent } from '../../src/server/fanout/sql';
import { recordReport } from '../../src/server/webhook/report';
import { insertApiFlow } from './support/fixtures';

const NOW = new Date('2026-11-21T10:00:00.000Z');

function row(overrides: Partial<SnapshotRow> = {}): SnapshotRow {
  const s = snapshotBody();
  return {
    site_id: 'site_x', correlation_token: s.correlation_token, occurred_at: new Date(s.occurred_at), trigger: s.trigger,
    page_url: s.page_url, referrer: null, touch: s.touch, received_click_ids: { gclid: [s.touch!.click_ids.gclid!] }, cookies: s.cookies,
    consent: { ad_user_data: 'granted', ad_personalization: null }, user_agent: 'Mozilla/5.0 (test)', ip_address: '203.0.113.7',
    received_at: NOW, updated_at: NOW, ...overrides,
  };
}

describe('describeMatch', () => {
  it('rates a report without a token low, identity only', () => {
    expect(describeMatch(null, null, { now: NOW })).toEqual({
      matchQuality: 'low', reason: 'no_correlation_token', clickIds: null, occurredAt: null, data: { match_reason: 'no_correlation_token' },
      snapshot: null,
    });
  });

  it('leaves a token without its snapshot pending while the window is open, and low once it has closed', () => {
    const token = newToken();
    expect(describeMatch(null, token)).toMatchObject({ matchQuality: null, reason: 'snapshot_pending', data: { correlation_token: token } });
    expect(describeMatch(null, token, { windowClosed: true })).toMatchObject({ matchQuality: 'low', reason: 'snapshot_missing' });
  });

  it('rates a snapshot with a click id high and carries its click ids, UTMs, pages and cookies', () => {
    const snapshot = row();
    const match = describeMatch(snapshot, snapshot.correlation_token, { now: NOW });
    expect(match.matchQuality).toBe('high');
    expect(match.clickIds).toEqual({ gclid: 'Cj0KCQ-gclid-1' });
    expect(match.occurredAt).toEqual(snapshot.occurred_at);
    expect(match.data).toMatchObject({
      match_reason: 'paired', utm: snapshot.touch!.utm, landing_page_url: snapshot.touch!.landing_page_url,
      page_url: snapshot.page_url, platform_cookies: snapshot.cookies,
    });
  });

  it('returns the matched snapshot, with what delivery passes on, but never copies the user agent or IP into the event data', () => {
    const snapshot = row();
    const match = describeMatch(snapshot, snapshot.correlation_token, { now: NOW });
    expect(match.snapshot).toMatchObject({
      user_agent: 'Mozilla/5.0 (test)', ip_address: '203.0.113.7', page_url: snapshot.page_url, cookies: snapshot.cookies,
      consent: { ad_user_data: 'granted', ad_personalization: null }, touch: { captured_at: snapshot.touch!.captured_at },
    });
    expect(JSON.stringify(match.data)).not.toMatch(/203\.0\.113\.7|Mozilla/);
    expect(match.data).not.toHaveProperty('received_click_ids');
  });

  it('shows on the event the click ids the token received besides those of the delivered touch', () => {
    const received = { gclid: ['Cj0KCQ-gclid-0', 'Cj0KCQ-gclid-1'], fbclid: ['fb-1'] };
    const match = describeMatch(row({ received_click_ids: received }), 'tok', { now: NOW });
    expect(match.clickIds).toEqual({ gclid: 'Cj0KCQ-gclid-1' });
    expect(match.data.received_click_ids).toEqual(received);
  });

  it('rates a snapshot without click ids medium, also when its touch has UTMs only', () => {
    expect(describeMatch(row({ touch: null }), 'tok', { now: NOW }).matchQuality).toBe('medium');
    const utmOnly = { ...row().touch!, click_ids: {} };
    expect(describeMatch(row({ touch: utmOnly }), 'tok', { now: NOW })).toMatchObject({ matchQuality: 'medium', clickIds: null });
  });

  it('never dates a conversion after now, whatever the browser clock said', () => {
    const match = describeMatch(row({ occurred_at: new Date(NOW.getTime() + 3600_000) }), 'tok', { now: NOW });
    expect(match.occurredAt).toEqual(NOW);
  });

  it('keeps the pairing window open for ten seconds after the report', () => {
    expect(pairingWindowOpen(NOW, new Date(NOW.getTime() + PAIRING_WINDOW_MS - 1))).toBe(true);
    expect(pairingWindowOpen(NOW, new Date(NOW.getTime() + PAIRING_WINDOW_MS))).toBe(false);
    expect(pairingDeadline(NOW).getTime() - NOW.getTime()).toBe(10_000);
  });
});

describe.each(DATABASE_KINDS)('send-time pairing on $name', (kind) => {
  let db: Database;
  let site: SiteRow;
  let accountId: string;
  beforeAll(async () => {
    db = await kind.open();
    accountId = (await insertAccount(db, 'a')).id;
    site = await insertSite(db, accountId);
  });
  afterAll(() => db.close());

  async function pendingEvent(token: string): Promise<PairableEvent> {
    const { id } = await db.transaction((tx) =>
      insertEvent(tx, {
        accountId, siteId: site.id, siteKey: site.site_key, flowId: null, flowName: null, reportId: null, trigger: 'api',
        occurredAt: new Date(), matchQuality: null, email: null, clickIds: null,
        data: { customer_event_id: 'c', ...describeMatch(null, token).data }, actions: [{ destination: 'google-ads', conversionId: '1' }],
      }),
    );
    const [event] = await db.query<PairableEvent>('select id, site_id, match_quality, data, created_at from events where id = $1', [id]);
    return event!;
  }

  const stored = (id: string) =>
    db.query<{ match_quality: string | null; click_ids: unknown; data: Record<string, unknown> }>(
      'select match_quality, click_ids, data from events where id = $1', [id],
    ).then((rows) => rows[0]!);

  it('waits while the snapshot is missing and the window is open', async () => {
    const event = await pendingEvent(newToken());
    const settled = await db.transaction((tx) => settlePairing(tx, event, new Date(event.created_at.getTime() + 1000)));
    expect(settled).toEqual({ ready: false, retryAt: pairingDeadline(event.created_at) });
    expect((await stored(event.id)).match_quality).toBeNull();
  });

  it('pairs the event once its snapshot has arrived, keeping the report data', async () => {
    const token = newToken();
    const event = await pendingEvent(token);
    await upsertSnapshots(db, [{ siteId: site.id, snapshot: snapshotBody({ correlation_token: token }) }]);
    const settled = await db.transaction((tx) => settlePairing(tx, event));
    expect(settled).toMatchObject({ ready: true, match: { matchQuality: 'high', snapshot: { correlation_token: token, page_url: 'https://www.example.com/signup' } } });
    const after = await stored(event.id);
    expect(after).toMatchObject({ match_quality: 'high', click_ids: { gclid: 'Cj0KCQ-gclid-1' } });
    expect(after.data).toMatchObject({ customer_event_id: 'c', match_reason: 'paired', correlation_token: token });
  });

  it('releases the event with identity only when the window has closed without a snapshot', async () => {
    const event = await pendingEvent(newToken());
    const settled = await db.transaction((tx) => settlePairing(tx, event, new Date(event.created_at.getTime() + PAIRING_WINDOW_MS)));
    expect(settled).toMatchObject({ ready: true, match: { matchQuality: 'low', reason: 'snapshot_missing' } });
    expect(await stored(event.id)).toMatchObject({ match_quality: 'low', data: { match_reason: 'snapshot_missing' } });
  });

  it('leaves an event that is not waiting alone', async () => {
    const event = await pendingEvent(newToken());
    const settledEvent = { ...event, match_quality: 'low' };
    expect(await db.transaction((tx) => settlePairing(tx, settledEvent))).toEqual({ ready: true, match: null });
  });

  // allNew: the snapshot stored by the plain insert the collector's writer tries first for tokens it has not seen.
  it.each([false, true])('makes the held delivery of a waiting report due at once when its snapshot arrives, and only that one (allNew %s)', async (allNew) => {
    const trigger = `late-${allNew}`;
    await insertApiFlow(db, site, { triggerKey: trigger });
    const [late, other] = [newToken(), newToken()];
    for (const [i, token] of [late, other].entries()) {
      const response = await recordReport(db, site, trigger, { customer_event_id: `${trigger}-${i}`, correlation_token: token, identity: {}, allow_uncorrelated: false });
      expect(response).toMatchObject({ status: 'promoted', promoted_count: 1, correlated: true });
    }
    const dueNow = () =>
      db.query<{ customer_event_id: string; due: boolean }>(
        `select r.customer_event_id, o.due_at <= now() as due from outbox o join event_actions a on a.id = o.event_action_id
         join events e on e.id = a.event_id join reports r on r.id = e.report_id where r.customer_event_id like $1
         order by r.customer_event_id`,
        [`${trigger}-%`],
      );
    expect(await dueNow()).toEqual([{ customer_event_id: `${trigger}-0`, due: false }, { customer_event_id: `${trigger}-1`, due: false }]);
    await upsertSnapshots(db, [{ siteId: site.id, snapshot: snapshotBody({ correlation_token: late }) }, { siteId: site.id, snapshot: snapshotBody() }], { allNew });
    expect(await dueNow()).toEqual([{ customer_event_id: `${trigger}-0`, due: true }, { customer_event_id: `${trigger}-1`, due: false }]);
  });
});
