/**
 * A strict local fake of Google for tests and the demo, on one server: the OAuth 2.0 endpoints (authorize with PKCE,
 * token: authorization_code and refresh_token) and the Data Manager API (`POST /v1/events:ingest`,
 * `GET /v1/requestStatus:retrieve`). It checks requests as Google documents them
 * (https://developers.google.com/data-manager/api/reference/rest/v1/events/ingest, .../get-started/formatting,
 * .../limits) and answers as Google does: `{requestId}` on success, the fail-fast google.rpc error naming the bad
 * event otherwise (https://developers.google.com/data-manager/api/devguides/concepts/understand-errors).
 *
 * Planned answers (`respondWith`) are taken by the next Data Manager API request (`/v1/…`), so a token refresh on the
 * way does not use one up; `tokenServerError` alone is taken by the token endpoint.
 */
import { createHash, randomUUID } from 'node:crypto';
import { startFakeServer, type FakeAnswer, type FakeRequest, type FakeServer } from './fake-server';

/** One planned answer, for the next request. */
export type FakeGooglePlan =
  | { kind: 'serverError'; status?: number }
  /** The token endpoint answers this 5xx once. */
  | { kind: 'tokenServerError'; status?: number }
  | { kind: 'rateLimited'; retryAfterSeconds?: number }
  /** Never answers until the fake closes: a timeout for the client. */
  | { kind: 'hang' }
  /** Takes the request as usual but holds the answer until `until` settles (a test acts while a send is in flight). */
  | { kind: 'hold'; until: Promise<unknown> }
  /** Fails the whole ingest request with INVALID_ARGUMENT naming event `index` (default 0) with `reason`. */
  | { kind: 'eventError'; reason: string; index?: number; field?: string }
  /** Fails the whole ingest request with INVALID_ARGUMENT and no event named. */
  | { kind: 'unattributedError'; reason?: string }
  /** Fails the whole ingest request with an account-level error, e.g. 400 TERMS_AND_CONDITIONS_NOT_SIGNED. */
  | { kind: 'requestError'; status: number; grpcStatus: string; reason: string; message?: string };

/** An event the fake accepted, with where it went. */
export interface IngestedEvent {
  requestId: string;
  destination: { operatingAccountId: string; loginAccountId: string | null; productDestinationId: string };
  event: Record<string, any>;
}

export interface FakeGoogle {
  server: FakeServer<FakeGooglePlan>;
  url: string;
  /** Values for the settings: CNV_GOOGLE_OAUTH_AUTHORIZE_URL, CNV_GOOGLE_OAUTH_TOKEN_URL, CNV_GOOGLE_DATA_MANAGER_API_BASE. */
  urls: { authorize: string; token: string; apiBase: string };
  /** The OAuth client the fake accepts (CNV_GOOGLE_OAUTH_CLIENT_ID / _SECRET). */
  client: { id: string; secret: string };
  /** Events accepted by non-validate-only requests, oldest first (a repeated transaction id is kept once). */
  ingested(): IngestedEvent[];
  /**
   * Adjustments: events whose transactionId matched one already recorded for the same conversion action and that
   * changed conversionValue or currency, which Google overwrites ("Conversion adjustments", Data Manager API).
   */
  adjusted(): IngestedEvent[];
  /** Issues an access token directly (no HTTP), for tests that need a valid bearer token; of the Data Manager scope unless told. */
  issueAccessToken(scope?: string): { accessToken: string; expiresAt: Date };
  /**
   * Issues a refresh token directly (no consent screen), for tests that seed a connection; of the Data Manager scope
   * unless told, issued to this fake's client unless `issuedTo` names another.
   */
  issueRefreshToken(scope?: string, issuedTo?: string): string;
  /**
   * The scopes of a live access token this fake issued, or null (unknown, expired, revoked): what Google's API front
   * end checks. The legacy Google Ads API fake (fake-google-ads.ts) is given it to check its own scope.
   */
  scopesOf(accessToken: string): readonly string[] | null;
  /** Revokes every access token issued so far before its expiry (Google then answers 401 UNAUTHENTICATED). */
  revokeAccessTokens(): void;
  /** From now on every refresh token issued so far is answered `invalid_grant`. */
  revokeRefreshTokens(): void;
  /** Sets the fake's clock (tokens expire against it). */
  setNow(now: Date): void;
  close(): Promise<void>;
}

const DATAMANAGER_SCOPE = 'https://www.googleapis.com/auth/datamanager';
const DOMAIN = 'datamanager.googleapis.com';
const RFC3339 = /^\d{4}-(0[1-9]|1[0-2])-(0[1-9]|[12]\d|3[01])T([01]\d|2[0-3]):[0-5]\d:[0-5]\d(\.\d{1,9})?(Z|[+-]([01]\d|2[0-3]):[0-5]\d)$/;
const HEX_SHA256 = /^[0-9a-fA-F]{64}$/;
const REQUEST_FIELDS = new Set(['destinations', 'events', 'consent', 'validateOnly', 'encoding', 'encryptionInfo']);
const DESTINATION_FIELDS = new Set(['reference', 'loginAccount', 'linkedAccount', 'operatingAccount', 'productDestinationId']);
const ACCOUNT_FIELDS = new Set(['accountType', 'product', 'accountId']);
const ACCOUNT_TYPES = new Set(['GOOGLE_ADS', 'DISPLAY_VIDEO_PARTNER', 'DISPLAY_VIDEO_ADVERTISER', 'DATA_PARTNER']);
const EVENT_FIELDS = new Set([
  'destinationReferences', 'transactionId', 'eventTimestamp', 'lastUpdatedTimestamp', 'userData', 'consent', 'adIdentifiers',
  'currency', 'conversionValue', 'eventSource', 'eventDeviceInfo', 'cartData', 'customVariables', 'experimentalFields', 'userProperties',
]);
const AD_IDENTIFIER_FIELDS = new Set(['sessionAttributes', 'gclid', 'gbraid', 'wbraid', 'landingPageDeviceInfo']);
const CONSENT_FIELDS = new Set(['adUserData', 'adPersonalization']);
const CONSENT_VALUES = new Set(['CONSENT_STATUS_UNSPECIFIED', 'CONSENT_GRANTED', 'CONSENT_DENIED']);
const EVENT_SOURCES = new Set(['WEB', 'APP', 'IN_STORE', 'PHONE', 'OTHER']);
const MAX_EVENTS = 2000;
const MAX_DESTINATIONS = 10;
const MAX_IDENTIFIERS = 10;

type Violation = { field: string; description: string; reason: string };

function googleError(status: number, grpcStatus: string, message: string, reason: string, violations: Violation[] = [], extra: unknown[] = []): FakeAnswer {
  const details: unknown[] = [{ '@type': 'type.googleapis.com/google.rpc.ErrorInfo', reason, domain: DOMAIN }];
  if (violations.length > 0) details.push({ '@type': 'type.googleapis.com/google.rpc.BadRequest', fieldViolations: violations });
  details.push(...extra, { '@type': 'type.googleapis.com/google.rpc.RequestInfo', requestId: randomUUID() });
  return { status, json: { error: { code: status, message, status: grpcStatus, details } } };
}

/**
 * A token without the API's scope: 403 PERMISSION_DENIED with ErrorInfo reason ACCESS_TOKEN_SCOPE_INSUFFICIENT in the
 * domain googleapis.com (google/api/error_reason.proto, ErrorReason 17, whose example this follows), as Google's API
 * front end answers for every API. Also the legacy Google Ads API fake's answer (fake-google-ads.ts).
 */
export function insufficientScope(service: string): FakeAnswer {
  return {
    status: 403,
    json: {
      error: {
        code: 403,
        message: 'Request had insufficient authentication scopes.',
        status: 'PERMISSION_DENIED',
        details: [{ '@type': 'type.googleapis.com/google.rpc.ErrorInfo', reason: 'ACCESS_TOKEN_SCOPE_INSUFFICIENT', domain: 'googleapis.com', metadata: { service } }],
      },
    },
  };
}

function isObject(value: unknown): value is Record<string, any> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function unknownFields(value: Record<string, unknown>, allowed: Set<string>, path: string, out: Violation[]): void {
  for (const key of Object.keys(value)) {
    if (!allowed.has(key)) out.push({ field: path ? `${path}.${key}` : key, description: `Invalid JSON payload received. Unknown name "${key}": Cannot find field.`, reason: 'INVALID_ARGUMENT' });
  }
}

function checkAccount(value: unknown, path: string, out: Violation[]): void {
  if (!isObject(value)) return void out.push({ field: path, description: 'must be a ProductAccount', reason: 'INVALID_DESTINATION' });
  unknownFields(value, ACCOUNT_FIELDS, path, out);
  const type = value.accountType ?? value.product;
  if (!ACCOUNT_TYPES.has(type)) out.push({ field: `${path}.accountType`, description: 'accountType is required', reason: 'INVALID_DESTINATION' });
  if (typeof value.accountId !== 'string' || !/^\d+$/.test(value.accountId)) {
    out.push({ field: `${path}.accountId`, description: 'accountId must be the account id without dashes', reason: 'INVALID_DESTINATION' });
  }
}

/** Every problem Google's basic validation would find in an IngestEventsRequest. */
export function validateIngestBody(body: unknown): Violation[] {
  const out: Violation[] = [];
  if (!isObject(body)) return [{ field: '', description: 'the body must be a JSON object', reason: 'INVALID_ARGUMENT' }];
  unknownFields(body, REQUEST_FIELDS, '', out);
  const destinations = body.destinations;
  if (!Array.isArray(destinations) || destinations.length === 0) out.push({ field: 'destinations', description: 'at least one destination is required', reason: 'REQUIRED_FIELD_MISSING' });
  else if (destinations.length > MAX_DESTINATIONS) out.push({ field: 'destinations', description: 'at most 10 destinations', reason: 'TOO_MANY_DESTINATIONS' });
  else {
    destinations.forEach((d: unknown, i: number) => {
      const path = `destinations[${i}]`;
      if (!isObject(d)) return void out.push({ field: path, description: 'must be a Destination', reason: 'INVALID_DESTINATION' });
      unknownFields(d, DESTINATION_FIELDS, path, out);
      checkAccount(d.operatingAccount, `${path}.operatingAccount`, out);
      if (d.loginAccount !== undefined) checkAccount(d.loginAccount, `${path}.loginAccount`, out);
      if (typeof d.productDestinationId !== 'string' || !/^\d+$/.test(d.productDestinationId)) {
        out.push({ field: `${path}.productDestinationId`, description: 'productDestinationId must be the conversion action id', reason: 'INVALID_CONVERSION_ACTION_ID' });
      }
    });
  }
  if (body.encoding !== undefined && body.encoding !== 'HEX' && body.encoding !== 'BASE64') out.push({ field: 'encoding', description: 'unknown encoding', reason: 'INVALID_ENUM_VALUE' });
  if (body.validateOnly !== undefined && typeof body.validateOnly !== 'boolean') out.push({ field: 'validateOnly', description: 'must be a boolean', reason: 'INVALID_ARGUMENT' });
  checkConsent(body.consent, 'consent', out);
  const events = body.events;
  if (!Array.isArray(events) || events.length === 0) {
    out.push({ field: 'events', description: 'at least one event is required', reason: 'REQUIRED_FIELD_MISSING' });
    return out;
  }
  if (events.length > MAX_EVENTS) {
    out.push({ field: 'events', description: `at most ${MAX_EVENTS} events per request`, reason: 'TOO_MANY_EVENTS' });
    return out;
  }
  events.forEach((event: unknown, i: number) => checkEvent(event, `events[${i}]`, body.encoding, out));
  return out;
}

function checkConsent(value: unknown, path: string, out: Violation[]): void {
  if (value === undefined) return;
  if (!isObject(value)) return void out.push({ field: path, description: 'must be a Consent', reason: 'INVALID_ARGUMENT' });
  unknownFields(value, CONSENT_FIELDS, path, out);
  for (const key of CONSENT_FIELDS) {
    if (value[key] !== undefined && !CONSENT_VALUES.has(value[key])) out.push({ field: `${path}.${key}`, description: 'unknown consent status', reason: 'INVALID_ENUM_VALUE' });
  }
}

function checkEvent(event: unknown, path: string, encoding: unknown, out: Violation[]): void {
  if (!isObject(event)) return void out.push({ field: path, description: 'must be an Event', reason: 'INVALID_EVENT' });
  unknownFields(event, EVENT_FIELDS, path, out);
  if (typeof event.eventTimestamp !== 'string' || !RFC3339.test(event.eventTimestamp)) {
    out.push({ field: `${path}.eventTimestamp`, description: 'eventTimestamp must be an RFC 3339 timestamp', reason: 'INVALID_FORMAT' });
  }
  if (event.transactionId !== undefined && (typeof event.transactionId !== 'string' || event.transactionId === '')) {
    out.push({ field: `${path}.transactionId`, description: 'transactionId must be a non-empty string', reason: 'INVALID_FORMAT' });
  }
  if (event.eventSource !== undefined && !EVENT_SOURCES.has(event.eventSource)) out.push({ field: `${path}.eventSource`, description: 'unknown event source', reason: 'INVALID_ENUM_VALUE' });
  // Event.conversion_value is a double; Event.currency "the currency code associated with all monetary values".
  if (event.conversionValue !== undefined && (typeof event.conversionValue !== 'number' || !Number.isFinite(event.conversionValue) || event.conversionValue < 0)) {
    out.push({ field: `${path}.conversionValue`, description: 'conversionValue must be a number of at least 0', reason: 'INVALID_FORMAT' });
  }
  if (event.currency !== undefined && (typeof event.currency !== 'string' || !/^[A-Z]{3}$/.test(event.currency))) {
    out.push({ field: `${path}.currency`, description: 'currency must be an ISO 4217 code', reason: 'INVALID_CURRENCY_CODE' });
  }
  checkConsent(event.consent, `${path}.consent`, out);
  let adIds = 0;
  if (event.adIdentifiers !== undefined) {
    if (!isObject(event.adIdentifiers)) out.push({ field: `${path}.adIdentifiers`, description: 'must be AdIdentifiers', reason: 'INVALID_FORMAT' });
    else {
      unknownFields(event.adIdentifiers, AD_IDENTIFIER_FIELDS, `${path}.adIdentifiers`, out);
      for (const key of ['gclid', 'gbraid', 'wbraid']) {
        const value = event.adIdentifiers[key];
        if (value === undefined) continue;
        if (typeof value !== 'string' || value.trim() === '') out.push({ field: `${path}.adIdentifiers.${key}`, description: 'must be a non-empty string', reason: 'INVALID_FORMAT' });
        adIds += 1;
      }
      if (adIds > 1) out.push({ field: `${path}.adIdentifiers`, description: 'set only one of gclid, gbraid, wbraid', reason: 'INVALID_EVENT' });
    }
  }
  let userIds = 0;
  if (event.userData !== undefined) {
    const list = isObject(event.userData) ? event.userData.userIdentifiers : undefined;
    if (isObject(event.userData)) unknownFields(event.userData, new Set(['userIdentifiers']), `${path}.userData`, out);
    if (!Array.isArray(list) || list.length === 0) out.push({ field: `${path}.userData.userIdentifiers`, description: 'at least one identifier is required', reason: 'REQUIRED_FIELD_MISSING' });
    else if (list.length > MAX_IDENTIFIERS) out.push({ field: `${path}.userData.userIdentifiers`, description: 'at most 10 identifiers', reason: 'TOO_MANY_USER_IDENTIFIERS' });
    else {
      if (encoding === undefined) out.push({ field: 'encoding', description: 'encoding is required for UserData uploads', reason: 'REQUIRED_FIELD_MISSING' });
      list.forEach((identifier: unknown, j: number) => {
        const idPath = `${path}.userData.userIdentifiers[${j}]`;
        if (!isObject(identifier)) return void out.push({ field: idPath, description: 'must be a UserIdentifier', reason: 'INVALID_FORMAT' });
        const keys = Object.keys(identifier);
        if (keys.length !== 1 || !['emailAddress', 'phoneNumber', 'address'].includes(keys[0]!)) {
          return void out.push({ field: idPath, description: 'exactly one of emailAddress, phoneNumber, address', reason: 'INVALID_FORMAT' });
        }
        userIds += 1;
        const key = keys[0]!;
        if (key === 'address') {
          const a = identifier.address;
          for (const part of ['givenName', 'familyName', 'regionCode', 'postalCode']) {
            if (!isObject(a) || typeof a[part] !== 'string' || a[part] === '') out.push({ field: `${idPath}.address.${part}`, description: `${part} is required`, reason: 'REQUIRED_FIELD_MISSING' });
          }
          return;
        }
        const value = identifier[key];
        if (encoding === 'HEX' && (typeof value !== 'string' || !HEX_SHA256.test(value))) {
          out.push({ field: `${idPath}.${key}`, description: 'must be a hex-encoded SHA-256 hash', reason: 'INVALID_SHA256_FORMAT' });
        }
      });
    }
  }
  if (adIds === 0 && userIds === 0) out.push({ field: path, description: 'the event has no user identifiers or ad identifiers', reason: 'NO_IDENTIFIERS_PROVIDED' });
}

function base64urlSha256(value: string): string {
  return createHash('sha256').update(value, 'ascii').digest('base64url');
}

/** Starts the fake on 127.0.0.1; `now` is its clock (defaults to the wall clock, for the demo). */
export interface FakeGoogleOptions {
  port?: number;
  now?: Date;
  accessTokenLifetimeSeconds?: number;
  clientId?: string;
  clientSecret?: string;
  /**
   * The conversion actions of each Google Ads account (its id without dashes): when given, a destination naming an
   * account or conversion action not listed fails the request as Google fails it for a conversion action it does not
   * know (INVALID_CONVERSION_ACTION_ID, naming the destination's productDestinationId). Without it any id is taken.
   */
  conversionActions?: Readonly<Record<string, readonly string[]>>;
}

/** The destinations whose conversion action the account does not have, as violations (see FakeGoogleOptions). */
function unknownConversionActions(body: Record<string, any>, known: Readonly<Record<string, readonly string[]>>): Violation[] {
  return (body.destinations as Record<string, any>[]).flatMap((d, i) =>
    (known[d.operatingAccount.accountId] ?? []).includes(d.productDestinationId)
      ? []
      : [{
          field: `destinations[${i}].productDestinationId`,
          description: `conversion action ${d.productDestinationId} not found in account ${d.operatingAccount.accountId}`,
          reason: 'INVALID_CONVERSION_ACTION_ID',
        }],
  );
}

export async function startFakeGoogle(options: FakeGoogleOptions = {}): Promise<FakeGoogle> {
  const client = { id: options.clientId ?? 'cnv-fake-google-client', secret: options.clientSecret ?? 'cnv-fake-google-secret' };
  const lifetime = options.accessTokenLifetimeSeconds ?? 3599;
  let fixedNow = options.now ?? null;
  const now = () => fixedNow ?? new Date();
  let counter = 0;
  const codes = new Map<string, { challenge: string; redirectUri: string; scope: string; used: boolean }>();
  /** Each refresh token with the OAuth client it was issued to (Google refuses it to any other: `unauthorized_client`). */
  const refreshTokens = new Map<string, { revoked: boolean; scope: string; clientId: string }>();
  const accessTokens = new Map<string, { expiresAt: Date; scope: string }>();
  const accepted: IngestedEvent[] = [];
  const seenTransactions = new Map<string, IngestedEvent>();
  const adjustments: IngestedEvent[] = [];
  const requestStatus = new Map<string, { destinations: unknown[]; records: number; duplicates: number }>();

  const issueAccessToken = (scope: string = DATAMANAGER_SCOPE) => {
    counter += 1;
    const accessToken = `ya29.fake-${counter}-${randomUUID()}`;
    const expiresAt = new Date(now().getTime() + lifetime * 1000);
    accessTokens.set(accessToken, { expiresAt, scope });
    return { accessToken, expiresAt };
  };
  const scopesOf = (accessToken: string): readonly string[] | null => {
    const held = accessTokens.get(accessToken);
    return held && held.expiresAt.getTime() > now().getTime() ? held.scope.split(' ').filter(Boolean) : null;
  };

  function authorize(request: FakeRequest): FakeAnswer {
    const q = request.query;
    const problems: string[] = [];
    if (q.get('client_id') !== client.id) problems.push('client_id is not this OAuth client');
    if (q.get('response_type') !== 'code') problems.push("response_type must be 'code'");
    if (!(q.get('scope') ?? '').split(' ').includes(DATAMANAGER_SCOPE)) problems.push(`scope must include ${DATAMANAGER_SCOPE}`);
    if (!q.get('code_challenge') || q.get('code_challenge_method') !== 'S256') problems.push('a PKCE code_challenge with code_challenge_method=S256 is required');
    const redirectUri = q.get('redirect_uri');
    if (!redirectUri) problems.push('redirect_uri is required');
    if (problems.length > 0 || !redirectUri) {
      request.problems.push(...problems);
      return { status: 400, text: `Error 400: invalid_request. ${problems.join('; ')}` };
    }
    // The user consents at once.
    const code = `4/fake-code-${randomUUID()}`;
    codes.set(code, { challenge: q.get('code_challenge')!, redirectUri, scope: q.get('scope')!, used: false });
    const target = new URL(redirectUri);
    target.searchParams.set('code', code);
    if (q.get('state') !== null) target.searchParams.set('state', q.get('state')!);
    target.searchParams.set('scope', q.get('scope')!);
    return { status: 302, redirect: target.toString() };
  }

  function tokenError(request: FakeRequest, status: number, error: string, description: string): FakeAnswer {
    if (error !== 'invalid_grant') request.problems.push(`${error}: ${description}`);
    return { status, json: { error, error_description: description } };
  }

  function token(request: FakeRequest): FakeAnswer {
    if (!(request.headers['content-type'] ?? '').startsWith('application/x-www-form-urlencoded')) {
      return tokenError(request, 400, 'invalid_request', 'the body must be application/x-www-form-urlencoded');
    }
    const form = (request.body ?? {}) as Record<string, string>;
    if (form.client_id !== client.id || form.client_secret !== client.secret) return tokenError(request, 401, 'invalid_client', 'Unauthorized');
    if (form.grant_type === 'authorization_code') {
      const entry = form.code ? codes.get(form.code) : undefined;
      if (!entry || entry.used) return tokenError(request, 400, 'invalid_grant', 'Malformed auth code.');
      if (form.redirect_uri !== entry.redirectUri) return tokenError(request, 400, 'redirect_uri_mismatch', 'Bad Request');
      if (!form.code_verifier || base64urlSha256(form.code_verifier) !== entry.challenge) return tokenError(request, 400, 'invalid_grant', 'Invalid code verifier.');
      entry.used = true;
      const refreshToken = `1//fake-refresh-${randomUUID()}`;
      refreshTokens.set(refreshToken, { revoked: false, scope: entry.scope, clientId: client.id });
      const { accessToken } = issueAccessToken(entry.scope);
      return { status: 200, json: { access_token: accessToken, expires_in: lifetime, refresh_token: refreshToken, scope: entry.scope, token_type: 'Bearer' } };
    }
    if (form.grant_type === 'refresh_token') {
      const entry = form.refresh_token ? refreshTokens.get(form.refresh_token) : undefined;
      if (!entry || entry.revoked) return tokenError(request, 400, 'invalid_grant', 'Token has been expired or revoked.');
      // A refresh token issued to another OAuth client (the service's client was replaced since): Google answers 401
      // `unauthorized_client` "Unauthorized" (as quoted in googleapis and ruby-oauth issues), not `invalid_grant`.
      if (entry.clientId !== form.client_id) return tokenError(request, 401, 'unauthorized_client', 'Unauthorized');
      // RFC 6749 §6: a refresh may name a scope, but none the grant did not have (Google answers invalid_scope).
      const asked = (form.scope ?? '').split(' ').filter(Boolean);
      const granted = entry.scope.split(' ');
      const beyond = asked.filter((scope) => !granted.includes(scope));
      if (beyond.length > 0) return tokenError(request, 400, 'invalid_scope', `Some requested scopes were invalid: ${beyond.join(' ')} was not granted.`);
      const scope = asked.length > 0 ? asked.join(' ') : entry.scope;
      const { accessToken } = issueAccessToken(scope);
      return { status: 200, json: { access_token: accessToken, expires_in: lifetime, scope, token_type: 'Bearer' } };
    }
    return tokenError(request, 400, 'unsupported_grant_type', `Invalid grant_type: ${form.grant_type ?? ''}`);
  }

  function bearerProblem(request: FakeRequest): FakeAnswer | null {
    const match = /^Bearer (\S+)$/.exec(request.headers.authorization ?? '');
    const scopes = match ? scopesOf(match[1]!) : null;
    if (scopes === null) {
      request.problems.push(match ? 'the access token is unknown or expired' : 'no bearer access token');
      return googleError(401, 'UNAUTHENTICATED', 'Request had invalid authentication credentials. Expected OAuth 2 access token.', 'ACCESS_TOKEN_EXPIRED');
    }
    if (scopes.includes(DATAMANAGER_SCOPE)) return null;
    request.problems.push(`the access token lacks the scope ${DATAMANAGER_SCOPE}`);
    return insufficientScope('datamanager.googleapis.com');
  }

  function planned(plan: FakeGooglePlan | undefined, request: FakeRequest): FakeAnswer | null {
    if (!plan) return null;
    switch (plan.kind) {
      case 'hold':
        return null;
      case 'hang':
        return 'hang';
      case 'serverError':
      case 'tokenServerError':
        return googleError(plan.status ?? 500, (plan.status ?? 500) === 503 ? 'UNAVAILABLE' : 'INTERNAL', 'Internal error encountered.', 'INTERNAL_ERROR');
      case 'rateLimited':
        return {
          ...(googleError(429, 'RESOURCE_EXHAUSTED', 'Quota exceeded.', 'RESOURCE_EXHAUSTED', [], [
            { '@type': 'type.googleapis.com/google.rpc.RetryInfo', retryDelay: `${plan.retryAfterSeconds ?? 30}s` },
          ]) as Exclude<FakeAnswer, 'hang'>),
          headers: { 'retry-after': String(plan.retryAfterSeconds ?? 30) },
        };
      case 'requestError':
        return googleError(plan.status, plan.grpcStatus, plan.message ?? `Request failed: ${plan.reason}.`, plan.reason);
      case 'unattributedError':
        return googleError(400, 'INVALID_ARGUMENT', 'Request contains an invalid argument.', plan.reason ?? 'INVALID_ARGUMENT');
      case 'eventError': {
        if (request.path !== '/v1/events:ingest') return null;
        const index = plan.index ?? 0;
        const field = `events[${index}]${plan.field ? `.${plan.field}` : ''}`;
        return googleError(400, 'INVALID_ARGUMENT', 'Request contains an invalid argument.', plan.reason, [{ field, description: `planned ${plan.reason}`, reason: plan.reason }]);
      }
    }
  }

  function ingest(request: FakeRequest, plan: FakeGooglePlan | undefined): FakeAnswer {
    const unauthenticated = bearerProblem(request);
    if (unauthenticated) return unauthenticated;
    if (!(request.headers['content-type'] ?? '').startsWith('application/json')) {
      request.problems.push('the body must be application/json');
      return googleError(400, 'INVALID_ARGUMENT', 'Invalid JSON payload received.', 'INVALID_ARGUMENT');
    }
    const violations = validateIngestBody(request.body);
    if (violations.length === 0 && options.conversionActions) violations.push(...unknownConversionActions(request.body as Record<string, any>, options.conversionActions));
    if (violations.length > 0) {
      request.problems.push(...violations.map((v) => `${v.field}: ${v.description}`));
      // The first violation's reason is the request's ErrorInfo reason, as with a fail-fast answer.
      return googleError(400, 'INVALID_ARGUMENT', 'Request contains an invalid argument.', violations[0]!.reason, violations);
    }
    const fromPlan = planned(plan, request);
    if (fromPlan) return fromPlan;
    const body = request.body as Record<string, any>;
    if (body.validateOnly === true) return { status: 200, json: {} }; // only errors are returned, not results
    const requestId = randomUUID();
    let duplicates = 0;
    for (const d of body.destinations as Record<string, any>[]) {
      for (const event of body.events as Record<string, any>[]) {
        const key = `${d.operatingAccount.accountId}/${d.productDestinationId}/${event.transactionId ?? randomUUID()}`;
        const destination = { operatingAccountId: d.operatingAccount.accountId, loginAccountId: d.loginAccount?.accountId ?? null, productDestinationId: d.productDestinationId };
        const recorded = seenTransactions.get(key);
        if (recorded) {
          if (event.conversionValue !== undefined && (event.conversionValue !== recorded.event.conversionValue || event.currency !== recorded.event.currency)) {
            // A matched transactionId with new values is an adjustment: conversionValue and currency are overwritten.
            adjustments.push({ requestId, destination, event });
            recorded.event = { ...recorded.event, conversionValue: event.conversionValue, currency: event.currency };
          } else duplicates += 1;
          continue;
        }
        const entry = { requestId, destination, event };
        seenTransactions.set(key, entry);
        accepted.push(entry);
      }
    }
    requestStatus.set(requestId, { destinations: body.destinations, records: body.events.length, duplicates });
    return { status: 200, json: { requestId } };
  }

  function retrieve(request: FakeRequest): FakeAnswer {
    const unauthenticated = bearerProblem(request);
    if (unauthenticated) return unauthenticated;
    const status = requestStatus.get(request.query.get('requestId') ?? '');
    if (!status) return googleError(400, 'INVALID_ARGUMENT', 'The request ID is not valid.', 'INVALID_REQUEST_ID');
    return {
      status: 200,
      json: {
        requestStatusPerDestination: status.destinations.map((destination) => ({
          destination,
          requestStatus: status.duplicates > 0 ? 'PARTIAL_SUCCESS' : 'SUCCESS',
          ...(status.duplicates > 0
            ? { errorInfo: { errorCounts: [{ recordCount: String(status.duplicates), reason: 'PROCESSING_ERROR_REASON_DUPLICATE_TRANSACTION_ID' }] } }
            : {}),
          eventsIngestionStatus: { recordCount: String(status.records) },
        })),
      },
    };
  }

  const server = await startFakeServer<FakeGooglePlan>(
    'google',
    (request, plan) => {
      if (request.method === 'GET' && request.path === '/o/oauth2/v2/auth') return authorize(request);
      if (request.method === 'POST' && request.path === '/token') return planned(plan, request) ?? token(request);
      if (request.method === 'POST' && request.path === '/v1/events:ingest') {
        if (plan?.kind === 'hold') return plan.until.then(() => ingest(request, undefined), () => ingest(request, undefined));
        return ingest(request, plan);
      }
      if (request.method === 'GET' && request.path === '/v1/requestStatus:retrieve') return planned(plan, request) ?? retrieve(request);
      request.problems.push(`no such endpoint: ${request.method} ${request.path}`);
      return googleError(404, 'NOT_FOUND', `The requested URL ${request.path} was not found.`, 'NOT_FOUND');
    },
    {
      ...(options.port === undefined ? {} : { port: options.port }),
      // Planned answers are for the Data Manager API, except `tokenServerError`: a token refresh on the way takes no other.
      takesPlan: (request, plan) => (plan.kind === 'tokenServerError' ? request.path === '/token' : request.path.startsWith('/v1/')),
    },
  );

  return {
    server,
    url: server.url,
    urls: { authorize: `${server.url}/o/oauth2/v2/auth`, token: `${server.url}/token`, apiBase: server.url },
    client,
    ingested: () => accepted.map((e) => ({ ...e })),
    adjusted: () => adjustments.slice(),
    issueAccessToken,
    issueRefreshToken(scope = DATAMANAGER_SCOPE, issuedTo = client.id) {
      const token = `1//fake-refresh-${randomUUID()}`;
      refreshTokens.set(token, { revoked: false, scope, clientId: issuedTo });
      return token;
    },
    scopesOf,
    revokeRefreshTokens() {
      for (const entry of refreshTokens.values()) entry.revoked = true;
    },
    revokeAccessTokens() {
      accessTokens.clear();
    },
    setNow(value) {
      fixedNow = value;
    },
    close: () => server.close(),
  };
}
