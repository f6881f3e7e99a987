/**
 * The install check of a site, in plain words: per page origin, the last config request and snapshot the collector
 * served, and each refusal with its reason and the domain that would fix it.
 */
import { getDomain } from 'tldts';
import { refusalReasonOf, type OriginRefusalReason, type OriginTrafficRow } from '../collector';

/** What the collector saw of one page origin. */
export interface OriginSeen {
  origin: string;
  /** Whether the site's domain (now) covers this origin: the loader runs there and its snapshots are accepted. */
  covered: boolean;
  lastConfig: Date | null;
  configCount: number;
  lastSnapshot: Date | null;
  snapshotCount: number;
  lastFormSubmission: Date | null;
  formSubmissionCount: number;
}

/** One refusal: origin, reason in plain words, how often, when last. */
export interface Refusal {
  origin: string;
  reason: OriginRefusalReason;
  explanation: string;
  count: number;
  lastSeen: Date;
}

export interface InstallCheck {
  origins: OriginSeen[];
  refusals: Refusal[];
}

/** The later of a time seen so far (or none) and another. */
function latest(seen: Date | null, other: Date): Date {
  return seen !== null && seen.getTime() > other.getTime() ? seen : other;
}

/** Another site of the account, as the install check names it: a refused origin it covers belongs to it. */
export interface SiblingSite {
  id: string;
  name: string;
  domain: string;
}

/**
 * The domains that would cover a page origin: its own origin and each parent host down to the registrable domain, with
 * the same scheme and port (what a site's domain must be to accept it). Empty for what is no web origin.
 */
export function coveringDomainsOf(origin: string): string[] {
  let page: URL;
  try {
    page = new URL(origin);
  } catch {
    return [];
  }
  if (!/^https?:$/.test(page.protocol)) return [];
  const port = page.port ? `:${page.port}` : '';
  const root = getDomain(page.hostname) ?? page.hostname;
  const labels = page.hostname.split('.');
  const domains: string[] = [];
  for (let i = 0; i < labels.length; i++) {
    const host = labels.slice(i).join('.');
    domains.push(`${page.protocol}//${host}${port}`);
    if (host === root || host.length <= root.length) break;
  }
  return domains;
}

/** The install check from the collector's record of a site; `siblings`: other sites of the account covering refused origins. */
export function installCheckOf(rows: readonly OriginTrafficRow[], currentDomain: string | null, siblings: readonly SiblingSite[] = []): InstallCheck {
  const byOrigin = new Map<string, OriginSeen>();
  const refusals: Refusal[] = [];
  for (const row of rows) {
    if (row.kind === 'refused') {
      if (row.reason === '') continue;
      refusals.push({
        origin: row.origin,
        reason: row.reason,
        explanation: siblingExplanation(row.origin, siblings) ?? explainRefusal(row.reason, row.origin, row.domain, currentDomain),
        count: row.count,
        lastSeen: row.last_seen_at,
      });
      continue;
    }
    if (!row.origin) continue;
    const seen = byOrigin.get(row.origin) ?? {
      origin: row.origin, covered: refusalReasonOf({ domain: currentDomain }, row.origin) === null, lastConfig: null, configCount: 0, lastSnapshot: null, snapshotCount: 0, lastFormSubmission: null, formSubmissionCount: 0,
    };
    // An origin's config requests may be two rows (made while the domain did not cover it, and since it does): one count.
    if (row.kind === 'config') {
      seen.lastConfig = latest(seen.lastConfig, row.last_seen_at);
      seen.configCount += row.count;
    } else if (row.kind === 'snapshot') {
      seen.lastSnapshot = latest(seen.lastSnapshot, row.last_seen_at);
      seen.snapshotCount += row.count;
    } else {
      seen.lastFormSubmission = latest(seen.lastFormSubmission, row.last_seen_at);
      seen.formSubmissionCount += row.count;
    }
    byOrigin.set(row.origin, seen);
  }
  return { origins: [...byOrigin.values()], refusals };
}

/**
 * A refused origin that another site of the account covers: this site's snippet is on that site's pages. Widening this
 * site's domain would make both accept those pages, and a signup is paired only within one site (the snapshot went to
 * one, the backend's report to the other), so the fix is that site's snippet on those pages.
 */
function siblingExplanation(origin: string, siblings: readonly SiblingSite[]): string | undefined {
  const sibling = siblings.find((other) => refusalReasonOf({ domain: other.domain }, origin) === null);
  if (!sibling) return undefined;
  return (
    `${origin} belongs to your site "${sibling.name}" (its domain ${sibling.domain} covers it), but these pages carry this ` +
    `site's snippet: put the snippet of "${sibling.name}" (Sites page) on them instead. Do not widen this site's domain: ` +
    'both sites would then accept those pages, and a signup is paired only with what its own site captured.'
  );
}

/** Why an origin was refused, and what to change, in a sentence. */
export function explainRefusal(reason: OriginRefusalReason, origin: string, domainThen: string | null, currentDomain: string | null): string {
  const fixedSince = domainThen !== currentDomain ? ` (the domain was ${domainThen ?? 'not set'} then; it is ${currentDomain ?? 'not set'} now)` : '';
  if (reason === 'no_origin') {
    return 'A request without an Origin header (not sent by a page with the loader, e.g. a script or a proxy): nothing to fix unless you sent it.';
  }
  if (reason === 'no_domain') {
    return `${origin} was refused because the site has no domain yet: set the domain to ${suggestedDomain(origin, null) ?? origin}${fixedSince}.`;
  }
  const domain = domainThen ?? currentDomain;
  const suggestion = suggestedDomain(origin, domain);
  if (!domain) return `${origin} is not covered: the site has no domain.`;
  if (suggestion === null) {
    return `${origin} is not covered by ${domain}: it is on another registrable domain, so it needs a site of its own (or the cross-domain linker)${fixedSince}.`;
  }
  return `${origin} is not covered by ${domain}: set the domain to ${suggestion}${fixedSince}.`;
}

/**
 * The narrowest domain that covers both the page origin and the current domain: the same scheme and port as the page,
 * the longest host suffix both share, never shorter than the registrable domain. Null when they share no registrable
 * domain (or the origin is not a web origin).
 */
export function suggestedDomain(origin: string, domain: string | null): string | null {
  let page: URL;
  try {
    page = new URL(origin);
  } catch {
    return null;
  }
  if (!/^https?:$/.test(page.protocol)) return null;
  const port = page.port ? `:${page.port}` : '';
  if (!domain) return `${page.protocol}//${page.hostname}${port}`;
  let site: URL;
  try {
    site = new URL(domain);
  } catch {
    return `${page.protocol}//${page.hostname}${port}`;
  }
  const pageRoot = getDomain(page.hostname) ?? page.hostname;
  const siteRoot = getDomain(site.hostname) ?? site.hostname;
  if (pageRoot !== siteRoot) return null;
  const a = page.hostname.split('.').reverse();
  const b = site.hostname.split('.').reverse();
  const shared: string[] = [];
  for (let i = 0; i < Math.min(a.length, b.length) && a[i] === b[i]; i++) shared.push(a[i]!);
  const host = shared.reverse().join('.');
  const common = host.length >= pageRoot.length ? host : pageRoot;
  return `${page.protocol}//${common}${port}`;
}

/** Whether the loader has run on a page the site's domain covers: the first page view has arrived. */
export function loaderSeen(check: InstallCheck): boolean {
  return check.origins.some((o) => o.covered && (o.configCount > 0 || o.snapshotCount > 0 || o.formSubmissionCount > 0));
}
