/** The site's public config: one GET per page view, or a verified copy from this tab's sessionStorage. */
import type { SiteConfig } from '../protocol/collector';
import { guard } from './guard';

/** How long a verified config is reused from sessionStorage. */
export const CONFIG_CACHE_MS = 5 * 60 * 1000;

/** A config as cached: with the time until which it may be reused. */
type CachedConfig = SiteConfig & { until: number };

/**
 * The site's config from its URL (`{api}/collect/v1/sites/{key}/config`, which also keys the cache entry: service and
 * site key in one): the cached copy while fresh, else one GET; null on 404, network errors or a body that is not JSON.
 * Storage that throws (private modes) or holds garbage is a cache miss.
 */
export async function loadConfig(url: string): Promise<SiteConfig | null> {
  const cached: CachedConfig | undefined = guard(() => JSON.parse(sessionStorage.getItem(url)!))();
  if (cached && cached.until > Date.now()) return cached;
  try {
    const response = await fetch(url);
    return response.ok ? await response.json() : null;
  } catch {
    return null;
  }
}

/**
 * Keeps a config that passed the origin check for CONFIG_CACHE_MS, so the tab's next page views skip the GET; does
 * nothing when storage is unavailable or full.
 */
export const cacheConfig = guard((url: string, config: SiteConfig): void => {
  sessionStorage.setItem(url, JSON.stringify({ ...config, until: Date.now() + CONFIG_CACHE_MS }));
});
