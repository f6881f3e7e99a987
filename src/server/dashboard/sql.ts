/** SQL of the dashboard: one-time sign-in links, sessions (both stored as SHA-256 hashes), and the events chart. */
import { compareText, compositeKey } from '../db/composite-key';
import type { Queryable } from '../db/db';
import { VALUE_MAX_DECIMALS } from '../../protocol/webhook';
import { ERASED_ERROR_CODE } from '../api/erasures';

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

/** A sign-in token as stored (its account, when it stops working, when it was used), without using it; null when unknown. */
export async function peekSignInToken(
  db: Queryable,
  tokenHash: string,
): Promise<{ account_id: string; account_name: string; expires_at: Date; used_at: Date | null } | null> {
  const [row] = await db.query<{ account_id: string; account_name: string; expires_at: Date; used_at: Date | null }>(
    `select t.account_id, a.name as account_name, t.expires_at, t.used_at from dashboard_sign_in_tokens t join accounts a on a.id = t.account_id
     where t.token_hash = $1`,
    [tokenHash],
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
 * About how many events one statement of the chart reads. A range is read in pages of this many events (by the
 * account's index on sort_at), so no statement holds the store longer than a page takes, however busy the day: the
 * embedded store runs one statement at a time, and a whole day of 90,000 events held it for 0.6 to 1.0 s, during which
 * snapshots, reports and /healthz waited (docs/benchmarks.md, the fourth soak). A page takes tens of milliseconds; a
 * day with fewer events is one statement, as before.
 */
export const CHART_PAGE_EVENTS = 2_000;

/**
 * One page of [from, to): the events from `$5` on (a millisecond bound, or -infinity) up to `edge`, the end of the
 * millisecond of the `$6`-th of them (none: to the end of the range), so a page ends on a millisecond bound, which the
 * next page starts from (`$5`, passed back as the text of a timestamp: exact). Every event of one report shares its
 * occurred_at (fanout: one per flow, all at once), hence its millisecond of sort_at, so a report's events are always in
 * one page: the value view counts each report once by a `distinct on` within the page, as it did within the whole
 * range. A millisecond holds at most 1,000 events of an account, so a page is at most that many above `$6`. The edge
 * is found by the account's index alone (an index-only walk of `$6` entries, 3 ms for 2,000 in PGlite); finding the
 * rest of the last millisecond after a page of `$6` instead, from bounds PostgreSQL does not know when it plans,
 * made its generic plan scan the sort_at of every site's index. The page's actions are found by their event ids as
 * one array on the actions' index: as a plain join, PostgreSQL may hash the whole action table for every page, and
 * as a lookup per event it cost a fifth more (test/server/plans-at-scale.test.ts checks both plans).
 */
const PAGE_OF_EVENTS = `edge as (
       select date_trunc('milliseconds', e.sort_at) + interval '1 millisecond' as next from events e
       where e.account_id = $1 and e.sort_at >= $2 and e.sort_at < $3 and e.sort_at >= $5::timestamptz
         and ($4::text is null or e.site_id = $4)
       order by e.sort_at offset $6 - 1 limit 1
     ),
     page as (
       select e.id, e.report_id, e.occurred_at, e.sort_at, e.value, e.currency from events e
       where e.account_id = $1 and e.sort_at >= $2 and e.sort_at < $3 and e.sort_at >= $5::timestamptz
         and e.sort_at < coalesce((select next from edge), 'infinity')
         and ($4::text is null or e.site_id = $4)
     )`;

/** What every page's statement selects besides its rows: where the next page starts (null: this page ended the range). */
const PAGE_PROGRESS = `(select next::text from edge) as next`;

/** One page's figures: the next page's start (text of a timestamp; null after the last page) and its rows. */
interface Page<Row> {
  next: string | null;
  rows: Row[] | null;
}

/** Which of an account's events the chart's figures are of: [from, to) on sort_at, of one site or all. */
export interface ChartRange {
  accountId: string;
  from: Date;
  to: Date;
  /** Only this site's events; undefined: every site of the account. */
  siteId?: string | undefined;
  /** Events per page (default CHART_PAGE_EVENTS); tests use small pages. */
  pageEvents?: number;
}

/**
 * Reads the range's events a page at a time (PAGE_OF_EVENTS) and hands each page's rows to `add`. `statement` must
 * select PAGE_PROGRESS and `rows` over PAGE_OF_EVENTS's CTEs.
 */
async function readInPages<Row>(db: Queryable, statement: string, range: ChartRange, add: (rows: Row[]) => void): Promise<void> {
  const { accountId, from, to, siteId, pageEvents = CHART_PAGE_EVENTS } = range;
  let start = '-infinity';
  for (;;) {
    const [page] = await db.query<Page<Row>>(statement, [accountId, from, to, siteId ?? null, start, pageEvents]);
    add(page?.rows ?? []);
    if (!page || page.next === null) return;
    start = page.next;
  }
}

/**
 * How many event actions of the account's events of [from, to) ended in each status (queued, delivered, failed, and
 * `erased` for an action an erasure stopped: stored as failed, but nothing to fix), per UTC day. The range is on `sort_at` (the account's index on it reads only those days): sort_at is occurred_at's
 * millisecond plus a tie-breaker under a millisecond, so it falls in the same UTC day, and a day's bounds hold the same
 * events either way. Read in pages (ChartRange.pageEvents); the chart reads a day at a time (chart-data.ts).
 */
export async function dailyActionCounts(db: Queryable, range: ChartRange): Promise<DailyActionCount[]> {
  const counts = new Map<string, DailyActionCount>();
  await readInPages<DailyActionCount>(
    db,
    `with ${PAGE_OF_EVENTS},
     counts as (
       select to_char(date_trunc('day', p.occurred_at at time zone 'UTC'), 'YYYY-MM-DD') as day,
              case when a.status = 'failed' and a.error ->> 'code' = '${ERASED_ERROR_CODE}' then 'erased' else a.status end as status,
              count(*)::int as count
       from event_actions a join page p on p.id = a.event_id
       where a.event_id = any(array(select id from page))
       group by 1, 2
     )
     select ${PAGE_PROGRESS},
            (select jsonb_agg(jsonb_build_object('day', day, 'status', status, 'count', count)) from counts) as rows`,
    range,
    (rows) => {
      for (const row of rows) {
        const key = compositeKey(row.day, row.status);
        const seen = counts.get(key);
        if (seen) seen.count += row.count;
        else counts.set(key, { ...row });
      }
    },
  );
  return [...counts.values()].sort((a, b) => compareText(a.day, b.day) || compareText(a.status, b.status));
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
 * flows it fired: its events are in one page, see PAGE_OF_EVENTS), at the adjustment it stands at (its retraction,
 * which is final, else the last to arrive (seq) of its restatements not stored superseded, as standingAdjustment of
 * api/events: a restatement's value and currency replace it, a retraction makes it 0), form conversions (no report)
 * each on their own. Conversions without a
 * value are left out; currencies are never added together. The range is on `sort_at`, read in pages, as in
 * dailyActionCounts; each page's sums come back as exact decimals (values have VALUE_MAX_DECIMALS decimals) and are
 * added exactly.
 */
export async function dailyValues(db: Queryable, range: ChartRange): Promise<DailyValue[]> {
  const sums = new Map<string, { day: string; currency: string; units: bigint; conversions: number }>();
  await readInPages<{ day: string; currency: string; value: string; conversions: number }>(
    db,
    `with ${PAGE_OF_EVENTS},
     conversions as (
       select distinct on (coalesce(p.report_id, p.id)) p.id, p.report_id, p.occurred_at, p.value, p.currency
       from page p
       order by coalesce(p.report_id, p.id), p.id
     ),
     sums as (
       select to_char(date_trunc('day', c.occurred_at at time zone 'UTC'), 'YYYY-MM-DD') as day,
              coalesce(j.currency, c.currency) as currency,
              coalesce(sum(case when j.type = 'retract' then 0 when j.type = 'restate' then j.value else c.value end), 0)::text as value,
              count(*)::int as conversions
       from conversions c
       left join lateral (
         select a.type, a.value, a.currency from adjustments a
         where a.report_id = c.report_id and not a.superseded
         order by a.type = 'retract' desc, a.seq desc
         limit 1
       ) j on true
       where coalesce(j.currency, c.currency) is not null and (c.value is not null or j.type is not null)
       group by 1, 2
     )
     select ${PAGE_PROGRESS},
            (select jsonb_agg(jsonb_build_object('day', day, 'currency', currency, 'value', value, 'conversions', conversions)) from sums) as rows`,
    range,
    (rows) => {
      for (const row of rows) {
        const key = compositeKey(row.day, row.currency);
        const seen = sums.get(key);
        if (seen) {
          seen.units += valueUnits(row.value);
          seen.conversions += row.conversions;
        } else sums.set(key, { day: row.day, currency: row.currency, units: valueUnits(row.value), conversions: row.conversions });
      }
    },
  );
  return [...sums.values()]
    .sort((a, b) => compareText(a.day, b.day) || compareText(a.currency, b.currency))
    .map(({ day, currency, units, conversions }) => ({ day, currency, value: Number(decimalOfUnits(units)), conversions }));
}

/** A value sum's text ("-12.5", "39.900000", "0"; VALUE_MAX_DECIMALS decimals at most) in units of its last decimal. */
function valueUnits(decimal: string): bigint {
  const negative = decimal.startsWith('-');
  const [whole = '0', fraction = ''] = (negative ? decimal.slice(1) : decimal).split('.');
  const value = BigInt(whole + fraction.padEnd(VALUE_MAX_DECIMALS, '0').slice(0, VALUE_MAX_DECIMALS));
  return negative ? -value : value;
}

/** Units of the last decimal as a decimal text, for Number(): the same double as the sum's own text would give. */
function decimalOfUnits(value: bigint): string {
  const negative = value < 0n;
  const digits = (negative ? -value : value).toString().padStart(VALUE_MAX_DECIMALS + 1, '0');
  return `${negative ? '-' : ''}${digits.slice(0, -VALUE_MAX_DECIMALS)}.${digits.slice(-VALUE_MAX_DECIMALS)}`;
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

/** The Overview counts at most this many of each kind (past it, "1,000 or more"): a count never reads a whole table. */
export const ATTENTION_COUNT_CAP = 1000;

/**
 * For the Overview's "needs your attention": the account's events that failed since `since`, and those still queued
 * that happened between `since` and `stuckBefore` (waiting longer than delivery takes). Both by the account's index of
 * open statuses (events_open_status_sort), each count capped at ATTENTION_COUNT_CAP. An erased person's events are left out:
 * they are never sent, by design, and nothing is there to fix.
 */
export async function attentionCounts(db: Queryable, accountId: string, since: Date, stuckBefore: Date): Promise<{ failed: number; waiting: number }> {
  const [row] = await db.query<{ failed: number; waiting: number }>(
    `select
       (select count(*)::int from (select 1 from events where account_id = $1 and status = 'failed' and sort_at >= $2 and erased_at is null limit $4) f) as failed,
       (select count(*)::int from (select 1 from events where account_id = $1 and status = 'queued' and sort_at >= $2 and sort_at < $3 and erased_at is null limit $4) q) as waiting`,
    [accountId, since, stuckBefore, ATTENTION_COUNT_CAP],
  );
  return { failed: row?.failed ?? 0, waiting: row?.waiting ?? 0 };
}

/**
 * The failed deliveries of each destination type among the account's latest ATTENTION_COUNT_CAP failed events (an
 * erased person's left out, as everywhere): what the Destinations page offers to send again. `capped`: there were more
 * failed events than that, so the counts are a floor.
 */
export async function failedDeliveriesByDestination(db: Queryable, accountId: string): Promise<{ counts: Map<string, number>; capped: boolean }> {
  const rows = await db.query<{ destination: string | null; failed: number; events: number }>(
    `with e as (
       select id from events where account_id = $1 and status = 'failed' and erased_at is null order by sort_at desc limit $2
     )
     select a.destination, count(a.id)::int as failed, (select count(*)::int from e) as events
     from e left join event_actions a on a.event_id = e.id and a.status = 'failed'
     group by a.destination`,
    [accountId, ATTENTION_COUNT_CAP + 1],
  );
  const counts = new Map(rows.flatMap((r) => (r.destination && r.failed > 0 ? [[r.destination, r.failed] as const] : [])));
  return { counts, capped: (rows[0]?.events ?? 0) > ATTENTION_COUNT_CAP };
}

/**
 * The Sites page's cursor for the page that starts with this site of the account (the id of the site before it), or
 * undefined when fewer than `pageSize` sites come before it (it is on the first page) or it is not the account's. Two
 * index reads on (account_id, seq): the count stops at `pageSize`.
 */
export async function sitePageCursor(db: Queryable, accountId: string, siteId: string, pageSize: number): Promise<string | undefined> {
  const [row] = await db.query<{ before: number; previous: string | null }>(
    `with me as (select seq from sites where id = $2 and account_id = $1)
     select (select count(*)::int from (select 1 from sites s, me where s.account_id = $1 and s.seq < me.seq limit $3) b) as before,
            (select s.id from sites s, me where s.account_id = $1 and s.seq < me.seq order by s.seq desc limit 1) as previous`,
    [accountId, siteId, pageSize],
  );
  return row && row.before >= pageSize && row.previous ? row.previous : undefined;
}

/**
 * The account's sites, but `exceptSiteId`, whose domain is one of `domains` (the domains that would cover some refused
 * origins, install-check.ts coveringDomainsOf): a bounded lookup, whatever the account's number of sites.
 */
export async function sitesWithDomains(
  db: Queryable,
  accountId: string,
  exceptSiteId: string,
  domains: readonly string[],
): Promise<Array<{ id: string; name: string; domain: string }>> {
  if (domains.length === 0) return [];
  return db.query(
    `select id, name, domain from sites where account_id = $1 and id <> $2 and domain = any($3::text[]) order by seq`,
    [accountId, exceptSiteId, domains],
  );
}
