/** Where the loader learns its site key, service base URL and options: its own script tag. */
import {
  type API_ATTRIBUTE,
  type CONSENT_REQUIRED_ATTRIBUTE,
  LOADER_PATH,
  SITE_KEY_ATTRIBUTE,
  type SITE_KEY_PARAM,
} from '../protocol/install';
import type { CollectorEndpoint, CollectorPath } from '../protocol/collector';
import { queryOf, withoutQuery } from './click-signals';

/** What the install tells the loader. */
export interface Install {
  siteKey: string;
  /**
   * Service base URL: the data-api value, else the loader's own src (collector paths and the optional scripts'
   * paths are resolved against its origin).
   */
  api: string;
  consentRequired: boolean;
  /**
   * The tag has data-url-passthrough: while consent is not given, the landing's click ids and UTM parameters ride on
   * same-site links.
   */
  passthrough: boolean;
  /**
   * The data-linker value: the site's other registrable domains (parsed by the links script), between which the touch
   * and token travel in `_cnv`; null when absent.
   */
  linker: string | null;
}

/** A tag's site key: its data-site-key, else the site_key query parameter of its src. */
const keyOf = (tag: HTMLScriptElement) =>
  tag.getAttribute(SITE_KEY_ATTRIBUTE) || queryOf(tag.src).get('site_key' satisfies typeof SITE_KEY_PARAM);

/** Whether a script's src path (its URL without query and fragment) ends in /loader.js. */
const isLoaderTag = (tag: HTMLScriptElement) => withoutQuery(tag.src).endsWith(LOADER_PATH);

/**
 * The install a loader tag describes, for the site with key siteKey. Attribute names are written where they are read,
 * the protocol's checked against its constants (satisfies): esbuild inlines no string constant, and each would cost
 * about 3 B gzip on every page.
 */
const installOf = (tag: HTMLScriptElement, siteKey: string): Install => {
  return {
    siteKey,
    api: tag.getAttribute('data-api' satisfies typeof API_ATTRIBUTE) || tag.src,
    consentRequired: tag.hasAttribute('data-consent-required' satisfies typeof CONSENT_REQUIRED_ATTRIBUTE),
    passthrough: tag.hasAttribute('data-url-passthrough'),
    linker: tag.getAttribute('data-linker'),
  };
};

/**
 * The install of a loader served with its site's config inside (`/loader.js?site_key=KEY`): the key is the config's,
 * so only the tag is needed, for the base URL and options: document.currentScript, which a browser sets while a
 * classic script from a script element runs (pasted, or inserted by a tag manager); else (a page that overrides its
 * getter) the document's first script whose src carries this key as its site_key, never another site's tag. None
 * (null or undefined) without either: a script inside a shadow root is in no document.scripts. The parameter's name is
 * written where it is read, checked against the protocol's constant, as in keyOf (esbuild inlines no string constant).
 */
export const servedInstall = (doc: Document, siteKey: string): Install | null | undefined => {
  const tag =
    (doc.currentScript as HTMLScriptElement | null) ||
    [...doc.scripts].find((script) => queryOf(script.src).get('site_key' satisfies typeof SITE_KEY_PARAM) === siteKey);
  return tag && installOf(tag, siteKey);
};

/**
 * Finds the install of the plain loader (the older snippet): the site key of document.currentScript (the usual case:
 * no scan of the document's scripts), else of the first script whose src path ends in /loader.js and carries one,
 * else `pageKey` (window.__service.siteKey). The base URL and options come from the same tag (the running loader's
 * when the key came from the page). Null without a key or without a tag to take the base URL from.
 */
export const findInstall = (doc: Document, pageKey: unknown): Install | null => {
  const current = doc.currentScript as HTMLScriptElement | null;
  let tag = current && keyOf(current) ? current : undefined;
  if (!tag) {
    const loaders = [...doc.scripts].filter(isLoaderTag);
    tag = loaders.find(keyOf) || current || loaders[0];
  }
  const siteKey = (tag && keyOf(tag)) || pageKey;
  return typeof siteKey === 'string' && siteKey && tag ? installOf(tag, siteKey) : null;
};

/**
 * The URL of one of the site's collector endpoints (collectorPath of the protocol, written out here and checked against
 * its type: esbuild inlines neither the prefix constant nor the helper), resolved against the install's service base URL.
 */
export const collectorUrl = (install: Install, endpoint: CollectorEndpoint): string =>
  new URL(`/collect/v1/sites/${encodeURIComponent(install.siteKey)}/${endpoint}` satisfies CollectorPath, install.api).href;
