/** Google Consent Mode v2, as the page's window.dataLayer tells it. */
import type { ConsentAnswer, ConsentSignals } from '../protocol/collector';
import { guard } from './guard';
import { notifyAfter } from './notify-after';

/**
 * What a dataLayer's `consent` commands (arrays, or the Arguments objects gtag pushes) last said of one Consent Mode
 * signal (`ad_storage`, `ad_user_data`…), as the page wrote it: the last `update` decides; before any, a `default` of
 * denied counts even when region-scoped, as the visitor's region is unknown; undefined when no command mentions it.
 * Second, what the `update` commands alone said (the visitor's answer, or none yet).
 */
export const consentAnswer = (entries: readonly unknown[], key: string): [said: unknown, answered: unknown] => {
  let byDefault: unknown;
  let updated: unknown;
  for (const entry of entries as ArrayLike<any>[]) {
    const value = entry && entry[0] === 'consent' && entry[2] && entry[2][key];
    if (!value) continue;
    if (entry[1] === 'update') updated = value;
    else if (entry[1] === 'default' && byDefault !== 'denied') byDefault = value;
  }
  return [updated || byDefault, updated];
};

/** The Consent Mode signals a conversion carries to the ad platform, as the page's dataLayer last set them. */
export const consentSignals = (layer: unknown = (window as { dataLayer?: unknown }).dataLayer): ConsentSignals => {
  const signals = {} as Record<keyof ConsentSignals, ConsentAnswer>;
  for (const key of ['ad_user_data', 'ad_personalization'] as const) {
    const [value] = consentAnswer(Array.isArray(layer) ? layer : [], key);
    signals[key] = value === 'granted' || value === 'denied' ? value : null;
  }
  return signals;
};

/**
 * Tells onChange whether ad_storage is denied, now and after every later dataLayer.push (push is wrapped, its own
 * behaviour kept), and whether the visitor said so (an `update` denying it: `answered`), rather than only the page's
 * `default`. Returns a function to call again to pick up a dataLayer the page creates later.
 */
export const followConsentMode = (onChange: (denied: boolean, answered: boolean) => void): () => void => {
  let followed: unknown;
  return () => {
    const layer = (window as { dataLayer?: unknown }).dataLayer;
    if (!Array.isArray(layer) || layer === followed) return;
    followed = layer;
    const report = guard(() => {
      const [said, answered] = consentAnswer(layer, 'ad_storage');
      onChange(said === 'denied', answered === 'denied');
    });
    notifyAfter(layer, 'push', report);
    report();
  };
};
