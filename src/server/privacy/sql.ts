/**
 * SQL of identity retention: identity fields (email, phone, names) cleared from the rows stored before a cutoff, oldest
 * first, a chunk per statement. Each statement only reads rows not yet cleared (partial indexes of migration 13), so a
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
    clear: 'email = null, identity_cleared_at = now()',
    due: 'identity_cleared_at is null',
    stored: 'created_at',
  },
  reports: {
    clear: `identity = '{}'::jsonb, identity_cleared_at = now()`,
    due: 'identity_cleared_at is null',
    stored: 'created_at',
  },
  form_submissions: { clear: `fields = '{}'::jsonb`, due: `fields <> '{}'::jsonb`, stored: 'received_at' },
} as const;

export const IDENTITY_TABLES = Object.keys(TABLES) as Array<keyof typeof TABLES>;

/** Clears the identity of up to `limit` rows of `table` stored before `cutoff`, oldest first; returns how many. */
export async function clearIdentityBefore(db: Queryable, table: keyof typeof TABLES, cutoff: Date, limit: number): Promise<number> {
  const { clear, due, stored } = TABLES[table];
  const rows = await db.query(
    `update ${table} set ${clear}
     where id in (select id from ${table} where ${due} and ${stored} < $1 order by ${stored} limit $2)
     returning id`,
    [cutoff, limit],
  );
  return rows.length;
}
