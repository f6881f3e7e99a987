/** The site's public config: one GET per page view, or a verified copy from this tab's sessionStorage. */
import { configPath, type SiteConfig } from '../protocol/collector';
import { guard } from './guard';
import { readSession, writeSession } from './safe-storage';

/** How long a verified config is reused from sessionStorage. */
export const CONFIG_CACHE_MS = 5 * 60 * 1000;

/** A config as cached: with the time until which it may be reused. */
type CachedConfig = SiteConfig & { until: number };

/** The URL of a site's config, which also keys its cache entry (site key and service base URL in one). */
export const configUrl = (api: string, siteKey: string) => new URL(configPath(siteKey), api).href;

/**
 * The site's config: the cached copy while fresh, else `GET {api}/collect/v1/sites/{key}/config`; null on 404,
 * network errors or a body that is not JSON.
 */
export async function loadConfig(url: string): Promise<SiteConfig | null> {
  const cached: CachedConfig | undefined = guard(() => JSON.parse(readSession(url)!))();
  if (cached && cached.until > Date.now()) return cached;
  try {
    const response = await fetch(url);
    return response.ok ? await response.json() : null;
  } catch {
    return null;
  }
}

/** Keeps a config that passed the origin check for CONFIG_CACHE_MS, so the tab's next page views skip the GET. */
export function cacheConfig(url: string, config: SiteConfig): void {
  writeSession(url, JSON.stringify({ ...config, until: Date.now() + CONFIG_CACHE_MS }));
}
