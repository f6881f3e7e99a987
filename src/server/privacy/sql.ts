/**
 * SQL of identity retention: identity fields (email, phone, names) cleared from the rows stored before a cutoff, oldest
 * first, a chunk per statement. Each statement only touches rows that still hold identity (partial indexes of migration
 * 13), so a pass over an already-cleared store reads nothing.
 */
import type { Queryable } from '../db/db';

/** Clears the email of up to `limit` events stored before `cutoff`; returns how many. */
export async function clearEventIdentityBefore(db: Queryable, cutoff: Date, limit: number): Promise<number> {
  const rows = await db.query(
    `update events set email = null
     where id in (select id from events where email is not null and created_at < $1 order by created_at limit $2)
     returning id`,
    [cutoff, limit],
  );
  return rows.length;
}

/** Clears the identity fields of up to `limit` reports received before `cutoff`; returns how many. */
export async function clearReportIdentityBefore(db: Queryable, cutoff: Date, limit: number): Promise<number> {
  const rows = await db.query(
    `update reports set identity = '{}'::jsonb
     where id in (select id from reports where identity <> '{}'::jsonb and created_at < $1 order by created_at limit $2)
     returning id`,
    [cutoff, limit],
  );
  return rows.length;
}

/** Clears the identity fields of up to `limit` form submissions received before `cutoff`; returns how many. */
export async function clearFormSubmissionIdentityBefore(db: Queryable, cutoff: Date, limit: number): Promise<number> {
  const rows = await db.query(
    `update form_submissions set fields = '{}'::jsonb
     where id in (select id from form_submissions where fields <> '{}'::jsonb and received_at < $1 order by received_at limit $2)
     returning id`,
    [cutoff, limit],
  );
  return rows.length;
}
