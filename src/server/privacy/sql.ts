/**
 * SQL of identity retention: identity fields (email, phone, names) cleared from the rows stored before a cutoff, oldest
 * first, a chunk per statement, with the hashed identifiers of what delivery recorded of those events. Each statement only reads rows not yet cleared (partial indexes of migration 13), so a
 * pass over an already-cleared store reads nothing.
 */
import type { Queryable } from '../db/db';

/**
 * The tables that hold identity: what clears it, and which rows are due. Events and reports are visited once each (their
 * identity_cleared_at marks it, and a partial index holds the rows not yet visited); form submissions are usually
 * deleted whole by the snapshot retention long before.
 */
/**
 * The addresses an event shows (the signup page, the landing page, the page before it): their query and fragment can
 * name a person (`?email=…` from a mail campaign's link, a CRM's contact id), so past the window each keeps only its
 * origin and path. Its click ids and UTM are kept apart (`click_ids`, `data.utm`), so counts and reports stay right
 * (a UTM value that holds an email address goes: DATA_UTM_WITHOUT_ADDRESSES).
 */
const EVENT_URL_FIELDS = ['page_url', 'landing_page_url', 'landing_referrer'] as const;

/** The event's data with its URLs cut before their query or fragment (each only when the data has it). */
const DATA_URLS_WITHOUT_QUERY = `jsonb_strip_nulls(jsonb_build_object(${EVENT_URL_FIELDS.map(
  (field) => `'${field}', regexp_replace(data ->> '${field}', '[?#].*$', '')`,
).join(', ')}))`;

/**
 * UTM values (`json`, a jsonb object) without those that hold an email address: a mail tool may put the subscriber's
 * address in `utm_content` or `utm_term`, and the UTM stays past the window. Campaign names and sources stay.
 */
const utmWithoutAddresses = (json: string) =>
  `(select coalesce(jsonb_object_agg(u.key, u.value), '{}'::jsonb) from jsonb_each(${json}) as u(key, value)
    where u.value::text !~* '@|%40')`;

/** The event's UTM (`data.utm`) past the window, when it has one. */
const DATA_UTM_WITHOUT_ADDRESSES = `case when jsonb_typeof(data -> 'utm') = 'object' then jsonb_build_object('utm', ${utmWithoutAddresses(`data -> 'utm'`)}) else '{}'::jsonb end`;

/**
 * A form submission's event keeps the loader's whole touch (`data.touch`: its landing page and the page before it, as
 * the browser saw them): those two addresses are cut the same way and its UTM loses email addresses; its click ids and
 * capture time are kept.
 */
const TOUCH_URLS_WITHOUT_QUERY = `case when jsonb_typeof(data -> 'touch') = 'object' then jsonb_build_object('touch', (data -> 'touch') || jsonb_strip_nulls(jsonb_build_object(
  'landing_page_url', regexp_replace(data -> 'touch' ->> 'landing_page_url', '[?#].*$', ''),
  'referrer', regexp_replace(data -> 'touch' ->> 'referrer', '[?#].*$', ''),
  'utm', case when jsonb_typeof(data -> 'touch' -> 'utm') = 'object' then ${utmWithoutAddresses(`data -> 'touch' -> 'utm'`)} end))) else '{}'::jsonb end`;

const TABLES = {
  events: {
    // The platform cookies the event shows (_fbc, _fbp…, from its snapshot) identify a browser: they go too, and its
    // addresses lose what may name the visitor.
    clear: `email = null, customer_id = null, data = (data - 'platform_cookies') || ${DATA_URLS_WITHOUT_QUERY} || ${DATA_UTM_WITHOUT_ADDRESSES} || ${TOUCH_URLS_WITHOUT_QUERY}, identity_cleared_at = now()`,
    due: 'identity_cleared_at is null',
    stored: 'created_at',
  },
  reports: {
    clear: `identity = '{}'::jsonb, customer_id = null, identity_cleared_at = now()`,
    due: 'identity_cleared_at is null',
    stored: 'created_at',
  },
  form_submissions: { clear: `fields = '{}'::jsonb`, due: `fields <> '{}'::jsonb`, stored: 'received_at' },
} as const;

export const IDENTITY_TABLES = Object.keys(TABLES) as Array<keyof typeof TABLES>;

/**
 * A request summary without its hashed identifiers: every SHA-256 hex string in it (the hashed email, phone, names, IP
 * address or customer id that each platform's summary keeps, whatever the platform calls the field) is replaced.
 */
export const withoutHashes = (column: string) =>
  `regexp_replace(${column}::text, '"[0-9a-fA-F]{64}"', '"(removed past the identity retention)"', 'g')::jsonb`;

/** The ids of the actions of the events a chunk cleared. */
const ACTIONS_OF_CLEARED = 'select a.id from event_actions a where a.event_id = any(array(select id from cleared))';

/**
 * What delivery recorded of the events a chunk cleared (their actions' and attempts' request summaries, their
 * adjustments' summaries) loses its hashed identifiers in the same statement.
 */
const EVENT_SUMMARIES = `,
  actions as (
    update event_actions a set request = ${withoutHashes('a.request')}
    where a.event_id = any(array(select id from cleared)) and a.request is not null
  ),
  attempts as (
    update delivery_attempts d set request = ${withoutHashes('d.request')}
    where d.event_action_id = any(array(${ACTIONS_OF_CLEARED})) and d.request is not null
  ),
  adjusted as (
    update adjustment_results r set request = ${withoutHashes('r.request')}
    where r.event_action_id = any(array(${ACTIONS_OF_CLEARED})) and r.request is not null
  )`;

/**
 * Clears the identity of up to `limit` rows of `table` stored before `cutoff`, oldest first; returns how many. Every
 * set of rows is given to the next step as an array of ids (`= any(array(…))`), never joined: as joins, the plan a
 * prepared statement settles on read the whole events and event_actions tables twice per chunk, even with nothing due
 * (0.6 s an hour at 300,000 events on the embedded store, 0.9 s with a day due), against 13 ms and 0.3 s so.
 */
export async function clearIdentityBefore(db: Queryable, table: keyof typeof TABLES, cutoff: Date, limit: number): Promise<number> {
  const { clear, due, stored } = TABLES[table];
  const rows = await db.query(
    `with cleared as (
       update ${table} set ${clear}
       where id = any(array(select id from ${table} where ${due} and ${stored} < $1 order by ${stored} limit $2))
       returning id
     )${table === 'events' ? EVENT_SUMMARIES : ''}
     select id from cleared`,
    [cutoff, limit],
  );
  return rows.length;
}
