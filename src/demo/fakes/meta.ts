/**
 * A strict local fake of Meta's Conversions API endpoint, `POST /{version}/{pixel_id}/events` on graph.facebook.com.
 * It checks what Meta checks (path, version, access token, every field, hashes, the 7-day limit against an injected
 * clock), refuses the whole request for one bad event as Meta does, and answers in Meta's shapes:
 * `{events_received, messages, fbtrace_id}` or a Graph API error `{error: {message, type, code, error_subcode,
 * is_transient, error_user_title, error_user_msg, fbtrace_id}}`. Tests plan faults with `respondWith`.
 */
import { isIP } from 'node:net';
import { startFakeServer, type FakeAnswer, type FakeRequest, type FakeServer } from './fake-server';

/** A planned answer for the next request: a fault, or `accept` to force success. */
export type MetaPlan =
  | 'accept'
  | 'server_error'
  | 'rate_limit'
  | 'invalid_token'
  | 'invalid_parameter'
  /** Refuses the next request as invalid with these words (Meta's error_user_title, message and error_user_msg may quote what was sent). */
  | { kind: 'invalid_parameter'; title?: string; message?: string; detail?: string }
  | 'dataset_not_found'
  /** Code 368, "Temporarily blocked for policies violations" (Graph API Handling Errors: wait and retry). */
  | 'temporarily_blocked'
  | 'hang';

export interface FakeMetaOptions {
  /** The only access token the fake accepts. */
  accessToken?: string;
  /** Datasets (pixels) the token may use; others answer 100/33 like Meta. */
  pixelIds?: readonly string[];
  /** Graph API version the fake serves, e.g. `v24.0`. */
  apiVersion?: string;
  /** The fake's clock, for the 7-day limit. */
  now?: () => Date;
  /** A further rule of Meta's the test wants to stand for (what cnv cannot check itself): a problem, or null. */
  refuseEvent?: (event: Record<string, unknown>) => string | null;
  port?: number;
}

export const FAKE_META_TOKEN = 'EAAfake0cnv0demo0token0000000000';
export const FAKE_META_PIXEL_ID = '1234567890123456';

const SEVEN_DAYS_S = 7 * 24 * 60 * 60;
const ACTION_SOURCES = new Set(['email', 'website', 'app', 'phone_call', 'chat', 'physical_store', 'system_generated', 'business_messaging', 'other']);
const EVENT_KEYS = new Set(['event_name', 'event_time', 'event_id', 'event_source_url', 'action_source', 'user_data', 'custom_data', 'opt_out', 'data_processing_options', 'data_processing_options_country', 'data_processing_options_state']);
const HASHED_KEYS = new Set(['em', 'ph', 'fn', 'ln', 'db', 'ge', 'ct', 'st', 'zp', 'country']);
const PLAIN_KEYS = new Set(['external_id', 'client_ip_address', 'client_user_agent', 'fbc', 'fbp', 'subscription_id', 'fb_login_id', 'lead_id']);
const BODY_KEYS = new Set(['data', 'test_event_code', 'access_token', 'partner_agent', 'namespace_id', 'upload_id', 'upload_tag', 'upload_source']);
const FB_VALUE = /^fb\.\d\.\d{10,13}\.\S+$/;
const SHA256 = /^[0-9a-f]{64}$/;

let traceCounter = 0;
function fbtraceId(): string {
  traceCounter += 1;
  return `AfakeTrace${traceCounter.toString(36).padStart(6, '0')}`;
}

function graphError(status: number, fields: Record<string, unknown>, headers?: Record<string, string>): Exclude<FakeAnswer, 'hang'> {
  return { status, json: { error: { type: 'OAuthException', is_transient: false, ...fields, fbtrace_id: fbtraceId() } }, ...(headers ? { headers } : {}) };
}

const invalidToken = () =>
  graphError(400, { message: 'Invalid OAuth access token - Cannot parse access token', code: 190 });
const datasetNotFound = (id: string) =>
  graphError(400, {
    message: `Unsupported post request. Object with ID '${id}' does not exist, cannot be loaded due to missing permissions, or does not support this operation.`,
    type: 'GraphMethodException',
    code: 100,
    error_subcode: 33,
  });
const invalidParameter = (title: string, detail: string) =>
  graphError(400, { message: 'Invalid parameter', code: 100, error_subcode: 2804003, error_user_title: title, error_user_msg: detail });

/** Everything Meta would refuse in one server event (`i` is its index in `data`). */
function eventProblems(event: unknown, i: number, nowS: number): string[] {
  const at = `data[${i}]`;
  if (!event || typeof event !== 'object' || Array.isArray(event)) return [`${at} is not an object`];
  const e = event as Record<string, unknown>;
  const problems: string[] = [];
  for (const key of Object.keys(e)) if (!EVENT_KEYS.has(key)) problems.push(`${at}.${key} is not a server event parameter`);
  if (typeof e.event_name !== 'string' || e.event_name === '' || e.event_name.length > 50) {
    problems.push(`${at}.event_name must be a string of 1 to 50 characters`);
  }
  if (typeof e.event_time !== 'number' || !Number.isInteger(e.event_time)) problems.push(`${at}.event_time must be whole Unix seconds`);
  else if (e.event_time > nowS + 60 * 60 * 24 * 365) problems.push(`${at}.event_time looks like milliseconds, not seconds`);
  else if (e.event_time < nowS - SEVEN_DAYS_S) problems.push(`${at}.event_time is more than 7 days in the past`);
  else if (e.event_time > nowS + 60) problems.push(`${at}.event_time is in the future`);
  if (e.event_id !== undefined && (typeof e.event_id !== 'string' || e.event_id === '')) problems.push(`${at}.event_id must be a non-empty string`);
  if (typeof e.action_source !== 'string' || !ACTION_SOURCES.has(e.action_source)) problems.push(`${at}.action_source is not one Meta knows`);
  if (e.event_source_url !== undefined && (typeof e.event_source_url !== 'string' || !/^https?:\/\//.test(e.event_source_url))) {
    problems.push(`${at}.event_source_url must be an http(s) URL`);
  }
  const u = e.user_data;
  if (!u || typeof u !== 'object' || Array.isArray(u) || Object.keys(u).length === 0) {
    problems.push(`${at}.user_data must be an object with at least one customer information parameter`);
    return problems;
  }
  const user = u as Record<string, unknown>;
  for (const [key, value] of Object.entries(user)) {
    if (HASHED_KEYS.has(key)) {
      const values = Array.isArray(value) ? value : [value];
      if (values.length === 0 || !values.every((v) => typeof v === 'string' && SHA256.test(v))) {
        problems.push(`${at}.user_data.${key} must be SHA-256 hashes (64 lower-case hex characters)`);
      }
    } else if (!PLAIN_KEYS.has(key)) problems.push(`${at}.user_data.${key} is not a customer information parameter`);
  }
  for (const key of ['fbc', 'fbp'] as const) {
    if (user[key] !== undefined && (typeof user[key] !== 'string' || !FB_VALUE.test(user[key] as string))) {
      problems.push(`${at}.user_data.${key} must look like fb.1.<creation time ms>.<value>`);
    }
  }
  if (user.client_ip_address !== undefined && (typeof user.client_ip_address !== 'string' || isIP(user.client_ip_address) === 0)) {
    problems.push(`${at}.user_data.client_ip_address must be an IPv4 or IPv6 address, unhashed`);
  }
  if (user.client_user_agent !== undefined && typeof user.client_user_agent !== 'string') {
    problems.push(`${at}.user_data.client_user_agent must be a string, unhashed`);
  }
  if (e.action_source === 'website' && (typeof user.client_user_agent !== 'string' || typeof e.event_source_url !== 'string')) {
    problems.push(`${at}: website events require client_user_agent and event_source_url`);
  }
  // custom_data.value (a number) and custom_data.currency (ISO 4217), required together on Purchase.
  const custom = e.custom_data as Record<string, unknown> | undefined | null;
  if (custom !== undefined && (typeof custom !== 'object' || custom === null || Array.isArray(custom))) problems.push(`${at}.custom_data must be an object`);
  else if (custom !== undefined) {
    if (custom.value !== undefined && (typeof custom.value !== 'number' || !Number.isFinite(custom.value) || custom.value < 0)) problems.push(`${at}.custom_data.value must be a number of at least 0`);
    if (custom.currency !== undefined && (typeof custom.currency !== 'string' || !/^[A-Za-z]{3}$/.test(custom.currency))) problems.push(`${at}.custom_data.currency must be an ISO 4217 code`);
    if ((custom.value === undefined) !== (custom.currency === undefined)) problems.push(`${at}.custom_data: value and currency go together`);
  }
  if (e.event_name === 'Purchase' && (!custom || custom.value === undefined || custom.currency === undefined)) {
    problems.push(`${at}: Purchase events require custom_data.value and custom_data.currency`);
  }
  problems.push(...dataProcessingProblems(e, at));
  return problems;
}

/**
 * Limited Data Use as Meta documents it (Data Processing Options for US Users): `data_processing_options` is `[]` or
 * `["LDU"]`; with LDU, a country (1 for the US, 0 to have Meta geolocate) and a state (1000 for California, 0 to have
 * Meta geolocate), and a state whenever a country is given.
 */
function dataProcessingProblems(e: Record<string, unknown>, at: string): string[] {
  const options = e.data_processing_options;
  if (options === undefined) return [];
  if (!Array.isArray(options) || options.some((o) => o !== 'LDU') || options.length > 1) return [`${at}.data_processing_options must be [] or ["LDU"]`];
  if (options.length === 0) return [];
  const problems: string[] = [];
  const country = e.data_processing_options_country;
  const state = e.data_processing_options_state;
  if (country !== undefined && country !== 0 && country !== 1) problems.push(`${at}.data_processing_options_country must be 1 (the US) or 0 (geolocate)`);
  if (state !== undefined && state !== 0 && state !== 1000) problems.push(`${at}.data_processing_options_state must be 1000 (California) or 0 (geolocate)`);
  if (country !== undefined && state === undefined) problems.push(`${at}: a data_processing_options_country needs a data_processing_options_state`);
  return problems;
}

/** The body's `data` as an array: a JSON array, or (form-encoded, as Meta's curl example) a JSON-encoded string. */
function dataOf(body: Record<string, unknown>): unknown {
  if (typeof body.data !== 'string') return body.data;
  try {
    return JSON.parse(body.data) as unknown;
  } catch {
    return undefined;
  }
}

type Resolved = Required<Omit<FakeMetaOptions, 'port' | 'refuseEvent'>> & Pick<FakeMetaOptions, 'refuseEvent'>;

function handle(request: FakeRequest, plan: MetaPlan | undefined, options: Resolved): FakeAnswer {
  if (plan === 'hang') return 'hang';
  const match = /^\/(v\d+\.\d+)\/([^/]+)\/events$/.exec(request.path);
  if (request.method !== 'POST' || !match) {
    request.problems.push(`unknown endpoint ${request.method} ${request.path}`);
    return graphError(400, { message: 'Unknown path components', code: 2500 });
  }
  const [, version, pixelId] = match as unknown as [string, string, string];
  if (version !== options.apiVersion) {
    request.problems.push(`version ${version} is not the one served (${options.apiVersion})`);
    return graphError(400, { message: `Unsupported version ${version}`, code: 2635 });
  }
  const body = request.body && typeof request.body === 'object' ? (request.body as Record<string, unknown>) : null;
  if (!body) {
    request.problems.push('the body is neither JSON nor a form');
    return invalidParameter('Invalid body', 'The request body could not be read.');
  }
  const token = request.query.get('access_token') ?? (typeof body.access_token === 'string' ? body.access_token : null);
  if (plan === 'invalid_token' || token !== options.accessToken) {
    if (plan !== 'invalid_token') request.problems.push('missing or wrong access_token');
    return invalidToken();
  }
  if (plan === 'dataset_not_found' || !options.pixelIds.includes(pixelId)) {
    if (plan !== 'dataset_not_found') request.problems.push(`unknown dataset ${pixelId}`);
    return datasetNotFound(pixelId);
  }
  if (plan === 'server_error') {
    return graphError(500, { message: 'An unexpected error has occurred. Please retry your request later.', type: 'OAuthException', code: 2, is_transient: true });
  }
  if (plan === 'temporarily_blocked') {
    return graphError(400, { message: 'It looks like you were misusing this feature by going too fast. You’ve been temporarily blocked from using it.', code: 368 });
  }
  if (plan === 'rate_limit') {
    const usage = { [pixelId]: [{ type: 'ads_management', call_count: 100, total_cputime: 20, total_time: 20, estimated_time_to_regain_access: 3 }] };
    return graphError(
      400,
      { message: 'There have been too many calls to this ad-account. Wait a bit and try again.', code: 80004, error_subcode: 2446079, is_transient: true },
      { 'x-business-use-case-usage': JSON.stringify(usage) },
    );
  }
  for (const key of Object.keys(body)) if (!BODY_KEYS.has(key)) request.problems.push(`${key} is not a main body parameter`);
  const data = dataOf(body);
  if (!Array.isArray(data) || data.length === 0 || data.length > 1000) {
    request.problems.push('data must be an array of 1 to 1,000 server events');
  } else {
    const nowS = Math.floor(options.now().getTime() / 1000);
    data.forEach((event, i) => {
      request.problems.push(...eventProblems(event, i, nowS));
      const refused = options.refuseEvent && event && typeof event === 'object' ? options.refuseEvent(event as Record<string, unknown>) : null;
      if (refused) request.problems.push(`data[${i}]: ${refused}`);
    });
  }
  if (body.test_event_code !== undefined && typeof body.test_event_code !== 'string') request.problems.push('test_event_code must be a string');
  if (plan === 'invalid_parameter') return invalidParameter('Invalid event', 'The fake was told to refuse this request.');
  if (typeof plan === 'object' && plan.kind === 'invalid_parameter') {
    return graphError(400, {
      message: plan.message ?? 'Invalid parameter',
      code: 100,
      error_subcode: 2804003,
      error_user_title: plan.title ?? 'Invalid event',
      error_user_msg: plan.detail ?? 'The fake was told to refuse this request.',
    });
  }
  if (request.problems.length > 0 && plan !== 'accept') {
    // One bad event refuses the whole request, as Meta documents.
    return invalidParameter('Invalid server event', request.problems[0] ?? 'invalid');
  }
  return { status: 200, json: { events_received: Array.isArray(data) ? data.length : 0, messages: [], fbtrace_id: fbtraceId() } };
}

/** The fake Graph API, and the lever of a token revoked or replaced in Events Manager. */
export interface FakeMeta extends FakeServer<MetaPlan> {
  /** From now on only this access token is accepted (others answer code 190, as a revoked token does). */
  setAccessToken(token: string): void;
}

/** Starts the fake Graph API events endpoint; point `CNV_META_GRAPH_API_BASE` at its `url`. */
export async function startFakeMeta(options: FakeMetaOptions = {}): Promise<FakeMeta> {
  const resolved: Resolved = {
    refuseEvent: options.refuseEvent,
    accessToken: options.accessToken ?? FAKE_META_TOKEN,
    pixelIds: options.pixelIds ?? [FAKE_META_PIXEL_ID],
    apiVersion: options.apiVersion ?? 'v24.0',
    now: options.now ?? (() => new Date()),
  };
  const server = await startFakeServer<MetaPlan>('meta', (request, plan) => handle(request, plan, resolved), options.port ? { port: options.port } : {});
  return Object.assign(server, {
    setAccessToken(token: string) {
      resolved.accessToken = token;
    },
  });
}

/** The server events the fake accepted and counts, oldest first (for assertions and the demo): test events left out. */
export function acceptedEvents(fake: FakeServer<MetaPlan>): Record<string, unknown>[] {
  return fake.requests
    // A request with a test_event_code (a connection test) shows in Events Manager's Test events only: not counted.
    .filter((r) => r.answeredStatus === 200 && !(r.body && typeof r.body === 'object' && 'test_event_code' in (r.body as object)))
    .flatMap((r) => {
      const data = r.body && typeof r.body === 'object' ? dataOf(r.body as Record<string, unknown>) : undefined;
      return Array.isArray(data) ? (data as Record<string, unknown>[]) : [];
    });
}
