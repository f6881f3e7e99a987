/**
 * A strict local fake of Microsoft Advertising for tests and the demo: the Campaign Management REST calls cnv makes
 * (ApplyOfflineConversions, GetConversionGoalsByIds) and the Microsoft identity platform's authorize and token endpoints
 * (authorization code with PKCE S256, refresh token). It checks what Microsoft documents and answers in Microsoft's
 * shapes: 200 `{PartialErrors: [BatchError…]}`, faults `AdApiFaultDetail` / `ApiFaultDetail`, OAuth errors
 * `{error, error_description, error_codes}`. Docs: learn.microsoft.com/en-us/advertising/campaign-management-service/
 * applyofflineconversions (REST pivot), offlineconversion, batcherror, adapifaultdetail, apifaultdetail;
 * learn.microsoft.com/en-us/advertising/guides/operation-error-codes, authentication-oauth-consent, authentication-oauth-get-tokens.
 *
 * Not documented by Microsoft, chosen here: the HTTP status of each fault (401 for credentials, 403 for permissions,
 * 400 for input, 429 for CallRateExceeded, 500 for InternalError), the codes used for a malformed hashed phone (201),
 * and that a click id is 32 hexadecimal characters (the shape of every msclkid Microsoft issues).
 */
import { createHash, randomBytes } from 'node:crypto';
import { startFakeServer, type FakeAnswer, type FakeRequest, type FakeServer } from './fake-server';

/** A planned answer for the next request (whichever endpoint it reaches). */
export type MicrosoftAdsPlan =
  /** A call-wide fault, e.g. `{status: 500, code: 0, errorCode: 'InternalError'}` or `{status: 429, code: 117, errorCode: 'CallRateExceeded'}`. */
  | { kind: 'fault'; status: number; code: number; errorCode: string; headers?: Record<string, string> }
  /** A bare HTTP answer, e.g. a 503 from a front end with no Microsoft body. */
  | { kind: 'status'; status: number; text?: string; headers?: Record<string, string> }
  /** Extra partial errors added to the next ApplyOfflineConversions answer (the rows they name are not applied). */
  | { kind: 'partial_errors'; errors: { Index: number; Code: number; ErrorCode: string }[] }
  /** The token endpoint refuses the next grant with `invalid_grant` (revoked consent, expired refresh token). */
  | { kind: 'invalid_grant' }
  /** Never answer. */
  | { kind: 'hang' };

/** An offline conversion goal of the fake account. */
export interface FakeGoal {
  name: string;
  /** When it was created: conversions are refused (5615) for two hours after. */
  createdAt: Date;
  /** Conversion window in minutes (default 43200, 30 days). */
  conversionWindowInMinutes?: number;
  status?: 'Active' | 'Paused' | 'Deleted';
}

/** A conversion the fake applied. */
export interface AppliedConversion {
  conversionName: string;
  conversionTime: string;
  microsoftClickId: string | null;
  hashedEmailAddress: string | null;
  hashedPhoneNumber: string | null;
  conversionValue: number | null;
  conversionCurrencyCode: string | null;
  /** True when Microsoft would have ignored it: same click id, time and goal as one applied before. */
  duplicate: boolean;
}

export interface MicrosoftAdsFakeOptions {
  port?: number;
  clientId?: string;
  clientSecret?: string;
  developerToken?: string;
  customerId?: string;
  accountId?: string;
  goals?: FakeGoal[];
  /** Known clicks (click id → click time), to check ConversionTimeEarlierThanClickTime and the goal's window. */
  clicks?: Record<string, Date>;
  /** The fake's clock (token expiry, goal readiness, 90-day window). */
  now?: () => Date;
}

export interface FakeMicrosoftAds extends FakeServer<MicrosoftAdsPlan> {
  clientId: string;
  clientSecret: string;
  developerToken: string;
  customerId: string;
  accountId: string;
  goals: FakeGoal[];
  clicks: Record<string, Date>;
  /** Conversions applied so far, oldest first. */
  applied: AppliedConversion[];
  /** Adjustments applied so far, oldest first. */
  adjustments: AppliedAdjustment[];
  authorizeUrl: string;
  tokenUrl: string;
  /** The environment that points cnv's settings at this fake (API base, OAuth URLs and client, developer token). */
  env: Record<string, string>;
  /** Issues an access token as if a user had consented (for tests that skip the browser leg). */
  issueAccessToken(options?: { expiresInSeconds?: number }): string;
  /** Forgets every refresh token (the user removed the app's consent): the next refresh gets invalid_grant. */
  revokeRefreshTokens(): void;
  /** Issues a refresh token as if a user had consented with offline_access (for tests that skip the browser leg). */
  issueRefreshToken(): string;
  /** Forgets every access token before its expiry (a password change): Microsoft then answers 105 InvalidCredentials. */
  revokeAccessTokens(): void;
}

export const MICROSOFT_FAKE_PATHS = {
  authorize: '/common/oauth2/v2.0/authorize',
  token: '/common/oauth2/v2.0/token',
  apply: '/CampaignManagement/v13/OfflineConversions/Apply',
  queryGoals: '/CampaignManagement/v13/ConversionGoals/QueryByIds',
  /** ApplyOfflineConversionAdjustments, REST, named like ApplyOfflineConversions' path. */
  adjust: '/CampaignManagement/v13/OfflineConversionAdjustments/Apply',
} as const;

/** An adjustment the fake applied (OfflineConversionAdjustment). */
export interface AppliedAdjustment {
  adjustmentType: 'Restate' | 'Retract';
  adjustmentTime: string;
  adjustmentValue: number | null;
  adjustmentCurrencyCode: string | null;
  conversionName: string;
  conversionTime: string;
  microsoftClickId: string | null;
}

const ADJUSTMENT_FIELDS = new Set([
  'AdjustmentCurrencyCode', 'AdjustmentTime', 'AdjustmentType', 'AdjustmentValue', 'ConversionName', 'ConversionTime',
  'HashedEmailAddress', 'HashedPhoneNumber', 'MicrosoftClickId',
]);

const MSADS_SCOPE = 'https://ads.microsoft.com/msads.manage';
const MAX_PER_CALL = 1000;
const DAY_MS = 86_400_000;
/** How old a conversion ApplyOfflineConversions and ApplyOfflineConversionAdjustments still take ("within the last 90 days"). */
const CONVERSION_WINDOW_MS = 90 * DAY_MS;
const TWO_HOURS_MS = 2 * 3_600_000;
/**
 * The currencies ConversionCurrencyCode and AdjustmentCurrencyCode take: OfflineConversion says "For more information,
 * see Currencies", whose "Conversion Goal Revenue Currencies" table lists these codes
 * (learn.microsoft.com/advertising/guides/currencies#conversiongoalrevenue, MicrosoftDocs/Advertising-docs, read
 * 2026-11-29). Copied as Microsoft writes it, withdrawn codes (BGN, HRK, TRL, VEF) included; TRY is not on it.
 */
const CURRENCIES = new Set(
  ('AED ALL AMD ARS AUD AZN BDT BGN BHD BND BOB BRL BWP BZD CAD CHF CLP CNY COP CRC CZK DKK DOP DZD EGP ETB EUR FJD GBP ' +
    'GEL GHS GTQ HKD HNL HRK HUF IDR ILS INR IQD ISK JMD JOD JPY KES KGS KRW KWD KZT LBP LKR LYD MAD MKD MNT MOP MUR MVR ' +
    'MWK MXN MYR NGN NIO NOK NZD OMR PAB PEN PHP PKR PLN PYG QAR RON RSD RUB RWF SAR SEK SGD THB TND TOP TRL TTD TWD TZS ' +
    'UAH UGX USD UYU UZS VEF VND XAF XCD XOF YER ZAR ZMW').split(' '),
);
const KNOWN_FIELDS = new Set([
  'ConversionCurrencyCode',
  'ConversionName',
  'ConversionTime',
  'ConversionValue',
  'ExternalAttributionCredit',
  'ExternalAttributionModel',
  'HashedEmailAddress',
  'HashedPhoneNumber',
  'MicrosoftClickId',
]);
/** xs:dateTime in UTC, as ConversionTime requires (Z or +00:00), with optional fractional seconds. */
const UTC_DATE_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,7})?(Z|\+00:00)$/;

const token = (prefix: string) => `${prefix}${randomBytes(18).toString('base64url')}`;
const s256 = (verifier: string) => createHash('sha256').update(verifier, 'ascii').digest('base64url');

interface IssuedCode {
  clientId: string;
  redirectUri: string;
  challenge: string;
  scopes: string[];
  expiresAt: number;
  used: boolean;
}

/** Starts the fake on 127.0.0.1. */
export async function startFakeMicrosoftAds(options: MicrosoftAdsFakeOptions = {}): Promise<FakeMicrosoftAds> {
  const now = options.now ?? (() => new Date());
  const clientId = options.clientId ?? '00001111-aaaa-2222-bbbb-3333cccc4444';
  const clientSecret = options.clientSecret ?? 'fake-client-secret';
  const developerToken = options.developerToken ?? 'FAKEDEVTOKEN123';
  const customerId = options.customerId ?? '123456789';
  const accountId = options.accountId ?? '987654321';
  const goals: FakeGoal[] = options.goals ?? [{ name: 'Signup', createdAt: new Date(0) }];
  const clicks: Record<string, Date> = options.clicks ?? {};
  const applied: AppliedConversion[] = [];
  const adjustments: AppliedAdjustment[] = [];
  const codes = new Map<string, IssuedCode>();
  const accessTokens = new Map<string, number>(); // token → expiry (ms)
  const refreshTokens = new Map<string, string[]>(); // token → granted scopes

  const issueTokens = (scopes: string[]) => {
    const access = token('EwA-fake-access-');
    accessTokens.set(access, now().getTime() + 3600 * 1000);
    const body: Record<string, unknown> = {
      token_type: 'Bearer',
      scope: scopes.filter((s) => s !== 'offline_access' && s !== 'openid').join(' '),
      expires_in: 3600,
      ext_expires_in: 3600,
      access_token: access,
    };
    if (scopes.includes('offline_access')) {
      const refresh = token('M.C-fake-refresh-');
      refreshTokens.set(refresh, scopes);
      body.refresh_token = refresh;
    }
    return body;
  };

  const oauthError = (status: number, error: string, aadsts: number, description: string): FakeAnswer => ({
    status,
    json: { error, error_description: `AADSTS${aadsts}: ${description}`, error_codes: [aadsts], timestamp: now().toISOString(), trace_id: 'fake-trace', correlation_id: 'fake-correlation' },
  });

  function authorize(req: FakeRequest): FakeAnswer {
    const q = req.query;
    const problem = (message: string): FakeAnswer => {
      req.problems.push(message);
      return { status: 400, text: `invalid_request: ${message}` };
    };
    if (req.method !== 'GET') return problem('authorize must be a GET');
    if (q.get('client_id') !== clientId) return problem(`client_id must be the registered application id '${clientId}'`);
    if (q.get('response_type') !== 'code') return problem("response_type must be 'code'");
    const redirectUri = q.get('redirect_uri');
    try {
      new URL(redirectUri ?? '');
    } catch {
      return problem('redirect_uri must be an absolute URL');
    }
    const scopes = (q.get('scope') ?? '').split(' ').filter(Boolean);
    if (!scopes.includes(MSADS_SCOPE)) return problem(`scope must include ${MSADS_SCOPE}`);
    if (!scopes.includes('offline_access')) req.problems.push('scope lacks offline_access: no refresh token will be issued');
    const challenge = q.get('code_challenge');
    if (!challenge || q.get('code_challenge_method') !== 'S256') return problem('PKCE is required here: code_challenge with code_challenge_method=S256');
    const prompt = q.get('prompt');
    if (prompt !== null && !['login', 'none', 'consent', 'select_account'].includes(prompt)) return problem('prompt must be login, none, consent or select_account');
    const mode = q.get('response_mode');
    if (mode !== null && mode !== 'query') return problem("this fake answers with response_mode=query only");
    const state = q.get('state');
    if (!state) req.problems.push('state is missing (recommended against cross-site request forgery)');
    const code = token('M.C-fake-code-');
    codes.set(code, { clientId, redirectUri: redirectUri!, challenge, scopes, expiresAt: now().getTime() + 5 * 60_000, used: false });
    // The user consents at once.
    const target = new URL(redirectUri!);
    target.searchParams.set('code', code);
    if (state) target.searchParams.set('state', state);
    return { status: 302, redirect: target.toString() };
  }

  function tokenEndpoint(req: FakeRequest, plan: MicrosoftAdsPlan | undefined): FakeAnswer {
    if (req.method !== 'POST') return oauthError(405, 'invalid_request', 900561, 'The endpoint only accepts POST requests.');
    if (!(req.headers['content-type'] ?? '').startsWith('application/x-www-form-urlencoded')) {
      req.problems.push('the token request must be application/x-www-form-urlencoded');
      return oauthError(400, 'invalid_request', 900144, "The request body must contain the following parameter: 'grant_type'.");
    }
    const form = (req.body ?? {}) as Record<string, string>;
    // A web app authenticates with its secret in the body (client_secret_post) or in HTTP Basic.
    let id = form.client_id;
    let secret = form.client_secret;
    const basic = /^Basic (.+)$/i.exec(req.headers.authorization ?? '');
    if (basic) [id, secret] = Buffer.from(basic[1]!, 'base64').toString('utf8').split(':').map(decodeURIComponent) as [string, string];
    if (id !== clientId) return oauthError(400, 'unauthorized_client', 700016, `Application with identifier '${id ?? ''}' was not found in the directory.`);
    if (secret !== clientSecret) return oauthError(401, 'invalid_client', 7000215, 'Invalid client secret provided.');
    if (plan?.kind === 'invalid_grant') {
      return oauthError(400, 'invalid_grant', 70000, 'The user could not be authenticated or the grant is expired. The user must first sign in and if needed grant the client application access to the requested scope.');
    }
    const requested = (form.scope ?? '').split(' ').filter(Boolean);
    if (form.grant_type === 'authorization_code') {
      const issued = form.code ? codes.get(form.code) : undefined;
      if (!issued || issued.used || issued.expiresAt < now().getTime()) return oauthError(400, 'invalid_grant', 70008, 'The provided authorization code or refresh token has expired or was already used.');
      if (form.redirect_uri !== issued.redirectUri) return oauthError(400, 'invalid_grant', 50011, 'The redirect URI does not match the one used to obtain the authorization code.');
      if (!form.code_verifier || s256(form.code_verifier) !== issued.challenge) return oauthError(400, 'invalid_grant', 501481, 'The Code_Verifier does not match the code_challenge supplied in the authorization request.');
      if (requested.some((s) => !issued.scopes.includes(s))) return oauthError(400, 'invalid_grant', 70000, 'The request was denied because one or more scopes requested are unauthorized or expired.');
      issued.used = true;
      return { status: 200, json: issueTokens(issued.scopes) };
    }
    if (form.grant_type === 'refresh_token') {
      const scopes = form.refresh_token ? refreshTokens.get(form.refresh_token) : undefined;
      if (!scopes) return oauthError(400, 'invalid_grant', 70000, 'The user could not be authenticated or the grant is expired. The user must first sign in and if needed grant the client application access to the requested scope.');
      if (requested.some((s) => !scopes.includes(s))) return oauthError(400, 'invalid_grant', 70000, 'The request was denied because one or more scopes requested are unauthorized or expired.');
      // "refresh tokens are not revoked when used to acquire new access tokens": the old one keeps working.
      return { status: 200, json: issueTokens(scopes) };
    }
    return oauthError(400, 'unsupported_grant_type', 70003, 'The app requested an unsupported grant type.');
  }

  /** A Microsoft fault body with one error. */
  const fault = (status: number, code: number, errorCode: string, message: string, type: 'AdApiFaultDetail' | 'ApiFaultDetail', headers?: Record<string, string>): FakeAnswer => ({
    status,
    headers: { TrackingId: 'fake-tracking-id', ...headers },
    json:
      type === 'AdApiFaultDetail'
        ? { TrackingId: 'fake-tracking-id', Type: 'AdApiFaultDetail', Errors: [{ Code: code, Detail: null, ErrorCode: errorCode, Message: message }] }
        : { TrackingId: 'fake-tracking-id', Type: 'ApiFaultDetail', BatchErrors: [], OperationErrors: [{ Code: code, Details: null, ErrorCode: errorCode, Message: message }] },
  });

  /** The checks every Campaign Management REST call goes through; an answer when the call is refused. */
  function checkHeaders(req: FakeRequest): FakeAnswer | null {
    if (req.method !== 'POST') return { status: 405, text: 'Method not allowed' };
    const auth = /^Bearer (.+)$/.exec(req.headers.authorization ?? '');
    if (!req.headers.authorization || !req.headers.developertoken || !req.headers.customerid || !req.headers.customeraccountid) {
      req.problems.push('Authorization (Bearer), DeveloperToken, CustomerId and CustomerAccountId headers are all required');
      return fault(400, 116, 'RequestMissingHeaders', 'One or more required header elements are missing from the request.', 'AdApiFaultDetail');
    }
    if (!auth) {
      req.problems.push('the access token must be sent as "Authorization: Bearer <token>"');
      return fault(401, 105, 'InvalidCredentials', 'Authentication failed. Either supplied credentials are invalid or the account is inactive.', 'AdApiFaultDetail');
    }
    const expiry = accessTokens.get(auth[1]!);
    if (expiry === undefined) return fault(401, 105, 'InvalidCredentials', 'Authentication failed. Either supplied credentials are invalid or the account is inactive.', 'AdApiFaultDetail');
    if (expiry < now().getTime()) return fault(401, 109, 'AuthenticationTokenExpired', 'Authentication token expired. Please renew it or obtain a new token.', 'AdApiFaultDetail');
    if (req.headers.developertoken !== developerToken) return fault(401, 105, 'InvalidCredentials', 'Authentication failed. Either supplied credentials are invalid or the account is inactive.', 'AdApiFaultDetail');
    if (req.headers.customerid !== customerId || req.headers.customeraccountid !== accountId) {
      return fault(403, 106, 'UserIsNotAuthorized', 'The user is not authorized to perform this action.', 'AdApiFaultDetail');
    }
    if (!(req.headers['content-type'] ?? '').startsWith('application/json') || req.body === null || typeof req.body !== 'object') {
      req.problems.push('the body must be JSON with content-type application/json');
      return fault(400, 201, 'ApiInputValidationError', 'One or more input elements failed validation.', 'ApiFaultDetail');
    }
    return null;
  }

  /** The BatchError of one offline conversion, or null when it is applied. */
  function checkConversion(req: FakeRequest, row: unknown, index: number): { Code: number; ErrorCode: string; Message: string } | null {
    const error = (Code: number, ErrorCode: string, Message: string) => ({ Code, ErrorCode, Message });
    if (row === null || typeof row !== 'object' || Array.isArray(row)) return error(5602, 'OfflineConversionIsNull', 'The offline conversion cannot be null.');
    const c = row as Record<string, unknown>;
    for (const key of Object.keys(c)) if (!KNOWN_FIELDS.has(key)) req.problems.push(`OfflineConversions[${index}] has a field OfflineConversion does not define: ${key}`);
    if (c.ExternalAttributionModel !== undefined || c.ExternalAttributionCredit !== undefined) {
      // The doc names a GoalNotEligibleForExternalAttribution error without a code; cnv's goals are not externally attributed.
      req.problems.push(`OfflineConversions[${index}] sets external attribution, which cnv never uses`);
      return error(201, 'ApiInputValidationError', 'One or more input elements failed validation.');
    }
    const name = c.ConversionName;
    if (typeof name !== 'string' || name === '') return error(5605, 'OfflineConversionNameNullOrEmpty', 'The conversion name of offline conversion cannot be null or empty.');
    const goal = goals.find((g) => g.name === name && g.status !== 'Deleted'); // exact: same spelling, spaces and case
    if (!goal) return error(5606, 'OfflineConversionNameInvalid', 'The conversion name do not match an existing offline conversion goal.');
    const nowMs = now().getTime();
    if (nowMs - goal.createdAt.getTime() < TWO_HOURS_MS) {
      return error(5615, 'OfflineConversionNotAcceptedForGoal', 'Offline conversions cannot be accepted for the conversion goal at this time. You must wait 2 hours after the goal was created before uploading offline conversions.');
    }
    const time = c.ConversionTime;
    if (time === undefined || time === null || time === '') return error(5608, 'OfflineConversionTimeNullOrEmpty', 'The conversion time of offline conversion cannot be null or empty .');
    if (typeof time !== 'string' || !UTC_DATE_TIME.test(time) || Number.isNaN(Date.parse(time))) {
      if (typeof time === 'string' && !UTC_DATE_TIME.test(time)) req.problems.push(`OfflineConversions[${index}].ConversionTime must be a UTC xs:dateTime`);
      return error(5607, 'OfflineConversionTimeInvalid', 'The conversion time of offline conversion is invalid.');
    }
    const timeMs = Date.parse(time);
    if (timeMs > nowMs) return error(5614, 'FutureConversionTimeCannotBeSet', 'A future conversion time cannot be set.');
    if (nowMs - timeMs > CONVERSION_WINDOW_MS) return error(5609, 'OfflineConversionTimeOutOfWindow', 'The conversion time is out of the conversion window.');
    const email = c.HashedEmailAddress;
    const phone = c.HashedPhoneNumber;
    const sha256 = /^[0-9a-f]{64}$/;
    if (email !== undefined && email !== null && (typeof email !== 'string' || !sha256.test(email))) {
      req.problems.push(`OfflineConversions[${index}].HashedEmailAddress must be a lower-case hex SHA-256`);
      return error(8004, 'EmailMustBeHashed', "Email address can't be in plain text and must be hashed.");
    }
    if (phone !== undefined && phone !== null && (typeof phone !== 'string' || !sha256.test(phone))) {
      req.problems.push(`OfflineConversions[${index}].HashedPhoneNumber must be a lower-case hex SHA-256`);
      return error(201, 'ApiInputValidationError', 'One or more input elements failed validation.');
    }
    const clickId = c.MicrosoftClickId;
    const hasHash = typeof email === 'string' || typeof phone === 'string';
    if (clickId === undefined || clickId === null || clickId === '') {
      // "The MSCLKID is optional when you provide a hashed email address or phone number for enhanced conversions."
      if (!hasHash) return error(5603, 'OfflineConversionMicrosoftClickIdNullOrEmpty', 'The Microsoft Click Id of offline conversion cannot be null or empty.');
    } else {
      if (typeof clickId !== 'string' || !/^[0-9a-f]{32}$/i.test(clickId)) return error(5604, 'OfflineConversionMicrosoftClickIdInvalid', 'The Microsoft Click Id of the offline conversion is invalid.');
      const clickedAt = clicks[clickId];
      if (clickedAt) {
        if (timeMs < clickedAt.getTime()) return error(5616, 'ConversionTimeEarlierThanClickTime', 'The conversion time must be later than the click time.');
        if (timeMs - clickedAt.getTime() > (goal.conversionWindowInMinutes ?? 43_200) * 60_000) {
          return error(5617, 'ClickIdDateTimeOutsideGoalConversionWindow', 'The date and time for the click ID is outside the conversion window for this goal.');
        }
      }
    }
    const value = c.ConversionValue;
    if (value !== undefined && value !== null && (typeof value !== 'number' || !Number.isFinite(value) || value < 0)) {
      return error(5610, 'OfflineConversionValueInvalid', 'The conversion value of offline conversion is invalid.');
    }
    const currency = c.ConversionCurrencyCode;
    if (currency !== undefined && currency !== null && (typeof currency !== 'string' || !CURRENCIES.has(currency))) {
      return error(5611, 'OfflineConversionCurrencyCodeInvalid', 'The currency code of offline conversion is invalid.');
    }
    return null;
  }

  function apply(req: FakeRequest, plan: MicrosoftAdsPlan | undefined): FakeAnswer {
    const refused = checkHeaders(req);
    if (refused) return refused;
    const list = (req.body as { OfflineConversions?: unknown }).OfflineConversions;
    for (const key of Object.keys(req.body as object)) if (key !== 'OfflineConversions') req.problems.push(`unknown request element ${key}`);
    if (!Array.isArray(list) || list.length === 0) return fault(400, 5600, 'OfflineConversionsNullOrEmpty', 'The list of offline conversions cannot be null or empty.', 'ApiFaultDetail');
    if (list.length > MAX_PER_CALL) return fault(400, 5601, 'OfflineConversionsLimitExceeded', 'The list of offline conversions exceeds the limit.', 'ApiFaultDetail');
    const extra = plan?.kind === 'partial_errors' ? plan.errors : [];
    const partialErrors: Record<string, unknown>[] = [];
    list.forEach((row, index) => {
      const planned = extra.find((e) => e.Index === index);
      const error = planned ? { Code: planned.Code, ErrorCode: planned.ErrorCode, Message: 'Planned error.' } : checkConversion(req, row, index);
      if (error) {
        partialErrors.push({ ...error, Details: null, FieldPath: null, ForwardCompatibilityMap: null, Index: index, Type: 'BatchError' });
        return;
      }
      const c = row as Record<string, string | number | undefined>;
      const clickId = (c.MicrosoftClickId as string | undefined) ?? null;
      const duplicate = applied.some((a) => a.microsoftClickId !== null && a.microsoftClickId === clickId && a.conversionTime === c.ConversionTime && a.conversionName === c.ConversionName);
      applied.push({
        conversionName: c.ConversionName as string,
        conversionTime: c.ConversionTime as string,
        microsoftClickId: clickId,
        hashedEmailAddress: (c.HashedEmailAddress as string | undefined) ?? null,
        hashedPhoneNumber: (c.HashedPhoneNumber as string | undefined) ?? null,
        conversionValue: (c.ConversionValue as number | undefined) ?? null,
        conversionCurrencyCode: (c.ConversionCurrencyCode as string | undefined) ?? null,
        duplicate,
      });
    });
    return { status: 200, headers: { TrackingId: 'fake-tracking-id' }, json: { PartialErrors: partialErrors } };
  }

  /**
   * The BatchError of one OfflineConversionAdjustment, or null when applied: AdjustmentType Restate or Retract,
   * AdjustmentTime (UTC, required, not before the conversion), a value with a restatement, and the conversion it
   * names (goal, time, click id or hashed identity) must have been applied before.
   */
  function checkAdjustment(req: FakeRequest, row: unknown, index: number): { Code: number; ErrorCode: string; Message: string } | null {
    const error = (Code: number, ErrorCode: string, Message: string) => ({ Code, ErrorCode, Message });
    if (row === null || typeof row !== 'object' || Array.isArray(row)) return error(5602, 'OfflineConversionIsNull', 'The offline conversion adjustment cannot be null.');
    const a = row as Record<string, unknown>;
    for (const key of Object.keys(a)) if (!ADJUSTMENT_FIELDS.has(key)) req.problems.push(`OfflineConversionAdjustments[${index}] has a field OfflineConversionAdjustment does not define: ${key}`);
    if (a.AdjustmentType !== 'Restate' && a.AdjustmentType !== 'Retract') {
      req.problems.push(`OfflineConversionAdjustments[${index}].AdjustmentType must be Restate or Retract`);
      return error(201, 'ApiInputValidationError', 'One or more input elements failed validation.');
    }
    for (const field of ['AdjustmentTime', 'ConversionTime'] as const) {
      const value = a[field];
      if (typeof value !== 'string' || !UTC_DATE_TIME.test(value)) {
        req.problems.push(`OfflineConversionAdjustments[${index}].${field} must be a UTC xs:dateTime`);
        return error(5607, 'OfflineConversionTimeInvalid', 'The conversion time of offline conversion is invalid.');
      }
    }
    // "The date and time must be within the last 90 days, otherwise the operation will fail" (OfflineConversionAdjustment,
    // ConversionTime): refused as ApplyOfflineConversions refuses a conversion that old.
    if (now().getTime() - Date.parse(a.ConversionTime as string) > CONVERSION_WINDOW_MS) {
      return error(5609, 'OfflineConversionTimeOutOfWindow', 'The conversion time is out of the conversion window.');
    }
    if (Date.parse(a.AdjustmentTime as string) < Date.parse(a.ConversionTime as string)) {
      req.problems.push(`OfflineConversionAdjustments[${index}].AdjustmentTime is earlier than the conversion time`);
      return error(201, 'ApiInputValidationError', 'One or more input elements failed validation.');
    }
    if (a.AdjustmentType === 'Restate') {
      const value = a.AdjustmentValue;
      if (typeof value !== 'number' || !Number.isFinite(value) || value < 0) return error(5610, 'OfflineConversionValueInvalid', 'The conversion value of offline conversion is invalid.');
      const currency = a.AdjustmentCurrencyCode;
      if (currency !== undefined && currency !== null && (typeof currency !== 'string' || !CURRENCIES.has(currency))) {
        return error(5611, 'OfflineConversionCurrencyCodeInvalid', 'The currency code of offline conversion is invalid.');
      }
    } else if (a.AdjustmentValue !== undefined && a.AdjustmentValue !== null) {
      req.problems.push(`OfflineConversionAdjustments[${index}]: a retraction carries no AdjustmentValue`);
    }
    const original = applied.find(
      (c) => c.conversionName === a.ConversionName && c.conversionTime === a.ConversionTime &&
        ((typeof a.MicrosoftClickId === 'string' && c.microsoftClickId === a.MicrosoftClickId) ||
          (typeof a.HashedEmailAddress === 'string' && c.hashedEmailAddress === a.HashedEmailAddress) ||
          (typeof a.HashedPhoneNumber === 'string' && c.hashedPhoneNumber === a.HashedPhoneNumber)),
    );
    if (!original) {
      req.problems.push(`OfflineConversionAdjustments[${index}] names no conversion applied before (name, time and click id or hashed identity)`);
      return error(201, 'ApiInputValidationError', 'One or more input elements failed validation.');
    }
    return null;
  }

  function adjust(req: FakeRequest): FakeAnswer {
    const refused = checkHeaders(req);
    if (refused) return refused;
    const list = (req.body as { OfflineConversionAdjustments?: unknown }).OfflineConversionAdjustments;
    for (const key of Object.keys(req.body as object)) if (key !== 'OfflineConversionAdjustments') req.problems.push(`unknown request element ${key}`);
    if (!Array.isArray(list) || list.length === 0) return fault(400, 5600, 'OfflineConversionsNullOrEmpty', 'The list of offline conversion adjustments cannot be null or empty.', 'ApiFaultDetail');
    if (list.length > MAX_PER_CALL) return fault(400, 5601, 'OfflineConversionsLimitExceeded', 'The list of offline conversion adjustments exceeds the limit.', 'ApiFaultDetail');
    const partialErrors: Record<string, unknown>[] = [];
    list.forEach((row, index) => {
      const error = checkAdjustment(req, row, index);
      if (error) {
        partialErrors.push({ ...error, Details: null, FieldPath: null, ForwardCompatibilityMap: null, Index: index, Type: 'BatchError' });
        return;
      }
      const a = row as Record<string, string | number | undefined>;
      adjustments.push({
        adjustmentType: a.AdjustmentType as 'Restate' | 'Retract',
        adjustmentTime: a.AdjustmentTime as string,
        adjustmentValue: (a.AdjustmentValue as number | undefined) ?? null,
        adjustmentCurrencyCode: (a.AdjustmentCurrencyCode as string | undefined) ?? null,
        conversionName: a.ConversionName as string,
        conversionTime: a.ConversionTime as string,
        microsoftClickId: (a.MicrosoftClickId as string | undefined) ?? null,
      });
    });
    return { status: 200, headers: { TrackingId: 'fake-tracking-id' }, json: { PartialErrors: partialErrors } };
  }

  function queryGoals(req: FakeRequest): FakeAnswer {
    const refused = checkHeaders(req);
    if (refused) return refused;
    const body = req.body as { ConversionGoalIds?: unknown; ConversionGoalTypes?: unknown };
    if (typeof body.ConversionGoalTypes !== 'string' || body.ConversionGoalTypes === '') {
      return fault(400, 201, 'ApiInputValidationError', 'One or more input elements failed validation.', 'ApiFaultDetail');
    }
    const types = body.ConversionGoalTypes.split(/[\s,]+/);
    const ids = Array.isArray(body.ConversionGoalIds) ? body.ConversionGoalIds.map(String) : [];
    const listed = types.includes('OfflineConversion')
      ? goals.map((g, i) => ({ ...g, id: String(1000 + i) })).filter((g) => ids.length === 0 || ids.includes(g.id))
      : [];
    return {
      status: 200,
      headers: { TrackingId: 'fake-tracking-id' },
      json: {
        ConversionGoals: listed.map((g) => ({
          ConversionWindowInMinutes: g.conversionWindowInMinutes ?? 43_200,
          CountType: 'All',
          GoalCategory: 'Signup',
          Id: g.id,
          Name: g.name,
          Scope: 'Account',
          Status: g.status ?? 'Active',
          Type: 'OfflineConversion',
        })),
        PartialErrors: [],
      },
    };
  }

  const server = await startFakeServer<MicrosoftAdsPlan>(
    'microsoft-ads',
    (req, plan) => {
      if (plan?.kind === 'hang') return 'hang';
      if (plan?.kind === 'status') return { status: plan.status, text: plan.text ?? '', ...(plan.headers ? { headers: plan.headers } : {}) };
      if (plan?.kind === 'fault') {
        return fault(plan.status, plan.code, plan.errorCode, `Planned fault ${plan.errorCode}.`, plan.code === 0 || plan.code === 117 || plan.code < 200 ? 'AdApiFaultDetail' : 'ApiFaultDetail', plan.headers);
      }
      switch (req.path) {
        case MICROSOFT_FAKE_PATHS.authorize:
          return authorize(req);
        case MICROSOFT_FAKE_PATHS.token:
          return tokenEndpoint(req, plan);
        case MICROSOFT_FAKE_PATHS.apply:
          return apply(req, plan);
        case MICROSOFT_FAKE_PATHS.queryGoals:
          return queryGoals(req);
        case MICROSOFT_FAKE_PATHS.adjust:
          return adjust(req);
        default:
          req.problems.push(`no such endpoint: ${req.method} ${req.path}`);
          return { status: 404, text: 'Not Found' };
      }
    },
    options.port === undefined ? {} : { port: options.port },
  );

  const authorizeUrl = `${server.url}${MICROSOFT_FAKE_PATHS.authorize}`;
  const tokenUrl = `${server.url}${MICROSOFT_FAKE_PATHS.token}`;
  return Object.assign(server, {
    clientId,
    clientSecret,
    developerToken,
    customerId,
    accountId,
    goals,
    clicks,
    applied,
    adjustments,
    authorizeUrl,
    tokenUrl,
    env: {
      CNV_MICROSOFT_ADS_API_BASE: server.url,
      CNV_MICROSOFT_OAUTH_AUTHORIZE_URL: authorizeUrl,
      CNV_MICROSOFT_OAUTH_TOKEN_URL: tokenUrl,
      CNV_MICROSOFT_OAUTH_CLIENT_ID: clientId,
      CNV_MICROSOFT_OAUTH_CLIENT_SECRET: clientSecret,
      CNV_MICROSOFT_ADS_DEVELOPER_TOKEN: developerToken,
    },
    issueAccessToken({ expiresInSeconds = 3600 }: { expiresInSeconds?: number } = {}) {
      const access = token('EwA-fake-access-');
      accessTokens.set(access, now().getTime() + expiresInSeconds * 1000);
      return access;
    },
    revokeRefreshTokens() {
      refreshTokens.clear();
    },
    issueRefreshToken() {
      const refresh = token('M.C-fake-refresh-');
      refreshTokens.set(refresh, [MSADS_SCOPE, 'offline_access']);
      return refresh;
    },
    revokeAccessTokens() {
      accessTokens.clear();
    },
  });
}
