/** The loader's wiring: read the landing, find the install, decide whether to run, then watch for signup intent. */
import { configPath, snapshotsPath, type SiteConfig, type SnapshotTrigger } from '../protocol/collector';
import { CLICK_COOKIE, CORRELATION_COOKIE, DEFAULT_CORRELATION_TTL_SECONDS } from '../protocol/cookies';
import { originMatchesDomain } from '../protocol/origin';
import { pageService, publishService } from './api';
import { sendBeacon } from './beacon';
import { readTouch } from './click-signals';
import { gpcRefuses } from './gpc';
import { followConsentMode } from './consent-mode';
import { correlate } from './correlation';
import { guard } from './guard';
import { watchIntent } from './intent';
import { loaderCookies } from './loader-cookies';
import { watchNavigation } from './navigation';
import { drainQueue } from './queue';
import { findInstall } from './script-tag';
import { cacheConfig, loadConfig } from './site-config';
import { buildSnapshot, snapshotBody } from './snapshot';
import { storedTouch, storeTouch } from './touch-cookie';

/** Runs the loader once on this page; a second copy (pasted and in a tag manager) returns at once. */
export function boot(): void {
  // First act, before anything async: a router may strip the query as soon as it runs.
  let touch = readTouch();

  const page = pageService();
  if (page.ready) return;
  const install = findInstall(document, page.siteKey);
  if (!install) return console.warn('cnv: no site key');
  const at = (path: (siteKey: string) => string) => new URL(path(install.siteKey), install.api).href;
  const configAt = at(configPath);
  const snapshotsAt = at(snapshotsPath);
  const setCookie = loaderCookies(location);
  /** undefined until decided; null when inactive (unknown key, foreign origin, no config). */
  let config: SiteConfig | null | undefined;
  /** The page's consent: given unless the tag requires consent(true) first; consent(false) withdraws it. */
  let granted = !install.consentRequired;
  /** Whether the page's Google Consent Mode currently denies ad_storage. */
  let adDenied = false;

  /** Whether the loader may write and send: any refusal wins, and an inactive page never may. */
  const allowed = () => !!config && granted && !adDenied && !gpcRefuses(config);

  /** While allowed: the touch (read before consent too) is stored, the verified config cached. */
  const persist = () => {
    if (!allowed()) return;
    if (touch) storeTouch(touch, setCookie);
    cacheConfig(configAt, config!);
  };

  // Every dataLayer push reports; only a change of ad_storage matters.
  const followConsent = followConsentMode((denied) => {
    if (adDenied === denied) return;
    adDenied = denied;
    persist();
  });

  /** Signup intent: the correlation cookie is written before this returns, then the snapshot is sent; the token. */
  const capture = guard((trigger: SnapshotTrigger) => {
    followConsent();
    if (!allowed()) return;
    const token = correlate(config!.correlation_ttl_seconds || DEFAULT_CORRELATION_TTL_SECONDS, setCookie);
    const body = snapshotBody(buildSnapshot(token, trigger, touch || storedTouch() || null));
    if (body) sendBeacon(snapshotsAt, body);
    return token;
  });

  const service = publishService(page, {
    // Runs synchronously up to the await: once decided, the cookie is written before the call returns.
    captureSaasSignupIntent: async () => {
      if (config === undefined) await ready;
      return capture('api') || null;
    },
    consent: guard((choice: boolean) => {
      granted = choice === true;
      if (granted) return persist();
      setCookie(CLICK_COOKIE, '', 0);
      setCookie(CORRELATION_COOKIE, '', 0);
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
        config = loaded && originMatchesDomain(loaded.domain, location.origin) ? loaded : null;
        if (!config) return;
        followConsent();
        persist();
        watchIntent(() => capture('form_submit'));
      }),
    )
    .then(guard(() => drainQueue(service)))
    .then(() => !!config));
}
