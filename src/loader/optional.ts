/**
 * The loader's optional scripts: what only some sites use lives in a script of its own, served by the service at
 * `/loader-<name>.js` beside `/loader.js` and fetched (once) only by pages that use it, so every other page pays
 * nothing for it: `/loader-links.js` for a tag with data-linker or data-url-passthrough, `/loader-forms.js` for a
 * config whose `forms` is not empty.
 *
 * Each is an ES module whose default export is the function that starts it (OptionalExports), guarded by the module
 * itself so it never throws into the core; the core imports it with the browser's module loader (no hook on
 * window.__service, no script element to watch). A script that fails to load leaves its feature off and throws
 * nothing. The core starts what it receives with the little of its state the script may use.
 */
import type { CollectorEndpoint, FormWatch, SiteConfig, Touch } from '../protocol/collector';
import type { OptionalScript, OptionalScriptPath } from '../protocol/install';
import { importModule } from './import-module';
import type { Carried } from './linker';
import type { Install } from './script-tag';

/**
 * Sends body to one of the site's collector endpoints with the page's context added (occurred_at, page_url, referrer,
 * touch, platform cookies), as text/plain JSON within the size limit (sendBeacon); only while the loader is allowed to.
 */
export type Send = (endpoint: CollectorEndpoint, body: object) => void;

/** Each optional script's default export: the function that starts it (undefined when it failed: it is guarded). */
export interface OptionalExports {
  /**
   * Starts carrying the click along followed links, given the install, the config and the core's view of the page
   * now: whether it may write and send, the touch that wins (stored or this page's), this page's own landing touch
   * (kept in memory before consent too) and the still-valid correlation token. Returns what a `_cnv` on the landing
   * carried, when this page has no ad click of its own (null otherwise).
   */
  links: (
    install: Install,
    config: SiteConfig,
    allowed: () => boolean,
    touch: () => Touch | null,
    landing: () => Touch | null,
    token: () => string | undefined,
  ) => Carried | null | undefined;
  /**
   * Runs the detectors of the config's forms while `on` (each submission sent with send) and stops them otherwise;
   * the core calls it after every change of consent, so it starts or stops only when `on` changed.
   */
  forms: (on: boolean, watches: FormWatch[], send: Send) => void | undefined;
}

/** Loads one optional script and resolves what it handed over, or undefined when it did not load. */
export type LoadOptional = <K extends OptionalScript>(name: K) => Promise<OptionalExports[K] | undefined>;

/**
 * Returns the loader of optional scripts, each an ES module fetched with import() from the service base URL (`api`)
 * like the config, at `/loader-<name>.js` beside `/loader.js` (optionalScriptPath of the protocol, written out and
 * checked against its type: esbuild does not inline the helper): it resolves the module's default export, or undefined
 * when the script did not load (a network error, a CSP refusal) or does not export one.
 */
export const optionalScripts = (api: string): LoadOptional => {
  return ((name: OptionalScript) =>
    importModule(new URL(`/loader-${name}.js` satisfies OptionalScriptPath, api).href).then(
      (module) => module.default,
      () => undefined,
    )) as LoadOptional;
};
