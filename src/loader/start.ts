/** The loader's wiring: read the landing, find the install, decide whether to run, then watch for signup intent. */
import { type SiteConfig, type SnapshotTrigger, type Touch } from '../protocol/collector';
import { CLICK_COOKIE, CORRELATION_COOKIE } from '../protocol/cookies';
import { originMatchesDomain } from '../protocol/origin';
import { pageService, publishService, type Service } from './api';

/** The mark a loader leaves on window.__service, shared by every copy of it (Symbol.for: one symbol per key per page). */
const RAN = Symbol.for('cnv');
import { sendBeacon } from './beacon';
import { isAdTouch, readTouch } from './click-signals';
import { collectorBody, withPageContext } from './collector-body';
import { followConsentMode } from './consent-mode';
import { correlate, currentToken } from './correlation';
import { gpcRefuses } from './gpc';
import { guard } from './guard';
import { watchIntent } from './intent';
import { navigationEntry } from './landing';
import { loaderCookies, type WriteCookie } from './loader-cookies';
import { watchNavigation } from './navigation';
import { formTriggers } from './form-triggers';
import { optionalScripts, type Send } from './optional';
import { drainQueue } from './queue';
import { readCookies } from './read-cookie';
import { collectorUrl, type Install } from './script-tag';
import { preferredTouch, storedTouch, storeTouch } from './touch-cookie';

/**
 * Whether this core runs the form triggers, defined per bundle by build.mjs: false in the lean core
 * (dist/site-loader.js, served only to sites without form triggers), so their code is left out of it; true in the full
 * core and in the unit tests (vitest.config.ts).
 */
declare const LOADER_FORMS: boolean;

/**
 * The site a loader runs for, none (null or undefined) without a site key or its tag: its install, and how its config
 * reaches `decide`: at once when it came inside the script, once fetched otherwise.
 */
export type LocateSite = (
  pageKey: unknown,
) => { install: Install; config: (decide: (config: SiteConfig | null) => void) => void | Promise<void> } | null | undefined;

/**
 * Runs the loader once on this page; a second copy (pasted and in a tag manager) returns at once. `locate` finds the
 * install and the config (see boot.ts): a config at hand is decided on now, in this task, so the ad touch is written
 * before the visitor can leave; a fetched one once it arrives. The full core runs the form detectors the config lists
 * (formTriggers); the lean core, for a site without form triggers, has none (LOADER_FORMS).
 */
export const start = (locate: LocateSite): void => {
  // First act, before anything async: a router may strip the query as soon as it runs (the navigation entry keeps it).
  const landed = navigationEntry();
  let touch = readTouch(location.href) || readTouch(landed.name || '');
  /**
   * Whether `touch` was read on a page that is no new arrival from an ad, so its click may be older than one stored
   * since (tab A's click, then tab B's, then tab A reloaded): it then never replaces a stored touch of its kind
   * (preferredTouch's `revisit`). So on a load whose navigation type is `reload` (the reload button, location.reload())
   * or `back_forward` (a history traversal; a tab the browser restores after a restart reports it too: HTML's "tab
   * restore", w3c/navigation-timing#192, and Chromium 156 with --restore-last-session), read by the first letter (the
   * four types differ in it); not on `navigate` (a link, an ad, the address bar), `prerender`, or without the entry.
   * A single-page app's popstate sets it too, a pushState clears it (see watchNavigation below).
   */
  let revisit = /^[rb]/.test(landed.type!);

  // A copy of the loader that ran first marked the page's object (a `ready` the page's own stub set is no such copy).
  const page = pageService() as Service & { [RAN]?: 1 };
  if (page[RAN]) return;
  page[RAN] = 1;
  const site = locate(page.siteKey);
  if (!site) return console.warn('cnv: no site key');
  const install = site.install;

  /** undefined until decided; null when inactive (unknown key, foreign origin, no config). */
  let config: SiteConfig | null | undefined;
  /** Writes the loader's cookies; set once the config (and its cookie_domain) is known. */
  let write: WriteCookie;
  /** The page's consent: given unless the tag requires consent(true) first; consent(false) withdraws it. */
  let granted = !install.consentRequired;
  /** Whether the page's Google Consent Mode currently denies ad_storage. */
  let adDenied = false;
  /** A token the linker carried from the site's other domain, written once allowed. */
  let linkedToken: string | undefined;

  /**
   * Whether the loader may write and send: any refusal wins, and an inactive page never may. Asked before every write
   * and send (a form tool's submission too), it first picks up a Consent Mode dataLayer the page created after the
   * loader ran (a banner script that arrives late), whose denial then counts at once.
   */
  const allowed = (): boolean => (followConsent(), !!config && granted && !adDenied && !gpcRefuses(config));
  /** The touch that wins between the stored one and this page's. */
  const currentTouch = (): Touch | null => preferredTouch(storedTouch(), touch, revisit);

  /** While allowed: posts body with the page's context to a collector endpoint (see Core.send). */
  const send: Send = (endpoint, body) => {
    const json = allowed() && collectorBody(withPageContext(body, currentTouch()));
    if (json) sendBeacon(collectorUrl(install, endpoint), json);
  };

  /** Consent withdrawn: the loader's cookies go (the click kept and the token), as nothing may be kept without it. */
  const forget = () => {
    write(CLICK_COOKIE, '', 0);
    write(CORRELATION_COOKIE, '', 0);
  };

  /**
   * Brings the loader in line with the page's consent after any change of it (or of the touch). The form detectors the
   * config lists run while allowed and stop otherwise. While allowed: the winning touch is stored (this page's is read before consent too), a newer ad click ends the token of
   * the one before (one token, one click), and a token the linker carried is written.
   */
  const apply = () => {
    const on = allowed();
    if (LOADER_FORMS && forms) forms(on, config!, send);
    if (!on) return;
    // One read of the cookies serves both questions; a first visit's landing then writes one cookie, not three.
    const cookies = readCookies();
    const stored = storedTouch(cookies);
    const kept = preferredTouch(stored, touch, revisit);
    if (kept && kept !== stored) {
      storeTouch(kept, write);
      if (isAdTouch(kept) && cookies[CORRELATION_COOKIE]) write(CORRELATION_COOKIE, '', 0);
    }
    if (linkedToken) write(CORRELATION_COOKIE, linkedToken, config!.correlation_ttl_seconds);
    linkedToken = undefined;
  };

  // Every dataLayer push reports; only a change of ad_storage matters. A denial by an `update` (the visitor's answer in
  // the banner, now or restored from an earlier page) forgets, as consent(false) does; a `default` (the page's state
  // before any answer) only stops the loader.
  const followConsent = followConsentMode((denied, answered) => {
    if (adDenied === denied) return;
    adDenied = denied;
    if (answered && config) forget();
    apply();
  });

  /** Signup intent: the correlation cookie is written before this returns, then the snapshot is sent; the token. */
  const capture = guard((trigger: SnapshotTrigger) => {
    if (!allowed()) return;
    // The site's lifetime for it (the service always sends one: 1800 s unless the site changed it).
    const token = correlate(config!.correlation_ttl_seconds, write);
    send('snapshots', { correlation_token: token, trigger });
    return token;
  });

  const service = publishService(page, {
    // Runs synchronously up to the await: once decided, the cookie is written before the call returns.
    captureSaasSignupIntent: async () => {
      if (config === undefined) await service.ready;
      return capture('api') || null;
    },
    consent: guard((choice: boolean) => {
      granted = choice === true;
      apply();
      if (!granted && config) forget();
    }),
  });
  const load = optionalScripts(install.api);
  const forms = LOADER_FORMS && formTriggers(load);

  // A route change (pushState) to a decorated URL is a new arrival; going back or forward to one (popstate) is not.
  watchNavigation((traversal) => {
    const next = readTouch(location.href);
    if (next) {
      touch = next;
      revisit = !!traversal;
      apply();
    }
  });

  // A tag with data-linker or data-url-passthrough fetches their script at once; it starts once the page is active.
  const links = (install.linker || install.passthrough) && load('links');

  /** Decides from the site's config whether the loader is active on this page, and if so starts it. */
  const decide = guard((loaded: SiteConfig | null) => {
    config = loaded && originMatchesDomain(loaded.domain, location.origin) ? loaded : null;
    if (!config) return;
    write = loaderCookies(location, config.cookie_domain);
    apply();
    watchIntent(() => capture('form_submit'));
    if (links) {
      links.then(
        guard((startLinks) => {
          // A touch and token carried from the site's other domain count as this page's landing.
          const carried = startLinks && startLinks(install, config!, allowed, currentTouch, () => touch, currentToken);
          if (carried) {
            touch = carried.touch;
            linkedToken = carried.token;
            apply();
          }
        }),
      );
    }
  });
  /** Once decided: replays the page's queued calls; whether the loader is active. */
  const decided = () => {
    guard(drainQueue)(service);
    return !!config;
  };

  // A config inside the script is decided on now, in this task; a fetched one once it arrives. Each step is guarded,
  // so no rejection ever reaches the page and ready always settles.
  service.ready = Promise.resolve(site.config(decide)).then(decided);
};
