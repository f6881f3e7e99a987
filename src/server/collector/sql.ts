/** SQL for the loader's signup snapshots, stored by (site, correlation token). */
import type { Queryable } from '../db/db';
import type { Snapshot, Touch } from '../../protocol/collector';

/** A snapshot row as stored (the merge of every snapshot sent with its token). */
export interface SnapshotRow {
  site_id: string;
  correlation_token: string;
  occurred_at: Date;
  trigger: string;
  page_url: string | null;
  referrer: string | null;
  touch: Touch | null;
  cookies: Record<string, string>;
  received_at: Date;
  updated_at: Date;
}

/** One snapshot to store for a site. */
export interface SnapshotWrite {
  siteId: string;
  snapshot: Snapshot;
}

const SNAPSHOT_COLUMNS =
  'site_id, correlation_token, occurred_at, trigger, page_url, referrer, touch, cookies, received_at, updated_at';

/** The stored snapshot of a site's correlation token, or null when none has arrived (yet). */
export async function findSnapshot(db: Queryable, siteId: string, correlationToken: string): Promise<SnapshotRow | null> {
  const [row] = await db.query<SnapshotRow>(
    `select ${SNAPSHOT_COLUMNS} from snapshots where site_id = $1 and correlation_token = $2`,
    [siteId, correlationToken],
  );
  return row ?? null;
}

/**
 * Upserts snapshots in one statement (group commit), then makes the delivery of every event still waiting for one of
 * these tokens due now. The keys (site, token) must be distinct within one call (PostgreSQL cannot update a row twice
 * in one statement); the caller splits repeats into later calls, which then merge in order.
 *
 * The merge rule, so that click data once stored is never lost:
 * - occurred_at: the earliest (the first intent of this token);
 * - trigger, page_url, referrer: the first stored value; a later snapshot only fills a null;
 * - touch: none stored -> the new one; the new one null -> the stored one; a stored touch without click ids is replaced
 *   by a new touch with click ids (a click beats a UTM-only landing); otherwise the stored touch stays whole and only
 *   click id keys it lacks are added (a stored click id value is never overwritten, and UTMs of two campaigns never mix);
 * - cookies: the union, a stored value wins.
 */
export async function upsertSnapshots(db: Queryable, writes: readonly SnapshotWrite[]): Promise<void> {
  if (writes.length === 0) return;
  const columns: unknown[][] = [[], [], [], [], [], [], [], []];
  for (const { siteId, snapshot: s } of writes) {
    const values = [
      siteId,
      s.correlation_token,
      s.occurred_at,
      s.trigger,
      s.page_url,
      s.referrer,
      s.touch ? JSON.stringify(s.touch) : null,
      JSON.stringify(s.cookies),
    ];
    values.forEach((value, i) => columns[i]!.push(value));
  }
  // unnest keeps the statement text constant whatever the batch size (one plan shape, no parameter-count limit).
  const stored = await db.query<{ site_id: string; correlation_token: string; reported: boolean }>(
    `insert into snapshots as s (site_id, correlation_token, occurred_at, trigger, page_url, referrer, touch, cookies)
     select * from unnest($1::text[], $2::text[], $3::timestamptz[], $4::text[], $5::text[], $6::text[], $7::jsonb[], $8::jsonb[])
     on conflict (site_id, correlation_token) do update set
       occurred_at = least(s.occurred_at, excluded.occurred_at),
       page_url = coalesce(s.page_url, excluded.page_url),
       referrer = coalesce(s.referrer, excluded.referrer),
       touch = case
         when s.touch is null then excluded.touch
         when excluded.touch is null then s.touch
         when coalesce(s.touch -> 'click_ids', '{}'::jsonb) = '{}'::jsonb then
           case when coalesce(excluded.touch -> 'click_ids', '{}'::jsonb) = '{}'::jsonb then s.touch else excluded.touch end
         else jsonb_set(s.touch, '{click_ids}', coalesce(excluded.touch -> 'click_ids', '{}'::jsonb) || (s.touch -> 'click_ids'))
       end,
       cookies = excluded.cookies || s.cookies,
       updated_at = now()
     returning site_id, correlation_token,
       exists (select 1 from reports r where r.site_id = s.site_id and r.correlation_token = s.correlation_token) as reported`,
    columns,
  );
  // Usually the snapshot comes first and no report is there yet: the nudge is a second statement only when needed.
  const reported = stored.filter((row) => row.reported);
  if (reported.length > 0) await nudgeWaitingDeliveries(db, reported);
}

/**
 * Makes the outbox rows of events that wait for these snapshots due now (their reports came first, and delivery was
 * held for the pairing window); delivery pairs them at send time.
 */
export async function nudgeWaitingDeliveries(
  db: Queryable,
  keys: ReadonlyArray<{ site_id: string; correlation_token: string }>,
): Promise<void> {
  await db.query(
    `update outbox set due_at = now()
     where due_at > now() and event_action_id in (
       select a.id from unnest($1::text[], $2::text[]) as k(site_id, correlation_token)
       join reports r on r.site_id = k.site_id and r.correlation_token = k.correlation_token
       join events e on e.report_id = r.id and e.match_quality is null
       join event_actions a on a.event_id = e.id
     )`,
    [keys.map((k) => k.site_id), keys.map((k) => k.correlation_token)],
  );
}

/**
 * Deletes up to `limit` snapshots last written before `cutoff` and returns how many went. A paired event keeps its
 * own copy of the click data, so only snapshots that no report ever asked for are lost with them.
 */
export async function purgeSnapshotsBefore(db: Queryable, cutoff: Date, limit: number): Promise<number> {
  const rows = await db.query<{ id: unknown }>(
    'delete from snapshots where id in (select id from snapshots where updated_at < $1 order by id limit $2) returning id',
    [cutoff, limit],
  );
  return rows.length;
}
