/**
 * A strict local fake of LinkedIn for tests and the demo: the Conversions API's batch create
 * (`POST /rest/conversionEvents`), the two reads a connection test makes (`/rest/adAccountUsers`, `/rest/conversions`),
 * and LinkedIn's OAuth 2.0 endpoints (`/oauth/v2/authorization` consents at once, `/oauth/v2/accessToken`). It checks
 * every header and field as LinkedIn documents them, answers per element like a Rest.li BATCH_CREATE, deduplicates
 * on eventId, and follows planned answers (an HTTP error, per-element statuses, a hang, invalid_grant).
 * https://learn.microsoft.com/en-us/linkedin/marketing/integrations/ads-reporting/conversions-api
 * https://learn.microsoft.com/en-us/linkedin/shared/authentication/authorization-code-flow
 */
import { createHash, randomBytes } from 'node:crypto';
import { startFakeServer, type FakeAnswer, type FakeRequest, type FakeServer } from './fake-server';

export const LINKEDIN_AUTHORIZE_PATH = '/oauth/v2/authorization';
export const LINKEDIN_TOKEN_PATH = '/oauth/v2/accessToken';
export const LINKEDIN_CONVERSION_EVENTS_PATH = '/rest/conversionEvents';

const CONVERSION_URN = /^urn:lla:llaPartnerConversion:([0-9]+)$/;
const ID_TYPES = new Set(['SHA256_EMAIL', 'LINKEDIN_FIRST_PARTY_ADS_TRACKING_UUID', 'ACXIOM_ID', 'ORACLE_MOAT_ID']);
const USER_INFO_KEYS = new Set(['firstName', 'lastName', 'companyName', 'title', 'countryCode']);
const ELEMENT_KEYS = new Set(['conversion', 'conversionHappenedAt', 'conversionValue', 'eventId', 'user']);
const MAX_ELEMENTS = 5000;
const MAX_AGE_MS = 90 * 24 * 60 * 60 * 1000;
const ACCESS_TOKEN_TTL_S = 60 * 24 * 60 * 60;
const REFRESH_TOKEN_TTL_S = 365 * 24 * 60 * 60;

/** A planned answer for the next request. */
export type LinkedInPlan =
  /** Answer the next request with this HTTP error (LinkedIn's error body; `retryAfter` as the Retry-After header). */
  | { kind: 'http'; status: number; message?: string; code?: string; retryAfter?: string }
  /** Answer the next batch create 200 with these per-element statuses (one per element sent). */
  | { kind: 'elements'; statuses: number[] }
  /** Never answer the next request. */
  | { kind: 'hang' }
  /** Refuse the next token request with `invalid_grant` (a revoked or expired refresh token). */
  | { kind: 'invalid_grant' };

export interface LinkedInFakeOptions {
  clientId?: string;
  clientSecret?: string;
  /** Ad accounts of the authenticated member and the member's role on each. */
  adAccounts?: Array<{ id: string; role: string }>;
  /** Conversion rules LinkedIn knows; an event naming another rule is refused. */
  conversionRules?: Array<{ id: string; account: string; name?: string; enabled?: boolean; conversionMethod?: string }>;
  /** `LinkedIn-Version` values LinkedIn has sunset (answered 426). */
  sunsetVersions?: string[];
  /** Whether the app is approved for programmatic refresh tokens (default true). */
  refreshTokens?: boolean;
  /** LinkedIn's clock, for the 90-day limit (tests pass a fixed one). */
  now?: () => Date;
  port?: number;
}

/** A conversion event LinkedIn accepted. */
export interface AcceptedConversionEvent {
  conversion: string;
  conversionHappenedAt: number;
  eventId: string | null;
  userIds: Array<{ idType: string; idValue: string }>;
  userInfo: Record<string, string> | null;
  conversionValue: { currencyCode: string; amount: string } | null;
}

export interface LinkedInFake extends FakeServer<LinkedInPlan> {
  clientId: string;
  clientSecret: string;
  authorizeUrl: string;
  tokenUrl: string;
  /** Accepted events, once each (a resend with the same conversion and eventId is counted in `duplicates`). */
  events: AcceptedConversionEvent[];
  duplicates: number;
  /** Issues an access token as if the OAuth flow had run (for tests that start after the handoff). */
  issueAccessToken(): string;
  /** Revokes every access token (LinkedIn then answers 401). */
  revokeAccessTokens(): void;
  /** Issues a refresh token as if the OAuth flow had run (a year's life, as LinkedIn's programmatic refresh tokens). */
  issueRefreshToken(): string;
  /** Forgets every refresh token (the member revoked the app): the next refresh gets invalid_grant. */
  revokeRefreshTokens(): void;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

function linkedInError(status: number, message: string, code?: string, headers?: Record<string, string>): FakeAnswer {
  return { status, json: { status, message, ...(code ? { code } : {}) }, ...(headers ? { headers } : {}) };
}

function token(prefix: string): string {
  return `${prefix}_${randomBytes(18).toString('base64url')}`;
}

/** Problems of one element, as LinkedIn would state them; empty when LinkedIn would take it. */
function elementProblems(element: unknown, index: number, nowMs: number): string[] {
  const at = `/elements/${index}`;
  if (!isObject(element)) return [`${at} must be an object`];
  const problems: string[] = [];
  for (const key of Object.keys(element)) if (!ELEMENT_KEYS.has(key)) problems.push(`${at}/${key} is not a field of a conversion event`);
  if (typeof element.conversion !== 'string' || !CONVERSION_URN.test(element.conversion)) {
    problems.push(`${at}/conversion must be a urn:lla:llaPartnerConversion URN`);
  }
  const when = element.conversionHappenedAt;
  if (typeof when !== 'number' || !Number.isInteger(when) || when < 1e12) {
    problems.push(`${at}/conversionHappenedAt must be epoch milliseconds`);
  } else if (nowMs - when > MAX_AGE_MS) {
    problems.push(`${at}/conversionHappenedAt is more than 90 days ago`);
  } else if (when > nowMs + 60_000) {
    problems.push(`${at}/conversionHappenedAt is in the future`);
  }
  if (element.conversionValue !== undefined) {
    const value = element.conversionValue;
    if (!isObject(value) || typeof value.currencyCode !== 'string' || !/^[A-Z]{3}$/.test(value.currencyCode) || typeof value.amount !== 'string' || !/^[0-9]+(\.[0-9]+)?$/.test(value.amount)) {
      problems.push(`${at}/conversionValue must be {currencyCode: ISO 4217, amount: decimal string}`);
    }
  }
  if (element.eventId !== undefined && (typeof element.eventId !== 'string' || element.eventId.length === 0 || element.eventId.length > 64)) {
    problems.push(`${at}/eventId must be a string of 1 to 64 characters`);
  }
  const user = element.user;
  if (!isObject(user) || !Array.isArray(user.userIds)) return [...problems, `${at}/user/userIds is required`];
  for (const key of Object.keys(user)) if (!['userIds', 'userInfo'].includes(key)) problems.push(`${at}/user/${key} is not a field of user`);
  // userIds is required but may be empty when userInfo (first and last name) carries the match.
  if (user.userIds.length === 0 && user.userInfo === undefined) problems.push(`${at}/user/userIds needs at least one id, or userInfo with names`);
  user.userIds.forEach((id: unknown, i: number) => {
    const where = `${at}/user/userIds/${i}`;
    if (!isObject(id) || typeof id.idType !== 'string' || !ID_TYPES.has(id.idType) || typeof id.idValue !== 'string' || id.idValue === '') {
      problems.push(`${where} must be {idType, idValue} with a known idType`);
    } else if (id.idType === 'SHA256_EMAIL' && !/^[0-9a-f]{64}$/.test(id.idValue)) {
      problems.push(`${where}/idValue must be a lower-case SHA-256 hex of the email`);
    }
  });
  if (user.userInfo !== undefined) {
    const info = user.userInfo;
    if (!isObject(info)) problems.push(`${at}/user/userInfo must be an object`);
    else {
      for (const [key, value] of Object.entries(info)) {
        if (!USER_INFO_KEYS.has(key)) problems.push(`${at}/user/userInfo/${key} is not a field of userInfo`);
        else if (typeof value !== 'string' || value.trim() === '') problems.push(`${at}/user/userInfo/${key} must be a non-empty string`);
        else if ((key === 'firstName' || key === 'lastName') && [...value].length > 35) problems.push(`${at}/user/userInfo/${key} is longer than 35 characters`);
      }
      if (info.firstName === undefined || info.lastName === undefined) problems.push(`${at}/user/userInfo needs both firstName and lastName`);
    }
  }
  return problems;
}

/** Starts the fake on 127.0.0.1; point `CNV_LINKEDIN_API_BASE` and the two OAuth URL settings at it. */
export async function startLinkedInFake(options: LinkedInFakeOptions = {}): Promise<LinkedInFake> {
  const clientId = options.clientId ?? 'fake-linkedin-client';
  const clientSecret = options.clientSecret ?? 'fake-linkedin-secret';
  const now = options.now ?? (() => new Date());
  const adAccounts = options.adAccounts ?? [{ id: '507404993', role: 'ACCOUNT_MANAGER' }];
  const rules = options.conversionRules ?? [{ id: '104012', account: adAccounts[0]?.id ?? '507404993' }];
  const sunset = new Set(options.sunsetVersions ?? []);
  const accessTokens = new Set<string>();
  const refreshTokens = new Map<string, number>(); // token → expiry (ms)
  const codes = new Map<string, { redirectUri: string; challenge: string | null; scope: string }>();
  const accepted = new Map<string, AcceptedConversionEvent>();
  const state = { duplicates: 0 };

  const issueAccessToken = () => {
    const value = token('AQV');
    accessTokens.add(value);
    return value;
  };

  /** Header checks every versioned API call passes; an answer when LinkedIn would refuse the call. */
  const checkApiHeaders = (req: FakeRequest): FakeAnswer | null => {
    const auth = /^Bearer (.+)$/.exec(req.headers.authorization ?? '');
    if (!auth || !accessTokens.has(auth[1]!)) {
      req.problems.push('no valid Bearer access token');
      return linkedInError(401, 'Invalid access token', 'INVALID_ACCESS_TOKEN');
    }
    const version = req.headers['linkedin-version'];
    if (version === undefined || !/^20[0-9]{2}(0[1-9]|1[0-2])$/.test(version)) {
      req.problems.push('LinkedIn-Version header missing or not YYYYMM');
      return linkedInError(400, 'A version must be present in the LinkedIn-Version header as YYYYMM', 'VERSION_MISSING');
    }
    if (sunset.has(version)) {
      req.problems.push(`LinkedIn-Version ${version} is sunset`);
      return linkedInError(426, `Requested version ${version} is not active`, 'NONEXISTENT_VERSION');
    }
    if (req.headers['x-restli-protocol-version'] !== '2.0.0') {
      req.problems.push('X-Restli-Protocol-Version must be 2.0.0');
      return linkedInError(400, 'X-Restli-Protocol-Version 2.0.0 is required');
    }
    return null;
  };

  const conversionEvents = (req: FakeRequest, plan: LinkedInPlan | undefined): FakeAnswer => {
    if (req.method !== 'POST') return linkedInError(405, 'Method not allowed');
    const refused = checkApiHeaders(req);
    if (refused) return refused;
    if ((req.headers['x-restli-method'] ?? '').toUpperCase() !== 'BATCH_CREATE') {
      req.problems.push('X-RestLi-Method must be BATCH_CREATE for {elements: [...]}');
      return linkedInError(400, 'Batch create requires the X-RestLi-Method: BATCH_CREATE header');
    }
    if (!(req.headers['content-type'] ?? '').startsWith('application/json')) {
      req.problems.push('Content-Type must be application/json');
      return linkedInError(415, 'Content-Type must be application/json');
    }
    const body = req.body;
    if (!isObject(body) || !Array.isArray(body.elements) || Object.keys(body).length !== 1) {
      req.problems.push('body must be exactly {elements: [...]}');
      return linkedInError(400, 'Request body must be {"elements": [...]}');
    }
    const elements: unknown[] = body.elements;
    if (elements.length === 0 || elements.length > MAX_ELEMENTS) {
      req.problems.push(`elements must hold 1 to ${MAX_ELEMENTS} events`);
      return linkedInError(400, `A batch holds 1 to ${MAX_ELEMENTS} conversion events`);
    }
    const nowMs = now().getTime();
    const results = elements.map((element, index) => {
      const problems = elementProblems(element, index, nowMs);
      if (problems.length > 0) {
        req.problems.push(...problems);
        return { status: 400, error: { status: 400, code: 'INVALID_CONVERSION_EVENT', message: problems.join('; ') } };
      }
      const e = element as Record<string, any>;
      const ruleId = CONVERSION_URN.exec(e.conversion)![1]!;
      const rule = rules.find((r) => r.id === ruleId);
      if (!rule || rule.enabled === false || (rule.conversionMethod ?? 'CONVERSIONS_API') !== 'CONVERSIONS_API') {
        return { status: 422, error: { status: 422, code: 'INVALID_CONVERSION', message: `Conversion ${e.conversion} does not exist, is disabled, or is not a Conversions API rule` } };
      }
      const role = adAccounts.find((a) => a.id === rule.account)?.role;
      if (role === undefined || role === 'VIEWER') {
        return { status: 403, error: { status: 403, code: 'ACCESS_DENIED', message: `Not enough permissions on the ad account of ${e.conversion}` } };
      }
      const key = `${e.conversion}|${e.eventId ?? index + ':' + Math.random()}`;
      if (accepted.has(key)) state.duplicates += 1;
      else {
        accepted.set(key, {
          conversion: e.conversion,
          conversionHappenedAt: e.conversionHappenedAt,
          eventId: e.eventId ?? null,
          userIds: e.user.userIds,
          userInfo: e.user.userInfo ?? null,
          conversionValue: e.conversionValue ?? null,
        });
      }
      return { status: 201 };
    });
    if (plan?.kind === 'elements') {
      if (plan.statuses.length !== elements.length) req.problems.push('planned statuses do not match the number of elements');
      return {
        status: 200,
        json: { elements: plan.statuses.map((status) => (status >= 300 ? { status, error: { status, message: `Planned status ${status}` } } : { status })) },
      };
    }
    return { status: 200, json: { elements: results } };
  };

  const authorize = (req: FakeRequest): FakeAnswer => {
    const q = req.query;
    const redirect = q.get('redirect_uri');
    let redirectUrl: URL | null = null;
    try {
      redirectUrl = redirect ? new URL(redirect) : null;
    } catch {
      redirectUrl = null;
    }
    if (q.get('client_id') !== clientId || redirectUrl === null) {
      req.problems.push('authorize needs the app client_id and an absolute redirect_uri');
      return { status: 400, text: 'The redirect_uri does not match the registered value, or the client_id is unknown' };
    }
    const back = (params: Record<string, string>) => {
      const url = new URL(redirectUrl!);
      for (const [k, v] of Object.entries(params)) url.searchParams.set(k, v);
      const stateParam = q.get('state');
      if (stateParam !== null) url.searchParams.set('state', stateParam);
      return { status: 302, redirect: url.toString() } as const;
    };
    if (q.get('response_type') !== 'code') {
      req.problems.push('response_type must be code');
      return back({ error: 'unsupported_response_type', error_description: 'response_type must be code' });
    }
    const scopes = (q.get('scope') ?? '').split(/[ ,]+/).filter(Boolean);
    if (!scopes.includes('rw_conversions') || !scopes.includes('r_ads')) {
      req.problems.push('scope must include rw_conversions and r_ads');
      return back({ error: 'invalid_scope', error_description: 'rw_conversions and r_ads are required' });
    }
    const challenge = q.get('code_challenge');
    if (challenge !== null && q.get('code_challenge_method') !== 'S256') {
      req.problems.push('code_challenge_method must be S256');
      return back({ error: 'invalid_request', error_description: 'code_challenge_method must be S256' });
    }
    const code = token('AQT');
    codes.set(code, { redirectUri: redirect!, challenge, scope: scopes.join(',') });
    return back({ code });
  };

  const accessToken = (req: FakeRequest, plan: LinkedInPlan | undefined): FakeAnswer => {
    if (req.method !== 'POST' || !(req.headers['content-type'] ?? '').startsWith('application/x-www-form-urlencoded')) {
      req.problems.push('the token request must be a form-encoded POST');
      return { status: 400, json: { error: 'invalid_request', error_description: 'POST application/x-www-form-urlencoded' } };
    }
    const form: Record<string, string> = isObject(req.body) ? (req.body as Record<string, string>) : {};
    let id = form.client_id;
    let secret = form.client_secret;
    const basic = /^Basic (.+)$/.exec(req.headers.authorization ?? '');
    if (basic) {
      const [u, p] = Buffer.from(basic[1]!, 'base64').toString('utf8').split(':');
      id = decodeURIComponent(u ?? '');
      secret = decodeURIComponent(p ?? '');
    }
    if (id !== clientId || secret !== clientSecret) {
      req.problems.push('client authentication failed');
      return { status: 401, json: { error: 'invalid_client', error_description: 'Client authentication failed' } };
    }
    if (plan?.kind === 'invalid_grant') return { status: 400, json: { error: 'invalid_grant', error_description: 'The token is revoked or expired' } };
    const grant = (scope: string, refresh: string | null) => {
      const access = issueAccessToken();
      const json: Record<string, unknown> = { access_token: access, expires_in: ACCESS_TOKEN_TTL_S, scope };
      if (options.refreshTokens !== false) {
        const value = refresh ?? token('AQX');
        const expiry = refreshTokens.get(value) ?? now().getTime() + REFRESH_TOKEN_TTL_S * 1000;
        refreshTokens.set(value, expiry);
        json.refresh_token = value;
        json.refresh_token_expires_in = Math.max(0, Math.floor((expiry - now().getTime()) / 1000));
      }
      return { status: 200, json } as const;
    };
    if (form.grant_type === 'authorization_code') {
      const issued = form.code ? codes.get(form.code) : undefined;
      if (!issued || form.redirect_uri !== issued.redirectUri) {
        req.problems.push('unknown code or redirect_uri differs from the authorize request');
        return { status: 400, json: { error: 'invalid_grant', error_description: 'Authorization code is invalid or expired' } };
      }
      if (issued.challenge !== null) {
        const verifier = form.code_verifier ?? '';
        if (createHash('sha256').update(verifier).digest('base64url') !== issued.challenge) {
          req.problems.push('code_verifier does not match code_challenge');
          return { status: 400, json: { error: 'invalid_grant', error_description: 'PKCE verification failed' } };
        }
      }
      codes.delete(form.code!);
      return grant(issued.scope, null);
    }
    if (form.grant_type === 'refresh_token') {
      const expiry = form.refresh_token ? refreshTokens.get(form.refresh_token) : undefined;
      if (expiry === undefined || expiry <= now().getTime()) {
        return { status: 400, json: { error: 'invalid_grant', error_description: 'The refresh token is invalid or expired' } };
      }
      return grant('r_ads,rw_conversions', form.refresh_token!);
    }
    req.problems.push('grant_type must be authorization_code or refresh_token');
    return { status: 400, json: { error: 'unsupported_grant_type', error_description: 'Unsupported grant_type' } };
  };

  const adAccountUsers = (req: FakeRequest): FakeAnswer => {
    const refused = checkApiHeaders(req);
    if (refused) return refused;
    if (req.query.get('q') !== 'authenticatedUser') return linkedInError(400, 'q=authenticatedUser is required');
    const elements = adAccounts.map((a) => ({ account: `urn:li:sponsoredAccount:${a.id}`, role: a.role, user: 'urn:li:person:fake' }));
    return { status: 200, json: { elements, paging: { start: 0, count: elements.length, links: [] } } };
  };

  const conversions = (req: FakeRequest): FakeAnswer => {
    const refused = checkApiHeaders(req);
    if (refused) return refused;
    const account = /^urn:li:sponsoredAccount:([0-9]+)$/.exec(req.query.get('account') ?? '');
    if (req.query.get('q') !== 'account' || !account) return linkedInError(400, 'q=account and an account URN are required');
    if (!adAccounts.some((a) => a.id === account[1])) return linkedInError(403, 'Not enough permissions to access the ad account', 'ACCESS_DENIED');
    const elements = rules
      .filter((r) => r.account === account[1])
      .map((r) => ({
        id: Number(r.id),
        name: r.name ?? `Rule ${r.id}`,
        account: `urn:li:sponsoredAccount:${r.account}`,
        conversionMethod: r.conversionMethod ?? 'CONVERSIONS_API',
        enabled: r.enabled ?? true,
        type: 'SIGN_UP',
      }));
    return { status: 200, json: { elements, paging: { start: 0, count: elements.length, links: [] } } };
  };

  const server = await startFakeServer<LinkedInPlan>(
    'linkedin',
    (req, plan) => {
      if (plan?.kind === 'hang') return 'hang';
      if (plan?.kind === 'http') {
        const headers = plan.retryAfter === undefined ? undefined : { 'retry-after': plan.retryAfter };
        return linkedInError(plan.status, plan.message ?? `Planned status ${plan.status}`, plan.code, headers);
      }
      switch (req.path) {
        case LINKEDIN_CONVERSION_EVENTS_PATH:
          return conversionEvents(req, plan);
        case LINKEDIN_AUTHORIZE_PATH:
          return authorize(req);
        case LINKEDIN_TOKEN_PATH:
          return accessToken(req, plan);
        case '/rest/adAccountUsers':
          return adAccountUsers(req);
        case '/rest/conversions':
          return conversions(req);
        default:
          req.problems.push(`LinkedIn has no ${req.method} ${req.path}`);
          return linkedInError(404, 'Resource not found');
      }
    },
    options.port === undefined ? {} : { port: options.port },
  );

  // A literal (not Object.assign) so the getters stay live.
  return {
    ...server,
    clientId,
    clientSecret,
    authorizeUrl: `${server.url}${LINKEDIN_AUTHORIZE_PATH}`,
    tokenUrl: `${server.url}${LINKEDIN_TOKEN_PATH}`,
    get events() {
      return [...accepted.values()];
    },
    get duplicates() {
      return state.duplicates;
    },
    issueAccessToken,
    revokeAccessTokens() {
      accessTokens.clear();
    },
    issueRefreshToken() {
      const value = token('AQX');
      refreshTokens.set(value, now().getTime() + REFRESH_TOKEN_TTL_S * 1000);
      return value;
    },
    revokeRefreshTokens() {
      refreshTokens.clear();
    },
  };
}
