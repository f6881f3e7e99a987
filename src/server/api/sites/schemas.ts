/** The input schemas of /v1/sites: what each route accepts, described for a reader (people and agent tools alike). */
import { Type, type Static } from '@sinclair/typebox';
import { IdParams, ListOf, NonBlankText, Nullable, Timestamp } from '../../http/schemas';
import { PageQuery } from '../../http/pagination';

/** Longest site name. */
export const SITE_NAME_MAX = 200;

/** Shortest and longest correlation cookie lifetime a site may set, in seconds (1 minute to 1 day). */
export const CORRELATION_TTL_RANGE = { min: 60, max: 86_400 } as const;

/** Longest domain accepted before it is even parsed. */
export const SITE_DOMAIN_MAX = 300;

/** `{id}` of /v1/sites/{id}. */
export const SiteIdParams = IdParams('The site id (site_…).');
export type SiteIdParams = Static<typeof SiteIdParams>;

/** The query of GET /v1/sites: the list pagination, no filters. */
export const ListSitesQuery = PageQuery;
export type ListSitesQuery = Static<typeof ListSitesQuery>;

/**
 * The editable fields of a site, every one optional: POST /v1/sites creates a site with them (defaults for the rest),
 * PATCH /v1/sites/{id} changes only those sent. `honor_gpc` and `correlation_ttl_seconds` are loader settings, read
 * back through the public loader config rather than the Site record.
 */
export const SiteFields = Type.Object(
  {
    name: Type.Optional(NonBlankText(`A label for the site: 1 to ${SITE_NAME_MAX} characters, not blank; surrounding spaces are trimmed.`, SITE_NAME_MAX)),
    domain: Type.Optional(
      Nullable(
        Type.String({
          maxLength: SITE_DOMAIN_MAX,
          description:
            'The bare origin the tracking snippet accepts, such as https://www.example.com (scheme http or https, host, ' +
            'optional port; no path, query or trailing slash), or null to clear it (then no page is accepted). Pages on ' +
            'subdomains of the host are accepted too.',
        }),
      ),
    ),
    timezone: Type.Optional(Type.String({ maxLength: 100, description: 'An IANA timezone name, such as America/New_York or Europe/Berlin.' })),
    honor_gpc: Type.Optional(
      Type.Boolean({ description: 'Whether the loader treats Global Privacy Control as a refusal of consent (true by default).' }),
    ),
    correlation_ttl_seconds: Type.Optional(
      Type.Integer({
        minimum: CORRELATION_TTL_RANGE.min,
        maximum: CORRELATION_TTL_RANGE.max,
        description: `Lifetime of the signup correlation cookie, in whole seconds from ${CORRELATION_TTL_RANGE.min} to ${CORRELATION_TTL_RANGE.max} (1800 by default).`,
      }),
    ),
  },
  { additionalProperties: false, description: 'Site fields to set; send only the ones to change.' },
);
export type SiteFields = Static<typeof SiteFields>;

/**
 * The body of POST /v1/sites: the site fields, every one optional, and so the body itself (Type.Optional: no body, or
 * an empty one, is `{}`, a site with every default). PATCH /v1/sites/{id} still requires a body.
 */
export const CreateSiteBody = Type.Optional(SiteFields);

/** The Site record (responses): exactly the spec's fields. */
export const Site = Type.Object(
  {
    id: Type.String({ description: 'The site id (site_…).' }),
    name: Type.String({ description: 'The label of the site.' }),
    domain: Nullable(Type.String({ description: 'The origin the loader accepts (and its subdomains); null accepts nothing.' })),
    timezone: Type.String({ description: 'IANA timezone name.' }),
    site_key: Type.String({ description: 'The public key in the install snippet and the collector and webhook paths.' }),
    created_at: Timestamp('When the site was created.'),
  },
  { title: 'Site', additionalProperties: false },
);

/** A page of sites. */
export const SiteList = ListOf(Site, 'sites');
