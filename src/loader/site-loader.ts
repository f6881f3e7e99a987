/**
 * Entry of dist/site-loader.js, the lean loader the service serves for `/loader.js?site_key=KEY` to a site without
 * form triggers: the build makes it one function of `siteConfig` (src/protocol/loader-script.ts), which the service
 * calls with the site's config. Nothing it does may throw into the host page.
 */
import type { SiteConfig } from '../protocol/collector';
import { bootWithConfig } from './boot';
import { guard } from './guard';

declare const siteConfig: SiteConfig;

guard(bootWithConfig)(siteConfig);
