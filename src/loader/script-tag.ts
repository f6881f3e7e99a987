/** Where the loader learns its site key, service base URL and consent requirement: its own script tag. */
import {
  API_ATTRIBUTE,
  CONSENT_REQUIRED_ATTRIBUTE,
  LOADER_PATH,
  SITE_KEY_ATTRIBUTE,
  SITE_KEY_PARAM,
} from '../protocol/install';
import { guard } from './guard';

/** What the install tells the loader. */
export interface Install {
  siteKey: string;
  /** Service base URL: the data-api value, else the loader's own src (collector paths are resolved against its origin). */
  api: string;
  consentRequired: boolean;
}

/** A tag's site key: its data-site-key, else the site_key query parameter of its src. */
const keyOf = guard(
  (tag: HTMLScriptElement) => tag.getAttribute(SITE_KEY_ATTRIBUTE) || new URL(tag.src).searchParams.get(SITE_KEY_PARAM),
);


/**
 * Finds the install: the site key of document.currentScript, else of the first script whose src path ends in
 * /loader.js and carries one, else `pageKey` (window.__service.siteKey). The base URL comes from the same tag (the
 * running loader's when the key came from the page). Null without a key or without a tag to take the base URL from.
 */
export function findInstall(doc: Document, pageKey: unknown): Install | null {
  const tags = [
    doc.currentScript as HTMLScriptElement | null,
    ...Array.from(doc.scripts).filter((tag) => tag.src.split(/[?#]/)[0]!.endsWith(LOADER_PATH)),
  ].filter((tag): tag is HTMLScriptElement => !!tag);
  const tag = tags.find(keyOf) || tags[0];
  const siteKey = (tag && keyOf(tag)) || pageKey;
  return typeof siteKey === 'string' && siteKey && tag
    ? { siteKey, api: tag.getAttribute(API_ATTRIBUTE) || tag.src, consentRequired: tag.hasAttribute(CONSENT_REQUIRED_ATTRIBUTE) }
    : null;
}
