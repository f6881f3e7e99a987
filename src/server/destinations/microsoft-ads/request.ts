/**
 * The request cnv sends Microsoft Advertising: Campaign Management API v13 `ApplyOfflineConversions`, REST/JSON
 * (https://learn.microsoft.com/en-us/advertising/campaign-management-service/applyofflineconversions?view=bingads-13&pivots=rest):
 * `POST {adsApiBase}/CampaignManagement/v13/OfflineConversions/Apply`, body `{"OfflineConversions": [...]}`, headers
 * `Authorization: Bearer <access token>`, `DeveloperToken`, `CustomerId`, `CustomerAccountId`.
 */
import { adUserDataDenied, consentDenied, type DeliveryInput, type DeliveryOutcome, type RequestSummary, type SendContext } from '../destination';
import { hashIdentity, microsoftClickId } from './identity';
import { conversionValueOf } from '../../../protocol/webhook';

/** Path of ApplyOfflineConversions under the Campaign Management host. */
export const APPLY_OFFLINE_CONVERSIONS_PATH = '/CampaignManagement/v13/OfflineConversions/Apply';

/** Path of GetConversionGoalsByIds (REST), the cheap read `testConnection` uses. */
export const QUERY_CONVERSION_GOALS_PATH = '/CampaignManagement/v13/ConversionGoals/QueryByIds';

/** "You can add a maximum of 1,000 offline conversions per service request" (ApplyOfflineConversions, OfflineConversions). */
export const MAX_OFFLINE_CONVERSIONS_PER_CALL = 1000;

const DAY_MS = 86_400_000;

/**
 * "The date and time must be within the last 90 days, otherwise the operation will fail"; the longest conversion window a
 * goal can have is also 90 days (129600 minutes). OfflineConversion.ConversionTime and OfflineConversionGoal docs.
 */
export const MAX_CONVERSION_AGE_MS = 90 * DAY_MS;

/** A conversion dated ahead of our clock by at most this much waits for it (reporter clock skew); beyond, it is refused. */
const MAX_FUTURE_SKEW_MS = DAY_MS;

/**
 * A goal name is at most 100 characters. Verified 2026-11-29 in Microsoft's own entity limits, “Conversion Goals”: “Name
 * | The name of the conversion goal. The name can contain a maximum of 100 characters.”
 * (https://learn.microsoft.com/en-us/advertising/guides/entity-limits, MicrosoftDocs/Advertising-docs). OfflineConversion
 * .ConversionName must be a goal's name (5605 OfflineConversionNameNullOrEmpty, 5606 OfflineConversionNameInvalid), so
 * publish refuses a longer one (connect.ts checkAction), 400 with the error envelope. NOT found in Microsoft's documents:
 * which characters a goal name may hold; cnv refuses control characters on the reasoning that a goal name is one typed
 * line, not on a documented rule; and whether “characters” counts UTF-16 units (cnv does, as .NET's String.Length).
 */
export const MAX_GOAL_NAME_LENGTH = 100;

/** One element of `OfflineConversions`, as the REST reference's Request JSON spells it. */
export interface OfflineConversion {
  ConversionName: string;
  /** UTC xs:dateTime, e.g. `2026-11-21T09:30:00.000Z`. Also Microsoft's duplicate key with the click id. */
  ConversionTime: string;
  MicrosoftClickId?: string;
  ConversionValue?: number;
  ConversionCurrencyCode?: string;
  HashedEmailAddress?: string;
  HashedPhoneNumber?: string;
}

/** The action config a flow gives this destination, read leniently (checkAction already validated it at publish). */
export interface MicrosoftActionConfig {
  conversionName: string | null;
  value: number | null;
  currency: string | null;
}

/** Reads `conversion_name`, `value` and `currency` of a flow action's config. */
export function readActionConfig(config: Record<string, unknown>): MicrosoftActionConfig {
  const name = config.conversion_name;
  const value = config.value;
  const currency = config.currency;
  return {
    // Never trimmed or re-cased: Microsoft matches the goal name exactly.
    conversionName: typeof name === 'string' && name.trim() !== '' ? name : null,
    // Rounded as a report's value is (float noise off: conversionValueOf), else as published.
    value: typeof value === 'number' && Number.isFinite(value) && value >= 0 ? (conversionValueOf(value) ?? value) : null,
    currency: typeof currency === 'string' && /^[A-Za-z]{3}$/.test(currency) ? currency.toUpperCase() : null,
  };
}

/** ConversionTime: UTC, as the doc requires ("The value must be in Coordinated Universal Time (UTC)"). */
export function conversionTime(occurredAt: Date): string {
  return occurredAt.toISOString();
}

/** An input ready to send, or the outcome it already has without asking Microsoft. */
export type PreparedConversion =
  | { ok: true; conversion: OfflineConversion; summary: RequestSummary }
  | { ok: false; outcome: DeliveryOutcome };

/**
 * Builds the OfflineConversion of one input. ConversionTime is the event's own time, never "now", so a retry sends the
 * same (click id, time) pair and Microsoft ignores it as a duplicate instead of counting it twice.
 */
export function prepareConversion(input: DeliveryInput, now: Date): PreparedConversion {
  const config = readActionConfig(input.actionConfig);
  if (config.conversionName === null) {
    return fail('invalid_action_config', 'The flow action has no conversion_name.', 'Set conversion_name to the exact name of your Microsoft Advertising offline conversion goal.');
  }
  const ageMs = now.getTime() - input.occurredAt.getTime();
  if (ageMs < 0) {
    if (-ageMs > MAX_FUTURE_SKEW_MS) {
      return fail('conversion_time_in_future', 'The conversion is dated more than a day ahead of now.', "Check the clock or the occurred_at of the reporter.");
    }
    return {
      ok: false,
      outcome: {
        kind: 'retry_later',
        afterMs: -ageMs + 1000,
        error: { code: 'conversion_time_in_future', message: 'The conversion is dated a little ahead of now; Microsoft refuses future conversion times, so it waits until then.' },
      },
    };
  }
  if (ageMs > MAX_CONVERSION_AGE_MS) {
    return fail('conversion_too_old', 'The conversion happened more than 90 days ago; Microsoft accepts offline conversions for 90 days only.', 'Nothing to change: conversions must reach Microsoft within 90 days.');
  }

  const summary: RequestSummary = { conversion_name: config.conversionName, conversion_time: conversionTime(input.occurredAt) };
  const conversion: OfflineConversion = { ConversionName: config.conversionName, ConversionTime: conversionTime(input.occurredAt) };
  const notes: string[] = [];

  if (adUserDataDenied(input)) {
    // The visitor denied ad_user_data consent. OfflineConversion has no consent field, and Microsoft's documents
    // (OfflineConversion, ApplyOfflineConversions, UET consent mode) say nothing that allows sending the click id or a
    // hashed email without consent: cnv sends Microsoft nothing for this visitor (not verified either way: withheld).
    return { ok: false, outcome: { kind: 'skipped', reason: consentDenied('Microsoft Advertising', 'the click id and hashed email or phone are user data.'), request: summary } };
  }

  const { clickId, source } = microsoftClickId(input);
  if (clickId !== null) {
    const clickAgeMs = input.touchCapturedAt ? input.occurredAt.getTime() - input.touchCapturedAt.getTime() : 0;
    if (clickAgeMs > MAX_CONVERSION_AGE_MS) {
      // No goal's conversion window reaches back that far; the click could only be refused or ignored.
      notes.push('click id left out: the ad click was more than 90 days before the conversion');
    } else {
      conversion.MicrosoftClickId = clickId;
      summary.microsoft_click_id = clickId;
      summary.click_id_source = source;
    }
  }

  {
    const hashed = hashIdentity(input.identity);
    if (hashed.email !== null) conversion.HashedEmailAddress = summary.hashed_email = hashed.email;
    if (hashed.phone !== null) conversion.HashedPhoneNumber = summary.hashed_phone = hashed.phone;
    notes.push(...hashed.skipped);
  }

  // "The MSCLKID is optional when you provide a hashed email address or phone number for enhanced conversions."
  if (conversion.MicrosoftClickId === undefined && conversion.HashedEmailAddress === undefined && conversion.HashedPhoneNumber === undefined) {
    return fail(
      'no_match_key',
      'The conversion has no Microsoft click id (msclkid) and no usable email or phone, so Microsoft could not match it.',
      'Keep the cnv loader on your landing pages (it keeps the msclkid of Microsoft ad clicks), or report an email or phone with the signup.',
      notes,
    );
  }

  // The report's own value wins over the flow action's fixed one: OfflineConversion.ConversionValue ("The value of the
  // offline conversion", a double) with ConversionCurrencyCode ("The currency code for the offline conversion"),
  // https://learn.microsoft.com/en-us/advertising/campaign-management-service/offlineconversion?view=bingads-13.
  if (input.value !== null && input.currency !== null) {
    conversion.ConversionValue = summary.value = input.value;
    conversion.ConversionCurrencyCode = summary.currency = input.currency;
  } else if (config.value !== null) {
    conversion.ConversionValue = summary.value = config.value;
    if (config.currency !== null) conversion.ConversionCurrencyCode = summary.currency = config.currency;
  }
  if (notes.length > 0) summary.notes = notes;
  return { ok: true, conversion, summary };
}

function fail(code: string, message: string, hint: string, notes: string[] = []): PreparedConversion {
  return { ok: false, outcome: { kind: 'failed', error: { code, message, hint }, ...(notes.length ? { request: { notes } } : {}) } };
}

/** The ids a call goes to: the connection's customer (manager account) id and ad account id. */
export interface MicrosoftAccountIds {
  customerId: string;
  accountId: string;
}

/** Reads the account ids a connection stored; null when the connection lacks them. */
export function accountIds(settings: Record<string, unknown>): MicrosoftAccountIds | null {
  const customerId = settings.customer_id;
  const accountId = settings.account_id;
  if (typeof customerId !== 'string' || typeof accountId !== 'string' || customerId === '' || accountId === '') return null;
  return { customerId, accountId };
}

/**
 * The developer token: the connection's own when the user entered one, else the service's
 * (`CNV_MICROSOFT_ADS_DEVELOPER_TOKEN`). A universal developer token "can be used to authenticate with any Microsoft
 * Advertising user credentials" (https://learn.microsoft.com/en-us/advertising/guides/get-started#get-developer-token),
 * so one per cnv installation is the normal case. Empty string when there is none.
 */
export function developerToken(ctx: Pick<SendContext, 'settings' | 'connection'>): string {
  return ctx.connection.credentials.developer_token || ctx.settings.microsoft.developerToken;
}

/** The request headers of a Campaign Management REST call (request-header-rest include of every REST reference page). */
export function apiHeaders(accessToken: string, devToken: string, ids: MicrosoftAccountIds): Record<string, string> {
  return {
    Authorization: `Bearer ${accessToken}`,
    DeveloperToken: devToken,
    CustomerId: ids.customerId,
    CustomerAccountId: ids.accountId,
  };
}

/** The ApplyOfflineConversions URL under an API base (the real host or a fake). */
export function applyUrl(adsApiBase: string): string {
  return `${adsApiBase}${APPLY_OFFLINE_CONVERSIONS_PATH}`;
}

/** The GetConversionGoalsByIds URL under an API base. */
export function queryGoalsUrl(adsApiBase: string): string {
  return `${adsApiBase}${QUERY_CONVERSION_GOALS_PATH}`;
}
