/** Destination adapters by type. A new destination is one adapter file and one line here. */
import type { DestinationAdapter } from './adapter';
import { googleAdsAdapter } from './google-ads/legacy-send';

const ADAPTERS: ReadonlyMap<string, DestinationAdapter> = new Map([[googleAdsAdapter.type, googleAdsAdapter]]);

/** The adapter for a destination type, or null when no adapter handles it. */
export function adapterFor(type: string): DestinationAdapter | null {
  return ADAPTERS.get(type) ?? null;
}

