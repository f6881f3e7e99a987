/** SQL for sites. */
import type { Queryable } from './db';
import { newId, newSiteKey } from '../ids';

/** A site row as stored. */
export interface SiteRow {
  id: string;
  account_id: string;
  name: string;
  domain: string | null;
  timezone: string;
  site_key: string;
  correlation_ttl_seconds: number;
  honor_gpc: boolean;
  created_at: Date;
}

export const SITE_COLUMNS =
  'id, account_id, name, domain, timezone, site_key, correlation_ttl_seconds, honor_gpc, created_at';

/** Creates a site with the spec's defaults for whatever is not given. */
export async function insertSite(
  db: Queryable,
  accountId: string,
  fields: { name?: string; domain?: string | null; timezone?: string } = {},
): Promise<SiteRow> {
  const [row] = await db.query<SiteRow>(
    `insert into sites (id, account_id, name, domain, timezone, site_key)
     values ($1, $2, coalesce($3, 'My Website'), $4, coalesce($5, 'America/New_York'), $6) returning ${SITE_COLUMNS}`,
    [newId('site'), accountId, fields.name ?? null, fields.domain ?? null, fields.timezone ?? null, newSiteKey()],
  );
  return row!;
}

/** A site by its public key (collector, webhook), whatever its account. */
export async function findSiteByKey(db: Queryable, siteKey: string): Promise<SiteRow | null> {
  const [row] = await db.query<SiteRow>(`select ${SITE_COLUMNS} from sites where site_key = $1`, [siteKey]);
  return row ?? null;
}

/** A site of an account by id, or null (another account's site is null too). */
export async function findSite(db: Queryable, accountId: string, id: string): Promise<SiteRow | null> {
  const [row] = await db.query<SiteRow>(`select ${SITE_COLUMNS} from sites where account_id = $1 and id = $2`, [accountId, id]);
  return row ?? null;
}
