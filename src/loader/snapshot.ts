/** The snapshot the loader posts on signup intent, kept within the collector's size limit. */
import type { Snapshot, SnapshotTrigger, Touch } from '../protocol/collector';
import { SNAPSHOT_MAX_BYTES } from '../protocol/collector';
import { withoutQuery } from './click-signals';
import { readPlatformCookies } from './platform-cookies';
import { shrink } from './shrink';

/** The snapshot of this page now, with the touch and the platform cookies present. */
export function buildSnapshot(token: string, trigger: SnapshotTrigger, touch: Touch | null): Snapshot {
  return {
    correlation_token: token,
    occurred_at: new Date().toISOString(),
    trigger,
    page_url: location.href,
    referrer: document.referrer || null,
    touch,
    cookies: readPlatformCookies(),
  };
}

/**
 * The snapshot as a JSON string of at most SNAPSHOT_MAX_BYTES bytes (UTF-8). Sent as a string, sendBeacon and fetch
 * both give it the Fetch standard's type for strings, `text/plain;charset=UTF-8` (SNAPSHOT_CONTENT_TYPE): CORS-simple.
 * A touch is at most TOUCH_MAX, so dropping the referrer, then the page URL's query, then the platform cookies always
 * fits; null only if that ever fails.
 */
export function snapshotBody(snapshot: Snapshot): string | null {
  return shrink(snapshot, SNAPSHOT_MAX_BYTES, (json) => new Blob([json]).size, [
    (s) => (s.referrer = null),
    (s) => (s.page_url = withoutQuery(s.page_url)),
    (s) => (s.cookies = {}),
  ]);
}
