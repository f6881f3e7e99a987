/**
 * SQL of identity retention: identity fields (email, phone, names) cleared from the rows stored before a cutoff, oldest
 * first, a chunk per statement. Each statement only touches rows that still hold identity (partial indexes of migration
 * 13), so a pass over an already-cleared store reads nothing.
 */
import type { Queryable } from '../db/db';

/** The tables that hold identity, with what clears it, which rows still hold it, and when each row was stored. */
const TABLES = {
  events: { clear: 'email = null', holds: 'email is not null', stored: 'created_at' },
  reports: { clear: `identity = '{}'::jsonb`, holds: `identity <> '{}'::jsonb`, stored: 'created_at' },
  form_submissions: { clear: `fields = '{}'::jsonb`, holds: `fields <> '{}'::jsonb`, stored: 'received_at' },
} as const;

export const IDENTITY_TABLES = Object.keys(TABLES) as Array<keyof typeof TABLES>;

/** Clears the identity of up to `limit` rows of `table` stored before `cutoff`, oldest first; returns how many. */
export async function clearIdentityBefore(db: Queryable, table: keyof typeof TABLES, cutoff: Date, limit: number): Promise<number> {
  const { clear, holds, stored } = TABLES[table];
  const rows = await db.query(
    `update ${table} set ${clear}
     where id in (select id from ${table} where ${holds} and ${stored} < $1 order by ${stored} limit $2)
     returning id`,
    [cutoff, limit],
  );
  return rows.length;
}
