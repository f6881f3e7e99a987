/** Runs the loader against the happy-dom page of a test: a script tag, a mocked service, a cookie jar, a beacon sink. */
import { vi } from 'vitest';
import type { Snapshot } from '../../src/protocol/collector';
import type { Service } from '../../src/loader/api';
import { cookieDomainOf } from '../../src/server/collector/cookie-domain';
import { installCookieJar, type CookieJar } from './cookie-jar';
import { optionalModules, type OptionalScriptReply } from './optional-modules';

export type { OptionalScriptReply };

export const SERVICE = 'https://cnv.test';
export const SITE_KEY = 'site_key_1';

/** What the mocked GET …/config answers: a config body, a 404, or a network error. */
export type ConfigReply = Record<string, unknown> | 404 | 'network-error';

export interface Page {
  jar: CookieJar;
  /** The URLs of the optional scripts the loader imported, in order. */
  scripts: string[];
  fetch: ReturnType<typeof vi.fn>;
  /** Snapshots posted through sendBeacon (or the fetch fallback), parsed, with their URL and the content type sent. */
  beacons: { url: string; type: string; snapshot: Snapshot; bytes: number }[];
  warn: ReturnType<typeof vi.spyOn>;
  /** Waits for the beacons posted so far to be read (Blob bodies are read asynchronously). */
  flush(): Promise<void>;
}

/** A config as the service answers it for a site whose domain is `domain` (cookie_domain computed as it does). */
export const configFor = (domain: string | null, extra: Record<string, unknown> = {}) => ({
  site_key: SITE_KEY,
  domain,
  cookie_domain: cookieDomainOf(domain),
  correlation_ttl_seconds: 1800,
  honor_gpc: true,
  forms: [],
  ...extra,
});

const added: [EventTarget, string, EventListenerOrEventListenerObject, unknown][] = [];
let page: Page | undefined;

/** Sets the page URL (happy-dom navigates without loading anything). */
export function setUrl(url: string): void {
  (window as unknown as { happyDOM: { setURL(url: string): void } }).happyDOM.setURL(url);
}

/** The page's window.__service. */
export const service = () => (window as unknown as { __service?: Service }).__service;

/** Adds a script tag (never fetched) with the given src and attributes. */
export function addScript(src: string, attributes: Record<string, string> = {}): HTMLScriptElement {
  (window as unknown as { happyDOM: { settings: Record<string, unknown> } }).happyDOM.settings.handleDisabledFileLoadingAsSuccess = true;
  const tag = document.createElement('script');
  tag.src = src;
  for (const [name, value] of Object.entries(attributes)) tag.setAttribute(name, value);
  document.head.appendChild(tag);
  return tag;
}

/**
 * Prepares a page at `url` with a mocked service answering `config` and a loader tag (`tag` attributes; null for none),
 * and records what the loader does. Call resetPage() after each test.
 */
export function preparePage(
  url: string,
  config: ConfigReply,
  tag: Record<string, string> | null = { 'data-site-key': SITE_KEY },
  optional: OptionalScriptReply = 'run',
): Page {
  setUrl(url);
  if (tag) addScript(`${SERVICE}/loader.js`, tag);
  // The optional scripts the loader imports: recorded, and loaded (or failed) as a browser would.
  const scripts: string[] = (optionalModules.imported = []);
  optionalModules.reply = optional;
  for (const target of [document, window]) {
    const original = target.addEventListener.bind(target);
    vi.spyOn(target, 'addEventListener').mockImplementation((type, listener, options) => {
      added.push([target, type, listener!, options]);
      original(type, listener, options as AddEventListenerOptions);
    });
  }
  const reads: Promise<void>[] = [];
  const beacons: Page['beacons'] = [];
  // The body as a browser sends it: a Request built from it carries the content type the Fetch standard gives it.
  const record = (url: string, body: BodyInit) => {
    const request = new Request(url, { method: 'POST', body });
    reads.push(
      request.text().then((text) => {
        const type = request.headers.get('content-type') || '';
        beacons.push({ url, type, snapshot: JSON.parse(text), bytes: new TextEncoder().encode(text).length });
      }),
    );
  };
  const fetch = vi.fn(async (input: string, init?: RequestInit) => {
    if (init && init.method === 'POST') {
      record(String(input), init.body as BodyInit);
      return { ok: true, status: 204 };
    }
    if (config === 'network-error') throw new TypeError('Failed to fetch');
    if (config === 404) return { ok: false, status: 404, json: async () => ({ error: { code: 'not_found' } }) };
    return { ok: true, status: 200, json: async () => config };
  });
  vi.stubGlobal('fetch', fetch);
  vi.spyOn(navigator, 'sendBeacon').mockImplementation((url, body) => {
    record(String(url), body as BodyInit);
    return true;
  });
  const warn = vi.spyOn(console, 'warn').mockImplementation(() => {});
  page = {
    jar: installCookieJar(),
    scripts,
    fetch,
    beacons,
    warn,
    flush: async () => {
      await Promise.all(reads);
    },
  };
  return page;
}

/**
 * Makes `tag` the document's currentScript, as a browser does while a script from a script element runs (happy-dom
 * sets none while a test runs); resetPage() undoes it.
 */
export function runAsCurrentScript(tag: HTMLScriptElement): void {
  Object.defineProperty(document, 'currentScript', { configurable: true, get: () => tag });
}

/** Undoes everything preparePage and the loader did to the shared happy-dom window. */
export function resetPage(): void {
  for (const [target, type, listener, options] of added.splice(0)) {
    target.removeEventListener(type, listener, options as EventListenerOptions);
  }
  // The loader wraps pushState on the History object itself; its own method is History.prototype's, shown again.
  delete (history as unknown as Record<string, unknown>).pushState;
  const win = window as unknown as Record<string, unknown>;
  delete win.__service;
  delete win.dataLayer;
  delete (navigator as unknown as Record<string, unknown>).globalPrivacyControl;
  page?.jar.restore();
  page = undefined;
  sessionStorage.clear();
  delete (document as unknown as Record<string, unknown>).currentScript;
  document.head.innerHTML = '';
  document.body.innerHTML = '';
  vi.unstubAllGlobals();
  vi.restoreAllMocks();
}

/** Sets navigator.globalPrivacyControl as a browser with GPC on (or off) exposes it. */
export function setGpc(on: boolean): void {
  Object.defineProperty(navigator, 'globalPrivacyControl', { value: on, configurable: true });
}

/** A form marked as a signup surface with a text input and a submit button, added to the body. */
export function addSignupForm(marked = true): { form: HTMLFormElement; button: HTMLButtonElement } {
  const form = document.createElement('form');
  if (marked) form.setAttribute('data-service-signup-intent', '');
  form.action = '/signup';
  const button = document.createElement('button');
  button.type = 'submit';
  form.append(document.createElement('input'), button);
  // happy-dom would navigate on submit; the page under test never leaves.
  form.addEventListener('submit', (event) => event.preventDefault());
  document.body.appendChild(form);
  return { form, button };
}
