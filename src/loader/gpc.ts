/** Global Privacy Control: the browser's signal that the visitor refuses tracking, honoured unless the site opts out. */
import type { SiteConfig } from '../protocol/collector';

/** Whether GPC refuses on this page: the browser sends it and the site config does not say `"honor_gpc": false`. */
export const gpcRefuses = (config: SiteConfig): boolean => {
  return (navigator as { globalPrivacyControl?: unknown }).globalPrivacyControl === true && config.honor_gpc !== false;
};
