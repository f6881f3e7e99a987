/** Service settings, read once from the environment. Every setting has a default that works on one machine. */
import { existsSync, readFileSync } from 'node:fs';
import { isIP } from 'node:net';
import { resolve } from 'node:path';
import { SECRET_KEY_FORM, secretKeyFile, secretKeyOf } from './db/secret-box';

export interface Settings {
  host: string;
  port: number;
  /** Base URL of the REST API and the hosted pages ({base_url} of the spec, without /v1). */
  publicUrl: string;
  /** Base URL of the webhook bridge ({webhook_base_url}); a separate host in production. */
  webhookBaseUrl: string;
  /** When set, the webhook bridge also listens on its own port. */
  webhookPort: number | null;
  /**
   * CNV_NOTIFICATION_PRIVATE_ADDRESSES: whether notification endpoints may reach this machine and private networks
   * (and plain http to loopback). Default: only on a developer's machine, where the service listens on loopback and
   * its public URLs are loopback ones too (behind a proxy on the same machine it listens on loopback as well, but others
   * reach it, and every account of it could have it post into this machine and its networks).
   */
  notificationPrivateAddresses: boolean;
  /** A postgres:// URL; unset means the embedded PGlite store. */
  databaseUrl: string | undefined;
  /** Connections per process to DATABASE_URL (CNV_PG_POOL_SIZE; PG_POOL_SIZE is read too, as an older name). */
  pgPoolSize: number;
  /** PGlite data directory (also where the generated credentials key lives when CNV_SECRET_KEY is unset). */
  dataDir: string;
  /** CNV_SECRET_KEY: 32 bytes (base64 or hex) that encrypt stored platform credentials. */
  secretKey: string | undefined;
  /** Base URL of the Google Ads API (tests and the demo point it at a local fake). */
  googleAdsApiBase: string;
  googleAdsApiVersion: string;
  googleAdsDeveloperToken: string;
  /** Google Ads: the Data Manager API (default), Google's OAuth endpoints and the service's OAuth client, and the legacy Google Ads API. */
  google: {
    dataManagerApiBase: string;
    oauthAuthorizeUrl: string;
    oauthTokenUrl: string;
    oauthClientId: string;
    oauthClientSecret: string;
  };
  /** Meta Conversions API: the Graph API base and version. */
  meta: { graphApiBase: string; apiVersion: string };
  /** Microsoft Advertising: Campaign Management API base, OAuth endpoints and client, the application's developer token. */
  microsoft: {
    adsApiBase: string;
    oauthAuthorizeUrl: string;
    oauthTokenUrl: string;
    oauthClientId: string;
    oauthClientSecret: string;
    developerToken: string;
  };
  /** LinkedIn Conversions API: API base, `LinkedIn-Version` (YYYYMM), OAuth endpoints and client. */
  linkedin: {
    apiBase: string;
    apiVersion: string;
    oauthAuthorizeUrl: string;
    oauthTokenUrl: string;
    oauthClientId: string;
    oauthClientSecret: string;
  };
  /**
   * Reddit Conversions API (v3): the Ads API base, and Reddit's OAuth 2.0 endpoints and client. A connection carries a
   * conversion access token, or (when the client is set) a refresh token from the sign-in (see destinations/reddit).
   */
  reddit: { apiBase: string; oauthAuthorizeUrl: string; oauthTokenUrl: string; oauthClientId: string; oauthClientSecret: string };
  /** TikTok Events API 2.0: the Business API base. Connections carry an Events API access token and a pixel code. */
  tiktok: { apiBase: string };
  /** Days a browser snapshot is kept after its last write; null keeps them for ever. */
  snapshotRetentionDays: number | null;
  /**
   * CNV_IDENTITY_RETENTION_DAYS: days identity fields (email, phone, names) and customer_id are kept on events, reports
   * and form submissions, and the window the email and status filters of GET /v1/events search. At least 90 (later
   * stages of a customer look back 90 days).
   */
  identityRetentionDays: number;
  /** Port of the demo customer site; null disables it. */
  demoPort: number | null;
  logLevel: string;
  /** LOG_FORMAT: `json` or `pretty` (human-readable); `auto` or unset: pretty on a terminal, JSON otherwise. */
  logFormat: 'json' | 'pretty' | undefined;
  /** Rate limits of the collector's POSTs and the webhook bridge (docs/limits.md#rate-limits). */
  rateLimits: RateLimitSettings;
  /**
   * CNV_TRUST_PROXY: which X-Forwarded-For hops make the client address (Fastify's `trustProxy`): the proxies' addresses
   * and CIDR ranges (default `loopback`: a proxy on this machine), true (every hop: the first address, which a visitor
   * writes when the proxy appends to the header), false (the socket's address) or a number of hops.
   */
  trustProxy: boolean | number | string[];
  /**
   * Set by `npm start`'s demo only, never read from the environment: per destination type, the API base of the demo's
   * local fake and the connect form values that fake accepts. The hosted connect page shows them beside the fields
   * while that platform's API setting points at that very fake (platformFakeValues), and never otherwise.
   */
  localFakes?: Readonly<Record<string, LocalFake>>;
}

/** A local fake ad platform: where it listens, and the connect form values (field name → value) it accepts. */
export interface LocalFake {
  apiBase: string;
  formValues: Readonly<Record<string, string>>;
}

/**
 * CNV_RATE_LIMIT_*: requests per client address and per site key in each fixed window, for the collector's POSTs
 * (snapshots, form submissions) and for the webhook bridge (every route); null is no limit.
 */
export interface RateLimitSettings {
  windowSeconds: number;
  collectorPerAddress: number | null;
  collectorPerSite: number | null;
  webhookPerAddress: number | null;
  webhookPerSite: number | null;
  /** On PostgreSQL: how often each instance shares its counts with the others, in ms. */
  syncMs: number;
}

/** The defaults: far above what a real site sends (a whole office behind one address included), per 60 s window. */
export const RATE_LIMIT_DEFAULTS: RateLimitSettings = {
  windowSeconds: 60,
  collectorPerAddress: 600,
  collectorPerSite: 60_000,
  webhookPerAddress: 12_000,
  webhookPerSite: 12_000,
  syncMs: 1000,
};

function intSetting(env: NodeJS.ProcessEnv, name: string, fallback: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!/^\d+$/.test(raw) || value > 65535) throw new Error(`${name} must be a port number, digits from 0 to 65535, got '${raw}'`);
  return value;
}

/**
 * A public base URL setting (CNV_PUBLIC_URL, CNV_WEBHOOK_BASE_URL) as the service hands it out in snippets, handoff
 * links and webhook URLs: an absolute http(s) URL, maybe with a path (a proxy's prefix), without credentials, query or
 * fragment; its trailing slashes dropped. Anything else stops the start, naming the setting.
 */
function publicUrlSetting(name: string, raw: string): string {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new Error(`${name} must be an absolute URL such as https://cnv.example.com, got '${raw}'`);
  }
  const problem =
    url.protocol !== 'http:' && url.protocol !== 'https:' ? 'must use http or https'
    : url.username || url.password ? 'must not carry a user name or password'
    : url.search || url.hash || raw.includes('?') || raw.includes('#') ? 'must not have a query or a fragment'
    : null;
  if (problem) throw new Error(`${name} ${problem} (it is the base of the snippet, handoff and webhook URLs), got '${url.protocol}//${url.host}${url.pathname}'`);
  return raw.replace(/\/+$/, '');
}

function optionalPort(env: NodeJS.ProcessEnv, name: string, fallback: number | null): number | null {
  const raw = env[name];
  if (raw === 'off' || raw === 'false' || raw === '0') return null;
  return raw === undefined || raw === '' ? fallback : intSetting(env, name, 0);
}

/** Snapshot retention in days: default 30; `off` (or 0) keeps snapshots for ever; at least 2 (a token lives a day). */
function retentionDays(raw: string | undefined): number | null {
  if (raw === undefined || raw === '') return 30;
  if (raw === 'off' || raw === '0') return null;
  const days = Number(raw);
  if (!Number.isInteger(days) || days < 2) {
    throw new Error(`CNV_SNAPSHOT_RETENTION_DAYS must be a whole number of days of at least 2, or off; got '${raw}'`);
  }
  return days;
}

/** The shortest identity retention: later stages of a customer may be reported up to 90 days after the signup. */
export const IDENTITY_RETENTION_MIN_DAYS = 90;

/** Identity retention in days: default and minimum 90, a whole number. */
function identityRetentionDays(raw: string | undefined): number {
  if (raw === undefined || raw.trim() === '') return IDENTITY_RETENTION_MIN_DAYS;
  const days = Number(raw);
  if (!Number.isInteger(days) || days < IDENTITY_RETENTION_MIN_DAYS || days > 36_500) {
    throw new Error(
      `CNV_IDENTITY_RETENTION_DAYS must be a whole number of days from ${IDENTITY_RETENTION_MIN_DAYS} (later stages look back 90 days) to 36500; got '${raw.slice(0, 40)}'`,
    );
  }
  return days;
}

/** The PostgreSQL pool size: CNV_PG_POOL_SIZE, else the older PG_POOL_SIZE, else 10; a whole number from 1 to 1000. */
function poolSize(env: NodeJS.ProcessEnv): number {
  const name = env.CNV_PG_POOL_SIZE ? 'CNV_PG_POOL_SIZE' : 'PG_POOL_SIZE';
  const raw = env[name];
  if (raw === undefined || raw === '') return 10;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < 1 || value > 1000) {
    throw new Error(`${name} must be a whole number of connections from 1 to 1000, got '${raw}'`);
  }
  return value;
}

/** DATABASE_URL: unset (the embedded store) or a PostgreSQL URL; anything else is refused here, naming the setting. */
function databaseUrlSetting(raw: string | undefined): string | undefined {
  if (raw === undefined || raw.trim() === '') return undefined;
  const scheme = /^([A-Za-z][A-Za-z0-9+.-]*):/.exec(raw.trim())?.[1]?.toLowerCase();
  if (scheme !== 'postgres' && scheme !== 'postgresql') {
    throw new Error(
      `DATABASE_URL must be a PostgreSQL URL such as postgres://user:password@host:5432/cnv, got ${scheme ? `a ${scheme}: URL` : 'something that is not a URL'}. ` +
        'Unset it to use the embedded store.',
    );
  }
  return raw.trim();
}

/**
 * Whether a host (an address, in brackets or not, or a name) is this machine's loopback: `localhost` and its
 * subdomains, 127.x.x.x, ::1. HOST so is reachable from this machine only; a notification URL so reaches it.
 */
export function isLoopbackHost(host: string): boolean {
  const bare = host.replace(/^\[|\]$/g, '').toLowerCase();
  if (bare === 'localhost' || bare.endsWith('.localhost')) return true;
  if (isIP(bare) === 4) return bare.startsWith('127.');
  return bare === '::1';
}

/** An on/off setting (`on`, `off`, `true`, `false`, `1`, `0`); `fallback` when unset. */
function onOffSetting(env: NodeJS.ProcessEnv, name: string, fallback: boolean): boolean {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  if (['on', 'true', '1'].includes(raw)) return true;
  if (['off', 'false', '0'].includes(raw)) return false;
  throw new Error(`${name} must be on or off, got '${raw.slice(0, 40)}'`);
}

/** pino's levels, and `silent`. */
const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];

function logLevelSetting(raw: string | undefined): string {
  if (raw === undefined || raw === '') return 'info';
  if (LOG_LEVELS.includes(raw)) return raw;
  throw new Error(`LOG_LEVEL must be one of ${LOG_LEVELS.join(', ')}; got '${raw.slice(0, 40)}'`);
}

/** LOG_FORMAT: json, pretty, or auto / unset (decided by whether the output is a terminal). */
function logFormatSetting(raw: string | undefined): Settings['logFormat'] {
  if (raw === undefined || raw === '' || raw === 'auto') return undefined;
  if (raw === 'json' || raw === 'pretty') return raw;
  throw new Error(`LOG_FORMAT must be json, pretty or auto (auto, like unset: pretty on a terminal, JSON otherwise), got '${raw.slice(0, 40)}'`);
}

/** The address the service listens on when HOST and PORT are not set, and its URL (where `cnv` finds it by default). */
const DEFAULT_HOST = '127.0.0.1';
const DEFAULT_PORT = 8787;
export const DEFAULT_SERVICE_URL = `http://${DEFAULT_HOST}:${DEFAULT_PORT}`;

/**
 * Each ad platform's API: the setting that may point it elsewhere, and its real address. `npm start`'s demo points
 * every one at a local fake; a test or a staging proxy may too.
 */
export const PLATFORM_API_BASES = {
  'google-ads': { setting: 'CNV_GOOGLE_DATA_MANAGER_API_BASE', real: 'https://datamanager.googleapis.com', of: (s: Settings) => s.google.dataManagerApiBase },
  meta: { setting: 'CNV_META_GRAPH_API_BASE', real: 'https://graph.facebook.com', of: (s: Settings) => s.meta.graphApiBase },
  'microsoft-ads': { setting: 'CNV_MICROSOFT_ADS_API_BASE', real: 'https://campaign.api.bingads.microsoft.com', of: (s: Settings) => s.microsoft.adsApiBase },
  linkedin: { setting: 'CNV_LINKEDIN_API_BASE', real: 'https://api.linkedin.com', of: (s: Settings) => s.linkedin.apiBase },
  reddit: { setting: 'CNV_REDDIT_API_BASE', real: 'https://ads-api.reddit.com', of: (s: Settings) => s.reddit.apiBase },
  tiktok: { setting: 'CNV_TIKTOK_API_BASE', real: 'https://business-api.tiktok.com', of: (s: Settings) => s.tiktok.apiBase },
} as const;

/** Where a destination type's API calls go when a setting points them somewhere else than the platform, or null. */
export function platformApiElsewhere(settings: Settings, type: string): { setting: string; url: string } | null {
  const base = Object.hasOwn(PLATFORM_API_BASES, type) ? PLATFORM_API_BASES[type as keyof typeof PLATFORM_API_BASES] : null;
  if (!base) return null;
  const url = base.of(settings);
  return url === base.real ? null : { setting: base.setting, url };
}

/**
 * The connect form values the demo's local fake of a destination type accepts, when this service sends that platform's
 * calls to that fake (its API setting names the fake's address); null otherwise, the real platform above all.
 */
export function platformFakeValues(settings: Settings, type: string): Readonly<Record<string, string>> | null {
  const elsewhere = platformApiElsewhere(settings, type);
  const fake = settings.localFakes && Object.hasOwn(settings.localFakes, type) ? settings.localFakes[type] : undefined;
  return elsewhere && fake && fake.apiBase === elsewhere.url ? fake.formValues : null;
}

/** A platform's API base URL: its setting (PLATFORM_API_BASES), else the platform's real address. */
function platformBase(env: NodeJS.ProcessEnv, type: keyof typeof PLATFORM_API_BASES): string {
  return platformUrlSetting(env, PLATFORM_API_BASES[type].setting, PLATFORM_API_BASES[type].real);
}

/** The `<PLATFORM>` of `CNV_<PLATFORM>_OAUTH_*`, for each destination type that signs in with OAuth. */
const OAUTH_SETTING_PLATFORM = { 'google-ads': 'GOOGLE', 'microsoft-ads': 'MICROSOFT', linkedin: 'LINKEDIN', reddit: 'REDDIT' } as const;
type OAuthPlatformType = keyof typeof OAUTH_SETTING_PLATFORM;

/**
 * The environment variable of one part of a platform's OAuth settings (`CNV_GOOGLE_OAUTH_CLIENT_ID`, …): what pages,
 * hints and logs name for the operator to set. `type`: a destination type that signs in with OAuth.
 */
export function oauthSettingName(type: string, part: 'CLIENT_ID' | 'CLIENT_SECRET' | 'AUTHORIZE_URL' | 'TOKEN_URL'): string {
  const platform = Object.hasOwn(OAUTH_SETTING_PLATFORM, type) ? OAUTH_SETTING_PLATFORM[type as OAuthPlatformType] : type.toUpperCase();
  return `CNV_${platform}_OAUTH_${part}`;
}

/** A platform's OAuth endpoints and client from `CNV_<PLATFORM>_OAUTH_*` (the endpoints default to the platform's own). */
function oauthClient(env: NodeJS.ProcessEnv, type: OAuthPlatformType, authorizeUrl: string, tokenUrl: string) {
  return {
    oauthAuthorizeUrl: platformUrlSetting(env, oauthSettingName(type, 'AUTHORIZE_URL'), authorizeUrl, true),
    oauthTokenUrl: platformUrlSetting(env, oauthSettingName(type, 'TOKEN_URL'), tokenUrl, true),
    oauthClientId: env[oauthSettingName(type, 'CLIENT_ID')] || '',
    oauthClientSecret: env[oauthSettingName(type, 'CLIENT_SECRET')] || '',
  };
}

/** A whole number setting within [min, max], or the fallback when unset. */
function boundedInt(env: NodeJS.ProcessEnv, name: string, fallback: number, min: number, max: number, unit: string): number {
  const raw = env[name];
  if (raw === undefined || raw.trim() === '') return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < min || value > max) {
    throw new Error(`${name} must be a whole number of ${unit} from ${min} to ${max}, got '${raw.slice(0, 40)}'`);
  }
  return value;
}

/** A limit: requests per window from 1 to 10,000,000, or `off` (no limit). */
function limitSetting(env: NodeJS.ProcessEnv, name: string, fallback: number | null): number | null {
  const raw = env[name]?.trim();
  if (raw === 'off') return null;
  return boundedInt(env, name, fallback ?? 0, 1, 10_000_000, "requests per window (or 'off')") || null;
}

/** CNV_RATE_LIMITS=off turns every limit off; each limit has its own setting too. */
function rateLimitSettings(env: NodeJS.ProcessEnv): RateLimitSettings {
  // on/off like every switch of the service (true/false, 1/0 too); a limit's own setting is checked even while off.
  const on = onOffSetting({ CNV_RATE_LIMITS: env.CNV_RATE_LIMITS?.trim() }, 'CNV_RATE_LIMITS', true);
  const d = RATE_LIMIT_DEFAULTS;
  const limit = (name: string, fallback: number | null) => {
    const value = limitSetting(env, name, fallback);
    return on ? value : null;
  };
  return {
    windowSeconds: boundedInt(env, 'CNV_RATE_LIMIT_WINDOW_SECONDS', d.windowSeconds, 1, 3600, 'seconds'),
    collectorPerAddress: limit('CNV_RATE_LIMIT_COLLECTOR_PER_ADDRESS', d.collectorPerAddress),
    collectorPerSite: limit('CNV_RATE_LIMIT_COLLECTOR_PER_SITE', d.collectorPerSite),
    webhookPerAddress: limit('CNV_RATE_LIMIT_WEBHOOK_PER_ADDRESS', d.webhookPerAddress),
    webhookPerSite: limit('CNV_RATE_LIMIT_WEBHOOK_PER_SITE', d.webhookPerSite),
    syncMs: boundedInt(env, 'CNV_RATE_LIMIT_SYNC_MS', d.syncMs, 100, 60_000, 'milliseconds'),
  };
}

/** Names proxy-addr knows for address ranges, allowed in CNV_TRUST_PROXY beside addresses and CIDRs. */
const PROXY_RANGE_NAMES = ['loopback', 'linklocal', 'uniquelocal'];

/**
 * CNV_TRUST_PROXY's default: a proxy on this machine (the socket's address a loopback one). Proxies append the address
 * they saw to X-Forwarded-For after whatever the visitor sent in it, so only the hops from the right that came through a
 * trusted proxy say who the client is: trusting every hop (`true`) would take the visitor's own first entry.
 */
export const DEFAULT_TRUST_PROXY: readonly string[] = ['loopback'];

/** CNV_TRUST_PROXY: `loopback` (default), true, false, a hop count, or a comma-separated list of addresses, CIDRs and range names. */
function trustProxySetting(raw: string | undefined): Settings['trustProxy'] {
  const text = raw?.trim() ?? '';
  if (text === '') return [...DEFAULT_TRUST_PROXY];
  if (text === 'true') return true;
  if (text === 'false') return false;
  if (/^\d+$/.test(text)) {
    const hops = Number(text);
    if (hops >= 1 && hops <= 100) return hops;
  }
  const entries = text.split(',').map((entry) => entry.trim()).filter(Boolean);
  const bad = entries.find((entry) => {
    if (PROXY_RANGE_NAMES.includes(entry)) return false;
    const [address, prefix, extra] = entry.split('/');
    const family = isIP(address ?? '');
    if (family === 0 || extra !== undefined) return true;
    if (prefix === undefined) return false;
    return !/^\d{1,3}$/.test(prefix) || Number(prefix) > (family === 4 ? 32 : 128);
  });
  if (entries.length === 0 || bad !== undefined) {
    throw new Error(
      `CNV_TRUST_PROXY must be true, false, a number of proxy hops (1 to 100), or the proxies' addresses and CIDR ranges separated by commas (or loopback, linklocal, uniquelocal); got '${text.slice(0, 60)}'`,
    );
  }
  return entries;
}

/**
 * CNV_SECRET_KEY, checked before anything opens (never echoed): its form, or, unset, the data directory's key file
 * when there is one (unreadable or damaged, it is named: a new key would not open what the old one sealed).
 */
function secretKeySetting(raw: string | undefined, dataDir: string): string | undefined {
  if (raw) {
    if (secretKeyOf(raw)) return raw;
    const path = raw.trim();
    if (/^(\/|\.{1,2}\/|~\/)/.test(path) && existsSync(path)) {
      throw new Error(`CNV_SECRET_KEY holds the key itself, not the path of a file: set it to the file's content, e.g. CNV_SECRET_KEY="$(cat ${path})"`);
    }
    throw new Error(`CNV_SECRET_KEY must be ${SECRET_KEY_FORM}; the value set (not shown) is ${raw.trim().length} characters long`);
  }
  const file = secretKeyFile(dataDir);
  if (!existsSync(file)) return undefined;
  const keep =
    'Do not replace it with a new key: the platform credentials and webhook secrets it sealed would not open. ' +
    'Restore it from a backup, or set CNV_SECRET_KEY to the key it held.';
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? 'error';
    const fix = code === 'EACCES' ? ' Give the user running cnv read access to it (it is mode 600, owned by the user who first started the service).' : '';
    throw new Error(`The credentials key ${file} (used while CNV_SECRET_KEY is unset; CNV_DATA_DIR) cannot be read (${code}).${fix} ${keep}`);
  }
  if (!secretKeyOf(text)) {
    throw new Error(`The credentials key ${file} (used while CNV_SECRET_KEY is unset; CNV_DATA_DIR) does not hold a key (${SECRET_KEY_FORM}): it was altered or cut short. ${keep}`);
  }
  return undefined;
}

/**
 * HOST: an address (IPv4, IPv6, bracketed or not) or a host name to listen on, which the default public URL carries
 * (`http://HOST:PORT`): anything a URL cannot hold stops the start here, naming the setting.
 */
function hostSetting(raw: string | undefined): { host: string; urlHost: string } {
  const host = raw?.trim() || DEFAULT_HOST;
  const bare = host.replace(/^\[(.*)\]$/, '$1');
  const urlHost = isIP(bare) === 6 ? `[${bare}]` : host; // an IPv6 address is bracketed in a URL
  let parsed: URL | null = null;
  try {
    parsed = new URL(`http://${urlHost}/`);
  } catch {
    parsed = null;
  }
  const name = /^[A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?(\.[A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?)*\.?$/.test(host) && !/^[\d.]+$/.test(host);
  if (!parsed || !(isIP(bare) !== 0 || name)) {
    throw new Error(`HOST must be an address to listen on (127.0.0.1, 0.0.0.0, ::) or a host name, got '${host.slice(0, 60)}'`);
  }
  return { host: isIP(bare) === 6 ? bare : host, urlHost };
}

/**
 * A platform's API base or OAuth endpoint setting: an absolute http(s) URL (a typo'd one would only fail at the first
 * delivery or sign-in, every conversion of that platform then failing); an API base's trailing slashes dropped (an
 * endpoint is kept as written: `keepSlash`).
 */
function platformUrlSetting(env: NodeJS.ProcessEnv, name: string, fallback: string, keepSlash = false): string {
  const raw = env[name]?.trim();
  if (!raw) return fallback;
  let url: URL | null;
  try {
    url = new URL(raw);
  } catch {
    url = null;
  }
  if (!url || (url.protocol !== 'https:' && url.protocol !== 'http:') || url.username || url.password) {
    throw new Error(`${name} must be an absolute http(s) URL such as ${fallback}, or unset for that default; got '${url ? `${url.protocol}//${url.host}${url.pathname}` : raw.slice(0, 60)}'`);
  }
  return keepSlash ? raw : raw.replace(/\/+$/, '');
}

/** Reads the settings from an environment (process.env by default). */
export function loadSettings(env: NodeJS.ProcessEnv = process.env): Settings {
  const { host, urlHost } = hostSetting(env.HOST);
  const port = intSetting(env, 'PORT', DEFAULT_PORT);
  const publicUrl = env.CNV_PUBLIC_URL ? publicUrlSetting('CNV_PUBLIC_URL', env.CNV_PUBLIC_URL) : `http://${urlHost}:${port}`;
  const webhookPort = optionalPort(env, 'CNV_WEBHOOK_PORT', null);
  // The main port serves the webhook too, so a public URL set for it is one the webhook answers on; the webhook's own
  // port is the default only where no public URL was set (one machine).
  const webhookBaseUrl = env.CNV_WEBHOOK_BASE_URL
    ? publicUrlSetting('CNV_WEBHOOK_BASE_URL', env.CNV_WEBHOOK_BASE_URL)
    : env.CNV_PUBLIC_URL
      ? publicUrl
      : webhookPort
        ? `http://${urlHost}:${webhookPort}`
        : publicUrl;
  const demoPort = optionalPort(env, 'CNV_DEMO_PORT', 8788);
  const dataDir = resolve(env.CNV_DATA_DIR || '.cnv-data');
  // Two listeners of this process on one port: the second would fail after the store opened, blaming "another process".
  if (port !== 0) {
    if (webhookPort === port) throw new Error(`CNV_WEBHOOK_PORT must differ from PORT (${port}): the main port serves the webhook too; leave it unset for one port`);
    // Only when set: the service alone (node dist/server/main.js) runs no demo, and may take the demo's default port.
    if (env.CNV_DEMO_PORT && demoPort === port) throw new Error(`CNV_DEMO_PORT must differ from PORT (${port}): the demo site listens beside the service`);
  }
  return {
    host,
    port,
    publicUrl,
    webhookBaseUrl,
    webhookPort,
    notificationPrivateAddresses: onOffSetting(
      env,
      'CNV_NOTIFICATION_PRIVATE_ADDRESSES',
      isLoopbackHost(host) && isLoopbackHost(new URL(publicUrl).hostname) && isLoopbackHost(new URL(webhookBaseUrl).hostname),
    ),
    databaseUrl: databaseUrlSetting(env.DATABASE_URL),
    pgPoolSize: poolSize(env),
    dataDir,
    secretKey: secretKeySetting(env.CNV_SECRET_KEY, dataDir),
    googleAdsApiBase: platformUrlSetting(env, 'CNV_GOOGLE_ADS_API_BASE', 'https://googleads.googleapis.com'),
    googleAdsApiVersion: env.CNV_GOOGLE_ADS_API_VERSION || 'v26',
    googleAdsDeveloperToken: env.CNV_GOOGLE_ADS_DEVELOPER_TOKEN || '',
    google: {
      dataManagerApiBase: platformBase(env, 'google-ads'),
      ...oauthClient(env, 'google-ads', 'https://accounts.google.com/o/oauth2/v2/auth', 'https://oauth2.googleapis.com/token'),
    },
    meta: {
      graphApiBase: platformBase(env, 'meta'),
      apiVersion: env.CNV_META_GRAPH_API_VERSION || 'v24.0',
    },
    microsoft: {
      adsApiBase: platformBase(env, 'microsoft-ads'),
      ...oauthClient(env, 'microsoft-ads', 'https://login.microsoftonline.com/common/oauth2/v2.0/authorize', 'https://login.microsoftonline.com/common/oauth2/v2.0/token'),
      developerToken: env.CNV_MICROSOFT_ADS_DEVELOPER_TOKEN || '',
    },
    linkedin: {
      apiBase: platformBase(env, 'linkedin'),
      apiVersion: env.CNV_LINKEDIN_API_VERSION || '202607',
      ...oauthClient(env, 'linkedin', 'https://www.linkedin.com/oauth/v2/authorization', 'https://www.linkedin.com/oauth/v2/accessToken'),
    },
    reddit: {
      apiBase: platformBase(env, 'reddit'),
      ...oauthClient(env, 'reddit', 'https://www.reddit.com/api/v1/authorize', 'https://www.reddit.com/api/v1/access_token'),
    },
    tiktok: { apiBase: platformBase(env, 'tiktok') },
    snapshotRetentionDays: retentionDays(env.CNV_SNAPSHOT_RETENTION_DAYS),
    identityRetentionDays: identityRetentionDays(env.CNV_IDENTITY_RETENTION_DAYS),
    demoPort,
    logLevel: logLevelSetting(env.LOG_LEVEL),
    logFormat: logFormatSetting(env.LOG_FORMAT),
    rateLimits: rateLimitSettings(env),
    trustProxy: trustProxySetting(env.CNV_TRUST_PROXY),
  };
}
