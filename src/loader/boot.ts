/**
 * The ways the loader boots. The plain loader (`/loader.js`: the older snippet with data-site-key, an unknown key)
 * discovers its site key and fetches the site's config; the loaders the service serves for `/loader.js?site_key=KEY`
 * have the config inside and decide at once: the full loader (with the form triggers) for a site with form
 * triggers, the lean one for a site without.
 */
import type { SiteConfig } from '../protocol/collector';
import { collectorUrl, findInstall, servedInstall } from './script-tag';
import { loadConfig } from './site-config';
import { start } from './start';

/**
 * The full loader (dist/loader.js): with the site's config inside when the service put it there, else the plain
 * loader, which finds the site key (DESIGN.md, Install snippet) and makes one config request.
 */
export const boot = (embedded: SiteConfig | null = null): void => {
  if (embedded) return bootWithConfig(embedded);
  start((pageKey) => {
    const install = findInstall(document, pageKey);
    return install && { install, config: (decide) => loadConfig(collectorUrl(install, 'config')).then(decide) };
  });
};

/** A loader with its site's config inside: no key to discover, no config to wait for. */
export const bootWithConfig = (config: SiteConfig): void => {
  start(() => {
    const install = servedInstall(document, config.site_key);
    return install && { install, config: (decide) => decide(config) };
  });
};
