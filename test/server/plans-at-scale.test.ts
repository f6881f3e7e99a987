/**
 * Statements that run for every snapshot, report or page view must not read a whole table that grows. PostgreSQL picks
 * a plan from the table's statistics, so a statement fast on a test's few rows can read the whole table once it holds
 * thousands: the collector's check for reports waiting for a batch's tokens did, on every batch, with some thousands of
 * reports (collector/sql.ts). Here the tables hold that many rows, analyzed, and each statement's plan is asked
 * for as a prepared statement gets it (the generic plan PostgreSQL settles on after five runs) and as a custom plan.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DATABASE_KINDS } from './support/databases';
import { insertApiFlow, snapshotBody } from './support/fixtures';
import type { Database, Queryable } from '../../src/server/db/db';
import { insertAccount } from '../../src/server/accounts/sql';
import { insertSite } from '../../src/server/api/sites/sql';
import { upsertSnapshots } from '../../src/server/collector/sql';
import { dailyActionCounts, dailyValues, deliveredEventId } from '../../src/server/dashboard/sql';
import { findErasedReportResponses, reportsAwaitingEvents } from '../../src/server/webhook/report-sql';
import { insertReportsWithEvents, type ReportWithEvents } from '../../src/server/webhook/report-batch-sql';
import { selectEvents } from '../../src/server/api/events/sql';
import { clearIdentityBefore } from '../../src/server/privacy/sql';
import { claimDeliveries } from '../../src/server/delivery/outbox-sql';
import { claimAdjustments } from '../../src/server/delivery/adjustment-sql';

/** Reports in the table, each with identity fields as a report stores them: a size at which PostgreSQL chose to hash the whole table. */
const REPORTS = 10_000;
/** Events of the busy account, each with one delivered action, over 180 days. */
const EVENTS = 20_000;
const DAY = 86_400_000;

interface Statement {
  sql: string;
  params: readonly unknown[];
}

/** The statements `run` sends, in order (run against the real database, so each has its real parameters). */
async function statementsOf(db: Database, run: (q: Queryable) => Promise<unknown>): Promise<Statement[]> {
  const seen: Statement[] = [];
  await db.transaction(async (tx) => {
    await run({ query: (sql, params = []) => (seen.push({ sql, params }), tx.query(sql, params)) });
    throw Object.assign(new Error('rolled back'), { rolledBack: true });
  }).catch((error: { rolledBack?: boolean }) => {
    if (!error.rolledBack) throw error;
  });
  return seen;
}

/** A parameter as an SQL literal of the statement's EXECUTE. */
function literal(value: unknown): string {
  if (value === null || value === undefined) return 'null';
  const text = value instanceof Date ? value.toISOString() : Array.isArray(value) ? `{${value.map((v) => `"${String(v).replace(/["\\]/g, '\\$&')}"`).join(',')}}` : String(value);
  return `'${text.replace(/'/g, "''")}'`;
}

/** The plan of `statement` as PostgreSQL would run it prepared: generic (after five runs) or custom. */
async function planOf(db: Database, statement: Statement, mode: 'force_generic_plan' | 'force_custom_plan'): Promise<string> {
  return db.transaction(async (tx) => {
    await tx.query(`set local plan_cache_mode = ${mode}`);
    await tx.query(`prepare plan_probe as ${statement.sql}`);
    try {
      const args = statement.params.length > 0 ? `(${statement.params.map(literal).join(', ')})` : '';
      const rows = await tx.query<{ 'QUERY PLAN': string }>(`explain execute plan_probe${args}`);
      return rows.map((row) => row['QUERY PLAN']).join('\n');
    } finally {
      await tx.query('deallocate plan_probe');
    }
  });
}

describe.each(DATABASE_KINDS)('plans with big tables on $name', (kind) => {
  let db: Database;
  let siteId: string;
  let accountId: string;
  /** An account with a site and nothing else yet (the setup checklist polls for its first delivered event). */
  let newAccountId: string;
  beforeAll(async () => {
    db = await kind.open();
    accountId = (await insertAccount(db, 'plans')).id;
    siteId = (await insertSite(db, accountId, { domain: 'https://example.com' })).id;
    newAccountId = (await insertAccount(db, 'new')).id;
    await insertSite(db, newAccountId, { domain: 'https://new.example.com' });
    const now = Date.now();
    await db.query(
      `insert into events (id, account_id, site_id, site_key, occurred_at, sort_at, status, email, created_at, data)
       select 'evt_plan' || i, $1, $2, 'k', t, t, 'completed', 'person' || i || '@example.com', t, jsonb_build_object('page_url', 'https://example.com/signup')
       from (select i, to_timestamp(${now / 1000} - i * ${(180 * DAY) / 1000 / EVENTS}) as t from generate_series(1, ${EVENTS}) i) x`,
      [accountId, siteId],
    );
    await db.query(
      `insert into event_actions (id, event_id, position, destination, status, request, delivered_at)
       select 'act_plan' || i, 'evt_plan' || i, 0, 'google_ads', 'delivered', jsonb_build_object('platform_request_id', 'req' || i), now()
       from generate_series(1, ${EVENTS}) i`,
    );
    await db.query(
      `insert into reports (id, site_id, customer_event_id, trigger_key, correlation_token, identity)
       select 'rpt_plan' || i, $1, 'cev-' || i, 'signup', md5(i::text), jsonb_build_object('email', 'person' || i || '@example.com', 'first_name', 'Ada', 'last_name', 'Lovelace', 'phone', '+15550100' || i, 'customer_id', 'cus_' || md5(i::text)) from generate_series(1, ${REPORTS}) i`,
      [siteId],
    );
    await db.query(`insert into report_fanouts (report_id, received_at) select 'rpt_plan' || i, now() from generate_series(1, 5) i`);
    // Only this test's own tables: a bare ANALYZE reads every table of the database, and on a shared PostgreSQL
    // that is every other test file's schema too (22 s once the server held 1,600 of them).
    const tables = await db.query<{ name: string }>(`select quote_ident(tablename) as name from pg_tables where schemaname = current_schema()`);
    await db.exec(`analyze ${tables.map((t) => t.name).join(', ')}`);
  }, 120_000);
  afterAll(() => db.close());

  it('stores a batch of snapshots without reading every report (both statements: plain insert and upsert)', async () => {
    const writes = Array.from({ length: 25 }, () => ({ siteId, snapshot: snapshotBody() }));
    const statements = [
      ...(await statementsOf(db, (q) => upsertSnapshots(q, writes, { allNew: true }))),
      ...(await statementsOf(db, (q) => upsertSnapshots(q, writes))),
    ];
    expect(statements.length).toBe(2);
    for (const statement of statements) {
      for (const mode of ['force_generic_plan', 'force_custom_plan'] as const) {
        const plan = await planOf(db, statement, mode);
        expect(plan, `${mode}\n${plan}`).not.toMatch(/Seq Scan on reports/);
        expect(plan, `${mode}\n${plan}`).toMatch(/Index (Only )?Scan using reports_site_token/);
      }
    }
  });

  it("stores a batch of reports checking each for an erased report of its id by the erased reports' index only", async () => {
    await db.query(`update reports set erased_id_hash = md5('erased' || id) where id in (select 'rpt_plan' || i from generate_series(1, 50) i)`);
    await db.exec('analyze reports');
    const flowId = await insertApiFlow(db, { id: siteId, account_id: accountId }, { triggerKey: 'signup' });
    const report = (i: number, events: ReportWithEvents['events']): ReportWithEvents => ({
      siteId, customerEventId: `plan-new-${i}`, triggerKey: 'signup', correlationToken: null, identity: {}, allowUncorrelated: true,
      value: null, currency: null, customerId: null, kind: 'saas_signup', occurredAt: null, erasedIdHash: `hash-${i}`,
      response: { status: 'promoted', promoted_count: 1, customer_event_id: `plan-new-${i}`, correlated: false }, events,
    });
    const event = (i: number): ReportWithEvents['events'][number] => ({
      accountId, siteId, siteKey: 'k', flowId, flowName: 'Plan', trigger: 'api', occurredAt: new Date(Date.now() + i),
      matchQuality: 'low', email: null, clickIds: null, data: {}, actions: [],
    });
    const statements = [
      ...(await statementsOf(db, (q) => insertReportsWithEvents(q, Array.from({ length: 25 }, (_, i) => report(i, []))))),
      ...(await statementsOf(db, (q) => insertReportsWithEvents(q, Array.from({ length: 25 }, (_, i) => report(i, [event(i)]))))),
    ];
    expect(statements.length).toBeGreaterThanOrEqual(2);
    for (const statement of statements) {
      for (const mode of ['force_generic_plan', 'force_custom_plan'] as const) {
        const plan = await planOf(db, statement, mode);
        expect(plan, `${mode}\n${plan}`).not.toMatch(/Seq Scan on reports/);
        if (statement.sql.includes('erased_id_hash')) expect(plan, `${mode}\n${plan}`).toMatch(/Index (Only )?Scan using reports_erased_id_hash/);
      }
    }
    await expectNoWholeTable((q) => findErasedReportResponses(q, [{ siteId, erasedIdHash: 'hash-1' }]), ['reports']);
  });

  /** Both plans of every statement `run` sends, none reading the whole of `tables`. */
  async function expectNoWholeTable(run: (q: Queryable) => Promise<unknown>, tables: readonly string[]): Promise<void> {
    const statements = await statementsOf(db, run);
    expect(statements.length).toBeGreaterThan(0);
    for (const statement of statements) {
      for (const mode of ['force_generic_plan', 'force_custom_plan'] as const) {
        const plan = await planOf(db, statement, mode);
        for (const table of tables) expect(plan, `${mode}\n${statement.sql}\n${plan}`).not.toMatch(new RegExp(`Seq Scan on ${table}\\b`));
      }
    }
  }

  it("re-checks what each report's planning read (a stage's signup, a snapshot) by primary key, never reading every report", async () => {
    const flowId = await insertApiFlow(db, { id: siteId, account_id: accountId }, { triggerKey: 'basis' });
    const report = (i: number, events: ReportWithEvents['events'], id?: string): ReportWithEvents => ({
      siteId, customerEventId: id ? `cev-${i + 1}` : `basis-new-${i}`, triggerKey: 'basis', correlationToken: null, identity: {}, allowUncorrelated: true,
      value: null, currency: null, customerId: `cus_${i}`, kind: 'conversion', occurredAt: null, erasedIdHash: `hash-${i}`,
      response: { status: 'promoted', promoted_count: 1, customer_event_id: `basis-new-${i}`, correlated: true }, events,
      basis: { snapshotId: String(i + 1), signup: { id: `rpt_plan${i + 100}`, correlationToken: 'token', identity: { email: `person${i}@example.com` } } },
      ...(id ? { id } : {}),
    });
    const event = (i: number): ReportWithEvents['events'][number] => ({
      accountId, siteId, siteKey: 'k', flowId, flowName: 'Basis', trigger: 'api', occurredAt: new Date(Date.now() + i),
      matchQuality: 'low', email: null, clickIds: null, data: {}, actions: [],
    });
    await expectNoWholeTable((q) => insertReportsWithEvents(q, Array.from({ length: 25 }, (_, i) => report(i, []))), ['reports']);
    await expectNoWholeTable((q) => insertReportsWithEvents(q, Array.from({ length: 25 }, (_, i) => report(i, [event(i)]))), ['reports']);
    await expectNoWholeTable(
      (q) => insertReportsWithEvents(q, Array.from({ length: 5 }, (_, i) => report(i, [event(i)], `rpt_plan${i + 1}`)), { existing: true }),
      ['reports'],
    );
  });

  it("finds a new account's first delivered event without reading every action (the setup checklist polls it)", async () => {
    await expectNoWholeTable((q) => deliveredEventId(q, newAccountId), ['event_actions', 'events']);
    expect(await deliveredEventId(db, newAccountId)).toBeNull();
    expect(await deliveredEventId(db, accountId)).toMatch(/^evt_plan/);
  });

  it('counts the reports waiting for their events from the queue, not from every report', async () => {
    await expectNoWholeTable((q) => reportsAwaitingEvents(q, accountId), ['reports']);
  });

  it("reads only the events of a date range, by the account's index", async () => {
    const after = new Date(Date.now() - 3 * DAY);
    const before = new Date(Date.now() - 2 * DAY);
    await expectNoWholeTable((q) => selectEvents(q, accountId, { occurredAfter: after.toISOString(), occurredBefore: before.toISOString() }, 50), ['events']);
    const statements = await statementsOf(db, (q) => selectEvents(q, accountId, { occurredAfter: after.toISOString() }, 50));
    const plan = await planOf(db, statements[0]!, 'force_generic_plan');
    expect(plan).toMatch(/Index Cond: .*sort_at >=/);
    // The range holds exactly the events of those days: the bound on sort_at loses none.
    const rows = await selectEvents(db, accountId, { occurredAfter: after.toISOString(), occurredBefore: before.toISOString() }, 1000);
    const n = (await db.query<{ n: number }>('select count(*)::int as n from events where account_id = $1 and occurred_at >= $2 and occurred_at <= $3', [accountId, after, before]))[0]!.n;
    expect(rows.length).toBe(n);
    expect(n).toBeGreaterThan(0);
  });

  it("lists an account's erased events by their own index, never walking all of its events", async () => {
    await db.query(`update events set erased_at = now() where id in ('evt_plan17000', 'evt_plan19000')`);
    await db.exec('analyze events');
    const statements = await statementsOf(db, (q) => selectEvents(q, accountId, { erased: true }, 26));
    for (const mode of ['force_generic_plan', 'force_custom_plan'] as const) {
      const plan = await planOf(db, statements[0]!, mode);
      expect(plan, `${mode}\n${plan}`).toMatch(/events_erased_sort/);
    }
    expect((await selectEvents(db, accountId, { erased: true }, 26)).map((row) => row.id)).toEqual(['evt_plan17000', 'evt_plan19000']);
  });

  it("reads the chart's figures a page of events at a time, by the account's index, the same whatever the page size", async () => {
    const from = new Date(Date.now() - 40 * DAY);
    const to = new Date(Date.now() - 10 * DAY);
    await expectNoWholeTable((q) => dailyActionCounts(q, { accountId, from, to, pageEvents: 500 }), ['events', 'event_actions']);
    await expectNoWholeTable((q) => dailyValues(q, { accountId, from, to, siteId, pageEvents: 500 }), ['events']);
    // Every page walks an index of the events (never the table) and finds its actions by their event ids on the
    // actions' index. On PostgreSQL 15 an index condition on sort_at alone would read the whole of the sites' index;
    // PGlite's PostgreSQL 18 can skip-scan that index by site instead, and picks it where sites are few (this store has
    // two), so the check is for the server only.
    const counts = await statementsOf(db, (q) => dailyActionCounts(q, { accountId, from, to, pageEvents: 500 }));
    const values = await statementsOf(db, (q) => dailyValues(q, { accountId, from, to, siteId, pageEvents: 500 }));
    for (const mode of ['force_generic_plan', 'force_custom_plan'] as const) {
      for (const statement of [...counts, ...values]) {
        const plan = await planOf(db, statement, mode);
        if (kind.name === 'postgres') expect(plan, `${mode}\n${plan}`).not.toMatch(/Index Cond: \(\(?sort_at/);
        expect(plan, `${mode}\n${plan}`).not.toMatch(/Seq Scan on (events|event_actions)\b/);
      }
      expect(await planOf(db, counts[0]!, mode)).toMatch(/Index Cond: \(event_id = ANY/);
    }
    const whole = await dailyActionCounts(db, { accountId, from, to, pageEvents: 1_000_000 });
    const total = whole.reduce((sum, c) => sum + c.count, 0);
    // The events' sort_at carry microseconds: the pages' bounds must keep them to lose and repeat none.
    const n = (await db.query<{ n: number }>('select count(*)::int as n from events where account_id = $1 and sort_at >= $2 and sort_at < $3', [accountId, from, to]))[0]!.n;
    expect(total).toBe(n);
    expect(n).toBeGreaterThan(1000);
    expect(await dailyActionCounts(db, { accountId, from, to, pageEvents: 500 })).toEqual(whole);
    expect(await dailyActionCounts(db, { accountId, from, to, siteId, pageEvents: 333 })).toEqual(whole);
  });

  it('claims deliveries from a backlog without hashing the whole queue', async () => {
    await db.query(`insert into outbox (event_action_id, due_at) select 'act_plan' || i, now() - interval '1 minute' from generate_series(1, ${EVENTS}) i`);
    await db.exec('analyze outbox');
    try {
      const statements = await statementsOf(db, (q) => claimDeliveries(q, { now: new Date(), leaseMs: 60_000, limit: 20 }));
      for (const mode of ['force_generic_plan', 'force_custom_plan'] as const) {
        const plan = await planOf(db, statements[0]!, mode);
        expect(plan, `${mode}\n${plan}`).not.toMatch(/Hash Join|Seq Scan on outbox o\b/);
      }
      const claimed = await claimDeliveries(db, { now: new Date(), leaseMs: 60_000, limit: 20 });
      expect(claimed).toHaveLength(20);
      expect(await claimDeliveries(db, { now: new Date(), leaseMs: 60_000, limit: 20 })).not.toEqual(expect.arrayContaining([claimed[0]]));
    } finally {
      await db.query(`delete from outbox where event_action_id like 'act_plan%'`);
    }
  });

  it('claims queued adjustments without walking the finished ones', async () => {
    // 12,000 finished adjustment results of delivered actions, and a few queued.
    await db.query(
      `insert into adjustments (id, site_id, adjustment_id, report_id, type, occurred_at, events)
       select 'adj_plan' || i, $1, 'a-' || i, 'rpt_plan' || (1 + i % ${REPORTS}), 'retract', now(), 1 from generate_series(1, 12000) i`,
      [siteId],
    );
    await db.query(
      `insert into adjustment_results (id, adjustment_id, event_action_id, destination, status)
       select 'adr_plan' || i, 'adj_plan' || i, 'act_plan' || i, 'google_ads', case when i > 11990 then 'queued' else 'adjusted' end
       from generate_series(1, 12000) i`,
    );
    await db.exec('analyze adjustment_results');
    const statements = await statementsOf(db, (q) => claimAdjustments(q, { now: new Date(Date.now() + 60_000), leaseMs: 60_000, limit: 20 }));
    for (const mode of ['force_generic_plan', 'force_custom_plan'] as const) {
      const plan = await planOf(db, statements[0]!, mode);
      expect(plan, `${mode}\n${plan}`).not.toMatch(/Seq Scan on adjustment_results r(_1)?\b|Index Scan using adjustment_results_seq_key/);
    }
    expect(await claimAdjustments(db, { now: new Date(Date.now() + 60_000), leaseMs: 60_000, limit: 20 })).toHaveLength(10);
  });

  it("clears identities past the retention without reading every event and action, even with nothing due", async () => {
    const long = new Date(Date.now() - 365 * DAY);
    await expectNoWholeTable((q) => clearIdentityBefore(q, 'events', long, 500), ['events', 'event_actions']);
    await expectNoWholeTable((q) => clearIdentityBefore(q, 'reports', long, 500), ['reports']);
    // A day due is cleared, with its actions' hashed identifiers.
    const cleared = await clearIdentityBefore(db, 'events', new Date(Date.now() - 179 * DAY), 500);
    expect(cleared).toBeGreaterThan(0);
    const n = (await db.query<{ n: number }>("select count(*)::int as n from events where account_id = $1 and email is not null and created_at < $2", [accountId, new Date(Date.now() - 179 * DAY)]))[0]!.n;
    expect(n).toBe(0);
  });
});
