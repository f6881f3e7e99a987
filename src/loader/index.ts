/**
 * Entry of dist/loader.js, the full loader: boots it, and nothing it does may throw into the host page. The build
 * makes the bundle one function of `siteConfig` (src/protocol/loader-script.ts): null in the plain `/loader.js`, the
 * site's config when the service serves it for `/loader.js?site_key=KEY` to a site with form triggers.
 */
import type { SiteConfig } from '../protocol/collector';
import { boot } from './boot';
import { guard } from './guard';

declare const siteConfig: SiteConfig | null;

guard(boot)(siteConfig);
