/** Sites of an account: the Site record, listing, reading, creating and partial updates. */
import type { Queryable } from '../../db/db';
import { findSite, insertSite, listSitesPage, updateSite, type SitePatch, type SiteRow } from './sql';
import { notFound } from '../../http/errors';
import { paginate, parsePageRequest, PAGE_PARAMS, type ListEnvelope } from '../../http/pagination';
import { rejectUnknownFields, requireObjectBody, type JsonObject } from '../../http/input';
import { parseCorrelationTtl, parseHonorGpc, parseSiteDomain, parseSiteName, parseTimezone } from './site-fields';

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
export async function listSites(db: Queryable, accountId: string, query: JsonObject): Promise<ListEnvelope<SiteRecord>> {
  rejectUnknownFields(query, PAGE_PARAMS);
  const request = parsePageRequest(query);
  return paginate(request, (r) => listSitesPage(db, accountId, r), toSiteRecord);
}

/** GET /v1/sites/{id}. */
export async function getSite(db: Queryable, accountId: string, id: string): Promise<SiteRecord> {
  return toSiteRecord(await requireSite(db, accountId, id));
}

/**
 * Besides the spec's fields, two loader settings can be set (they are read back through the public loader config,
 * `GET /collect/v1/sites/{site_key}/config`, so the Site record stays exactly the spec's).
 */
const EDITABLE = ['name', 'domain', 'timezone', 'honor_gpc', 'correlation_ttl_seconds'] as const;

/** Validates a site body: every field optional, each checked; unknown fields rejected. */
function parseSiteFields(body: unknown): SitePatch {
  const input = requireObjectBody(body);
  rejectUnknownFields(input, EDITABLE);
  const patch: SitePatch = {};
  if (input.name !== undefined) patch.name = parseSiteName(input.name);
  if (input.domain !== undefined) patch.domain = parseSiteDomain(input.domain);
  if (input.timezone !== undefined) patch.timezone = parseTimezone(input.timezone);
  if (input.honor_gpc !== undefined) patch.honor_gpc = parseHonorGpc(input.honor_gpc);
  if (input.correlation_ttl_seconds !== undefined) patch.correlation_ttl_seconds = parseCorrelationTtl(input.correlation_ttl_seconds);
  return patch;
}

/** POST /v1/sites: a new site; name defaults to `My Website`, timezone to `America/New_York`, domain to null. */
export async function createSite(db: Queryable, accountId: string, body: unknown): Promise<SiteRecord> {
  return toSiteRecord(await insertSite(db, accountId, parseSiteFields(body)));
}

/** PATCH /v1/sites/{id}: changes only the fields sent; invalid input changes nothing. */
export async function patchSite(db: Queryable, accountId: string, id: string, body: unknown): Promise<SiteRecord> {
  const patch = parseSiteFields(body);
  const row = await updateSite(db, accountId, id, patch);
  if (!row) throw notFound('site', id);
  return toSiteRecord(row);
}
