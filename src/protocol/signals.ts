/** Ad click signals: which URL parameters and platform cookies the loader snapshots. */

/** Click id query parameters, stored lower-case as listed (matched case-insensitively, so `ScCid` is `sccid`). */
export const CLICK_ID_KEYS = [
  'gclid', 'gbraid', 'wbraid', 'dclid', 'gclsrc', 'gad_source',
  'fbclid', 'msclkid', 'ttclid', 'li_fat_id', 'twclid', 'sccid', 'epik', 'rdt_cid', 'irclickid',
] as const;

/** UTM query parameters. */
export const UTM_KEYS = ['utm_source', 'utm_medium', 'utm_campaign', 'utm_term', 'utm_content', 'utm_id'] as const;

/** Cookies that ad platforms' own tags set, read at snapshot time when present. */
export const PLATFORM_COOKIES = [
  '_fbp', '_fbc', '_gcl_aw', '_gcl_dc', '_gcl_gb', '_gcl_au', '_ttp', '_uetmsclkid', '_rdt_uuid', 'li_fat_id',
] as const;

/**
 * Query parameter that carries the touch and the correlation token from one registrable domain of a site to another
 * (data-linker): written by the loader on the first, read and removed from the address bar by the loader on the second.
 */
export const LINKER_PARAM = '_cnv';

/** How long a `_cnv` value is accepted after the loader wrote it: long enough to follow a link, too short to share one. */
export const LINKER_TTL_SECONDS = 120;

/** Each signal value is trimmed and capped at this many characters. */
export const SIGNAL_VALUE_MAX = 500;

export type ClickIdKey = (typeof CLICK_ID_KEYS)[number];
export type UtmKey = (typeof UTM_KEYS)[number];
export type PlatformCookie = (typeof PLATFORM_COOKIES)[number];
