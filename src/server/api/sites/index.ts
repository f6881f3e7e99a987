/** The public face of this folder: what other parts of the service may import. */
export * from './sites';
export * from './sql';
export { ListSitesQuery, SiteFields, SiteIdParams } from './schemas';
export { parseSiteDomain, parseSiteName, parseTimezone, SITE_NAME_MAX } from './site-fields';
