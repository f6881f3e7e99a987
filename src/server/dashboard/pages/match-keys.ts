/**
 * The match keys one delivery carried to its platform, read from the PII-free request summary each platform stores
 * (src/server/destinations/<platform>/request.ts): what a marketer looks at to judge whether the platform can attribute
 * the conversion to an ad. The event's match quality says whether the visitor's landing had a click id at all; this says
 * which keys each platform got (a landing with a gclid gives Meta no click id, only what Meta matches on).
 */

/** The keys of one delivery, in words, and whether one of them can tie the conversion to the ad click or the person. */
export interface MatchKeys {
  keys: string[];
  /** The platform's own click id went. */
  click: boolean;
  /** A click id, a hashed email or phone, or the platform's browser id went: something the platform matches people on. */
  strong: boolean;
}

function record(value: unknown): Record<string, unknown> | null {
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : null;
}

/** The summary's fields that were sent, each named once in words, in the platform's order. */
function present(fields: Record<string, unknown> | null, names: readonly (readonly [field: string, words: string])[]): string[] {
  if (!fields) return [];
  const out: string[] = [];
  for (const [field, words] of names) {
    const value = fields[field];
    if (value !== undefined && value !== null && value !== '' && !out.includes(words)) out.push(words);
  }
  return out;
}

const CONTACT = ['email', 'phone'];

function keysOf(keys: string[], clickKey: string, browserKey: string | null): MatchKeys {
  const click = keys.includes(clickKey);
  return { keys, click, strong: click || keys.some((k) => CONTACT.includes(k) || k === browserKey) };
}

/**
 * The match keys of a delivery to `destination` as its request summary records them; null when the summary holds none
 * (no request yet, or one refused before its keys were built).
 */
export function matchKeysOf(destination: string, request: Record<string, unknown> | null): MatchKeys | null {
  if (!request) return null;
  switch (destination) {
    case 'google-ads': {
      // The Data Manager API's summary (clickIdKind, userIdentifiers) or the legacy upload's (click_id, user_identifiers).
      const dataManager = Array.isArray(request.userIdentifiers);
      if (!dataManager && !Array.isArray(request.user_identifiers)) return null;
      const kind = dataManager ? request.clickIdKind : record(request.click_id)?.type;
      const identifiers = (dataManager ? (request.userIdentifiers as unknown[]).map((u) => record(u)?.kind) : (request.user_identifiers as unknown[]))
        .map((k) => (k === 'email' || k === 'hashed_email' ? 'email' : k === 'phone' || k === 'hashed_phone_number' ? 'phone' : null))
        .filter((k): k is 'email' | 'phone' => k !== null);
      const click = typeof kind === 'string' ? `Google click id (${kind})` : null;
      const keys: string[] = [...(click ? [click] : []), ...new Set(identifiers)];
      return { keys, click: click !== null, strong: keys.length > 0 };
    }
    case 'meta': {
      const user = record(request.user_data);
      if (!user) return null;
      const keys = present(user, [
        ['fbc', 'Meta click id (fbc)'], ['em', 'email'], ['ph', 'phone'], ['fn', 'name'], ['ln', 'name'], ['fbp', 'Meta browser id (fbp)'],
        ['client_ip_address', 'IP address'], ['client_user_agent', 'user agent'],
      ]);
      return keysOf(keys, 'Meta click id (fbc)', 'Meta browser id (fbp)');
    }
    case 'microsoft-ads': {
      if (typeof request.conversion_time !== 'string') return null;
      return keysOf(present(request, [['microsoft_click_id', 'Microsoft click id (msclkid)'], ['hashed_email', 'email'], ['hashed_phone', 'phone']]), 'Microsoft click id (msclkid)', null);
    }
    case 'linkedin': {
      if (!Array.isArray(request.user_ids)) return null;
      const types = request.user_ids.map((u) => record(u)?.id_type);
      const keys = [
        ...(types.includes('LINKEDIN_FIRST_PARTY_ADS_TRACKING_UUID') ? ['LinkedIn click id (li_fat_id)'] : []),
        ...(types.includes('SHA256_EMAIL') ? ['email'] : []),
        ...(Array.isArray(request.user_info) && request.user_info.length > 0 ? ['name'] : []),
      ];
      return keysOf(keys, 'LinkedIn click id (li_fat_id)', null);
    }
    case 'reddit': {
      const user = record(request.user);
      if (!user) return null;
      const keys = [
        ...present(request, [['click_id', 'Reddit click id (rdt_cid)']]),
        ...present(user, [['email', 'email'], ['phone_number', 'phone'], ['external_id', 'customer id'], ['uuid', 'Reddit browser id (_rdt_uuid)'], ['ip_address', 'IP address'], ['user_agent', 'user agent']]),
      ];
      return keysOf(keys, 'Reddit click id (rdt_cid)', 'Reddit browser id (_rdt_uuid)');
    }
    case 'tiktok': {
      const user = record(request.user);
      if (!user) return null;
      const keys = present(user, [
        ['ttclid', 'TikTok click id (ttclid)'], ['email', 'email'], ['phone', 'phone'], ['external_id', 'customer id'], ['ttp', 'TikTok browser id (_ttp)'],
        ['ip', 'IP address'], ['user_agent', 'user agent'],
      ]);
      return keysOf(keys, 'TikTok click id (ttclid)', 'TikTok browser id (_ttp)');
    }
    default:
      return null;
  }
}
