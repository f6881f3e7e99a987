/** SQL for sites. */
import type { Queryable } from '../../db/db';
import { newId, newSiteKey } from '../../db/ids';
import type { PageRequest, PageResult } from '../../http/pagination';
import { selectPageBySeq } from '../../db/keyset';
import { writeNoted } from '../../db/table-changes';

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

/** A write to sites, noted before and after (see table-changes.ts: the loader's cache of site configs). */
const writeSites = (db: Queryable, sql: string, params: readonly unknown[]) => writeNoted<SiteRow>(db, 'sites', sql, params);

/** Creates a site with the spec's defaults for whatever is not given. */
export async function insertSite(
  db: Queryable,
  accountId: string,
  fields: SitePatch = {},
): Promise<SiteRow> {
  const [row] = await writeSites(db,
    `insert into sites (id, account_id, name, domain, timezone, site_key, honor_gpc, correlation_ttl_seconds)
     values ($1, $2, coalesce($3, 'My Website'), $4, coalesce($5, 'America/New_York'), $6, coalesce($7, true), coalesce($8, 1800))
     returning ${SITE_COLUMNS}`,
    [
      newId('site'), accountId, fields.name ?? null, fields.domain ?? null, fields.timezone ?? null, newSiteKey(),
      fields.honor_gpc ?? null, fields.correlation_ttl_seconds ?? null,
    ],
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

/** One page of an account's sites in creation order. */
export async function listSitesPage(db: Queryable, accountId: string, request: PageRequest): Promise<PageResult<SiteRow>> {
  return selectPageBySeq<SiteRow>(db, { table: 'sites', columns: SITE_COLUMNS, accountId }, request);
}

/** The fields of a site that can be changed; absent fields are kept. */
export interface SitePatch {
  name?: string;
  domain?: string | null;
  timezone?: string;
  honor_gpc?: boolean;
  correlation_ttl_seconds?: number;
}

/** Applies a patch to a site of an account; null when there is no such site. */
export async function updateSite(db: Queryable, accountId: string, id: string, patch: SitePatch): Promise<SiteRow | null> {
  const [row] = await writeSites(db,
    `update sites set
       name = case when $3::boolean then $4::text else name end,
       domain = case when $5::boolean then $6::text else domain end,
       timezone = case when $7::boolean then $8::text else timezone end,
       honor_gpc = case when $9::boolean then $10::boolean else honor_gpc end,
       correlation_ttl_seconds = case when $11::boolean then $12::int else correlation_ttl_seconds end
     where account_id = $1 and id = $2 returning ${SITE_COLUMNS}`,
    [
      accountId, id,
      patch.name !== undefined, patch.name ?? null,
      patch.domain !== undefined, patch.domain ?? null,
      patch.timezone !== undefined, patch.timezone ?? null,
      patch.honor_gpc !== undefined, patch.honor_gpc ?? null,
      patch.correlation_ttl_seconds !== undefined, patch.correlation_ttl_seconds ?? null,
    ],
  );
  return row ?? null;
}

/** The first sites of an account in creation order (at most `limit`). */
export async function firstSites(db: Queryable, accountId: string, limit: number): Promise<SiteRow[]> {
  return db.query<SiteRow>(`select ${SITE_COLUMNS} from sites where account_id = $1 order by seq limit $2`, [accountId, limit]);
}

/** Every site of every account (or of one account), in creation order: for the operator's `cnv sites list`. */
export async function listAllSites(db: Queryable, accountId?: string): Promise<SiteRow[]> {
  return accountId
    ? db.query<SiteRow>(`select ${SITE_COLUMNS} from sites where account_id = $1 order by seq`, [accountId])
    : db.query<SiteRow>(`select ${SITE_COLUMNS} from sites order by seq`);
}

/** The oldest site of all (the one the first start made), or null. */
export async function oldestSite(db: Queryable): Promise<SiteRow | null> {
  const [row] = await db.query<SiteRow>(`select ${SITE_COLUMNS} from sites order by seq limit 1`);
  return row ?? null;
}

/** A site by id whatever its account (operator commands only; the API always scopes by account). */
export async function findSiteAnyAccount(db: Queryable, id: string): Promise<SiteRow | null> {
  const [row] = await db.query<SiteRow>(`select ${SITE_COLUMNS} from sites where id = $1`, [id]);
  return row ?? null;
}
