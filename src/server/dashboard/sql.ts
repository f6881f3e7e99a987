/** SQL of the dashboard: one-time sign-in links, sessions (both stored as SHA-256 hashes), and the events chart. */
import type { Queryable } from '../db/db';

/** Stores a sign-in link's token hash for an account, valid until `expiresAt`. */
export async function insertSignInToken(db: Queryable, tokenHash: string, accountId: string, expiresAt: Date, apiKeyId: string | null = null): Promise<void> {
  await db.query('insert into dashboard_sign_in_tokens (token_hash, account_id, expires_at, api_key_id) values ($1, $2, $3, $4)', [
    tokenHash,
    accountId,
    expiresAt,
    apiKeyId,
  ]);
  // Spent and expired links are kept a day (to tell "already used" from "unknown"), then dropped.
  await db.query(`delete from dashboard_sign_in_tokens where expires_at < now() - interval '1 day'`);
}

/** The account a usable sign-in token signs in to (its id and name), without using it; null when it is not usable. */
export async function peekSignInToken(db: Queryable, tokenHash: string, now: Date): Promise<{ account_id: string; account_name: string } | null> {
  const [row] = await db.query<{ account_id: string; account_name: string }>(
    `select t.account_id, a.name as account_name from dashboard_sign_in_tokens t join accounts a on a.id = t.account_id
     where t.token_hash = $1 and t.used_at is null and t.expires_at > $2`,
    [tokenHash, now],
  );
  return row ?? null;
}

/** What a sign-in token is: usable (its account), already used, expired, or unknown. Marks a usable one used, atomically. */
export async function useSignInToken(
  db: Queryable,
  tokenHash: string,
  now: Date,
): Promise<{ kind: 'ok'; accountId: string; apiKeyId: string | null } | { kind: 'used' | 'expired' | 'unknown' }> {
  const [used] = await db.query<{ account_id: string; api_key_id: string | null }>(
    `update dashboard_sign_in_tokens set used_at = $2
     where token_hash = $1 and used_at is null and expires_at > $2 returning account_id, api_key_id`,
    [tokenHash, now],
  );
  if (used) return { kind: 'ok', accountId: used.account_id, apiKeyId: used.api_key_id };
  const [row] = await db.query<{ used_at: Date | null }>('select used_at from dashboard_sign_in_tokens where token_hash = $1', [tokenHash]);
  if (!row) return { kind: 'unknown' };
  return { kind: row.used_at ? 'used' : 'expired' };
}

/** Stores a new session's token hash. */
export async function insertSession(db: Queryable, tokenHash: string, accountId: string, expiresAt: Date, apiKeyId: string | null = null): Promise<void> {
  await db.query('insert into dashboard_sessions (token_hash, account_id, expires_at, api_key_id) values ($1, $2, $3, $4)', [
    tokenHash,
    accountId,
    expiresAt,
    apiKeyId,
  ]);
  await db.query('delete from dashboard_sessions where expires_at < now()');
}

/** The account of a live session, or null. */
export async function findSession(db: Queryable, tokenHash: string, now: Date): Promise<{ account_id: string; account_name: string } | null> {
  const [row] = await db.query<{ account_id: string; account_name: string }>(
    `select s.account_id, a.name as account_name from dashboard_sessions s join accounts a on a.id = s.account_id
     where s.token_hash = $1 and s.expires_at > $2`,
    [tokenHash, now],
  );
  return row ?? null;
}

/** Ends a session (logout). */
export async function deleteSession(db: Queryable, tokenHash: string): Promise<void> {
  await db.query('delete from dashboard_sessions where token_hash = $1', [tokenHash]);
}

/** One bar segment of the chart: a day (UTC), a delivery status of an event's action, and how many. */
export interface DailyActionCount {
  day: string;
  status: string;
  count: number;
}

/**
 * How many event actions of the account's events of [from, to) ended in each status (queued, delivered, failed), per
 * UTC day. The range is on `sort_at` (the account's index on it reads only those days): sort_at is occurred_at's
 * millisecond plus a tie-breaker under a millisecond, so it falls in the same UTC day, and a day's bounds hold the same
 * events either way. The chart reads a day at a time (chart-data.ts).
 */
export async function dailyActionCounts(
  db: Queryable,
  accountId: string,
  from: Date,
  to: Date,
  siteId: string | undefined,
): Promise<DailyActionCount[]> {
  const rows = await db.query<{ day: string; status: string; count: string | number }>(
    `select to_char(date_trunc('day', e.occurred_at at time zone 'UTC'), 'YYYY-MM-DD') as day, a.status, count(*) as count
     from events e join event_actions a on a.event_id = e.id
     where e.account_id = $1 and e.sort_at >= $2 and e.sort_at < $3 and ($4::text is null or e.site_id = $4)
     group by 1, 2 order by 1, 2`,
    [accountId, from, to, siteId ?? null],
  );
  return rows.map((r) => ({ day: r.day, status: r.status, count: Number(r.count) }));
}

/** Reported value per day and currency (UTC days), once per report, as adjusted: what the chart's value view shows. */
export interface DailyValue {
  day: string;
  currency: string;
  /** The sum, in the currency's major unit. */
  value: number;
  /** How many conversions carried it. */
  conversions: number;
}

/**
 * The value of the account's conversions of [from, to) per day and currency: each report counted once (however many
 * flows it fired), at its latest adjustment (a restatement's value and currency replace it, a retraction makes it 0),
 * form conversions (no report) each on their own. Conversions without a value are left out; currencies are never added
 * together. The range is on `sort_at`, as in dailyActionCounts.
 */
export async function dailyValues(db: Queryable, accountId: string, from: Date, to: Date, siteId: string | undefined): Promise<DailyValue[]> {
  const rows = await db.query<{ day: string; currency: string; value: string | number; conversions: string | number }>(
    `with conversions as (
       select distinct on (coalesce(e.report_id, e.id)) e.id, e.report_id, e.occurred_at, e.value, e.currency
       from events e
       where e.account_id = $1 and e.sort_at >= $2 and e.sort_at < $3 and ($4::text is null or e.site_id = $4)
       order by coalesce(e.report_id, e.id), e.id
     )
     select to_char(date_trunc('day', c.occurred_at at time zone 'UTC'), 'YYYY-MM-DD') as day,
            coalesce(j.currency, c.currency) as currency,
            sum(case when j.type = 'retract' then 0 when j.type = 'restate' then j.value else c.value end) as value,
            count(*) as conversions
     from conversions c
     left join lateral (
       select a.type, a.value, a.currency from adjustments a
       where a.report_id = c.report_id
       order by a.occurred_at desc, a.created_at desc
       limit 1
     ) j on true
     where coalesce(j.currency, c.currency) is not null and (c.value is not null or j.type is not null)
     group by 1, 2 order by 1, 2`,
    [accountId, from, to, siteId ?? null],
  );
  return rows.map((r) => ({ day: r.day, currency: r.currency, value: Number(r.value), conversions: Number(r.conversions) }));
}

/**
 * One event of the account with a delivered action (the setup checklist's last step), or null. Walked from the account's
 * events by its sort_at index, each asked for a delivered action: as a join, the plan a prepared statement settles on
 * read the whole event_actions table for an account that has none delivered yet (the very accounts whose checklist
 * polls this every few seconds): 1.9 s on the embedded store with 585,000 actions, against 0.06 ms.
 */
export async function deliveredEventId(db: Queryable, accountId: string): Promise<string | null> {
  const [row] = await db.query<{ id: string }>(
    `select e.id from events e
     where e.account_id = $1 and exists (select 1 from event_actions a where a.event_id = e.id and a.status = 'delivered')
     order by e.sort_at limit 1`,
    [accountId],
  );
  return row?.id ?? null;
}
