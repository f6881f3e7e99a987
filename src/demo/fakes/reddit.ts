/**
 * A strict local fake of Reddit's Conversions API v3, `POST /api/v3/pixels/{pixel_id}/conversion_events` on
 * ads-api.reddit.com. It checks what Reddit documents (the Bearer conversion access token, a descriptive User-Agent,
 * the `data` wrapper, every event field: epoch milliseconds within 7 days, the required `action_source`, v3 tracking
 * types and custom names of at most 64 characters, match keys hashed or plain as Reddit accepts them, value and
 * currency only where the tracking type takes them, at most 1,000 events), refuses the whole request for one bad event
 * as Reddit does ("There were N invalid conversion events. None were processed."), and deduplicates on
 * `conversion_id` within 2 days. Tests plan faults with `respondWith`. It is also Reddit's OAuth 2.0 server
 * (`/api/v1/authorize` consents at once, `/api/v1/access_token`): the app authenticates with HTTP Basic and a
 * descriptive User-Agent, `adsconversions` must be asked for, and only `duration=permanent` earns a refresh token;
 * the API takes the conversion access token or an unexpired OAuth access token with that scope.
 * Facts: src/server/destinations/reddit/index.ts and oauth.ts.
 */
import { createHash } from 'node:crypto';
import { isIP } from 'node:net';
import { createFakeOAuth } from './fake-oauth';
import type { FakeAnswer, FakeRequest } from './fake-server';
import { dedupLedger, isObject, startCountingFake, valueProblems, type CountingFake, type PixelFakeOptions, type PixelFakePlan } from './pixel-fake';

export const FAKE_REDDIT_TOKEN = 'eyJfake.reddit.conversion.access.token.for.cnv.demo';
export const FAKE_REDDIT_PIXEL = 'a2_cnvdemopixel';
export const REDDIT_AUTHORIZE_PATH = '/api/v1/authorize';
export const REDDIT_TOKEN_PATH = '/api/v1/access_token';
/** Reddit's access tokens last an hour; a permanent grant's refresh token does not expire (ten years here). */
const ACCESS_TOKEN_TTL_S = 60 * 60;
const REFRESH_TOKEN_TTL_S = 10 * 365 * 24 * 60 * 60;

/** A planned answer for the next request. */
export type RedditPlan =
  | PixelFakePlan
  | 'forbidden'
  | 'invalid_event'
  /** Refuses the next request as invalid with this message (Reddit's message may quote what was sent). */
  | { kind: 'invalid_event'; message: string }
  /** The token endpoint refuses the next grant (a revoked app or refresh token). */
  | 'invalid_grant';

export interface FakeRedditOptions extends PixelFakeOptions {
  /** Pixels the token may post to; others answer 403. */
  pixelIds?: readonly string[];
  /** The Reddit app of the OAuth server. */
  clientId?: string;
  clientSecret?: string;
}

/** An event Reddit counted (a duplicate conversion_id within 2 days is not counted again). */
export interface CountedRedditEvent {
  pixelId: string;
  testId: string | null;
  event: Record<string, any>;
  /**
   * The email hash Reddit matches on: the SHA-256 sent, or a plain address canonicalised as Reddit's “Manual Advanced
   * Matching” says (lower-case; in the local part, everything from the first `+` and every non-alphanumeric character
   * removed) and hashed. Null without an email.
   */
  emailHash: string | null;
}

/** Reddit's hash of a plain address (its “Hashing email addresses” steps), or the hash itself when one was sent. */
function redditEmailHash(email: unknown): string | null {
  if (typeof email !== 'string') return null;
  if (SHA256.test(email)) return email;
  const lower = email.trim().toLowerCase();
  const at = lower.lastIndexOf('@');
  const local = lower.slice(0, at).split('+')[0]!.replace(/[^a-z0-9]/g, '');
  return createHash('sha256').update(`${local}@${lower.slice(at + 1)}`).digest('hex');
}

export interface FakeReddit extends CountingFake<RedditPlan, CountedRedditEvent> {
  clientId: string;
  clientSecret: string;
  authorizeUrl: string;
  tokenUrl: string;
  /** Every OAuth access token stops working: the API answers 401 until cnv refreshes. */
  revokeAccessTokens(): void;
  /** Every refresh token stops working: the next refresh gets invalid_grant. */
  revokeRefreshTokens(): void;
}

const PATH = /^\/api\/v3\/pixels\/([^/]+)\/conversion_events$/;
const SHA256 = /^[0-9a-f]{64}$/;
const SEVEN_DAYS_MS = 7 * 24 * 60 * 60 * 1000;
const DEDUP_WINDOW_MS = 2 * 24 * 60 * 60 * 1000;
const ACTION_SOURCES = new Set(['WEBSITE', 'APP', 'OTHER', 'PHYSICAL_STORE']);
const TRACKING_TYPES = new Set(['PAGE_VISIT', 'VIEW_CONTENT', 'SEARCH', 'ADD_TO_CART', 'ADD_TO_WISHLIST', 'PURCHASE', 'LEAD', 'SIGN_UP', 'CUSTOM']);
const WITHOUT_VALUE = new Set(['PAGE_VISIT', 'VIEW_CONTENT', 'SEARCH']);
const EVENT_KEYS = new Set(['event_at', 'action_source', 'type', 'click_id', 'event_source_url', 'user', 'metadata']);
const USER_KEYS = new Set(['email', 'phone_number', 'ip_address', 'user_agent', 'uuid', 'external_id', 'idfa', 'aaid', 'screen_dimensions', 'data_processing_options']);
const METADATA_KEYS = new Set(['conversion_id', 'value', 'currency', 'item_count', 'products']);
/** User agents Reddit throttles as default ones. */
const DEFAULT_AGENTS = /^(node|undici|axios|python-requests|curl|go-http-client|java)\b/i;

const error = (status: number, message: string, headers?: Record<string, string>): Exclude<FakeAnswer, 'hang'> => ({
  status,
  json: { error: { code: status, message } },
  ...(headers ? { headers } : {}),
});

/** Everything Reddit would refuse in one event (`i` is its index in `data.events`). */
function eventProblems(e: unknown, i: number, nowMs: number): string[] {
  const at = `events[${i}]`;
  if (!isObject(e)) return [`${at} is not an object`];
  const problems: string[] = [];
  for (const key of Object.keys(e)) if (!EVENT_KEYS.has(key)) problems.push(`${at}.${key}: unknown field`);
  if (typeof e.event_at !== 'number' || !Number.isInteger(e.event_at) || e.event_at < 1e12) problems.push(`${at}.event_at must be Unix epoch milliseconds`);
  else if (e.event_at < nowMs - SEVEN_DAYS_MS) problems.push(`${at}.event_at is more than 7 days ago`);
  else if (e.event_at > nowMs + 5 * 60_000) problems.push(`${at}.event_at is in the future`);
  if (typeof e.action_source !== 'string' || !ACTION_SOURCES.has(e.action_source)) problems.push(`${at}: missing or invalid action_source`);
  const type = e.type;
  let tracking: string | null = null;
  if (!isObject(type) || typeof type.tracking_type !== 'string' || !TRACKING_TYPES.has(type.tracking_type)) {
    problems.push(`${at}.type.tracking_type must be one of ${[...TRACKING_TYPES].join(', ')}`);
  } else {
    tracking = type.tracking_type;
    for (const key of Object.keys(type)) if (key !== 'tracking_type' && key !== 'custom_event_name') problems.push(`${at}.type.${key}: unknown field`);
    if (tracking === 'CUSTOM') {
      if (typeof type.custom_event_name !== 'string' || type.custom_event_name === '' || [...type.custom_event_name].length > 64) {
        problems.push(`${at}.type.custom_event_name must be 1 to 64 characters for a CUSTOM event`);
      }
    } else if (type.custom_event_name !== undefined) problems.push(`${at}.type.custom_event_name is only for CUSTOM events`);
  }
  if (e.click_id !== undefined && (typeof e.click_id !== 'string' || e.click_id === '' || /\s/.test(e.click_id))) problems.push(`${at}.click_id must be a non-empty string`);
  if (e.event_source_url !== undefined && (typeof e.event_source_url !== 'string' || !/^https?:\/\//.test(e.event_source_url))) {
    problems.push(`${at}.event_source_url must be an http(s) URL`);
  }
  const user = e.user;
  if (user !== undefined && !isObject(user)) problems.push(`${at}.user must be an object`);
  const u = isObject(user) ? user : {};
  for (const [key, value] of Object.entries(u)) {
    if (!USER_KEYS.has(key)) problems.push(`${at}.user.${key}: unknown field`);
    else if (key === 'email' && (typeof value !== 'string' || !(SHA256.test(value) || /^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(value)))) {
      problems.push(`${at}.user.email must be an address or its SHA-256`);
    } else if (key === 'phone_number' && (typeof value !== 'string' || !(SHA256.test(value) || /^\+\d{7,15}$/.test(value)))) {
      problems.push(`${at}.user.phone_number must be E.164 or its SHA-256`);
    } else if (key === 'ip_address' && (typeof value !== 'string' || !(SHA256.test(value) || isIP(value) !== 0))) {
      problems.push(`${at}.user.ip_address must be an IP address or its SHA-256`);
    } else if (['user_agent', 'uuid', 'external_id', 'idfa', 'aaid'].includes(key) && (typeof value !== 'string' || value === '')) {
      problems.push(`${at}.user.${key} must be a non-empty string`);
    }
  }
  const matchable = e.click_id || u.email || u.phone_number || u.uuid || u.external_id || u.idfa || u.aaid || (u.ip_address && u.user_agent);
  if (!matchable) problems.push(`${at}: no match key (click_id, email, phone_number, uuid, external_id, or ip_address with user_agent)`);
  const metadata = e.metadata;
  if (metadata !== undefined) {
    if (!isObject(metadata)) problems.push(`${at}.metadata must be an object`);
    else {
      for (const key of Object.keys(metadata)) if (!METADATA_KEYS.has(key)) problems.push(`${at}.metadata.${key}: unknown field`);
      if (metadata.conversion_id !== undefined && (typeof metadata.conversion_id !== 'string' || metadata.conversion_id === '')) {
        problems.push(`${at}.metadata.conversion_id must be a non-empty string`);
      }
      const { value, currency } = metadata;
      problems.push(...valueProblems(`${at}.metadata`, value, currency));
      if (tracking && WITHOUT_VALUE.has(tracking) && (value !== undefined || currency !== undefined)) problems.push(`${at}: ${tracking} takes no value or currency`);
    }
  }
  return problems;
}

/** Starts the fake Reddit Ads API; point `CNV_REDDIT_API_BASE` at its `url`. */
export async function startFakeReddit(options: FakeRedditOptions = {}): Promise<FakeReddit> {
  const token = options.accessToken ?? FAKE_REDDIT_TOKEN;
  const pixels = options.pixelIds ?? [FAKE_REDDIT_PIXEL];
  const now = options.now ?? (() => new Date());
  const oauth = createFakeOAuth({
    clientId: options.clientId ?? 'fake-reddit-app',
    clientSecret: options.clientSecret ?? 'fake-reddit-app-secret',
    requiredScopes: ['adsconversions'],
    clientAuthentication: 'basic',
    refreshTokenOnlyWith: { duration: 'permanent' },
    checkTokenHeaders: (request) => (DEFAULT_AGENTS.test(request.headers['user-agent'] ?? '') || !request.headers['user-agent'] ? 'a default user agent on the token request' : null),
    accessTokenTtlSeconds: ACCESS_TOKEN_TTL_S,
    refreshTokenTtlSeconds: REFRESH_TOKEN_TTL_S,
    tokenPrefix: 'fake-reddit',
    now,
  });
  const ledger = dedupLedger<CountedRedditEvent>(DEDUP_WINDOW_MS);

  const handle = (request: FakeRequest, plan: RedditPlan | undefined): FakeAnswer => {
    if (request.path === REDDIT_AUTHORIZE_PATH && request.method === 'GET') return oauth.authorize(request);
    if (request.path === REDDIT_TOKEN_PATH) return oauth.token(request, plan === 'invalid_grant');
    if (plan === 'hang') return 'hang';
    const match = PATH.exec(request.path);
    if (request.method !== 'POST' || !match) {
      request.problems.push(`unknown endpoint ${request.method} ${request.path}`);
      return error(404, 'Not Found');
    }
    const pixelId = decodeURIComponent(match[1]!);
    const auth = request.headers.authorization ?? '';
    if (!auth.startsWith('Bearer ')) {
      request.problems.push('no bearer token');
      return error(401, 'No bearer token provided');
    }
    const scopes = auth === `Bearer ${token}` ? ['adsconversions'] : oauth.bearerScopes(auth);
    if (plan === 'invalid_token' || scopes === null) {
      if (plan !== 'invalid_token') request.problems.push('wrong, expired or revoked bearer token');
      return error(401, 'UNAUTHORIZED');
    }
    if (!scopes.includes('adsconversions')) {
      request.problems.push('the token lacks the adsconversions scope');
      return error(403, 'Missing adsconversions scope to post conversions to Pixel.');
    }
    if (plan === 'forbidden' || !pixels.includes(pixelId)) {
      if (plan !== 'forbidden') request.problems.push(`unknown pixel ${pixelId}`);
      return error(403, `You're not authorized to post conversions to Pixel ID ${pixelId}.`);
    }
    const agent = request.headers['user-agent'] ?? '';
    if (agent === '' || DEFAULT_AGENTS.test(agent)) {
      request.problems.push(`a default user agent (${agent || 'none'})`);
      return error(429, 'Your user agent was automatically ratelimited.');
    }
    if (plan === 'rate_limit') return error(429, 'Too many requests/events within timeframe.');
    if (typeof plan === 'object' && plan.kind === 'rate_limit') {
      return error(429, 'Too many requests/events within timeframe.', { 'retry-after': String(plan.retryAfterSeconds) });
    }
    if (plan === 'server_error') return error(500, 'The service is currently unavailable. No conversion events were processed.');
    if (!(request.headers['content-type'] ?? '').startsWith('application/json')) request.problems.push('the body must be JSON');
    const body = isObject(request.body) ? request.body : null;
    const data = body && isObject(body.data) ? body.data : null;
    if (!body || !data) {
      request.problems.push('the body must be {"data": {"events": [...]}}');
      return error(400, 'Bad Request');
    }
    for (const key of Object.keys(body)) if (key !== 'data') request.problems.push(`${key}: unknown field`);
    for (const key of Object.keys(data)) if (!['events', 'test_id', 'partner'].includes(key)) request.problems.push(`data.${key}: unknown field`);
    if (data.test_id !== undefined && (typeof data.test_id !== 'string' || data.test_id === '')) request.problems.push('data.test_id must be a non-empty string');
    const events = data.events;
    if (!Array.isArray(events) || events.length === 0 || events.length > 1000) {
      request.problems.push('data.events must hold 1 to 1,000 events');
      return error(400, 'Bad Request');
    }
    const nowMs = now().getTime();
    const invalid = events.filter((event, i) => {
      const problems = eventProblems(event, i, nowMs);
      request.problems.push(...problems);
      return problems.length > 0;
    }).length;
    if (plan === 'invalid_event') return error(400, `There were ${events.length} invalid conversion events. None were processed.`);
    if (typeof plan === 'object' && plan.kind === 'invalid_event') return error(400, plan.message);
    if (invalid > 0 && plan !== 'accept') return error(400, `There were ${invalid} invalid conversion events. None were processed.`);
    for (const event of events as Record<string, any>[]) {
      // Reddit deduplicates on the conversion ID within one event type (custom events: one name).
      const conversionId = event.metadata?.conversion_id;
      const name = event.type?.tracking_type === 'CUSTOM' ? `CUSTOM:${event.type.custom_event_name}` : event.type?.tracking_type;
      const key = typeof conversionId === 'string' ? `${pixelId}|${name}|${conversionId}` : null;
      ledger.count(key, { pixelId, testId: typeof data.test_id === 'string' ? data.test_id : null, event, emailHash: redditEmailHash(event.user?.email) }, nowMs);
    }
    return { status: 200, json: { data: { message: `Successfully processed ${events.length} conversion events.` } } };
  };

  // A token request takes only a planned invalid_grant; an API request every other plan.
  const takesPlan = (request: FakeRequest, plan: RedditPlan) => (request.path === REDDIT_TOKEN_PATH) === (plan === 'invalid_grant') && request.path !== REDDIT_AUTHORIZE_PATH;
  // reset() forgets requests and counted events; the app's grants stay, as Reddit keeps them.
  return startCountingFake('reddit', handle, ledger, { takesPlan, ...(options.port ? { port: options.port } : {}) }, (server) => ({
    clientId: oauth.clientId,
    clientSecret: oauth.clientSecret,
    authorizeUrl: `${server.url}${REDDIT_AUTHORIZE_PATH}`,
    tokenUrl: `${server.url}${REDDIT_TOKEN_PATH}`,
    revokeAccessTokens: oauth.revokeAccessTokens,
    revokeRefreshTokens: oauth.revokeRefreshTokens,
  }));
}
