/** The collector protocol between the loader and the service: paths, payload shapes and limits. */
import type { ClickIdKey, PlatformCookie, UtmKey } from './signals';

/** Path prefix of the public collector endpoints. */
export const COLLECT_PREFIX = '/collect/v1';

/** Path of a site's public loader config. */
export function configPath(siteKey: string): string {
  return `${COLLECT_PREFIX}/sites/${encodeURIComponent(siteKey)}/config`;
}

/** Path to which the loader posts signup snapshots. */
export function snapshotsPath(siteKey: string): string {
  return `${COLLECT_PREFIX}/sites/${encodeURIComponent(siteKey)}/snapshots`;
}

/** Largest snapshot body the collector accepts, in bytes. */
export const SNAPSHOT_MAX_BYTES = 16 * 1024;

/** Content type of the snapshot body: CORS-simple, so `navigator.sendBeacon` can send it. */
export const SNAPSHOT_CONTENT_TYPE = 'text/plain;charset=UTF-8';

/** What `GET /collect/v1/sites/{site_key}/config` returns. */
export interface SiteConfig {
  site_key: string;
  /** Canonical origin of the site, or null: then no page is accepted. */
  domain: string | null;
  correlation_ttl_seconds: number;
  honor_gpc: boolean;
}

/** One ad landing: the click ids and UTM of a decorated URL. */
export interface Touch {
  click_ids: Partial<Record<ClickIdKey, string>>;
  utm: Partial<Record<UtmKey, string>>;
  landing_page_url: string;
  referrer: string | null;
  captured_at: string;
}

/** What set the snapshot off. */
export type SnapshotTrigger = 'form_submit' | 'api';

/** The snapshot body the loader posts on signup intent. */
export interface Snapshot {
  correlation_token: string;
  occurred_at: string;
  trigger: SnapshotTrigger;
  page_url: string;
  referrer: string | null;
  touch: Touch | null;
  cookies: Partial<Record<PlatformCookie, string>>;
}
