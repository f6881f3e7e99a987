/**
 * A local fake of the Google Ads API's click conversion upload (the legacy path), for the delivery worker's tests.
 * Built on the fakes' harness (./fakes/fake-server.ts): a real HTTP server on 127.0.0.1 that checks each request the
 * way Google would (path, headers, JSON body, one click id, date format, SHA-256 hashes), records it, and answers
 * success, or whatever a test planned: a row error (partialFailureError), 500, 429 with Retry-After, 400, or no answer.
 */
import { startFakeServer, type FakeAnswer, type FakeRequest, type FakeServer } from './fakes/fake-server';

/** One planned answer, used for one request (in order); when none is planned the fake validates and answers success. */
export type FakeGoogleAdsPlan =
  | { kind: 'success' }
  /** 200 with a partialFailureError for the row at `index` (default 0). */
  | { kind: 'rowError'; code?: string; message?: string; index?: number }
  | { kind: 'serverError'; status?: number }
  | { kind: 'rateLimited'; retryAfterSeconds?: number }
  | { kind: 'badRequest'; message?: string }
  /** Never answers (until the fake is closed): a timeout for the client. */
  | { kind: 'hang' };

/** What the fake saw of one request: the harness's record (path, headers, JSON body, problems, answered status). */
export type FakeGoogleAdsRequest = FakeRequest;

/** The fake: the shared harness (requests, respondWith, reset, waitForRequests, close) with Google Ads' answers. */
export type FakeGoogleAds = FakeServer<FakeGoogleAdsPlan>;

const PATH = /^\/(v\d+)\/customers\/(\d+):uploadClickConversions$/;
const DATE_TIME = /^\d{4}-(0[1-9]|1[0-2])-(0[1-9]|[12]\d|3[01]) ([01]\d|2[0-3]):[0-5]\d:[0-5]\d(\.\d{1,6})?[+-]([01]\d|2[0-3]):[0-5]\d$/;
const SHA256_HEX = /^[0-9a-f]{64}$/;
const CLICK_CONVERSION_FIELDS = new Set([
  'gclid', 'gbraid', 'wbraid', 'conversionAction', 'conversionDateTime', 'conversionValue', 'currencyCode', 'orderId',
  'externalAttributionData', 'customVariables', 'cartData', 'userIdentifiers', 'conversionEnvironment', 'consent',
  'customerType', 'userIpAddress', 'sessionAttributesEncoded', 'sessionAttributesKeyValuePairs',
]);
const REQUEST_FIELDS = new Set(['conversions', 'partialFailure', 'validateOnly', 'debugEnabled', 'jobId']);
const IDENTIFIER_FIELDS = new Set(['hashedEmail', 'hashedPhoneNumber', 'mobileId', 'thirdPartyUserId', 'addressInfo']);
const ADDRESS_FIELDS = new Set(['hashedFirstName', 'hashedLastName', 'city', 'state', 'countryCode', 'postalCode', 'hashedStreetAddress']);

/** Checks an uploadClickConversions body for the customer of the path; returns what Google would reject. */
export function validateUploadBody(body: any, customerId: string): string[] {
  const problems: string[] = [];
  if (body === null || typeof body !== 'object' || Array.isArray(body)) return ['body is not a JSON object'];
  for (const key of Object.keys(body)) if (!REQUEST_FIELDS.has(key)) problems.push(`unknown field '${key}'`);
  if (body.partialFailure !== true) problems.push('partialFailure must be true for click conversion uploads');
  if (!Array.isArray(body.conversions) || body.conversions.length === 0) return [...problems, 'conversions must be a non-empty array'];
  if (body.conversions.length > 2000) problems.push('at most 2000 conversions per request');
  body.conversions.forEach((c: any, i: number) => {
    const at = `conversions[${i}]`;
    if (c === null || typeof c !== 'object') return problems.push(`${at} is not an object`);
    for (const key of Object.keys(c)) if (!CLICK_CONVERSION_FIELDS.has(key)) problems.push(`${at}: unknown field '${key}'`);
    const action = /^customers\/(\d+)\/conversionActions\/\d+$/.exec(String(c.conversionAction ?? ''));
    if (!action) problems.push(`${at}.conversionAction must be customers/{customer_id}/conversionActions/{id}`);
    else if (action[1] !== customerId) problems.push(`${at}.conversionAction belongs to customer ${action[1]}, not ${customerId}`);
    if (typeof c.conversionDateTime !== 'string' || !DATE_TIME.test(c.conversionDateTime)) {
      problems.push(`${at}.conversionDateTime must be 'yyyy-mm-dd hh:mm:ss+|-hh:mm'`);
    }
    const clickIds = ['gclid', 'gbraid', 'wbraid'].filter((k) => c[k] !== undefined);
    if (clickIds.length > 1) problems.push(`${at} has ${clickIds.join(' and ')}: set at most one click id`);
    for (const k of clickIds) if (typeof c[k] !== 'string' || c[k] === '') problems.push(`${at}.${k} must be a non-empty string`);
    if (c.orderId !== undefined && (typeof c.orderId !== 'string' || c.orderId === '' || c.orderId.length > 64)) {
      problems.push(`${at}.orderId must be a string of 1 to 64 characters`);
    }
    const identifiers = c.userIdentifiers;
    if (identifiers !== undefined) {
      if (!Array.isArray(identifiers)) problems.push(`${at}.userIdentifiers must be an array`);
      else {
        if (identifiers.length > 5) problems.push(`${at}.userIdentifiers: at most 5`);
        identifiers.forEach((u: any, j: number) => {
          const where = `${at}.userIdentifiers[${j}]`;
          const set = Object.keys(u ?? {}).filter((k) => IDENTIFIER_FIELDS.has(k));
          const unknown = Object.keys(u ?? {}).filter((k) => !IDENTIFIER_FIELDS.has(k) && k !== 'userIdentifierSource');
          if (unknown.length > 0) problems.push(`${where}: unknown field '${unknown[0]}'`);
          if (set.length !== 1) return problems.push(`${where} must set exactly one identifier (it is a oneof)`);
          for (const k of ['hashedEmail', 'hashedPhoneNumber']) {
            if (u[k] !== undefined && !(typeof u[k] === 'string' && SHA256_HEX.test(u[k]))) problems.push(`${where}.${k} must be 64 lowercase hex characters`);
          }
          if (u.addressInfo !== undefined) {
            for (const key of Object.keys(u.addressInfo ?? {})) if (!ADDRESS_FIELDS.has(key)) problems.push(`${where}.addressInfo: unknown field '${key}'`);
            // Google matches a name only within a whole address: first and last name with country and postal code.
            for (const k of ['hashedFirstName', 'hashedLastName', 'countryCode', 'postalCode']) {
              if (u.addressInfo?.[k] === undefined) problems.push(`${where}.addressInfo.${k} is required for address matching`);
            }
            for (const k of ['hashedFirstName', 'hashedLastName', 'hashedStreetAddress']) {
              const v = u.addressInfo?.[k];
              if (v !== undefined && !(typeof v === 'string' && SHA256_HEX.test(v))) problems.push(`${where}.addressInfo.${k} must be 64 lowercase hex characters`);
            }
          }
        });
      }
    }
    if (clickIds.length === 0 && !(Array.isArray(identifiers) && identifiers.length > 0)) {
      problems.push(`${at} has neither a click id nor user identifiers`);
    }
  });
  return problems;
}

function googleError(httpStatus: number, status: string, message: string, version: string, errorCode: Record<string, string>, extra: object[] = []) {
  return {
    error: {
      code: httpStatus,
      message,
      status,
      details: [
        {
          '@type': `type.googleapis.com/google.ads.googleads.${version}.errors.GoogleAdsFailure`,
          errors: [{ errorCode, message }],
          requestId: `fake-${Math.random().toString(36).slice(2, 10)}`,
        },
        ...extra,
      ],
    },
  };
}

/** Starts the fake on 127.0.0.1 (port 0, an ephemeral port, unless one is given). */
export function startFakeGoogleAds(options: { port?: number } = {}): Promise<FakeGoogleAds> {
  let jobId = 1000;
  const answer = (status: number, json: unknown, headers: Record<string, string> = {}): FakeAnswer => ({ status, json, headers });

  return startFakeServer<FakeGoogleAdsPlan>(
    'Google Ads API',
    (record, planned) => {
      const { path, headers, body } = record;
      const match = PATH.exec(path);
      const version = match?.[1] ?? 'v22';
      if (record.method !== 'POST' || !match) {
        record.problems.push(`no such method: ${record.method} ${path}`);
        return answer(404, { error: { code: 404, message: `The requested URL ${path} was not found.`, status: 'NOT_FOUND' } });
      }
      if (!/^Bearer \S+$/.test(headers.authorization ?? '')) {
        record.problems.push('missing Authorization: Bearer <access token>');
        return answer(401, googleError(401, 'UNAUTHENTICATED', 'Request is missing required authentication credential. Expected OAuth 2 access token.', version, { authenticationError: 'OAUTH_TOKEN_HEADER_INVALID' }));
      }
      if (!headers['developer-token']) {
        record.problems.push('missing developer-token header');
        return answer(401, googleError(401, 'UNAUTHENTICATED', 'The developer token is not on the request.', version, { authenticationError: 'DEVELOPER_TOKEN_PARAMETER_MISSING' }));
      }
      if (headers['login-customer-id'] !== undefined && !/^\d+$/.test(headers['login-customer-id'])) {
        record.problems.push('login-customer-id must be digits only');
      }
      if (!(headers['content-type'] ?? '').startsWith('application/json')) record.problems.push('content-type must be application/json');
      if (body === null) record.problems.push('body is not JSON');
      else record.problems.push(...validateUploadBody(body, match[2]!));
      if (record.problems.length > 0) {
        return answer(400, googleError(400, 'INVALID_ARGUMENT', `Request contains an invalid argument: ${record.problems.join('; ')}`, version, { requestError: 'INVALID_INPUT' }));
      }

      const plan = planned ?? { kind: 'success' };
      const conversions: any[] = body.conversions;
      const resultOf = (c: any) => ({
        ...(c.gclid ? { gclid: c.gclid } : {}),
        ...(c.gbraid ? { gbraid: c.gbraid } : {}),
        ...(c.wbraid ? { wbraid: c.wbraid } : {}),
        conversionAction: c.conversionAction,
        conversionDateTime: c.conversionDateTime,
        ...(c.userIdentifiers ? { userIdentifiers: c.userIdentifiers } : {}),
      });
      switch (plan.kind) {
        case 'hang':
          return 'hang'; // the socket stays open until the client gives up or the fake closes
        case 'serverError':
          return answer(plan.status ?? 500, googleError(plan.status ?? 500, 'INTERNAL', 'Internal error encountered.', version, { internalError: 'INTERNAL_ERROR' }));
        case 'rateLimited': {
          const seconds = plan.retryAfterSeconds ?? 30;
          return answer(
            429,
            googleError(429, 'RESOURCE_EXHAUSTED', 'Too many requests. Retry in ' + seconds + ' seconds.', version, { quotaError: 'RESOURCE_TEMPORARILY_EXHAUSTED' },
              [{ '@type': 'type.googleapis.com/google.rpc.RetryInfo', retryDelay: `${seconds}s` }]),
            { 'retry-after': String(seconds) },
          );
        }
        case 'badRequest':
          return answer(400, googleError(400, 'INVALID_ARGUMENT', plan.message ?? 'Request contains an invalid argument.', version, { requestError: 'INVALID_INPUT' }));
        case 'rowError': {
          const index = plan.index ?? 0;
          const code = plan.code ?? 'UNPARSEABLE_GCLID';
          const message = plan.message ?? 'The imported gclid could not be decoded.';
          return answer(200, {
            partialFailureError: {
              code: 3,
              message: `${message}, at conversions[${index}]`,
              details: [
                {
                  '@type': `type.googleapis.com/google.ads.googleads.${version}.errors.GoogleAdsFailure`,
                  errors: [{ errorCode: { conversionUploadError: code }, message, location: { fieldPathElements: [{ fieldName: 'conversions', index }] } }],
                  requestId: 'fake-partial',
                },
              ],
            },
            results: conversions.map((c, i) => (i === index ? {} : resultOf(c))),
            jobId: String(jobId++),
          });
        }
        case 'success':
          return answer(200, { results: conversions.map(resultOf), jobId: String(jobId++) });
      }
    },
    // A planned answer is for an upload: a request the fake refuses outright (404, 401, 400) takes none.
    { ...(options.port === undefined ? {} : { port: options.port }), takesPlan: (request) => request.method === 'POST' && PATH.test(request.path) },
  );
}
