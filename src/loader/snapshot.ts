/** The snapshot the loader posts on signup intent, kept within the collector's size limit. */
import type { Snapshot, SnapshotTrigger, Touch } from '../protocol/collector';
import { SNAPSHOT_CONTENT_TYPE, SNAPSHOT_MAX_BYTES } from '../protocol/collector';
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
 * The snapshot as a text/plain JSON body of at most SNAPSHOT_MAX_BYTES bytes. A touch is at most TOUCH_MAX, so dropping
 * the referrer, then the page URL's query, then the platform cookies always fits; null only if that ever fails.
 */
export function snapshotBody(snapshot: Snapshot): Blob | null {
  const json = shrink(snapshot, SNAPSHOT_MAX_BYTES, (text) => new Blob([text]).size, [
    (s) => (s.referrer = null),
    (s) => (s.page_url = withoutQuery(s.page_url)),
    (s) => (s.cookies = {}),
  ]);
  return json === null ? null : new Blob([json], { type: SNAPSHOT_CONTENT_TYPE });
}
