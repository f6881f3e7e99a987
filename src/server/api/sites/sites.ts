/** Sites of an account: the Site record, listing, reading, creating and partial updates. */
import type { Queryable } from '../../db/db';
import { findSite, insertSite, listSitesPage, updateSite, type SitePatch, type SiteRow } from './sql';
import { notFound } from '../../http/errors';
import { paginate, pageRequestOf, type ListEnvelope } from '../../http/pagination';
import { parseSiteDomain, parseTimezone } from './site-fields';
import type { ListSitesQuery, SiteFields } from './schemas';

/** The Site record of the spec, exactly these fields. */
export interface SiteRecord {
  id: string;
  name: string;
  domain: string | null;
  timezone: string;
  site_key: string;
  created_at: string;
}

/** The API view of a stored site. */
export function toSiteRecord(row: SiteRow): SiteRecord {
  return {
    id: row.id,
    name: row.name,
    domain: row.domain,
    timezone: row.timezone,
    site_key: row.site_key,
    created_at: row.created_at.toISOString(),
  };
}

/** A site of the account, or 404. */
export async function requireSite(db: Queryable, accountId: string, id: string, param = 'id'): Promise<SiteRow> {
  const site = await findSite(db, accountId, id);
  if (!site) throw notFound('site', id, param);
  return site;
}

/** GET /v1/sites: the account's sites, paginated. */
export async function listSites(db: Queryable, accountId: string, query: ListSitesQuery): Promise<ListEnvelope<SiteRecord>> {
  return paginate(pageRequestOf(query), (r) => listSitesPage(db, accountId, r), toSiteRecord);
}

/** GET /v1/sites/{id}. */
export async function getSite(db: Queryable, accountId: string, id: string): Promise<SiteRecord> {
  return toSiteRecord(await requireSite(db, accountId, id));
}

/**
 * The patch a (schema-checked) site body asks for: the name trimmed, the domain in canonical form, the timezone in its
 * proper spelling. Besides the spec's fields, two loader settings can be set (read back through the public loader
 * config, `GET /collect/v1/sites/{site_key}/config`, so the Site record stays exactly the spec's).
 */
function sitePatchOf(fields: SiteFields): SitePatch {
  const patch: SitePatch = {};
  if (fields.name !== undefined) patch.name = fields.name.trim();
  if (fields.domain !== undefined) patch.domain = parseSiteDomain(fields.domain);
  if (fields.timezone !== undefined) patch.timezone = parseTimezone(fields.timezone);
  if (fields.honor_gpc !== undefined) patch.honor_gpc = fields.honor_gpc;
  if (fields.correlation_ttl_seconds !== undefined) patch.correlation_ttl_seconds = fields.correlation_ttl_seconds;
  return patch;
}

/** POST /v1/sites: a new site; name defaults to `My Website`, timezone to `America/New_York`, domain to null. */
export async function createSite(db: Queryable, accountId: string, fields: SiteFields): Promise<SiteRecord> {
  return toSiteRecord(await insertSite(db, accountId, sitePatchOf(fields)));
}

/** PATCH /v1/sites/{id}: changes only the fields sent; invalid input changes nothing. */
export async function patchSite(db: Queryable, accountId: string, id: string, fields: SiteFields): Promise<SiteRecord> {
  const patch = sitePatchOf(fields);
  const row = await updateSite(db, accountId, id, patch);
  if (!row) throw notFound('site', id);
  return toSiteRecord(row);
}
