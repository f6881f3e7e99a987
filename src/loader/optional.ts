/**
 * The loader's optional scripts: what only some sites use lives in a script of its own, served by the service at
 * `/loader-<name>.js` beside `/loader.js` and fetched (once) only by pages that use it, so every other page pays
 * nothing for it: `/loader-links.js` for a tag with data-linker or data-url-passthrough, `/loader-forms.js` for a
 * config whose `forms` is not empty.
 *
 * The hook between them, on window.__service (the loader's only global): before fetching one, the core sets
 * `__service._x(name, exports)`; the optional script, an IIFE, calls it once as it runs (handOver below); the core
 * takes the exports at the script element's load event, which a browser fires after running the script. A script that
 * fails to load, or that runs without the core, hands nothing over: its feature stays off and nothing throws. The core
 * starts what it receives with the little of its state the script may use (see OptionalExports); what a script hands
 * over is guarded (handOver), so it never throws into the core.
 */
import type { CollectorEndpoint, FormWatch, SiteConfig, Touch } from '../protocol/collector';
import { optionalScriptPath, SERVICE_GLOBAL, type OptionalScript } from '../protocol/install';
import type { Service } from './api';
import { guard } from './guard';
import type { Carried } from './linker';
import type { Install } from './script-tag';

/**
 * Sends body to one of the site's collector endpoints with the page's context added (occurred_at, page_url, referrer,
 * touch, platform cookies), as text/plain JSON within the size limit (sendBeacon); only while the loader is allowed to.
 */
export type Send = (endpoint: CollectorEndpoint, body: object) => void;

/** What each optional script hands over: the function that starts it. */
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
  ) => Carried | null;
  /**
   * Runs the detectors of the config's forms while `on` (each submission sent with send) and stops them otherwise;
   * the core calls it after every change of consent, so it starts or stops only when `on` changed.
   */
  forms: (on: boolean, watches: FormWatch[], send: Send) => void;
}

/** Loads one optional script and resolves what it handed over, or undefined when it did not load. */
export type LoadOptional = <K extends OptionalScript>(name: K) => Promise<OptionalExports[K] | undefined>;

/**
 * Sets the hook on the loader's service object and returns the loader of optional scripts, each fetched from the
 * service base URL (`api`) like the config, at `/loader-<name>.js` beside `/loader.js`: a script element with a src,
 * allowed by any CSP that allows the loader.
 */
export function optionalScripts(service: Service, api: string): LoadOptional {
  const handed: Record<string, unknown> = {};
  service._x = (name, exports) => (handed[name] = exports);
  return ((name: OptionalScript) =>
    new Promise((resolve) => {
      const script = document.createElement('script');
      script.src = new URL(optionalScriptPath(name), api).href;
      script.onload = script.onerror = () => resolve(handed[name] as never);
      document.head.append(script);
    })) as LoadOptional;
}

/**
 * Run by an optional script as it loads: hands its exports to the core through window.__service._x, guarded, so the
 * core may call them without a try of its own (an error in an optional script never reaches the page or the core).
 */
export function handOver<K extends OptionalScript>(name: K, exports: OptionalExports[K]): void {
  try {
    (window as { [SERVICE_GLOBAL]?: Service })[SERVICE_GLOBAL]!._x!(name, guard(exports as (...args: never[]) => unknown));
  } catch {
    // No core on this page (the script was loaded on its own): nothing to hand over to.
  }
}
