/** The loader's wiring: read the landing, find the install, decide whether to run, then watch for signup intent. */
import { snapshotsPath, type SiteConfig, type SnapshotTrigger } from '../protocol/collector';
import { CLICK_COOKIE, CORRELATION_COOKIE, DEFAULT_CORRELATION_TTL_SECONDS } from '../protocol/cookies';
import { originMatchesDomain } from '../protocol/origin';
import { pageService, publishService, type Service } from './api';
import { sendBeacon } from './beacon';
import { readTouch } from './click-signals';
import { consentAllowed, type ConsentState } from './consent';
import { followConsentMode } from './consent-mode';
import { correlate } from './correlation';
import { guard } from './guard';
import { watchIntent } from './intent';
import { loaderCookies } from './loader-cookies';
import { watchNavigation } from './navigation';
import { drainQueue } from './queue';
import { findInstall } from './script-tag';
import { cacheConfig, configUrl, loadConfig } from './site-config';
import { buildSnapshot, snapshotBody } from './snapshot';
import { storedTouch, storeTouch } from './touch-cookie';

/** Runs the loader once on this page; a second copy (pasted and in a tag manager) returns at once. */
export function boot(): void {
  // First act, before anything async: a router may strip the query as soon as it runs.
  let touch = readTouch();

  const page: Service = pageService() || {};
  if (page.ready) return;
  const install = findInstall(document, page.siteKey);
  if (!install) return console.warn('cnv: no site key');
  const siteKey = install.siteKey;
  const api = install.api;
  const configAt = configUrl(api, siteKey);
  const cookies = loaderCookies(location);
  const consent: ConsentState = { required: install.consentRequired };
  /** undefined until decided; null when inactive (unknown key, foreign origin, no config). */
  let config: SiteConfig | null | undefined;

  const allowed = () =>
    !!config && consentAllowed(consent, (navigator as { globalPrivacyControl?: unknown }).globalPrivacyControl === true);

  /** While allowed: the touch (read before consent too) is stored, the verified config cached. */
  const persist = () => {
    if (!allowed()) return;
    if (touch) storeTouch(touch, cookies.write);
    cacheConfig(configAt, config!);
  };

  // Every dataLayer push reports; only a change of ad_storage matters.
  const followConsent = followConsentMode((denied) => {
    if (consent.adDenied === denied) return;
    consent.adDenied = denied;
    persist();
  });

  /** Signup intent: the correlation cookie is written before this returns, then the snapshot is sent. */
  const capture = guard((trigger: SnapshotTrigger): string | null => {
    followConsent();
    if (!allowed()) return null;
    const token = correlate(config!.correlation_ttl_seconds || DEFAULT_CORRELATION_TTL_SECONDS, cookies.write);
    const body = snapshotBody(buildSnapshot(token, trigger, touch || storedTouch()));
    if (body) sendBeacon(new URL(snapshotsPath(siteKey), api).href, body);
    return token;
  });

  const service = publishService(page, {
    // Runs synchronously up to the await: once decided, the cookie is written before the call returns.
    captureSaasSignupIntent: async () => {
      if (config === undefined) await ready;
      return capture('api') || null;
    },
    consent: guard((granted: boolean) => {
      consent.choice = granted === true;
      if (consent.choice) return persist();
      cookies.remove(CLICK_COOKIE);
      cookies.remove(CORRELATION_COOKIE);
    }),
  });

  watchNavigation(() => {
    const next = readTouch();
    if (next) {
      touch = next;
      persist();
    }
  });

  // Each step is guarded, so no rejection ever reaches the page and ready always settles.
  const ready = (service.ready = loadConfig(configAt)
    .then(
      guard((loaded: SiteConfig | null) => {
        config = null;
        if (!loaded || !originMatchesDomain(loaded.domain, location.origin)) return;
        config = loaded;
        consent.honorGpc = config.honor_gpc !== false;
        followConsent();
        persist();
        watchIntent(() => capture('form_submit'));
      }),
    )
    .then(guard(() => drainQueue(service)))
    .then(() => !!config));
}
