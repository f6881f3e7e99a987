/**
 * How a site's config travels inside the core loader (DESIGN.md, "The loader on the wire"). The build emits the core
 * (dist/loader.js) as one function of the site's config, called at its end with null:
 *
 *     (z=>{ …the loader… })(null);
 *
 * That is the plain loader. `GET /loader.js?site_key=KEY` serves the same text with the site's config in place of the
 * null (`loaderWithConfig`), so the loader decides at its first act, without a config request. The build uses these
 * definitions to wrap the bundle and to measure the per-site loader; the service uses them to fill it in.
 */

import type { SiteConfig } from './collector';

/**
 * The name of the core loader's one parameter: the site's config, or null in the plain loader. One letter, as it is on
 * every page: the sources read it as `siteConfig`, which the build defines as this name (build.mjs); the minifier gives
 * this name to none of the bundle's own identifiers, as the bundle refers to it as a global.
 */
export const LOADER_CONFIG_PARAMETER = 'z';

/** What the build puts before the bundled loader: the head of the function of the config. */
export const LOADER_HEAD = `(${LOADER_CONFIG_PARAMETER}=>{`;

/** What the build puts after it: the call, with null for "no config inside". The service replaces this tail. */
export const LOADER_TAIL = '})(null);';

/**
 * A built script as it is served: without its trailing `//# sourceMappingURL=` comment (a browser never executes it,
 * and what is served names no map) and without trailing white space.
 */
export function servedScript(code: string): string {
  return code.replace(/\n?\/\/# sourceMappingURL=\S*\s*$/, '').trimEnd();
}

/**
 * A JSON value as a JavaScript expression that is safe wherever a script's text may end up: JSON is a subset of
 * JavaScript, and `<`, `>`, U+2028 and U+2029 (which can only occur inside strings) are escaped as \uXXXX, so the text
 * never holds `</script>` or `<!--` (a page that inlines the loader) nor a line terminator older engines refuse in a
 * string literal.
 */
export function scriptJson(value: unknown): string {
  return JSON.stringify(value).replace(/[<>\u2028\u2029]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

/**
 * The per-site loader: the plain loader's text (as built, without a source map comment or trailing whitespace) with
 * `config` as its argument. Throws when the text does not end with LOADER_TAIL (it is not a build of the core loader).
 */
export function loaderWithConfig(plainLoader: string, config: object): string {
  if (!plainLoader.endsWith(LOADER_TAIL)) throw new Error(`The core loader must end with ${LOADER_TAIL}`);
  return `${plainLoader.slice(0, -LOADER_TAIL.length)}})(${scriptJson(config)});`;
}

/**
 * The config the lean core (dist/site-loader.js) carries inside: the site's config less what it says by default, since
 * these bytes are on every page. The lean core is served only to sites without form triggers, so `forms` is always
 * empty and left out (the loader reads a missing `forms` as none); `honor_gpc` is left out when true (the loader
 * honours GPC unless the config says `"honor_gpc": false`). The config endpoint answers the whole config.
 */
export function leanCoreConfig(config: SiteConfig): SiteConfig | Omit<SiteConfig, 'honor_gpc'> {
  const { forms: _forms, honor_gpc: honorGpc, ...rest } = config;
  return honorGpc === false ? { ...rest, honor_gpc: false } : rest;
}
