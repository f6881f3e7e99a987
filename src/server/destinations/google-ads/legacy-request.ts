/**
 * Builds the Google Ads API click conversion upload (ConversionUploadService.UploadClickConversions, REST JSON mapping):
 * `POST {base}/{version}/customers/{customer_id}:uploadClickConversions` with `{conversions: [ClickConversion],
 * partialFailure: true}`. Pure: no I/O, so the exact request is testable.
 *
 * Verified on 2026-11-27 in Google's own pages:
 * - The version: v22 was sunset on 7 October 2026 ("all v22 API requests will begin to fail", Google Ads developer
 *   blog, 2026-09-02, "Google Ads API v22 sunset reminder"); "If you are new to the Google Ads API, we recommend that
 *   you start with v26" (developers.google.com/google-ads/api/docs/sunset-dates); v26 released October 2026, its
 *   projected sunset November 2027 (blog, 2025-09-04, "More frequent releases"). Default `CNV_GOOGLE_ADS_API_VERSION`
 *   v26 ("The latest active version is v26", the v23 and v24 reference pages). The v26 reference of ClickConversion
 *   lists consent, conversion_action, conversion_date_time and conversion_value as before, and v26's
 *   ClickConversionResult gclid, gbraid, wbraid and user_identifiers.
 * - The developer token: "Developer tokens were sunset on September 9, 2026 … You can continue to send developer
 *   tokens in the headers of your API calls, but this is optional and ignored by the API servers. … Your API access
 *   levels are now determined by the Google Cloud project you used to generate your OAuth credentials"
 *   (developers.google.com/google-ads/api/docs/api-policy/developer-token; also "Feature deprecations", 2026-09-09).
 *   So no upload is refused for want of one; a token still configured (CNV_GOOGLE_ADS_DEVELOPER_TOKEN, or one a
 *   connection stored before) is sent, as Google allows.
 * - A project with test access calling a production account: CLOUD_PROJECT_NOT_APPROVED_FOR_PRODUCTION from v25,
 *   ACTION_NOT_PERMITTED before (same page); new adopters of uploadClickConversions since 15 June 2026 get
 *   CUSTOMER_NOT_ALLOWLISTED_FOR_THIS_FEATURE (blog, 2026-05-15). legacy-response.ts gives each a hint.
 * Not verified: order_id and currency_code on the v26 page itself (seen on the v19 to v25 pages); the HTTP status and body Google answers for a sunset version (the blog says only that
 * requests fail).
 */
import type { Settings } from '../../settings';
import { adUserDataDenied, consentDenied, type DeliveryError, type DeliveryInput, type RequestSummary, type SendContext } from '../destination';
import { formatConversionDateTime } from './conversion-time';
import { hashIdentityForGoogleAds } from './legacy-identity';
import { sha256Hex } from '../hashing';

/** Click id fields of a ClickConversion, in the order of preference: exactly one is sent. */
export const GOOGLE_CLICK_ID_PRIORITY = ['gclid', 'gbraid', 'wbraid'] as const;
export type GoogleClickIdField = (typeof GOOGLE_CLICK_ID_PRIORITY)[number];

/** Length of the order id we derive (hex characters of a SHA-256): unique enough, short, and free of PII. */
export const ORDER_ID_LENGTH = 32;

/** A UserIdentifier: exactly one of its identifier fields (it is a oneof). */
export type UserIdentifier = { hashedEmail: string } | { hashedPhoneNumber: string };

/** ClickConversion in the REST JSON mapping (lowerCamelCase); only the fields we send. */
export interface ClickConversion {
  conversionAction: string;
  conversionDateTime: string;
  orderId: string;
  gclid?: string;
  gbraid?: string;
  wbraid?: string;
  userIdentifiers?: UserIdentifier[];
  /**
   * ClickConversion.conversion_value ("The value of the conversion for the advertiser", a double) and currency_code
   * ("the ISO 4217 3-character currency code"), google/ads/googleads/v25/services/conversion_upload_service.proto.
   */
  conversionValue?: number;
  currencyCode?: string;
  /**
   * Consent of the visitor (Google Ads API Consent: `adUserData` "represents consent for ad user data"). Never
   * `adPersonalization`: "This can only be set for OfflineUserDataJobService and UserDataService" (Consent, v23 to v26
   * reference pages, re-read 2026-11-29), so a click conversion carries only ad_user_data.
   */
  consent?: { adUserData: 'GRANTED' | 'DENIED' };
}

export interface UploadClickConversionsBody {
  conversions: ClickConversion[];
  partialFailure: true;
}

/** Most conversions Google Ads accepts in one uploadClickConversions request. */
export const MAX_CONVERSIONS_PER_REQUEST = 2000;

/** One conversion ready to upload: where and how to send it, the conversion itself, and a summary without PII. */
export interface PreparedConversion {
  url: string;
  headers: Record<string, string>;
  /** Conversions with the same key go to the same customer with the same credentials: they can share a request. */
  requestKey: string;
  conversion: ClickConversion;
  summary: RequestSummary;
}

/** The account an upload goes to and the credentials it is sent with, read once per batch from the connection. */
export interface GoogleAdsAccount {
  customerId: string;
  loginCustomerId: string | null;
  accessToken: string;
  /** Sent as `developer-token` when there is one; Google ignores it since 9 September 2026. */
  developerToken: string | null;
}

function text(value: unknown): string | null {
  if (typeof value === 'number' && Number.isFinite(value)) return String(value);
  return typeof value === 'string' && value.trim() !== '' ? value.trim() : null;
}

/** A customer id with its display dashes removed (`123-456-7890` is `1234567890`); null when it is not digits. */
export function normalizeCustomerId(value: unknown): string | null {
  const raw = text(value);
  if (raw === null) return null;
  const digits = raw.replace(/-/g, '');
  return /^\d{1,20}$/.test(digits) ? digits : null;
}

/**
 * Reads the connection's Google Ads account: `customer_id` (required) and `login_customer_id` (manager account,
 * optional) from its settings, a developer token if one is known (the connection's `developer_token` credential from
 * before the sunset, else CNV_GOOGLE_ADS_DEVELOPER_TOKEN; optional), and the OAuth access token the caller got from
 * `ctx.accessToken()`.
 */
export function readGoogleAdsAccount(
  ctx: Pick<SendContext, 'connection' | 'settings'>,
  accessToken: string,
): { ok: true; value: GoogleAdsAccount } | { ok: false; error: DeliveryError } {
  const stored = ctx.connection.settings;
  const customerId = normalizeCustomerId(stored.customer_id);
  if (customerId === null) {
    return { ok: false, error: { code: 'destination_misconfigured', message: 'The connected Google Ads destination has no valid customer_id (10 digits, dashes allowed).' } };
  }
  const login = stored.login_customer_id;
  const loginCustomerId = login === undefined || login === null || login === '' ? null : normalizeCustomerId(login);
  if (loginCustomerId === null && !(login === undefined || login === null || login === '')) {
    return { ok: false, error: { code: 'destination_misconfigured', message: 'The connected Google Ads destination has an invalid login_customer_id (digits, dashes allowed).' } };
  }
  const token = text(accessToken);
  if (token === null) {
    return { ok: false, error: { code: 'destination_credentials_missing', message: 'The connected Google Ads destination has no access_token (the OAuth flow supplies it).' } };
  }
  const developerToken = text(ctx.connection.credentials.developer_token) ?? text(ctx.settings.googleAdsDeveloperToken);
  return { ok: true, value: { customerId, loginCustomerId, accessToken: token, developerToken } };
}

/**
 * The action's `config.conversion.id` as given (a string), or null. Not data-manager-request's `conversionActionId`:
 * that one reduces a resource name to its id, where this path sends a resource name as it is.
 */
function configuredConversionId(actionConfig: Record<string, unknown>): string | null {
  const id = (actionConfig.conversion as { id?: unknown } | undefined)?.id;
  return typeof id === 'string' ? id : null;
}

/** `customers/{customer_id}/conversionActions/{id}`, or the id as is when it already is such a resource name. */
export function conversionActionResourceName(customerId: string, conversionId: string | null): string | null {
  const id = conversionId?.trim() ?? '';
  if (/^customers\/\d+\/conversionActions\/\d+$/.test(id)) return id;
  if (/^\d{1,20}$/.test(id)) return `customers/${customerId}/conversionActions/${id}`;
  return null;
}

/**
 * The order id of a conversion: the first 32 hex characters of SHA-256(site_key ":" customer_event_id). Stable, so a
 * resend after a crash carries the same order id and Google Ads counts it once; a hash, so no PII reaches Google.
 * Browser-only events (no customer_event_id) use their event id.
 */
export function deriveOrderId(siteKey: string, customerEventId: string | null, eventId: string): string {
  const key = customerEventId === null ? `event:${eventId}` : customerEventId;
  return sha256Hex(`${siteKey}:${key}`).slice(0, ORDER_ID_LENGTH);
}

/** The single click id to send: gclid, else gbraid, else wbraid; null when there is none. */
export function pickClickId(clickIds: DeliveryInput['clickIds']): { field: GoogleClickIdField; value: string } | null {
  for (const field of GOOGLE_CLICK_ID_PRIORITY) {
    const value = clickIds[field];
    if (typeof value === 'string' && value.trim() !== '') return { field, value: value.trim() };
  }
  return null;
}

/** The uploadClickConversions URL of the account's customer and the headers of its requests (token, manager account). */
export function legacyUploadRequest(account: GoogleAdsAccount, settings: Settings): { url: string; headers: Record<string, string> } {
  const { customerId, loginCustomerId, accessToken, developerToken } = account;
  return {
    url: `${settings.googleAdsApiBase}/${settings.googleAdsApiVersion}/customers/${customerId}:uploadClickConversions`,
    headers: {
      'content-type': 'application/json',
      authorization: `Bearer ${accessToken}`,
      ...(developerToken ? { 'developer-token': developerToken } : {}),
      ...(loginCustomerId ? { 'login-customer-id': loginCustomerId } : {}),
    },
  };
}

/**
 * Prepares the click conversion of one event action for the account `readGoogleAdsAccount` read, or says why it cannot
 * be uploaded (a permanent failure).
 */
export function prepareClickConversion(
  input: DeliveryInput,
  account: GoogleAdsAccount,
  settings: Settings,
): { ok: true; prepared: PreparedConversion } | { ok: false; error: DeliveryError; skipped?: true } {
  const { customerId, loginCustomerId } = account;
  const conversionAction = conversionActionResourceName(customerId, configuredConversionId(input.actionConfig));
  if (conversionAction === null) {
    return {
      ok: false,
      error: { code: 'invalid_conversion_action', message: "The action's config.conversion.id must be a numeric conversion action id or a customers/{id}/conversionActions/{id} resource name." },
    };
  }
  let conversionDateTime: string;
  try {
    conversionDateTime = formatConversionDateTime(input.occurredAt, input.siteTimezone);
  } catch {
    return { ok: false, error: { code: 'invalid_site_timezone', message: `The site's timezone '${input.siteTimezone}' is not a known IANA timezone.` } };
  }

  const click = pickClickId(input.clickIds);
  const denied = adUserDataDenied(input);
  // Ad user data denied: no hashed identifier; the click goes with consent DENIED, as for the Data Manager API.
  const identity = hashIdentityForGoogleAds(denied ? {} : input.identity);
  if (denied && click === null) {
    return { ok: false, skipped: true, error: consentDenied('Google Ads', 'no Google click id was recorded, and the email and phone may not be sent.') };
  }
  const userIdentifiers: UserIdentifier[] = [];
  if (identity.email) userIdentifiers.push({ hashedEmail: identity.email });
  if (identity.phone) userIdentifiers.push({ hashedPhoneNumber: identity.phone });
  // Google matches a name only inside a whole address (first and last name with country code and postal code); the
  // webhook collects no address, and an incomplete addressInfo risks a row error that would lose the gclid too.
  if (input.identity.first_name?.trim() || input.identity.last_name?.trim()) {
    identity.skipped.push('name skipped: Google Ads matches names only with a country code and postal code, which reports do not carry');
  }
  if (click === null && userIdentifiers.length === 0) {
    return {
      ok: false,
      error: {
        code: 'no_match_keys',
        message:
          'Nothing to attribute the conversion with: no click id (gclid, gbraid, wbraid) and no usable email or phone.' +
          (identity.skipped.length > 0 ? ` ${identity.skipped.join('; ')}.` : ''),
      },
    };
  }

  const orderId = deriveOrderId(input.siteKey, input.customerEventId, input.eventId);
  const conversion: ClickConversion = {
    conversionAction,
    conversionDateTime,
    orderId,
    ...(click ? { [click.field]: click.value } : {}),
    ...(userIdentifiers.length > 0 ? { userIdentifiers } : {}),
    ...(input.value !== null && input.currency !== null ? { conversionValue: input.value, currencyCode: input.currency } : {}),
    ...(input.consent.ad_user_data ? { consent: { adUserData: input.consent.ad_user_data === 'denied' ? 'DENIED' : 'GRANTED' } } : {}),
  };
  const { url, headers } = legacyUploadRequest(account, settings);
  const summary: RequestSummary = {
    url,
    customer_id: customerId,
    ...(loginCustomerId ? { login_customer_id: loginCustomerId } : {}),
    conversion_action: conversionAction,
    conversion_date_time: conversionDateTime,
    order_id: orderId,
    click_id: click ? { type: click.field, value: click.value } : null,
    user_identifiers: userIdentifiers.map((u) => ('hashedEmail' in u ? 'hashed_email' : 'hashed_phone_number')),
    ...(conversion.conversionValue !== undefined ? { conversion_value: conversion.conversionValue, currency_code: conversion.currencyCode } : {}),
    ...(identity.skipped.length > 0 ? { skipped: identity.skipped } : {}),
    ...(conversion.consent ? { consent: conversion.consent } : {}),
  };
  const requestKey = JSON.stringify([url, headers]);
  return { ok: true, prepared: { url, headers, requestKey, conversion, summary } };
}

/** The request body of an upload: the conversions, with partial failure on (Google requires it for this call). */
export function uploadBody(conversions: readonly ClickConversion[]): UploadClickConversionsBody {
  return { conversions: [...conversions], partialFailure: true };
}

/**
 * Splits conversions into upload requests: one per request key (customer and credentials), at most
 * MAX_CONVERSIONS_PER_REQUEST each, and never two with the same conversion action and order id in one request (Google
 * would reject both as DUPLICATE_ORDER_ID); such a repeat goes into a later request, where Google dedupes it.
 */
export function planUploadRequests<T extends { prepared: PreparedConversion }>(items: readonly T[]): T[][] {
  const requests: Array<{ key: string; items: T[]; orders: Set<string> }> = [];
  for (const item of items) {
    const { requestKey, conversion } = item.prepared;
    const order = `${conversion.conversionAction} ${conversion.orderId}`;
    let request = requests.find((r) => r.key === requestKey && r.items.length < MAX_CONVERSIONS_PER_REQUEST && !r.orders.has(order));
    if (!request) {
      request = { key: requestKey, items: [], orders: new Set() };
      requests.push(request);
    }
    request.items.push(item);
    request.orders.add(order);
  }
  return requests.map((r) => r.items);
}
