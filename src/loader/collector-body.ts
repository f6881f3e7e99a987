/** The body of every post to the collector (snapshots, form submissions): the page's context added, within the size limit. */
import type { Snapshot, Touch } from '../protocol/collector';
import { SNAPSHOT_MAX_BYTES } from '../protocol/collector';
import { withoutQuery } from './click-signals';
import { readPlatformCookies } from './platform-cookies';
import { consentSignals } from './consent-mode';
import { shrink } from './shrink';

/** What the loader adds to every post: when, where, the touch, the platform cookies present and Consent Mode's signals. */
export type PageContext = Pick<Snapshot, 'occurred_at' | 'page_url' | 'referrer' | 'touch' | 'cookies'> & Required<Pick<Snapshot, 'consent'>>;

/** body with this page's context added now. */
export const withPageContext = <T extends object>(body: T, touch: Touch | null): T & PageContext => {
  return {
    ...body,
    occurred_at: new Date().toISOString(),
    page_url: location.href,
    referrer: document.referrer || null,
    touch,
    cookies: readPlatformCookies(),
    consent: consentSignals(),
  };
};

/**
 * The post as a JSON string of at most SNAPSHOT_MAX_BYTES bytes (UTF-8). Sent as a string, sendBeacon and fetch both
 * give it the Fetch standard's type for strings, `text/plain;charset=UTF-8` (SNAPSHOT_CONTENT_TYPE): CORS-simple. A
 * touch is at most TOUCH_MAX and the rest of a body is small, so dropping the referrer, then the page URL's query, then
 * the platform cookies always fits; null only if that ever fails.
 */
export const collectorBody = (post: PageContext): string | null => {
  return shrink(post, SNAPSHOT_MAX_BYTES, (json) => new Blob([json]).size, [
    (p) => (p.referrer = null),
    (p) => (p.page_url = withoutQuery(p.page_url)),
    (p) => (p.cookies = {}),
  ]);
};
