/**
 * Statements that run for every snapshot, report or page view must not read a whole table that grows. PostgreSQL picks
 * a plan from the table's statistics, so a statement fast on a test's few rows can read the whole table once it holds
 * thousands: the collector's check for reports waiting for a batch's tokens did, on every batch, with some thousands of
 * reports (collector/sql.ts). Here the tables hold that many rows, analyzed, and each statement's plan is asked
 * for as a prepared statement gets it (the generic plan PostgreSQL settles on after five runs) and as a custom plan.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DATABASE_KINDS } from './support/databases';
import { snapshotBody } from './support/fixtures';
import type { Database, Queryable } from '../../src/server/db/db';
import { insertAccount } from '../../src/server/accounts/sql';
import { insertSite } from '../../src/server/api/sites/sql';
import { upsertSnapshots } from '../../src/server/collector/sql';

/** Reports in the table, each with identity fields as a report stores them: a size at which PostgreSQL chose to hash the whole table. */
const REPORTS = 10_000;

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
  beforeAll(async () => {
    db = await kind.open();
    siteId = (await insertSite(db, (await insertAccount(db, 'plans')).id, { domain: 'https://example.com' })).id;
    await db.query(
      `insert into reports (id, site_id, customer_event_id, trigger_key, correlation_token, identity)
       select 'rpt_plan' || i, $1, 'cev-' || i, 'signup', md5(i::text), jsonb_build_object('email', 'person' || i || '@example.com', 'first_name', 'Ada', 'last_name', 'Lovelace', 'phone', '+15550100' || i, 'customer_id', 'cus_' || md5(i::text)) from generate_series(1, ${REPORTS}) i`,
      [siteId],
    );
    await db.exec('analyze reports');
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
});
