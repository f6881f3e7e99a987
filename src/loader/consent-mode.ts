/** Google Consent Mode v2, as the page's window.dataLayer tells it. */
import { guard } from './guard';
import { notifyAfter } from './notify-after';

/**
 * Whether a dataLayer's `consent` commands (arrays, or the Arguments objects gtag pushes) deny ad_storage: the last
 * `update` decides; before any, a `default` of denied counts even when region-scoped, as the visitor's region is unknown.
 */
export function adStorageDenied(entries: readonly unknown[]): boolean {
  let byDefault = false;
  let updated: unknown;
  for (const entry of entries as ArrayLike<any>[]) {
    const value = entry && entry[0] === 'consent' && entry[2] && entry[2].ad_storage;
    if (!value) continue;
    if (entry[1] === 'update') updated = value;
    else if (entry[1] === 'default') byDefault = byDefault || value === 'denied';
  }
  return updated ? updated === 'denied' : byDefault;
}

/**
 * Tells onChange whether ad_storage is denied, now and after every later dataLayer.push (push is wrapped, its own
 * behaviour kept). Returns a function to call again to pick up a dataLayer the page creates later.
 */
export function followConsentMode(onChange: (denied: boolean) => void): () => void {
  let followed: unknown;
  return () => {
    const layer = (window as { dataLayer?: unknown }).dataLayer;
    if (!Array.isArray(layer) || layer === followed) return;
    followed = layer;
    const report = guard(() => onChange(adStorageDenied(layer)));
    notifyAfter(layer, 'push', report);
    report();
  };
}
