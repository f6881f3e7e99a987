/**
 * An erasure racing the writers that copy a person's data: after it has answered, nothing of the person may be written
 * again or sent. Each race is laid out step by step, never by timing: a writer's handle runs the erasure (or lets it
 * go on) just before the statement the race is about.
 *
 * Planned before, written after (both stores): a report's planning reads the signup a later stage takes its email and
 * click from, or a snapshot, and its write comes after an erasure deleted them. The write checks what was read is
 * still there, and plans the report again if not.
 *
 * Two processes on one PostgreSQL (or one service's pool): one erases while the other builds a burst's report or
 * redelivers an event; the test lets the first go on once the second waits for it (PostgreSQL's pg_blocking_pids), or
 * once the second is done if it does not wait.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHash } from 'node:crypto';
import { DATABASE_KINDS } from './support/databases';
import { insertApiFlow, newToken, snapshotBody } from './support/fixtures';
import { createDeliveryFixture, insertReportedEvent, memoryLog, openTwoHandles, settingsFor, TEST_SECRET_KEY } from './delivery/fixtures';
import type { Database, Queryable } from '../../src/server/db/db';
import { insertAccount } from '../../src/server/accounts/sql';
import { insertSite, type SiteRow } from '../../src/server/api/sites/sql';
import { upsertSnapshots } from '../../src/server/collector/sql';
import { recordReports } from '../../src/server/webhook/report';
import { recordAdjustment } from '../../src/server/webhook/adjustment';
import { fanOutPendingReports } from '../../src/server/webhook/deferred-fanout';
import { erasePerson, type ErasureRecord } from '../../src/server/api/erasures/erasures';
import { erasureHash } from '../../src/server/api/erasures/keyed-hash';
import { startDeliveryWorker } from '../../src/server/delivery/worker';
import { redeliverFailedActions, type RedeliveryResult } from '../../src/server/delivery/redeliver';
import { redeliverEvent } from '../../src/server/api/events/redeliver';
import { ERASED_ERROR_CODE } from '../../src/server/api/erasures/sql';
import { startFakeGoogle, type FakeGoogle } from '../../src/demo/fakes/google';
import { sealCredentials, upsertDestination } from '../../src/server/destinations';
import { secretBox } from '../../src/server/db/secret-box';

const hash = erasureHash(settingsFor('http://x.invalid'));

/** A handle whose statements go to `db`, running `before()` once just before the first one whose text holds `match`. */
function beforeStatement(db: Database, match: string, before: () => Promise<void>): Database {
  let fired = false;
  return new Proxy(db, {
    get(target, prop, receiver) {
      if (prop !== 'query') return Reflect.get(target, prop, receiver);
      return async (sql: string, params?: unknown[]) => {
        if (!fired && sql.includes(match)) {
          fired = true;
          await before();
        }
        return target.query(sql, params as never);
      };
    },
  });
}

/** A handle whose transactions run `during(tx)` once, just before the first statement whose text holds `match`. */
function inTransactionBefore(db: Database, match: string, during: (tx: Queryable) => Promise<void>): Database {
  let fired = false;
  return new Proxy(db, {
    get(target, prop, receiver) {
      if (prop !== 'transaction') return Reflect.get(target, prop, receiver);
      return <T>(fn: (tx: Queryable) => Promise<T>) =>
        target.transaction((tx) =>
          fn({
            query: async (sql: string, params?: unknown[]) => {
              if (!fired && sql.includes(match)) {
                fired = true;
                await during(tx);
              }
              return tx.query(sql, params as never);
            },
          } as Queryable),
        );
    },
  });
}

/**
 * Resolves once a statement of another connection waits for a lock `tx`'s transaction holds, or once `other` has
 * settled (it did not have to wait).
 */
async function untilWaitingFor(tx: Queryable, observer: Database, other: Promise<unknown>): Promise<void> {
  const [{ pid }] = (await tx.query<{ pid: number }>('select pg_backend_pid() as pid')) as [{ pid: number }];
  let settled = false;
  void other.then(() => (settled = true), () => (settled = true));
  while (!settled) {
    const [row] = await observer.query<{ n: number }>('select count(*)::int as n from pg_stat_activity where $1::int = any(pg_blocking_pids(pid))', [pid]);
    if (row!.n > 0) return;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

/** A snapshot of a click with `gclid` under a fresh token; returns the token. */
async function click(db: Database, site: SiteRow, gclid: string): Promise<string> {
  const token = newToken();
  await upsertSnapshots(db, [{
    siteId: site.id,
    snapshot: snapshotBody({
      correlation_token: token,
      occurred_at: new Date(Date.now() - 120_000).toISOString(),
      touch: { click_ids: { gclid }, utm: {}, landing_page_url: `https://www.example.com/?gclid=${gclid}`, referrer: null, captured_at: new Date(Date.now() - 3_600_000).toISOString() },
    }),
  }]);
  return token;
}

/** A signup of `email` with a token, written whole (its events with it). */
async function signup(db: Database, site: SiteRow, customerEventId: string, token: string | null, email: string, customerId?: string): Promise<void> {
  const [outcome] = await recordReports(db, [{
    site, triggerKey: 'signup', now: new Date(Date.now() - 60_000),
    report: { customer_event_id: customerEventId, correlation_token: token, identity: { email }, allow_uncorrelated: false, ...(customerId ? { customer_id: customerId } : {}) },
  }]);
  expect(outcome!.ok).toBe(true);
}

function erase(db: Database, site: SiteRow, email: string): Promise<ErasureRecord> {
  return erasePerson(db, site.account_id, { email, phone: null, customerId: null }, hash);
}

/** Google Ads (Data Manager API, the fake's refresh token) as the site's account's destination. */
async function connectGoogle(db: Database, site: SiteRow, google: FakeGoogle): Promise<void> {
  await upsertDestination(db, site.account_id, 'google-ads', { customer_id: '1234567890', login_customer_id: null, api: 'data_manager' },
    sealCredentials(secretBox(Buffer.from(TEST_SECRET_KEY, 'hex')), { refresh_token: google.issueRefreshToken() }));
}

/** Delivers everything due on `db`; returns what reached Google's ingest meanwhile, as text. */
async function deliverAllTo(db: Database, google: FakeGoogle): Promise<string> {
  const before = google.server.requests.length;
  const worker = startDeliveryWorker({ db, settings: settingsFor('http://legacy.invalid', {}, google), log: memoryLog(), autoStart: false });
  await worker.drain();
  await worker.stop();
  return JSON.stringify(google.server.requests.slice(before).filter((r) => r.path === '/v1/events:ingest').map((r) => r.body));
}

describe.each(DATABASE_KINDS)('a report planned before an erasure and written after it, on $name', (kind) => {
  let db: Database;
  let site: SiteRow;
  let google: FakeGoogle;

  beforeAll(async () => {
    db = await kind.open();
    google = await startFakeGoogle();
    site = await insertSite(db, (await insertAccount(db, 'a')).id);
    await insertApiFlow(db, site, { name: 'signup', triggerKey: 'signup' });
    await insertApiFlow(db, site, { name: 'paid', triggerKey: 'paid', triggerType: 'conversion' });
    await connectGoogle(db, site, google);
  });
  afterAll(async () => {
    await db?.close();
    await google?.close();
  });

  const deliverAll = () => deliverAllTo(db, google);

  const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

  /** The events of a report (by its customer_event_id as sent), with what identifies. */
  function eventsOf(customerEventId: string) {
    return db.query<{ email: string | null; click_ids: unknown; erased_at: Date | null; data: Record<string, unknown> }>(
      `select e.email, e.click_ids, e.erased_at, e.data from events e join reports r on r.id = e.report_id
       where r.site_id = $1 and r.customer_event_id = $2`,
      [site.id, customerEventId],
    );
  }

  it("a later stage takes nothing of a signup erased between its planning and its write: no email, no click, none sent", async () => {
    const token = await click(db, site, 'GCLID-STAGE-SIGNUP');
    await signup(db, site, 'stage-signup-1', token, 'stage@example.com', 'cus_stage');
    await deliverAll(); // the signup's own conversion, before the erasure: not what this test is about

    let erased: ErasureRecord | null = null;
    // The stage has read the signup (its email, token and click); the erasure runs whole before the stage's write.
    const webhook = beforeStatement(db, 'insert into reports', async () => {
      erased = await erase(db, site, 'stage@example.com');
    });
    const [outcome] = await recordReports(webhook, [{
      site, triggerKey: 'paid', kind: 'conversion', now: new Date(),
      report: { customer_event_id: 'stage-paid-1', correlation_token: null, identity: {}, allow_uncorrelated: true, customer_id: 'cus_stage', value: 10, currency: 'USD' },
    }]);
    expect(erased!.matched.reports).toBe(1);
    // Recorded as if it had arrived after the erasure: its own customer id, no signup found, so no click.
    expect(outcome).toMatchObject({ ok: true, response: { status: 'promoted', match: 'none', correlated: false } });
    const [report] = await db.query<{ identity: unknown; correlation_token: string | null; customer_id: string | null }>(
      'select identity, correlation_token, customer_id from reports where site_id = $1 and customer_event_id = $2', [site.id, 'stage-paid-1']);
    expect(report).toEqual({ identity: {}, correlation_token: null, customer_id: 'cus_stage' });
    const events = await eventsOf('stage-paid-1');
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({ email: null, click_ids: null });
    expect(JSON.stringify(events[0]!.data)).not.toMatch(/GCLID-STAGE-SIGNUP|stage-signup-1|stage@example/);

    const sent = await deliverAll();
    expect(sent).not.toContain('GCLID-STAGE-SIGNUP');
    expect(sent).not.toContain(sha256('stage@example.com'));
  });

  it("a signup whose browser's snapshot an erasure deleted between its planning and its write carries no click", async () => {
    // One browser, two people: the erased one's signup and another's, of the same token.
    const token = await click(db, site, 'GCLID-SHARED-BROWSER');
    await signup(db, site, 'shared-erased-1', token, 'shared.erased@example.com');
    await deliverAll();

    const webhook = beforeStatement(db, 'insert into reports', async () => {
      expect((await erase(db, site, 'shared.erased@example.com')).matched.snapshots).toBe(1);
    });
    const [outcome] = await recordReports(webhook, [{
      site, triggerKey: 'signup', now: new Date(),
      report: { customer_event_id: 'shared-other-1', correlation_token: token, identity: { email: 'other@example.com' }, allow_uncorrelated: false },
    }]);
    expect(outcome!.ok).toBe(true);
    const events = await eventsOf('shared-other-1');
    expect(events).toHaveLength(1);
    // As a signup arriving after the erasure: its snapshot is not there (yet), so it waits for one.
    expect(events[0]).toMatchObject({ email: 'other@example.com', click_ids: null, data: { match_reason: 'snapshot_pending' } });
    expect(await deliverAll()).not.toContain('GCLID-SHARED-BROWSER');
  });

  it("a burst's signup built after an erasure deleted the snapshot its build had read carries no click", async () => {
    const token = await click(db, site, 'GCLID-SHARED-BURST');
    await signup(db, site, 'burst-erased-1', token, 'burst.erased@example.com');
    await deliverAll();
    // Stored during a burst, waiting for its events.
    const [stored] = await recordReports(db, [{
      site, triggerKey: 'signup', now: new Date(),
      report: { customer_event_id: 'burst-other-1', correlation_token: token, identity: { email: 'burst.other@example.com' }, allow_uncorrelated: false },
    }], { defer: true });
    expect(stored).toMatchObject({ ok: true, deferred: true });

    // The fan-out has read the waiting report and its snapshot; the erasure runs whole before the build's statement.
    const fanOut = beforeStatement(db, 'delete from report_fanouts f', async () => {
      expect((await erase(db, site, 'burst.erased@example.com')).matched.snapshots).toBe(1);
    });
    expect((await fanOutPendingReports(fanOut)).built).toBe(1);
    expect(await db.query('select * from report_fanouts')).toEqual([]);
    const events = await eventsOf('burst-other-1');
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({ email: 'burst.other@example.com', click_ids: null, data: { match_reason: 'snapshot_pending' } });
    expect(await deliverAll()).not.toContain('GCLID-SHARED-BURST');
  });

  it("a send-time pairing that read its event before an erasure writes no click onto it and sends nothing", async () => {
    // A signup whose snapshot has not come yet: its event waits for it, and delivery pairs it at send time.
    const token = newToken();
    await signup(db, site, 'late-pairing-1', token, 'late.pairing@example.com');
    expect((await eventsOf('late-pairing-1'))[0]).toMatchObject({ click_ids: null, data: { match_reason: 'snapshot_pending' } });

    // The round has read the waiting event; before it looks for the snapshot, the person is erased, and then the
    // browser's snapshot arrives (its cookie still holds the token): stored as any new snapshot.
    const round = beforeStatement(db, 'from snapshots where site_id = $1 and correlation_token = $2', async () => {
      expect((await erase(db, site, 'late.pairing@example.com')).matched.events).toBe(1);
      await upsertSnapshots(db, [{
        siteId: site.id,
        snapshot: snapshotBody({
          correlation_token: token,
          touch: { click_ids: { gclid: 'GCLID-LATE-PAIRING' }, utm: {}, landing_page_url: 'https://www.example.com/?gclid=GCLID-LATE-PAIRING', referrer: null, captured_at: new Date(Date.now() - 3_600_000).toISOString() },
        }),
      }]);
    });
    const sent = await deliverAllTo(round, google);
    expect(sent).not.toContain('GCLID-LATE-PAIRING');
    expect(sent).not.toContain(sha256('late.pairing@example.com'));
    // The erased event holds nothing of the browser: no click, no token, no page.
    const [event] = await eventsOf('late-pairing-1');
    expect(event).toMatchObject({ email: null, click_ids: null, erased_at: expect.any(Date), data: { erased: true } });
    expect(JSON.stringify(event!.data)).not.toMatch(new RegExp(`GCLID-LATE-PAIRING|${token}|example\\.com/`));
  });

  it('an adjustment round that read its results before an erasure sends none of them', async () => {
    const token = await click(db, site, 'GCLID-ADJUST-RACE');
    await signup(db, site, 'adjust-race-1', token, 'adjust.race@example.com');
    expect(await deliverAll()).toContain('GCLID-ADJUST-RACE');
    await recordAdjustment(db, site.id, { adjustment_id: 'upgrade-adjust-race-1', customer_event_id: 'adjust-race-1', type: 'restate', value: 49, currency: 'EUR', occurred_at: null }, new Date());

    // The round has read its adjustment results and the conversions they adjust (click, identity); the person is erased
    // before it looks up the connection to send them on.
    let read = false;
    let erased: ErasureRecord | null = null;
    const round = new Proxy(db, {
      get(target, prop, receiver) {
        if (prop !== 'query') return Reflect.get(target, prop, receiver);
        return async (sql: string, params?: unknown[]) => {
          if (sql.includes('as earlier_occurred_at')) read = true;
          else if (read && !erased && sql.includes('from destinations where id = any')) erased = await erase(db, site, 'adjust.race@example.com');
          return target.query(sql, params as never);
        };
      },
    });
    const sent = await deliverAllTo(round, google);
    expect(erased!.matched.events).toBe(1);
    expect(sent).not.toContain('GCLID-ADJUST-RACE');
    expect(sent).not.toContain(sha256('adjust.race@example.com'));
    const results = await db.query<{ status: string; request: unknown }>(
      `select r.status, r.request from adjustment_results r join adjustments j on j.id = r.adjustment_id
       join reports p on p.id = j.report_id where p.site_id = $1 and p.erased_id_hash is not null and j.type = 'restate' and r.request is not null`,
      [site.id],
    );
    expect(results).toEqual([]);
  });
});

describe.each(DATABASE_KINDS.filter((k) => k.name === 'postgres'))('an erasure and another process writing, on $name', (kind) => {
  let h: Awaited<ReturnType<typeof openTwoHandles>>;
  let site: SiteRow;
  let google: FakeGoogle;

  beforeAll(async () => {
    h = await openTwoHandles(kind);
    google = await startFakeGoogle();
    site = await insertSite(h.first, (await insertAccount(h.first, 'a')).id);
    await insertApiFlow(h.first, site, { name: 'signup', triggerKey: 'signup' });
    await connectGoogle(h.first, site, google);
  });
  afterAll(async () => {
    await h?.close();
    await google?.close();
  });

  const deliverAll = () => deliverAllTo(h.first, google);

  it("a burst's report built by another process while the erasure runs is built before it (and erased) or not at all", async () => {
    const token = await click(h.first, site, 'GCLID-BUILT-MEANWHILE');
    const [stored] = await recordReports(h.first, [{
      site, triggerKey: 'signup', now: new Date(),
      report: { customer_event_id: 'built-meanwhile-1', correlation_token: token, identity: { email: 'gone@example.com' }, allow_uncorrelated: false },
    }], { defer: true });
    expect(stored).toMatchObject({ ok: true, deferred: true });

    // The erasure has found the person's report and looked for its events (none yet); the other process's fan-out
    // reads the waiting report (with the email) and builds it now, before the erasure goes on.
    let building: Promise<unknown> = Promise.resolve();
    const eraser = inTransactionBefore(h.first, 'with unbuilt as', async (tx) => {
      building = fanOutPendingReports(h.second);
      await untilWaitingFor(tx, h.first, building);
    });
    const erased = await erasePerson(eraser, site.account_id, { email: 'gone@example.com', phone: null, customerId: null }, hash);
    await building;
    expect(erased.matched.reports).toBe(1);

    const events = await h.first.query<{ email: string | null; click_ids: unknown; erased_at: Date | null }>(
      'select email, click_ids, erased_at from events where site_id = $1', [site.id]);
    for (const event of events) expect(event).toMatchObject({ email: null, click_ids: null, erased_at: expect.any(Date) });
    expect(await h.first.query('select o.* from outbox o join event_actions a on a.id = o.event_action_id join events e on e.id = a.event_id where e.site_id = $1', [site.id])).toEqual([]);
    expect(await h.first.query('select * from report_fanouts')).toEqual([]);
    const sent = await deliverAll();
    expect(sent).not.toContain('GCLID-BUILT-MEANWHILE');
    expect(sent).not.toContain(createHash('sha256').update('gone@example.com').digest('hex'));
  });

  /** An event of `email` whose one action failed for good (its outbox row gone, as recordOutcomes leaves it). */
  async function failedEvent(email: string): Promise<{ accountId: string; eventId: string; actionIds: string[] }> {
    const fx = await createDeliveryFixture(h.first, { api: 'data_manager', refreshToken: google.issueRefreshToken() });
    const { eventId, actionIds } = await insertReportedEvent(h.first, fx, { identity: { email } });
    await h.first.query('delete from outbox where event_action_id = any($1::text[])', [actionIds]);
    await h.first.query(`update event_actions set status = 'failed', attempts = 1, error = '{"code":"x","message":"m"}' where id = any($1::text[])`, [actionIds]);
    await h.first.query(`update events set status = 'failed' where id = $1`, [eventId]);
    return { accountId: fx.accountId, eventId, actionIds };
  }

  /** What is left of an event to send: its status, its actions' statuses and error codes, its outbox rows. */
  async function sendable(eventId: string) {
    const [event] = await h.first.query<{ status: string; erased: boolean }>('select status, erased_at is not null as erased from events where id = $1', [eventId]);
    const actions = await h.first.query<{ status: string; code: string | null }>("select status, error ->> 'code' as code from event_actions where event_id = $1", [eventId]);
    const outbox = await h.first.query('select o.id from outbox o join event_actions a on a.id = o.event_action_id where a.event_id = $1', [eventId]);
    return { event, actions, outbox: outbox.length };
  }

  it('a redelivery asked for while the erasure commits answers 409 event_erased and queues nothing', async () => {
    const { accountId, eventId } = await failedEvent('racer@example.com');
    // The erasure has anonymised the event (not committed yet); the other process's POST .../redeliver comes now,
    // having read the event before the erasure commits.
    let redelivery: Promise<unknown> = Promise.resolve();
    const eraser = inTransactionBefore(h.first, 'insert into erasures', async (tx) => {
      redelivery = redeliverEvent(h.second, accountId, eventId);
      await untilWaitingFor(tx, h.first, redelivery);
    });
    expect((await erasePerson(eraser, accountId, { email: 'racer@example.com', phone: null, customerId: null }, hash)).matched.events).toBe(1);
    await expect(redelivery).rejects.toMatchObject({ status: 409, code: 'event_erased' });
    expect(await sendable(eventId)).toEqual({ event: { status: 'failed', erased: true }, actions: [{ status: 'failed', code: 'x' }], outbox: 0 });
    expect(await deliverAll()).not.toContain('racer');
  });

  it('an erasure coming while a redelivery queues an event again waits for it and cancels what it queued', async () => {
    const { accountId, eventId } = await failedEvent('second@example.com');
    // The redelivery has taken the event (not erased yet); the erasure starts now, in the other process.
    let erasure: Promise<ErasureRecord> | null = null;
    const redeliverer = inTransactionBefore(h.second, 'update event_actions', async (tx) => {
      erasure = erasePerson(h.first, accountId, { email: 'second@example.com', phone: null, customerId: null }, hash);
      await untilWaitingFor(tx, h.first, erasure);
    });
    const result: RedeliveryResult = await redeliverFailedActions(redeliverer, eventId);
    expect(result).toMatchObject({ erased: false, actionIds: [expect.any(String)] });
    expect((await erasure!).matched.events).toBe(1);
    expect(await sendable(eventId)).toEqual({ event: { status: 'failed', erased: true }, actions: [{ status: 'failed', code: ERASED_ERROR_CODE }], outbox: 0 });
    expect(await deliverAll()).not.toContain('second');
  });
});
