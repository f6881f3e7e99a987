import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DATABASE_KINDS } from './support/databases';
import { insertApiFlow, newToken, snapshotBody } from './support/fixtures';
import { openTwoHandles } from './delivery/fixtures';
import type { Database } from '../../src/server/db/db';
import { insertAccount } from '../../src/server/accounts/sql';
import { insertSite, type SiteRow } from '../../src/server/api/sites/sql';
import { insertEvent } from '../../src/server/fanout/sql';
import { upsertSnapshots } from '../../src/server/collector/sql';
import { QUEUED_BURST, ReportWriter } from '../../src/server/webhook/report-writer';
import { recordReports, type ReportSubmission, type ReportingSite } from '../../src/server/webhook/report';
import { insertReportsWithEvents, isEventSlotTaken } from '../../src/server/webhook/report-batch-sql';
import type { ValidReport } from '../../src/server/webhook/report-input';

function submission(site: ReportingSite, customerEventId: string, overrides: Partial<ValidReport> & { triggerKey?: string } = {}): ReportSubmission {
  const { triggerKey = 'signup', ...report } = overrides;
  return {
    site,
    triggerKey,
    report: { customer_event_id: customerEventId, correlation_token: null, identity: {}, allow_uncorrelated: true, ...report },
    now: new Date(),
  };
}

/** A writer whose batches the test can see (their sizes, in order). */
function observedWriter(db: Database, options: { maxDelayMs?: number } = {}) {
  const batches: number[] = [];
  const writer = new ReportWriter(db, {
    ...options,
    record: (target, submissions) => {
      batches.push(submissions.length);
      return recordReports(target, submissions);
    },
  });
  return { writer, batches };
}

async function counts(db: Database, siteId: string, customerEventId: string) {
  const [row] = await db.query<{ reports: number; events: number; outbox: number }>(
    `select (select count(*)::int from reports where site_id = $1 and customer_event_id = $2) as reports,
            (select count(*)::int from events e join reports r on r.id = e.report_id where r.site_id = $1 and r.customer_event_id = $2) as events,
            (select count(*)::int from outbox o join event_actions a on a.id = o.event_action_id join events e on e.id = a.event_id
               join reports r on r.id = e.report_id where r.site_id = $1 and r.customer_event_id = $2) as outbox`,
    [siteId, customerEventId],
  );
  return row!;
}

describe.each(DATABASE_KINDS)('webhook group commit on $name', (kind) => {
  let db: Database;
  let siteA: SiteRow;
  let siteB: SiteRow;
  let seq = 0;
  const id = (label: string) => `${label}-${++seq}`;

  beforeAll(async () => {
    db = await kind.open();
    siteA = await insertSite(db, (await insertAccount(db, 'a')).id);
    siteB = await insertSite(db, (await insertAccount(db, 'b')).id);
    await insertApiFlow(db, siteA, { name: 'A one action', triggerKey: 'signup' });
    await insertApiFlow(db, siteA, {
      name: 'A two actions', triggerKey: 'signup',
      actions: [
        { integrationId: 'google-ads', config: { conversion: { id: '111' } } },
        { integrationId: 'google-ads', config: { conversion: { id: '222' } } },
      ],
    });
    await insertApiFlow(db, siteB, { name: 'B one action', triggerKey: 'signup' });
  });
  afterAll(() => db.close());

  it('records reports that arrive together in one batch, and answers each one', async () => {
    const { writer, batches } = observedWriter(db);
    const ids = Array.from({ length: 10 }, () => id('together'));
    const responses = await Promise.all(ids.map((ceid) => writer.submit(submission(siteA, ceid))));
    expect(batches).toEqual([10]);
    expect(responses).toEqual(ids.map((ceid) => ({ status: 'promoted', promoted_count: 2, customer_event_id: ceid, correlated: false })));
    for (const ceid of ids) expect(await counts(db, siteA.id, ceid)).toEqual({ reports: 1, events: 2, outbox: 3 });
  });

  it('records a customer_event_id repeated within one batch once, and answers every repeat with the first response', async () => {
    const { writer, batches } = observedWriter(db);
    const ceid = id('repeated');
    const responses = await Promise.all([
      writer.submit(submission(siteA, ceid)),
      writer.submit(submission(siteA, ceid, { correlation_token: newToken(), allow_uncorrelated: false })),
      writer.submit(submission(siteA, ceid, { triggerKey: 'no-such-flow' })),
    ]);
    expect(batches).toEqual([3]);
    const first = { status: 'promoted', promoted_count: 2, customer_event_id: ceid, correlated: false };
    expect(responses).toEqual([first, first, first]);
    expect(await counts(db, siteA.id, ceid)).toEqual({ reports: 1, events: 2, outbox: 3 });
  });

  it('answers a repeat of a report from an earlier batch with its stored response, counting nothing twice', async () => {
    const { writer } = observedWriter(db);
    const ceid = id('earlier');
    const first = await writer.submit(submission(siteA, ceid));
    const again = await writer.submit(submission(siteA, ceid, { correlation_token: newToken(), triggerKey: 'other' }));
    expect(again).toEqual(first);
    expect(await counts(db, siteA.id, ceid)).toEqual({ reports: 1, events: 2, outbox: 3 });
  });

  it("fans each report of a batch that mixes sites out to its own site's flows, one customer_event_id per site", async () => {
    const { writer, batches } = observedWriter(db);
    const shared = id('shared');
    const lonely = id('lonely');
    const [onA, onB, unmatched] = await Promise.all([
      writer.submit(submission(siteA, shared)),
      writer.submit(submission(siteB, shared)),
      writer.submit(submission(siteB, lonely, { triggerKey: 'nothing-here' })),
    ]);
    expect(batches).toEqual([3]);
    expect(onA).toMatchObject({ status: 'promoted', promoted_count: 2 });
    expect(onB).toMatchObject({ status: 'promoted', promoted_count: 1 });
    expect(unmatched).toEqual({ status: 'no_matching_flow', promoted_count: 0, customer_event_id: lonely, correlated: false });
    const events = await db.query<{ site_id: string; account_id: string; flow_name: string }>(
      `select e.site_id, e.account_id, e.flow_name from events e join reports r on r.id = e.report_id
       where r.customer_event_id = $1 order by e.flow_name`,
      [shared],
    );
    expect(events).toEqual([
      { site_id: siteA.id, account_id: siteA.account_id, flow_name: 'A one action' },
      { site_id: siteA.id, account_id: siteA.account_id, flow_name: 'A two actions' },
      { site_id: siteB.id, account_id: siteB.account_id, flow_name: 'B one action' },
    ]);
    expect(await counts(db, siteB.id, lonely)).toEqual({ reports: 1, events: 0, outbox: 0 });
  });

  it('fails only the report the database refuses, and records its neighbours in the same batch', async () => {
    const { writer, batches } = observedWriter(db);
    const gone: ReportingSite = { id: 'site_deleted_meanwhile', account_id: siteA.account_id, site_key: 'gone00000000' };
    const [before, refused, after] = await Promise.allSettled([
      writer.submit(submission(siteA, id('neighbour'))),
      writer.submit(submission(gone, id('refused'))),
      writer.submit(submission(siteA, id('neighbour'))),
    ]);
    expect(before.status).toBe('fulfilled');
    expect(refused.status).toBe('rejected');
    expect(after.status).toBe('fulfilled');
    // The batch failed as a whole, then each report was recorded on its own.
    expect(batches).toEqual([3, 1, 1, 1]);
    for (const settled of [before, after]) {
      const ceid = (settled as PromiseFulfilledResult<{ customer_event_id: string }>).value.customer_event_id;
      expect(await counts(db, siteA.id, ceid)).toEqual({ reports: 1, events: 2, outbox: 3 });
    }
  });

  it('pairs each correlated report of a batch with its own snapshot, and holds the one whose snapshot is missing', async () => {
    const { writer } = observedWriter(db);
    const paired = snapshotBody();
    await upsertSnapshots(db, [{ siteId: siteB.id, snapshot: paired }]);
    const [withSnapshot, without] = [id('paired'), id('pending')];
    await Promise.all([
      writer.submit(submission(siteB, withSnapshot, { correlation_token: paired.correlation_token, allow_uncorrelated: false })),
      writer.submit(submission(siteB, without, { correlation_token: newToken(), allow_uncorrelated: false })),
    ]);
    const rows = await db.query<{ customer_event_id: string; match_quality: string | null; due_now: boolean }>(
      `select r.customer_event_id, e.match_quality, o.due_at <= now() as due_now from reports r join events e on e.report_id = r.id
       join event_actions a on a.event_id = e.id join outbox o on o.event_action_id = a.id
       where r.customer_event_id = any($1::text[]) order by r.customer_event_id`,
      [[withSnapshot, without]],
    );
    expect(rows).toEqual([
      { customer_event_id: withSnapshot, match_quality: 'high', due_now: true },
      { customer_event_id: without, match_quality: null, due_now: false },
    ]);
  });

  it('gives events of one batch that share a millisecond distinct sort keys, after the events already there', async () => {
    const at = new Date('2026-11-21T09:30:00.456Z');
    for (let i = 0; i < 2; i++) {
      await db.transaction((tx) => insertEvent(tx, {
        accountId: siteA.account_id, siteId: siteA.id, siteKey: siteA.site_key, flowId: null, flowName: null, reportId: null,
        trigger: 'form_submission', occurredAt: at, matchQuality: 'low', email: null, clickIds: null, data: {}, actions: [],
      }));
    }
    const tokens = Array.from({ length: 5 }, () => newToken());
    await upsertSnapshots(db, tokens.map((token) => ({ siteId: siteA.id, snapshot: snapshotBody({ correlation_token: token, occurred_at: at.toISOString() }) })));
    const { writer } = observedWriter(db);
    await Promise.all(tokens.map((token) => writer.submit(submission(siteA, id('same-ms'), { correlation_token: token, allow_uncorrelated: false }))));
    const [row] = await db.query<{ n: number; distinct_keys: number; within_ms: number }>(
      `select count(*)::int as n, count(distinct sort_at)::int as distinct_keys,
              count(*) filter (where date_trunc('milliseconds', sort_at) = $2::timestamptz)::int as within_ms
       from events where account_id = $1 and occurred_at = $2::timestamptz`,
      [siteA.account_id, at],
    );
    expect(row).toEqual({ n: 12, distinct_keys: 12, within_ms: 12 });
  });

  it("records a report whose event's slot is taken: the one statement fails whole, and a transaction steps past the slot", async () => {
    // Two events at one millisecond (slots 0 and 1), then the first deleted: counting the events there (1) points a new
    // event at slot 1, which is taken.
    const at = new Date('2026-11-21T10:40:00.123Z');
    const formEventAt = () => db.transaction((tx) => insertEvent(tx, {
      accountId: siteA.account_id, siteId: siteA.id, siteKey: siteA.site_key, flowId: null, flowName: null, reportId: null,
      trigger: 'form_submission', occurredAt: at, matchQuality: 'low', email: null, clickIds: null, data: {}, actions: [],
    }));
    const first = await formEventAt();
    await formEventAt();
    await db.query('delete from events where id = $1', [first.id]);
    const token = newToken();
    await upsertSnapshots(db, [{ siteId: siteA.id, snapshot: snapshotBody({ correlation_token: token, occurred_at: at.toISOString() }) }]);

    // The statement alone refuses, and writes nothing.
    const ceid = id('slot-taken');
    const report = {
      siteId: siteA.id, customerEventId: ceid, triggerKey: 'signup', correlationToken: token, identity: {}, allowUncorrelated: false,
      value: null, currency: null, customerId: null, kind: 'saas_signup' as const, occurredAt: null,
      response: { status: 'promoted' as const, promoted_count: 1, customer_event_id: ceid, correlated: true },
      events: [{
        accountId: siteA.account_id, siteId: siteA.id, siteKey: siteA.site_key, flowId: null, flowName: null, trigger: 'api',
        occurredAt: at, matchQuality: 'high' as const, email: null, clickIds: null, data: {}, actions: [],
      }],
    };
    const refused = await insertReportsWithEvents(db, [report], { alone: true }).catch((error: unknown) => error);
    expect(isEventSlotTaken(refused)).toBe(true);
    expect(await counts(db, siteA.id, ceid)).toEqual({ reports: 0, events: 0, outbox: 0 });

    // Through the writer: recorded with both its events and their deliveries, every sort key of the millisecond distinct.
    const { writer } = observedWriter(db);
    await expect(writer.submit(submission(siteA, ceid, { correlation_token: token, allow_uncorrelated: false }))).resolves.toMatchObject({ status: 'promoted', promoted_count: 2 });
    expect(await counts(db, siteA.id, ceid)).toEqual({ reports: 1, events: 2, outbox: 3 });
    const [row] = await db.query<{ n: number; distinct_keys: number }>(
      'select count(*)::int as n, count(distinct sort_at)::int as distinct_keys from events where account_id = $1 and occurred_at = $2',
      [siteA.account_id, at],
    );
    expect(row).toEqual({ n: 3, distinct_keys: 3 });
  });

  it('says when a burst of reports queued behind a batch being written (the delivery worker then holds back), not for a few', async () => {
    let queued = 0;
    let sizes: number[] = [];
    /** The next batch waits here (`reached` says it has begun) until the test has queued reports behind it. */
    let hold: { reached(): void; released: Promise<void> } | null = null;
    const writer = new ReportWriter(db, {
      onQueued: () => queued++,
      record: async (target, submissions) => {
        sizes.push(submissions.length);
        const held = hold;
        hold = null;
        if (held) {
          held.reached();
          await held.released;
        }
        return recordReports(target, submissions);
      },
    });
    /** One report's batch held while `count` reports queue behind it; returns the sizes of the batches written. */
    const behindAHeldBatch = async (count: number) => {
      sizes = [];
      let release!: () => void;
      const reached = new Promise<void>((resolve) => (hold = { reached: resolve, released: new Promise((r) => (release = r)) }));
      const held = writer.submit(submission(siteA, id('held')));
      await reached;
      const behind = Array.from({ length: count }, () => writer.submit(submission(siteA, id('behind'))));
      release();
      await Promise.all([held, ...behind]);
      return sizes;
    };

    await writer.submit(submission(siteA, id('lone')));
    expect(queued).toBe(0);
    expect(await behindAHeldBatch(QUEUED_BURST - 1)).toEqual([1, QUEUED_BURST - 1]);
    expect(queued).toBe(0);
    expect(await behindAHeldBatch(QUEUED_BURST)).toEqual([1, QUEUED_BURST]);
    expect(queued).toBe(1);
  });

  it('sends the batch queued behind a batch to the store before answering that batch, and answers a lone batch at once', async () => {
    const events: string[] = [];
    let hold: { reached(): void; released: Promise<void> } | null = null;
    const writer = new ReportWriter(db, {
      record: async (target, submissions, options) => {
        events.push(`record ${submissions.length}`);
        const held = hold;
        hold = null;
        if (held) {
          held.reached();
          await held.released;
        }
        return recordReports(target, submissions, options);
      },
    });
    let release!: () => void;
    const reached = new Promise<void>((resolve) => (hold = { reached: resolve, released: new Promise((r) => (release = r)) }));
    const first = writer.submit(submission(siteA, id('first'))).then((answer) => (events.push('first answered'), answer));
    await reached;
    const behind = [1, 2].map(() => writer.submit(submission(siteA, id('behind'))).then((answer) => (events.push('behind answered'), answer)));
    release();
    const answers = await Promise.all([first, ...behind]);
    expect(answers.map((a) => a.status)).toEqual(['promoted', 'promoted', 'promoted']);
    // The second batch was on its way to the store before the first batch's caller heard back (each answer still
    // follows its own batch's commit; which batch's answers come out first is up to the store).
    expect(events.slice(0, 2)).toEqual(['record 1', 'record 2']);
    expect(events.slice(2).sort()).toEqual(['behind answered', 'behind answered', 'first answered']);
    events.length = 0;
    await writer.submit(submission(siteA, id('lone'))).then(() => events.push('lone answered'));
    expect(events).toEqual(['record 1', 'lone answered']);
  });

  it('writes every buffered report before flush() returns', async () => {
    const { writer } = observedWriter(db, { maxDelayMs: 60_000 });
    const ceid = id('flushed');
    const answered = writer.submit(submission(siteA, ceid));
    await writer.flush();
    expect(await counts(db, siteA.id, ceid)).toEqual({ reports: 1, events: 2, outbox: 3 });
    await expect(answered).resolves.toMatchObject({ customer_event_id: ceid });
  });
});

describe.each(DATABASE_KINDS)('two report writers on one $name database (two service processes)', (kind) => {
  let handles: Awaited<ReturnType<typeof openTwoHandles>>;
  let site: SiteRow;
  beforeAll(async () => {
    handles = await openTwoHandles(kind);
    site = await insertSite(handles.first, (await insertAccount(handles.first, 'a')).id);
    await insertApiFlow(handles.first, site, { triggerKey: 'signup', name: 'one' });
    await insertApiFlow(handles.first, site, { triggerKey: 'signup', name: 'two' });
  });
  afterAll(() => handles.close());

  it('records twenty identical reports split between them once, and answers all with the first response', async () => {
    const writers = [new ReportWriter(handles.first), new ReportWriter(handles.second)];
    const responses = await Promise.all(
      Array.from({ length: 20 }, (_, i) => writers[i % 2]!.submit(submission(site, 'same-signup', { identity: { email: 'ada@example.com' } }))),
    );
    const expected = { status: 'promoted', promoted_count: 2, customer_event_id: 'same-signup', correlated: false };
    expect(responses).toEqual(Array(20).fill(expected));
    expect(await counts(handles.first, site.id, 'same-signup')).toEqual({ reports: 1, events: 2, outbox: 2 });
  });

  it('gives distinct sort keys to events both write into the same millisecond at once', async () => {
    const at = new Date('2026-11-21T08:08:08.808Z');
    const writers = [new ReportWriter(handles.first), new ReportWriter(handles.second)];
    // Rounds of simultaneous batches, so that on PostgreSQL one writer's statement meets the other's uncommitted slots.
    for (let round = 0; round < 5; round++) {
      const tokens = Array.from({ length: 40 }, () => newToken());
      await upsertSnapshots(handles.first, tokens.map((token) => ({ siteId: site.id, snapshot: snapshotBody({ correlation_token: token, occurred_at: at.toISOString() }) })));
      await Promise.all(tokens.map((token, i) => writers[i % 2]!.submit(submission(site, `collide-${round}-${i}`, { correlation_token: token, allow_uncorrelated: false }))));
    }
    const [row] = await handles.first.query<{ n: number; distinct_keys: number }>(
      'select count(*)::int as n, count(distinct sort_at)::int as distinct_keys from events where account_id = $1 and occurred_at = $2',
      [site.account_id, at],
    );
    expect(row).toEqual({ n: 400, distinct_keys: 400 });
  });
});
