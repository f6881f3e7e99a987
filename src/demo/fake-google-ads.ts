/**
 * A local fake of the Google Ads API's click conversion upload and conversion adjustment upload (the legacy path:
 * uploadClickConversions, uploadConversionAdjustments), for the delivery worker's tests.
 * Built on the fakes' harness (./fakes/fake-server.ts): a real HTTP server on 127.0.0.1 that checks each request the
 * way Google would (path, headers, JSON body, one click id, date format, SHA-256 hashes), records it, and answers
 * success, or whatever a test planned: a row error (partialFailureError), 500, 429 with Retry-After, 400, or no answer.
 */
import { startFakeServer, type FakeAnswer, type FakeRequest, type FakeServer } from './fakes/fake-server';
import { insufficientScope } from './fakes/google';

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

/** A conversion as Google holds it after its adjustments: its value now, and whether it was retracted. */
export interface HeldConversion {
  value: number | null;
  currency: string | null;
  retracted: boolean;
}

/**
 * The fake: the shared harness (requests, respondWith, reset, waitForRequests, close) with Google Ads' answers, and
 * `held(conversionAction, orderId)`, the conversion as Google would hold it now (undefined when never uploaded).
 */
export type FakeGoogleAds = FakeServer<FakeGoogleAdsPlan> & { held(conversionAction: string, orderId: string): HeldConversion | undefined };

/** The newest Google Ads API version Google has sunset (v22 on 7 October 2026): requests to it and older ones fail. */
const LAST_SUNSET_VERSION = 22;
const PATH = /^\/(v\d+)\/customers\/(\d+):uploadClickConversions$/;
const ADJUST_PATH = /^\/(v\d+)\/customers\/(\d+):uploadConversionAdjustments$/;
/** UploadConversionAdjustmentsRequest's fields in the REST mapping. */
const ADJUST_REQUEST_FIELDS = new Set(['conversionAdjustments', 'partialFailure', 'validateOnly', 'jobId']);
/** ConversionAdjustment's fields in the REST mapping. */
const ADJUSTMENT_FIELDS = new Set([
  'gclidDateTimePair', 'orderId', 'adjustmentType', 'restatementValue', 'userIdentifiers', 'userAgent', 'conversionAction', 'adjustmentDateTime',
]);
const ADJUSTMENT_TYPES = new Set(['RETRACTION', 'RESTATEMENT', 'ENHANCEMENT']);
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

/**
 * Checks an uploadConversionAdjustments body for the customer of the path, as strictly as Google's reference allows
 * (UploadConversionAdjustmentsRequest, ConversionAdjustment, RestatementValue, GclidDateTimePair); returns what Google
 * would reject, and what cnv must never send (an ENHANCEMENT, user identifiers).
 */
export function validateAdjustmentBody(body: any): string[] {
  const problems: string[] = [];
  if (body === null || typeof body !== 'object' || Array.isArray(body)) return ['body is not a JSON object'];
  for (const key of Object.keys(body)) if (!ADJUST_REQUEST_FIELDS.has(key)) problems.push(`unknown field '${key}'`);
  if (body.partialFailure !== true) problems.push('partialFailure is required and must be true');
  if (body.jobId !== undefined && !(Number.isInteger(body.jobId) && body.jobId >= 0 && body.jobId < 2 ** 31)) problems.push('jobId must be an integer in [0, 2^31)');
  if (!Array.isArray(body.conversionAdjustments) || body.conversionAdjustments.length === 0) return [...problems, 'conversionAdjustments must be a non-empty array'];
  body.conversionAdjustments.forEach((a: any, i: number) => {
    const at = `conversionAdjustments[${i}]`;
    if (a === null || typeof a !== 'object' || Array.isArray(a)) return problems.push(`${at} is not an object`);
    for (const key of Object.keys(a)) if (!ADJUSTMENT_FIELDS.has(key)) problems.push(`${at}: unknown field '${key}'`);
    const action = /^customers\/(\d+)\/conversionActions\/\d+$/.exec(String(a.conversionAction ?? ''));
    // Google ignores the resource name's customer id ("use the conversion action id as the sole identifier").
    if (!action) problems.push(`${at}.conversionAction must be customers/{customer_id}/conversionActions/{id}`);
    if (!ADJUSTMENT_TYPES.has(a.adjustmentType)) problems.push(`${at}.adjustmentType must be RETRACTION, RESTATEMENT or ENHANCEMENT`);
    else if (a.adjustmentType === 'ENHANCEMENT') problems.push(`${at}: cnv never sends ENHANCEMENT adjustments`);
    if (typeof a.adjustmentDateTime !== 'string' || !DATE_TIME.test(a.adjustmentDateTime)) problems.push(`${at}.adjustmentDateTime must be 'yyyy-mm-dd hh:mm:ss+|-hh:mm'`);
    const hasOrder = a.orderId !== undefined;
    const hasPair = a.gclidDateTimePair !== undefined;
    if (hasOrder && (typeof a.orderId !== 'string' || a.orderId === '')) problems.push(`${at}.orderId must be a non-empty string`);
    if (hasPair) {
      const pair = a.gclidDateTimePair;
      if (pair === null || typeof pair !== 'object') problems.push(`${at}.gclidDateTimePair must be an object`);
      else {
        for (const key of Object.keys(pair)) if (key !== 'gclid' && key !== 'conversionDateTime') problems.push(`${at}.gclidDateTimePair: unknown field '${key}'`);
        if (typeof pair.gclid !== 'string' || pair.gclid === '') problems.push(`${at}.gclidDateTimePair.gclid must be a non-empty string`);
        if (typeof pair.conversionDateTime !== 'string' || !DATE_TIME.test(pair.conversionDateTime)) problems.push(`${at}.gclidDateTimePair.conversionDateTime must be 'yyyy-mm-dd hh:mm:ss+|-hh:mm'`);
      }
    }
    if (!hasOrder && !hasPair) problems.push(`${at} names no conversion: set orderId (or gclidDateTimePair for a conversion uploaded without an order id)`);
    if (hasOrder && hasPair && a.adjustmentType !== 'ENHANCEMENT') problems.push(`${at}: a conversion uploaded with an order id is named by that order id alone`);
    if (a.adjustmentType === 'RESTATEMENT') {
      const r = a.restatementValue;
      if (r === null || typeof r !== 'object') problems.push(`${at}.restatementValue is required for a restatement`);
      else {
        for (const key of Object.keys(r)) if (key !== 'adjustedValue' && key !== 'currencyCode') problems.push(`${at}.restatementValue: unknown field '${key}'`);
        if (typeof r.adjustedValue !== 'number' || !Number.isFinite(r.adjustedValue) || r.adjustedValue < 0) problems.push(`${at}.restatementValue.adjustedValue must be a number of at least 0`);
        if (r.currencyCode !== undefined && !(typeof r.currencyCode === 'string' && /^[A-Z]{3}$/.test(r.currencyCode))) problems.push(`${at}.restatementValue.currencyCode must be an ISO 4217 code`);
      }
    }
    if (a.adjustmentType === 'RETRACTION' && a.restatementValue !== undefined) problems.push(`${at}.restatementValue must not be set for a retraction`);
    if (a.userIdentifiers !== undefined && a.adjustmentType !== 'ENHANCEMENT') problems.push(`${at}.userIdentifiers are accepted in enhancements only`);
  });
  return problems;
}

/** A "yyyy-mm-dd hh:mm:ss+hh:mm" date time as epoch milliseconds. */
function dateTimeMs(value: string): number {
  const m = /^(\d{4}-\d{2}-\d{2}) (\d{2}:\d{2}:\d{2}(?:\.\d+)?)([+-]\d{2}:\d{2})$/.exec(value);
  return m ? Date.parse(`${m[1]}T${m[2]}${m[3]}`) : Number.NaN;
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

/** A conversion as the fake keys it: the conversion action id (Google ignores the resource name's customer id) and order id. */
function conversionKey(conversionAction: string, orderId: string): string {
  return `${conversionAction.split('/').pop()} ${orderId}`;
}

/** A GoogleAdsFailure of partial-failure row errors, located at `field[index]`. */
function partialFailure(version: string, field: string, rows: Array<{ index: number; code: Record<string, string>; message: string }>) {
  return {
    code: 3,
    message: rows.map((r) => `${r.message}, at ${field}[${r.index}]`).join('; '),
    details: [
      {
        '@type': `type.googleapis.com/google.ads.googleads.${version}.errors.GoogleAdsFailure`,
        errors: rows.map((r) => ({ errorCode: r.code, message: r.message, location: { fieldPathElements: [{ fieldName: field, index: r.index }] } })),
        requestId: 'fake-partial',
      },
    ],
  };
}

/** Starts the fake on 127.0.0.1 (port 0, an ephemeral port, unless one is given). */
/** The scope every Google Ads API method requires ("Authorization scopes" of each method's reference). */
const GOOGLE_ADS_API_SCOPE = 'https://www.googleapis.com/auth/adwords';

export interface FakeGoogleAdsOptions {
  port?: number;
  /**
   * The scopes of a live access token (the fake Google's `scopesOf`, which issued it), or null for one it does not
   * know: then a token without the Google Ads API's scope is refused as Google refuses it (403 PERMISSION_DENIED,
   * ACCESS_TOKEN_SCOPE_INSUFFICIENT) and an unknown one with 401. Without it any bearer token passes (tests that send
   * with a token of their own).
   */
  scopesOf?: (accessToken: string) => readonly string[] | null;
  /** The fake's clock (which conversions are too old to adjust: 54 days); the real one by default. */
  now?: () => Date;
}

/**
 * ConversionAdjustmentUploadError (Google Ads API reference, v25 …/ConversionAdjustmentUploadErrorEnum): CONVERSION_EXPIRED
 * "Adjustment can't be made to a conversion that occurred more than 54 days ago." TOO_RECENT_CONVERSION ("… Try
 * adjusting a conversion that occurred at least 24 hours ago") is no longer answered since 9 September 2024 (Google Ads
 * Developer Blog, "Improvements to conversion adjustment uploads": adjustments "can be uploaded immediately after the
 * original conversion has been uploaded"), so the fake takes an adjustment of a conversion of any age under 54 days.
 */
const ADJUSTABLE_UNTIL_MS = 54 * 24 * 3_600_000;

export function startFakeGoogleAds(options: FakeGoogleAdsOptions = {}): Promise<FakeGoogleAds> {
  let jobId = 1000;
  const answer = (status: number, json: unknown, headers: Record<string, string> = {}): FakeAnswer => ({ status, json, headers });
  /**
   * Conversions uploaded with an order id: their conversionDateTime, their value as Google holds it, and the time of
   * their latest restatement.
   */
  const uploaded = new Map<string, { at: string; value: number | null; currency: string | null; restatedAtMs: number | null; retracted: boolean }>();

  /**
   * Applies adjustments as Google documents them, row by row: row errors for what it cannot find or accept
   * (ConversionAdjustmentUploadError), and a restatement whose adjustmentDateTime is no more recent than the previous
   * restatement's left unapplied (RestatementValue: "If you want to upload a second restatement with a different
   * adjusted value, it must have a new, more recent, adjustment occurrence time. Otherwise, it will be treated as a
   * duplicate of the previous restatement and ignored."): an older one is MORE_RECENT_RESTATEMENT_FOUND ("More recent
   * adjustment adjustment_date_time has already been reported for the associated conversion"), the same time is
   * ignored without an error.
   */
  const adjust = (version: string, adjustments: any[]) => {
    const errors: Array<{ index: number; code: Record<string, string>; message: string }> = [];
    adjustments.forEach((a, index) => {
      const key = a.orderId !== undefined ? conversionKey(a.conversionAction, a.orderId) : null;
      const held = key === null ? undefined : uploaded.get(key);
      const fail = (code: string, message: string) => errors.push({ index, code: { conversionAdjustmentUploadError: code }, message });
      if (key === null || held === undefined) return fail('CONVERSION_NOT_FOUND', "The conversion for this conversion action and conversion identifier can't be found.");
      if (held.retracted) return fail('CONVERSION_ALREADY_RETRACTED', 'The conversion was already retracted. This adjustment was not processed.');
      const ageMs = (options.now?.() ?? new Date()).getTime() - dateTimeMs(held.at);
      if (ageMs > ADJUSTABLE_UNTIL_MS) return fail('CONVERSION_EXPIRED', "Adjustment can't be made to a conversion that occurred more than 54 days ago.");
      const atMs = dateTimeMs(a.adjustmentDateTime);
      if (!(atMs > dateTimeMs(held.at))) return fail('ADJUSTMENT_PRECEDES_CONVERSION', 'Adjustment has an adjustment_date_time that occurred before the associated conversion.');
      if (a.adjustmentType === 'RETRACTION') {
        held.retracted = true;
        return;
      }
      if (held.restatedAtMs !== null && atMs < held.restatedAtMs) {
        return fail('MORE_RECENT_RESTATEMENT_FOUND', 'More recent adjustment adjustment_date_time has already been reported for the associated conversion.');
      }
      if (held.restatedAtMs !== null && atMs === held.restatedAtMs) return; // a duplicate of the previous restatement: ignored
      held.restatedAtMs = atMs;
      held.value = a.restatementValue.adjustedValue;
      held.currency = a.restatementValue.currencyCode ?? held.currency;
    });
    const failed = new Set(errors.map((e) => e.index));
    return answer(200, {
      ...(errors.length > 0 ? { partialFailureError: partialFailure(version, 'conversion_adjustments', errors) } : {}),
      results: adjustments.map((a, i) =>
        failed.has(i) ? {} : { orderId: a.orderId, adjustmentType: a.adjustmentType, conversionAction: a.conversionAction, adjustmentDateTime: a.adjustmentDateTime },
      ),
      jobId: String(jobId++),
    });
  };

  const held = (conversionAction: string, orderId: string): HeldConversion | undefined => {
    const conversion = uploaded.get(conversionKey(conversionAction, orderId));
    return conversion && { value: conversion.retracted ? 0 : conversion.value, currency: conversion.currency, retracted: conversion.retracted };
  };

  return startFakeServer<FakeGoogleAdsPlan>(
    'Google Ads API',
    (record, planned) => {
      const { path, headers, body } = record;
      const upload = PATH.exec(path);
      const adjustment = ADJUST_PATH.exec(path);
      const match = upload ?? adjustment;
      const version = match?.[1] ?? 'v26';
      if (record.method !== 'POST' || !match) {
        record.problems.push(`no such method: ${record.method} ${path}`);
        return answer(404, { error: { code: 404, message: `The requested URL ${path} was not found.`, status: 'NOT_FOUND' } });
      }
      const bearer = /^Bearer (\S+)$/.exec(headers.authorization ?? '');
      if (!bearer) {
        record.problems.push('missing Authorization: Bearer <access token>');
        return answer(401, googleError(401, 'UNAUTHENTICATED', 'Request is missing required authentication credential. Expected OAuth 2 access token.', version, { authenticationError: 'OAUTH_TOKEN_HEADER_INVALID' }));
      }
      if (options.scopesOf) {
        const scopes = options.scopesOf(bearer[1]!);
        if (scopes === null) {
          record.problems.push('the access token is unknown or expired');
          return answer(401, googleError(401, 'UNAUTHENTICATED', 'Request had invalid authentication credentials. Expected OAuth 2 access token.', version, { authenticationError: 'OAUTH_TOKEN_INVALID' }));
        }
        if (!scopes.includes(GOOGLE_ADS_API_SCOPE)) {
          record.problems.push(`the access token lacks the scope ${GOOGLE_ADS_API_SCOPE}`);
          return insufficientScope('googleads.googleapis.com');
        }
      }
      // No developer-token check: Google ignores the header since developer tokens were sunset on 9 September 2026.
      if (Number(version.slice(1)) <= LAST_SUNSET_VERSION) {
        record.problems.push(`Google Ads API ${version} is sunset`);
        return answer(404, { error: { code: 404, message: `The requested URL ${path} was not found.`, status: 'NOT_FOUND' } });
      }
      if (headers['login-customer-id'] !== undefined && !/^\d+$/.test(headers['login-customer-id'])) {
        record.problems.push('login-customer-id must be digits only');
      }
      if (!(headers['content-type'] ?? '').startsWith('application/json')) record.problems.push('content-type must be application/json');
      if (body === null) record.problems.push('body is not JSON');
      else record.problems.push(...(upload ? validateUploadBody(body, match[2]!) : validateAdjustmentBody(body)));
      if (record.problems.length > 0) {
        return answer(400, googleError(400, 'INVALID_ARGUMENT', `Request contains an invalid argument: ${record.problems.join('; ')}`, version, { requestError: 'INVALID_INPUT' }));
      }

      const plan = planned ?? { kind: 'success' };
      const rows: any[] = upload ? body.conversions : body.conversionAdjustments;
      // "If true, the request is validated but not executed. Only errors are returned, not results." (validate_only of
      // both upload requests): nothing is held, and a 200 carries at most the partial failure.
      const validateOnly = body.validateOnly === true;
      const field = upload ? 'conversions' : 'conversion_adjustments';
      const resultOf = (c: any) => ({
        ...(c.gclid ? { gclid: c.gclid } : {}),
        ...(c.gbraid ? { gbraid: c.gbraid } : {}),
        ...(c.wbraid ? { wbraid: c.wbraid } : {}),
        conversionAction: c.conversionAction,
        conversionDateTime: c.conversionDateTime,
        ...(c.userIdentifiers ? { userIdentifiers: c.userIdentifiers } : {}),
      });
      const remember = (conversions: any[]) => {
        for (const c of conversions) {
          const key = c.orderId ? conversionKey(c.conversionAction, c.orderId) : null;
          // A repeat of an order id is a duplicate Google keeps the first of.
          if (key !== null && !uploaded.has(key)) {
            uploaded.set(key, { at: c.conversionDateTime, value: c.conversionValue ?? null, currency: c.currencyCode ?? null, restatedAtMs: null, retracted: false });
          }
        }
      };
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
          const code = plan.code ?? (upload ? 'UNPARSEABLE_GCLID' : 'CONVERSION_NOT_FOUND');
          const message = plan.message ?? (upload ? 'The imported gclid could not be decoded.' : "The conversion for this conversion action and conversion identifier can't be found.");
          const partialFailureError = partialFailure(version, field, [{ index, code: { [upload ? 'conversionUploadError' : 'conversionAdjustmentUploadError']: code }, message }]);
          if (validateOnly) return answer(200, { partialFailureError });
          if (upload) remember(rows.filter((_, i) => i !== index));
          return answer(200, {
            partialFailureError,
            results: rows.map((c, i) => (i === index ? {} : upload ? resultOf(c) : { orderId: c.orderId, adjustmentType: c.adjustmentType })),
            jobId: String(jobId++),
          });
        }
        case 'success':
          if (validateOnly) return answer(200, {});
          if (adjustment) return adjust(version, rows);
          remember(rows);
          return answer(200, { results: rows.map(resultOf), jobId: String(jobId++) });
      }
    },
    // A planned answer is for an upload: a request the fake refuses outright (404, 401, 400) takes none.
    {
      ...(options.port === undefined ? {} : { port: options.port }),
      takesPlan: (request) => request.method === 'POST' && (PATH.test(request.path) || ADJUST_PATH.test(request.path)),
    },
  ).then((server) => Object.assign(server, { held }));
}
