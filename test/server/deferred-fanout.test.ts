/**
 * A burst's signups stored first and their events built after it (webhook/deferred-fanout.ts, ReportWriter): the
 * answer and the events are those of a report written whole; a report is built once, by whichever writer gets it; an
 * adjustment, an erasure, a repeat and a crash in between all find what they would have.
 */
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { DATABASE_KINDS } from './support/databases';
import { insertApiFlow, newToken, snapshotBody } from './support/fixtures';
import { openTwoHandles } from './delivery/fixtures';
import type { Database } from '../../src/server/db/db';
import { insertAccount } from '../../src/server/accounts/sql';
import { insertSite, type SiteRow } from '../../src/server/api/sites/sql';
import { upsertSnapshots } from '../../src/server/collector/sql';
import { anonymiseReports } from '../../src/server/api/erasures/sql';
import { QUEUED_BURST, ReportWriter } from '../../src/server/webhook/report-writer';
import { recordReports, type ReportSubmission, type ReportingSite } from '../../src/server/webhook/report';
import { fanOutPendingReports } from '../../src/server/webhook/deferred-fanout';
import { recordAdjustment } from '../../src/server/webhook/adjustment';
import type { ValidReport } from '../../src/server/webhook/report-input';

/** When the reports of the first test were received: a moment ago, so that a report waiting for its snapshot is held. */
const RECEIVED = new Date(Date.now() - 1000);

function submission(site: ReportingSite, customerEventId: string, report: Partial<ValidReport> = {}, now = new Date()): ReportSubmission {
  return {
    site,
    triggerKey: 'signup',
    report: { customer_event_id: customerEventId, correlation_token: null, identity: {}, allow_uncorrelated: true, ...report },
    now,
  };
}

interface EventOfReport {
  flow_name: string;
  match_quality: string | null;
  click_ids: Record<string, string> | null;
  occurred_at: Date;
  email: string | null;
  value: string | null;
  data: Record<string, unknown>;
  actions: number;
  due_now: boolean;
}

/** The events of a report as a reader sees them (the customer_event_id left out of data, so two reports compare). */
async function eventsOf(db: Database, siteId: string, customerEventId: string): Promise<EventOfReport[]> {
  const rows = await db.query<EventOfReport>(
    `select e.flow_name, e.match_quality, e.click_ids, e.occurred_at, e.email, e.value::text as value, e.data - 'customer_event_id' as data,
       (select count(*)::int from event_actions a where a.event_id = e.id) as actions,
       coalesce((select bool_and(o.due_at <= now()) from event_actions a join outbox o on o.event_action_id = a.id where a.event_id = e.id), false) as due_now
     from events e join reports r on r.id = e.report_id where r.site_id = $1 and r.customer_event_id = $2 order by e.flow_name`,
    [siteId, customerEventId],
  );
  return rows;
}

/**
 * A burst as the writer sees one: a report in flight (its write held until the others are in), and QUEUED_BURST more
 * arriving while it is written (they queue behind it and make the next batch). Returns the queued ones' ids, once all
 * are answered.
 */
async function burst(writer: ReportWriter, gate: Gate, site: ReportingSite, label: () => string): Promise<string[]> {
  gate.close();
  const lead = writer.submit(submission(site, label()));
  await gate.reached; // the lead's batch is being written
  const queued = Array.from({ length: QUEUED_BURST }, label);
  const rest = queued.map((ceid) => writer.submit(submission(site, ceid)));
  gate.open();
  const answers = await Promise.all([lead, ...rest]);
  expect(answers.map((a) => a.status)).toEqual(answers.map(() => 'promoted'));
  return queued;
}

/** Holds the next batch a writer records until opened (see burst). */
interface Gate {
  close(): void;
  open(): void;
  reached: Promise<void>;
  record: NonNullable<ConstructorParameters<typeof ReportWriter>[1]>['record'];
}

function gate(): Gate {
  let held: Promise<void> | null = null;
  let release = () => undefined as void;
  let reached = () => undefined as void;
  const g: Gate = {
    close() {
      held = new Promise<void>((resolve) => (release = resolve));
      g.reached = new Promise<void>((resolve) => (reached = resolve));
    },
    open: () => release(),
    reached: Promise.resolve(),
    async record(target, submissions, options) {
      if (held) {
        const wait = held;
        held = null;
        reached();
        await wait;
      }
      return recordReports(target, submissions, options);
    },
  };
  return g;
}

async function waiting(db: Database): Promise<number> {
  return (await db.query<{ n: number }>('select count(*)::int as n from report_fanouts'))[0]!.n;
}

describe.each(DATABASE_KINDS)('events built after a burst on $name', (kind) => {
  let db: Database;
  let site: SiteRow;
  let quiet: SiteRow;
  let seq = 0;
  const id = (label: string) => `${label}-${++seq}`;

  beforeAll(async () => {
    db = await kind.open();
    site = await insertSite(db, (await insertAccount(db, 'a')).id);
    quiet = await insertSite(db, (await insertAccount(db, 'b')).id);
    await insertApiFlow(db, site, { name: 'one action', triggerKey: 'signup' });
    await insertApiFlow(db, site, {
      name: 'two actions', triggerKey: 'signup',
      actions: [
        { integrationId: 'google-ads', config: { conversion: { id: '111' } } },
        { integrationId: 'google-ads', config: { conversion: { id: '222' } } },
      ],
    });
  });
  afterAll(() => db.close());

  it('answers as a whole write does, stores the reports without events, then builds the same events', async () => {
    const paired = snapshotBody({ occurred_at: new Date(RECEIVED.getTime() - 2000).toISOString() });
    await upsertSnapshots(db, [{ siteId: site.id, snapshot: paired }]);
    const kinds = [
      { correlation_token: paired.correlation_token, allow_uncorrelated: false, identity: { email: 'Ada@Example.com' }, value: 49.9, currency: 'EUR' },
      { correlation_token: newToken(), allow_uncorrelated: false }, // its snapshot is not here (yet)
      { identity: { email: 'grace@example.com' } }, // no token
    ];
    const whole = kinds.map((report) => submission(site, id('whole'), report, RECEIVED));
    const burst = kinds.map((report) => submission(site, id('burst'), report, RECEIVED));

    const wholeOutcomes = await recordReports(db, whole);
    const burstOutcomes = await recordReports(db, burst, { defer: true });
    const answers = (outcomes: typeof wholeOutcomes) =>
      outcomes.map((o) => (o.ok ? { ...o.response, customer_event_id: 'x' } : o.error.message));
    expect(answers(burstOutcomes)).toEqual(answers(wholeOutcomes));
    expect(burstOutcomes.map((o) => o.ok && o.deferred)).toEqual([true, true, true]);
    expect(burstOutcomes.map((o) => o.ok && o.queuedNow)).toEqual([false, false, false]);
    for (const s of burst) expect(await eventsOf(db, site.id, s.report.customer_event_id)).toEqual([]);
    expect(await waiting(db)).toBe(3);

    expect(await fanOutPendingReports(db)).toEqual({ built: 3, queuedNow: true });
    expect(await waiting(db)).toBe(0);
    for (let i = 0; i < kinds.length; i++) {
      const built = await eventsOf(db, site.id, burst[i]!.report.customer_event_id);
      expect(built).toHaveLength(2);
      expect(built).toEqual(await eventsOf(db, site.id, whole[i]!.report.customer_event_id));
    }
    // The paired one carries its snapshot's click; the waiting one is held for its snapshot, like the whole write's.
    const [first] = await eventsOf(db, site.id, burst[0]!.report.customer_event_id);
    expect(first).toMatchObject({ match_quality: 'high', email: 'ada@example.com', due_now: true });
    expect(Number(first!.value)).toBe(49.9);
    expect((await eventsOf(db, site.id, burst[1]!.report.customer_event_id))[0]).toMatchObject({ match_quality: null, due_now: false });
    // The events count as recorded when the report was received: the pairing window runs from there.
    const [created] = await db.query<{ created_at: Date }>(
      'select e.created_at from events e join reports r on r.id = e.report_id where r.customer_event_id = $1 limit 1',
      [burst[1]!.report.customer_event_id],
    );
    expect(created!.created_at.toISOString()).toBe(RECEIVED.toISOString());
  });

  it('builds a report once: a second pass finds nothing', async () => {
    const ceid = id('once');
    await recordReports(db, [submission(site, ceid)], { defer: true });
    expect((await fanOutPendingReports(db)).built).toBe(1);
    expect(await fanOutPendingReports(db)).toEqual({ built: 0, queuedNow: false });
    expect(await eventsOf(db, site.id, ceid)).toHaveLength(2);
  });

  it('leaves nothing waiting for a report that fires no flow', async () => {
    const [outcome] = await recordReports(db, [submission(quiet, id('no-flow'))], { defer: true });
    expect(outcome).toMatchObject({ ok: true, deferred: false, response: { status: 'no_matching_flow', promoted_count: 0 } });
    expect(await waiting(db)).toBe(0);
  });

  it('answers a repeat of a waiting report as the first, and builds it once', async () => {
    const ceid = id('repeat');
    const [first] = await recordReports(db, [submission(site, ceid, { identity: { email: 'a@example.com' } })], { defer: true });
    const [again] = await recordReports(db, [submission(site, ceid, { identity: { email: 'other@example.com' } })], { defer: true });
    expect(again).toEqual({ ok: true, response: (first as { response: unknown }).response, queuedNow: false, deferred: false });
    expect(await waiting(db)).toBe(1);
    await fanOutPendingReports(db);
    expect((await eventsOf(db, site.id, ceid)).map((e) => e.email)).toEqual(['a@example.com', 'a@example.com']);
  });

  it('builds the events of a waiting report before an adjustment of it, which then applies to them', async () => {
    const ceid = id('adjusted');
    await recordReports(db, [submission(site, ceid, { value: 100, currency: 'USD' })], { defer: true });
    const queued = vi.fn();
    const answer = await recordAdjustment(db, site.id, { adjustment_id: id('adj'), customer_event_id: ceid, type: 'retract', value: null, currency: null, occurred_at: null }, new Date(), queued);
    expect(answer).toEqual({ status: 'accepted', adjustment_id: expect.any(String), events: 2 });
    expect(await eventsOf(db, site.id, ceid)).toHaveLength(2);
    expect(queued).toHaveBeenCalled();
    expect(await waiting(db)).toBe(0);
  });

  it('never builds the events of a report erased while it waited', async () => {
    const ceid = id('erased');
    await recordReports(db, [submission(site, ceid, { identity: { email: 'gone@example.com' } })], { defer: true });
    const [report] = await db.query<{ id: string }>('select id from reports where customer_event_id = $1', [ceid]);
    await db.transaction((tx) => anonymiseReports(tx, [report!.id], new Map()));
    expect(await fanOutPendingReports(db)).toEqual({ built: 0, queuedNow: false });
    expect(await eventsOf(db, site.id, ceid)).toEqual([]);
  });

  it('a writer defers a burst, holds the building while the burst may go on, then builds it all', async () => {
    let now = 0;
    const g = gate();
    const writer = new ReportWriter(db, { clock: () => now, fanOutQuietMs: 1000, record: g.record });
    const ceids = await burst(writer, g, site, () => id('writer'));
    // Quiet for less than the quiet time: nothing built, whatever turns of the event loop pass.
    for (let i = 0; i < 20; i++) await new Promise((resolve) => setImmediate(resolve));
    expect(await waiting(db)).toBe(QUEUED_BURST);
    now = 1000;
    writer.sweep();
    await vi.waitFor(async () => expect(await waiting(db)).toBe(0), { timeout: 10_000 });
    for (const ceid of ceids) expect(await eventsOf(db, site.id, ceid)).toHaveLength(2);
    await writer.close();
  });

  it('a writer builds a burst it still holds back once the longest hold has passed', async () => {
    let now = 0;
    const g = gate();
    const writer = new ReportWriter(db, { clock: () => now, fanOutQuietMs: 1e9, fanOutMaxHoldMs: 5000, record: g.record });
    await burst(writer, g, site, () => id('held'));
    for (let i = 0; i < 20; i++) await new Promise((resolve) => setImmediate(resolve));
    expect(await waiting(db)).toBe(QUEUED_BURST);
    now = 5000;
    writer.sweep();
    await vi.waitFor(async () => expect(await waiting(db)).toBe(0), { timeout: 10_000 });
    await writer.close();
  });

  it("stores first a small batch within the quiet time of a burst's batch, and writes whole a trickle after it", async () => {
    let now = 0;
    const g = gate();
    const modes: boolean[] = [];
    const writer = new ReportWriter(db, {
      clock: () => now,
      fanOutQuietMs: 1000,
      record: (target, submissions, options) => {
        modes.push(options.defer ?? false);
        return g.record!(target, submissions, options);
      },
    });
    await burst(writer, g, site, () => id('wave'));
    now = 999; // a lone report still within the burst's waves
    const late = id('wave');
    await expect(writer.submit(submission(site, late))).resolves.toMatchObject({ status: 'promoted', promoted_count: 2 });
    now = 1001; // the same, now past the quiet time of the burst's batch (the late batch does not extend it)
    const trickle = id('trickle');
    await expect(writer.submit(submission(site, trickle))).resolves.toMatchObject({ status: 'promoted', promoted_count: 2 });
    // The lead (an idle writer's), the burst's batch, the late one: stored first; the trickle: whole.
    expect(modes).toEqual([false, true, true, false]);
    expect(await eventsOf(db, site.id, trickle)).toHaveLength(2);
    now = 5000;
    writer.sweep();
    await vi.waitFor(async () => expect(await eventsOf(db, site.id, late)).toHaveLength(2), { timeout: 10_000 });
    await writer.close();
  });

  it('writes whole what reaches an idle writer, however many at once, and a burst when told never to defer', async () => {
    const idle = new ReportWriter(db);
    const together = Array.from({ length: QUEUED_BURST * 2 }, () => id('together'));
    await Promise.all(together.map((ceid) => idle.submit(submission(site, ceid))));
    const g = gate();
    const never = new ReportWriter(db, { deferBursts: false, record: g.record });
    const queued = await burst(never, g, site, () => id('never'));
    expect(await waiting(db)).toBe(0);
    for (const ceid of [...together, ...queued]) expect(await eventsOf(db, site.id, ceid)).toHaveLength(2);
    await Promise.all([idle.close(), never.close()]);
  });

  it('builds, at the next start, what a crash left waiting', async () => {
    const ceids = [id('crash'), id('crash')];
    await recordReports(db, ceids.map((ceid) => submission(site, ceid)), { defer: true });
    // The process that stored them is gone; a new writer's first sweep (the service's start) finds them.
    const writer = new ReportWriter(db, { fanOutQuietMs: 0 });
    writer.sweep();
    await vi.waitFor(async () => expect(await waiting(db)).toBe(0), { timeout: 10_000 });
    for (const ceid of ceids) expect(await eventsOf(db, site.id, ceid)).toHaveLength(2);
    await writer.close();
  });

  it.runIf(kind.name === 'postgres')('two processes building the same reports at once build each one once', async () => {
    const { first, second, close } = await openTwoHandles(kind);
    try {
      const other = await insertSite(first, (await insertAccount(first, 'race')).id);
      await insertApiFlow(first, other, { name: 'one action', triggerKey: 'signup' });
      const ceids = Array.from({ length: 30 }, () => id('race'));
      await recordReports(first, ceids.map((ceid) => submission(other, ceid)), { defer: true });
      const built = await Promise.all([fanOutPendingReports(first, { limit: 30 }), fanOutPendingReports(second, { limit: 30 })]);
      expect(built.some((b) => b.built === 30)).toBe(true);
      for (const ceid of ceids) expect(await eventsOf(first, other.id, ceid)).toHaveLength(1);
      expect(await waiting(first)).toBe(0);
    } finally {
      await close();
    }
  });
});
