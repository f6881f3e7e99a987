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
const TABLES = {
  events: {
    clear: 'email = null, customer_id = null, identity_cleared_at = now()',
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
const withoutHashes = (column: string) =>
  `regexp_replace(${column}::text, '"[0-9a-fA-F]{64}"', '"(removed past the identity retention)"', 'g')::jsonb`;

/**
 * What delivery recorded of the events a chunk cleared (their actions' and attempts' request summaries, their
 * adjustments' summaries) loses its hashed identifiers in the same statement.
 */
const EVENT_SUMMARIES = `,
  actions as (
    update event_actions a set request = ${withoutHashes('a.request')}
    from cleared c where a.event_id = c.id and a.request is not null
  ),
  attempts as (
    update delivery_attempts d set request = ${withoutHashes('d.request')}
    from event_actions a, cleared c where d.event_action_id = a.id and a.event_id = c.id and d.request is not null
  ),
  adjusted as (
    update adjustment_results r set request = ${withoutHashes('r.request')}
    from event_actions a, cleared c where r.event_action_id = a.id and a.event_id = c.id and r.request is not null
  )`;

/** Clears the identity of up to `limit` rows of `table` stored before `cutoff`, oldest first; returns how many. */
export async function clearIdentityBefore(db: Queryable, table: keyof typeof TABLES, cutoff: Date, limit: number): Promise<number> {
  const { clear, due, stored } = TABLES[table];
  const rows = await db.query(
    `with cleared as (
       update ${table} set ${clear}
       where id in (select id from ${table} where ${due} and ${stored} < $1 order by ${stored} limit $2)
       returning id
     )${table === 'events' ? EVENT_SUMMARIES : ''}
     select id from cleared`,
    [cutoff, limit],
  );
  return rows.length;
}
