/**
 * The site's public config: one GET per page view. The browser's HTTP cache is the only cache (the service answers
 * `Cache-Control: public, max-age=60`): a sessionStorage copy cost two synchronous IPCs on every page view, even on a miss.
 */
import type { SiteConfig } from '../protocol/collector';

/** The site's config from its URL (`{api}/collect/v1/sites/{key}/config`); null on 404, network errors or a body that is not JSON. */
export const loadConfig = async (url: string): Promise<SiteConfig | null> => {
  try {
    const response = await fetch(url);
    return response.ok ? await response.json() : null;
  } catch {
    return null;
  }
};
