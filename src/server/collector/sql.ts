/** SQL for the loader's signup snapshots, stored by (site, correlation token). */
import type { Queryable } from '../db/db';
import type { ConsentSignals, Snapshot, Touch } from '../../protocol/collector';

/** A snapshot row as stored (the merge of every snapshot sent with its token). */
export interface SnapshotRow {
  site_id: string;
  correlation_token: string;
  occurred_at: Date;
  trigger: string;
  page_url: string | null;
  referrer: string | null;
  /** The touch delivered: of all that reached this token, the ad touch captured last (see upsertSnapshots). */
  touch: Touch | null;
  /** Every click id that reached this token, by key, values in arrival order (the delivered touch's among them). */
  received_click_ids: Record<string, string[]>;
  cookies: Record<string, string>;
  /** Consent Mode signals, the latest answer of each; null when no snapshot carried any. */
  consent: Partial<ConsentSignals> | null;
  /** The visitor's User-Agent header as the collector received it (for Meta's `client_user_agent`), or null. */
  user_agent: string | null;
  /** The visitor's IP address as the collector saw it (for Meta's `client_ip_address`), or null. */
  ip_address: string | null;
  received_at: Date;
  updated_at: Date;
}

/** What the collector saw of the request that carried a snapshot (not part of the body: the loader cannot forge it). */
export interface SnapshotClient {
  userAgent: string | null;
  ipAddress: string | null;
}

/** One snapshot to store for a site. */
export interface SnapshotWrite {
  siteId: string;
  snapshot: Snapshot;
  /** The request's user agent and IP address; absent when unknown (stored as null). */
  client?: SnapshotClient;
}

const COLUMN_NAMES = [
  'site_id', 'correlation_token', 'occurred_at', 'trigger', 'page_url', 'referrer', 'touch', 'received_click_ids', 'cookies',
  'consent', 'user_agent', 'ip_address', 'received_at', 'updated_at',
] as const;

/** The select list of a SnapshotRow, optionally qualified by a table alias (`s.site_id, s.correlation_token, …`). */
export function snapshotColumns(alias?: string): string {
  return COLUMN_NAMES.map((name) => (alias ? `${alias}.${name}` : name)).join(', ');
}

/** The stored snapshot of a site's correlation token, or null when none has arrived (yet). */
export async function findSnapshot(db: Queryable, siteId: string, correlationToken: string): Promise<SnapshotRow | null> {
  const [row] = await db.query<SnapshotRow>(
    `select ${snapshotColumns()} from snapshots where site_id = $1 and correlation_token = $2`,
    [siteId, correlationToken],
  );
  return row ?? null;
}

/** A touch's click ids as received_click_ids holds them: each value in a list of one. */
function clickIdLists(touch: Touch | null): Record<string, string[]> {
  return Object.fromEntries(Object.entries(touch?.click_ids ?? {}).map(([key, value]) => [key, [value as string]]));
}

/** Whether a jsonb touch expression carries a click id (an ad touch) rather than UTMs only. */
const hasClickIds = (touch: string) => `(coalesce(${touch} -> 'click_ids', '{}'::jsonb) <> '{}'::jsonb)`;

/** The rows of a batch read out of its one JSON parameter, in the order of the insert's columns. */
const BATCH_ROWS = `insert into snapshots as s (site_id, correlation_token, occurred_at, trigger, page_url, referrer, touch,
       received_click_ids, cookies, consent, user_agent, ip_address)
     select site_id, correlation_token, occurred_at, trigger, page_url, referrer, touch, received_click_ids, cookies,
       consent, user_agent, ip_address
     from jsonb_to_recordset($1::jsonb) as x(site_id text, correlation_token text, occurred_at timestamptz, trigger text,
       page_url text, referrer text, touch jsonb, received_click_ids jsonb, cookies jsonb, consent jsonb, user_agent text,
       ip_address text)`;

/** How a snapshot merges into the stored one of its token (the rules: upsertSnapshots). */
const MERGE_INTO_STORED = `on conflict (site_id, correlation_token) do update set
       occurred_at = least(s.occurred_at, excluded.occurred_at),
       page_url = coalesce(s.page_url, excluded.page_url),
       referrer = coalesce(s.referrer, excluded.referrer),
       user_agent = coalesce(s.user_agent, excluded.user_agent),
       ip_address = coalesce(s.ip_address, excluded.ip_address),
       touch = case
         when excluded.touch is null then s.touch
         when s.touch is null then excluded.touch
         when ${hasClickIds('s.touch')} <> ${hasClickIds('excluded.touch')} then
           case when ${hasClickIds('excluded.touch')} then excluded.touch else s.touch end
         when (excluded.touch ->> 'captured_at')::timestamptz > (s.touch ->> 'captured_at')::timestamptz then excluded.touch
         else s.touch
       end,
       received_click_ids = s.received_click_ids || coalesce((
         select jsonb_object_agg(c.key, case
           when coalesce(s.received_click_ids -> c.key, '[]'::jsonb) @> jsonb_build_array(c.value) then s.received_click_ids -> c.key
           else coalesce(s.received_click_ids -> c.key, '[]'::jsonb) || jsonb_build_array(c.value)
         end)
         from jsonb_each_text(excluded.touch -> 'click_ids') as c(key, value)
       ), '{}'::jsonb),
       cookies = excluded.cookies || s.cookies,
       consent = case
         when excluded.consent is null then s.consent
         when s.consent is null then excluded.consent
         else s.consent || jsonb_strip_nulls(excluded.consent)
       end,
       updated_at = now()`;

/**
 * The batch's rows stored (`conflict`: what a stored token does), and of their tokens those a report already asked for.
 * `offset 0` keeps the report check a lookup of the reports' token index per stored row: without it PostgreSQL turns
 * the `exists` into a semi join, and since it cannot know how many rows the batch holds (it guesses 100), it chose to
 * read the whole reports table into a hash on every batch while that table held some thousands of rows (3,000 to
 * 10,000 in test/server/plans-at-scale.test.ts, which checks the plan): with 10,000 reports a batch of 25 took 2.0 ms
 * on the embedded store against 0.7 ms by the index.
 */
const storeReturningReported = (conflict: string) => `with stored as (
     ${BATCH_ROWS}
     ${conflict}
     returning site_id, correlation_token
     )
     select t.site_id, t.correlation_token from stored t
     where exists (select 1 from reports r where r.site_id = t.site_id and r.correlation_token = t.correlation_token offset 0)`;

/** Every token new: a plain insert, which fails whole (unique violation) if any token is stored already. */
const INSERT_NEW = storeReturningReported('');
const UPSERT = storeReturningReported(MERGE_INTO_STORED);

/** PostgreSQL's unique_violation: a token of the batch was stored already. */
const isUniqueViolation = (error: unknown) => (error as { code?: unknown }).code === '23505';

export interface UpsertSnapshotsOptions {
  /**
   * Whether the caller knows of no stored snapshot with any of these tokens (none it wrote recently). The batch then
   * goes in as a plain insert, which skips the conflict check's speculative insertion (3 to 4 µs of PGlite's time a
   * row, about a sixth of the upsert); a token stored all the same (by another instance, before a restart) fails
   * that insert whole, and the batch is upserted instead. Default false.
   */
  allNew?: boolean;
}

/**
 * Upserts snapshots in one statement (group commit), then makes the delivery of every event still waiting for one of
 * these tokens due now. The keys (site, token) must be distinct within one call (PostgreSQL cannot update a row twice
 * in one statement); the caller splits repeats into later calls, which then merge in order.
 *
 * A later snapshot with the same token may add data, and click data once stored is never lost:
 * - occurred_at: the earliest (the first intent of this token);
 * - trigger, page_url, referrer, user_agent, ip_address: the first stored value; a later snapshot only fills a null;
 * - touch, the one delivered: of two touches, an ad touch (with click ids) beats one with UTMs only (ad platforms credit
 *   the last ad click, whatever non-ad visits came after it: the loader's own rule); between two of the same kind the
 *   newer `captured_at` wins, whole (an old campaign's UTMs never mix with a new click); a tie keeps the stored one;
 * - received_click_ids: every click id of every touch, so a click id that lost is still shown on the event;
 * - cookies: the union, a stored value wins;
 * - consent: the latest answer of each signal (a later "denied" revokes an earlier "granted"); an unsaid one keeps the stored.
 */
export async function upsertSnapshots(
  db: Queryable,
  writes: readonly SnapshotWrite[],
  options: UpsertSnapshotsOptions = {},
): Promise<void> {
  if (writes.length === 0) return;
  // All rows as one JSON parameter: one JSON.stringify here, one parse in the store, and a statement text that is the
  // same whatever the batch size. (Twelve array parameters cost node-postgres an escaped array literal per column,
  // every JSON value escaped a second time inside it.) A JSON null is SQL NULL in every column. jsonb, not json: the
  // four jsonb columns are then taken from the parsed document as they are; from json, each was its text parsed again
  // (PGlite 4 to 6 % faster per batch of 25 in this thread).
  const rows = JSON.stringify(writes.map(({ siteId, snapshot: s, client }) => ({
    site_id: siteId,
    correlation_token: s.correlation_token,
    occurred_at: s.occurred_at,
    trigger: s.trigger,
    page_url: s.page_url,
    referrer: s.referrer,
    touch: s.touch,
    received_click_ids: clickIdLists(s.touch),
    cookies: s.cookies,
    consent: s.consent,
    user_agent: client?.userAgent ?? null,
    ip_address: client?.ipAddress ?? null,
  })));
  // Only the tokens a report already asked for come back (usually none): no row per snapshot to send and parse.
  type Reported = { site_id: string; correlation_token: string };
  let reported: Reported[] | null = null;
  if (options.allNew) {
    try {
      reported = await db.query<Reported>(INSERT_NEW, [rows]);
    } catch (error) {
      if (!isUniqueViolation(error)) throw error;
    }
  }
  reported ??= await db.query<Reported>(UPSERT, [rows]);
  // Usually the snapshot comes first and no report is there yet: the nudge is a second statement only when needed.
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
 * The largest id of a snapshot received before `cutoff`, or null when there is none. A row's id and its received_at
 * are both given at its insert, so received_at grows with the id, and a bisection over the primary key (about
 * log2(ids) lookups of one row each) finds the boundary without reading the table: snapshots have no index on time,
 * which every snapshot would pay for. On PostgreSQL with several instances, ids and times can disagree by the length
 * of a transaction; a row on the wrong side of the boundary waits for the next purge. (A clock set far ahead for a
 * while would give rows times later than the rows after them; those after would then wait until the wrong times too
 * are older than the cutoff: kept longer, never deleted early.)
 */
export async function lastSnapshotIdReceivedBefore(db: Queryable, cutoff: Date): Promise<number | null> {
  const firstFrom = async (id: number) =>
    (await db.query<{ id: string; received_at: Date }>('select id, received_at from snapshots where id >= $1 order by id limit 1', [id]))[0];
  const receivedBefore = (row: { received_at: Date } | undefined) => row !== undefined && new Date(row.received_at) < cutoff;
  const first = await firstFrom(0);
  if (!receivedBefore(first)) return null;
  const [last] = await db.query<{ id: string }>('select max(id) as id from snapshots');
  let lo = Number(first!.id); // received before the cutoff
  let hi = Number(last!.id) + 1; // the first row from here on was received after it
  while (hi - lo > 1) {
    const mid = lo + Math.floor((hi - lo) / 2);
    const row = await firstFrom(mid);
    if (receivedBefore(row) && Number(row!.id) < hi) lo = Number(row!.id);
    else hi = mid;
  }
  return lo;
}

/**
 * Deletes up to `limit` snapshots last written before `cutoff`, among those with an id up to `upToId` (see
 * lastSnapshotIdReceivedBefore: a snapshot last written before the cutoff was received before it), and returns how
 * many went. The bound keeps each statement to the old end of the table: without it, the last statement of every
 * purge (and the only one, when nothing had expired) read the whole table through its primary key, holding the
 * embedded store 0.46 to 0.60 s at a million snapshots. A paired event keeps its own copy of the click data, so only
 * snapshots that no report ever asked for are lost with them. The row goes whole, so the visitor's user agent and IP
 * address (never copied into an event) go with it.
 */
export async function purgeSnapshotsBefore(db: Queryable, cutoff: Date, limit: number, upToId: number): Promise<number> {
  const rows = await db.query<{ id: unknown }>(
    `delete from snapshots where id in (
       select id from snapshots where id <= $3 and updated_at < $1 order by id limit $2
     ) returning id`,
    [cutoff, limit, upToId],
  );
  return rows.length;
}
