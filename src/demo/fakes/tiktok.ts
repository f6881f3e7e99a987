/**
 * A strict local fake of TikTok's Events API 2.0 track endpoint, `POST /open_api/v1.3/event/track/` on
 * business-api.tiktok.com. It checks what TikTok documents (the Access-Token header, `event_source: web`, the pixel
 * code as `event_source_id`, every field of `data[]`: Unix seconds, hashed email/phone/external_id, unhashed IP and
 * user agent, value with a currency), refuses the whole request for one bad event, answers in TikTok's shape
 * `{code, message, request_id, data}` (HTTP 200, `code: 0` for success; 40001 no permission, 40002 invalid
 * parameters, 40100 too many requests, 40105 invalid token), and deduplicates on (pixel, event, event_id) within 48
 * hours as TikTok does. Tests plan faults with `respondWith`. Facts: src/server/destinations/tiktok/index.ts.
 */
import { isIP } from 'node:net';
import type { FakeAnswer, FakeRequest } from './fake-server';
import { dedupLedger, isObject, startCountingFake, valueProblems, type CountingFake, type PixelFakeOptions, type PixelFakePlan } from './pixel-fake';

export const TIKTOK_TRACK_PATH = '/open_api/v1.3/event/track/';
export const FAKE_TIKTOK_TOKEN = 'fake0tiktok0events0api0token0000cnv0demo';
export const FAKE_TIKTOK_PIXEL = 'C4CNVDEMO0PIXEL0CODE';

/** A planned answer for the next request. */
export type TikTokPlan =
  /** (`rate_limit` is code 40100, TikTok's rate limit.) */
  | PixelFakePlan
  /** HTTP 429 from the gateway. */
  | 'http_429'
  | 'invalid_parameter'
  /** Code 40002 with this message (TikTok's message may quote what was sent). */
  | { kind: 'invalid_parameter'; message: string }
  | 'no_permission';

export interface FakeTikTokOptions extends PixelFakeOptions {
  /** Pixel codes the token may report to; others answer 40001. */
  pixelCodes?: readonly string[];
}

/** An event TikTok counted (a duplicate within 48 hours is not counted again). */
export interface CountedTikTokEvent {
  pixelCode: string;
  testEventCode: string | null;
  event: Record<string, any>;
}

export type FakeTikTok = CountingFake<TikTokPlan, CountedTikTokEvent>;

const SHA256 = /^[0-9a-f]{64}$/;
const EVENT_KEYS = new Set(['event', 'event_time', 'event_id', 'user', 'properties', 'page', 'limited_data_use', 'lead', 'app', 'ad']);
const USER_KEYS = new Set(['ttclid', 'ttp', 'email', 'phone', 'external_id', 'ip', 'user_agent', 'locale', 'idfa', 'idfv', 'gaid', 'first_name', 'last_name', 'city', 'state', 'country', 'zip_code']);
const HASHED_USER_KEYS = new Set(['email', 'phone', 'external_id', 'first_name', 'last_name', 'zip_code']);
/** `properties` of a web event as TikTok's request sample and its Segment formatter name them. */
const PROPERTY_KEYS = new Set(['contents', 'content_type', 'content_id', 'content_name', 'content_category', 'currency', 'value', 'query', 'description', 'order_id', 'shop_id', 'num_items']);
const BODY_KEYS = new Set(['event_source', 'event_source_id', 'test_event_code', 'partner_name', 'data']);
const DEDUP_WINDOW_MS = 48 * 60 * 60 * 1000;

let requestCounter = 0;
function requestId(): string {
  requestCounter += 1;
  return `fake${Date.now().toString(36)}${requestCounter.toString(36).padStart(6, '0')}`;
}

function answer(code: number, message: string, headers?: Record<string, string>, status = 200): Exclude<FakeAnswer, 'hang'> {
  return { status, json: { code, message, request_id: requestId(), data: {} }, ...(headers ? { headers } : {}) };
}


/** Everything TikTok would refuse in one web event (`i` is its index in `data`). */
function eventProblems(e: unknown, i: number, nowS: number): string[] {
  const at = `data[${i}]`;
  if (!isObject(e)) return [`${at} is not an object`];
  const problems: string[] = [];
  for (const key of Object.keys(e)) if (!EVENT_KEYS.has(key)) problems.push(`${at}.${key} is not an event parameter`);
  if (typeof e.event !== 'string' || e.event.trim() === '') problems.push(`${at}.event must be a non-empty string`);
  if (typeof e.event_time !== 'number' || !Number.isInteger(e.event_time)) problems.push(`${at}.event_time must be a Unix timestamp in whole seconds`);
  else if (e.event_time > 10_000_000_000) problems.push(`${at}.event_time looks like milliseconds, not seconds`);
  else if (e.event_time > nowS + 300) problems.push(`${at}.event_time is in the future`);
  if (e.event_id !== undefined && (typeof e.event_id !== 'string' || e.event_id === '')) problems.push(`${at}.event_id must be a non-empty string`);
  if (e.limited_data_use !== undefined && typeof e.limited_data_use !== 'boolean') problems.push(`${at}.limited_data_use must be a boolean`);
  const user = e.user;
  if (user !== undefined) {
    if (!isObject(user)) problems.push(`${at}.user must be an object`);
    else {
      for (const [key, value] of Object.entries(user)) {
        if (!USER_KEYS.has(key)) problems.push(`${at}.user.${key} is not a user parameter`);
        else if (HASHED_USER_KEYS.has(key)) {
          const values = Array.isArray(value) ? value : [value];
          if (values.length === 0 || !values.every((v) => typeof v === 'string' && SHA256.test(v))) {
            problems.push(`${at}.user.${key} must be SHA-256 hashed (64 lower-case hex characters)`);
          }
        } else if (typeof value !== 'string' || value === '') problems.push(`${at}.user.${key} must be a non-empty string`);
      }
      if (typeof user.ip === 'string' && isIP(user.ip) === 0) problems.push(`${at}.user.ip must be a public IPv4 or IPv6 address, unhashed`);
      if (typeof user.ttclid === 'string' && /\s/.test(user.ttclid)) problems.push(`${at}.user.ttclid must not contain whitespace`);
    }
  }
  const page = e.page;
  if (page !== undefined) {
    if (!isObject(page)) problems.push(`${at}.page must be an object`);
    else {
      for (const key of Object.keys(page)) if (key !== 'url' && key !== 'referrer') problems.push(`${at}.page.${key} is not a page parameter`);
      if (page.url !== undefined && (typeof page.url !== 'string' || !/^https?:\/\//.test(page.url))) problems.push(`${at}.page.url must be an http(s) URL`);
    }
  }
  const properties = e.properties;
  if (properties !== undefined) {
    if (!isObject(properties)) problems.push(`${at}.properties must be an object`);
    else {
      for (const key of Object.keys(properties)) if (!PROPERTY_KEYS.has(key)) problems.push(`${at}.properties.${key} is not a property parameter`);
      problems.push(...valueProblems(`${at}.properties`, properties.value, properties.currency));
    }
  }
  return problems;
}

/** Starts the fake TikTok Business API; point `CNV_TIKTOK_API_BASE` at its `url`. */
export async function startFakeTikTok(options: FakeTikTokOptions = {}): Promise<FakeTikTok> {
  const accessToken = options.accessToken ?? FAKE_TIKTOK_TOKEN;
  const pixelCodes = options.pixelCodes ?? [FAKE_TIKTOK_PIXEL];
  const now = options.now ?? (() => new Date());
  const ledger = dedupLedger<CountedTikTokEvent>(DEDUP_WINDOW_MS);

  const handle = (request: FakeRequest, plan: TikTokPlan | undefined): FakeAnswer => {
    if (plan === 'hang') return 'hang';
    if (request.method !== 'POST' || request.path !== TIKTOK_TRACK_PATH) {
      request.problems.push(`unknown endpoint ${request.method} ${request.path}`);
      return { status: 404, json: { code: 40400, message: 'Not found', request_id: requestId(), data: {} } };
    }
    if (plan === 'http_429') return { status: 429, text: 'Too Many Requests' };
    if (plan === 'server_error') return answer(50000, 'Internal service error. Please try again later.', undefined, 500);
    if (!(request.headers['content-type'] ?? '').startsWith('application/json')) request.problems.push('the body must be JSON (content-type application/json)');
    const token = request.headers['access-token'];
    if (plan === 'invalid_token' || token !== accessToken) {
      if (plan !== 'invalid_token') request.problems.push('missing or wrong Access-Token header');
      return answer(40105, 'The access token is invalid or has been revoked.');
    }
    if (plan === 'rate_limit') return answer(40100, 'Too many requests. Please retry in some time.');
    if (typeof plan === 'object' && plan.kind === 'rate_limit') {
      return answer(40100, 'Too many requests. Please retry in some time.', { 'retry-after': String(plan.retryAfterSeconds) });
    }
    const body = isObject(request.body) ? request.body : null;
    if (!body) {
      request.problems.push('the body is not a JSON object');
      return answer(40002, 'Invalid request body.');
    }
    for (const key of Object.keys(body)) if (!BODY_KEYS.has(key)) request.problems.push(`${key} is not a request parameter`);
    if (body.event_source !== 'web') request.problems.push('event_source must be "web" for pixel events');
    const pixel = body.event_source_id;
    if (plan === 'no_permission' || typeof pixel !== 'string' || !pixelCodes.includes(pixel)) {
      if (plan !== 'no_permission') request.problems.push(`unknown pixel ${String(pixel)}`);
      return answer(40001, 'No permission to operate pixel. Please check the pixel code and access token.');
    }
    if (body.test_event_code !== undefined && (typeof body.test_event_code !== 'string' || body.test_event_code === '')) {
      request.problems.push('test_event_code must be a non-empty string');
    }
    const data = body.data;
    const nowS = Math.floor(now().getTime() / 1000);
    if (!Array.isArray(data) || data.length === 0 || data.length > 1000) request.problems.push('data must be an array of 1 to 1,000 events');
    else data.forEach((event, i) => request.problems.push(...eventProblems(event, i, nowS)));
    if (plan === 'invalid_parameter') return answer(40002, 'Invalid parameters: the fake was told to refuse this request.');
    if (typeof plan === 'object' && plan.kind === 'invalid_parameter') return answer(40002, plan.message);
    if (request.problems.length > 0 && plan !== 'accept') return answer(40002, `Invalid parameters: ${request.problems[0]}`);
    const nowMs = now().getTime();
    for (const event of Array.isArray(data) ? (data as Record<string, any>[]) : []) {
      // TikTok keeps the first event with the same pixel, event and event_id within 48 hours.
      const key = typeof event.event_id === 'string' ? `${pixel}|${event.event}|${event.event_id}` : null;
      ledger.count(key, { pixelCode: pixel, testEventCode: typeof body.test_event_code === 'string' ? body.test_event_code : null, event }, nowMs);
    }
    return answer(0, 'OK');
  };

  return startCountingFake('tiktok', handle, ledger, options, () => ({}));
}
