/**
 * Builds LinkedIn's "stream conversion events" call: `POST /rest/conversionEvents` with the Rest.li batch-create
 * header and `{elements: [...]}`, one element per conversion.
 * https://learn.microsoft.com/en-us/linkedin/marketing/integrations/ads-reporting/conversions-api
 */
import { adUserDataDenied, consentDenied, dedupEventId, type DeliveryError, type DeliveryInput, type RequestSummary } from '../destination';
import type { Settings } from '../../settings';
import { sha256Hex } from '../hashing';
import { readLinkedInAction } from './action-config';
import { buildUser, type LinkedInUser } from './identity';

/** How error messages name the platform. */
export const LINKEDIN_LABEL = 'LinkedIn';

export const CONVERSION_EVENTS_PATH = '/rest/conversionEvents';

/** Events per BATCH_CREATE call: "up to 5,000 events in one batch" (LinkedIn's limits as Salesforce's connector page quotes them; index.ts). */
export const MAX_EVENTS_PER_BATCH = 5000;

/** LinkedIn rejects an event sent more than 90 days after it happened. */
export const MAX_EVENT_AGE_MS = 90 * 24 * 60 * 60 * 1000;

/** A conversion a little ahead of LinkedIn's clock is clock skew, not a future event: it is sent with the sending time. */
const FUTURE_SKEW_MS = 5 * 60 * 1000;

/**
 * Longest `eventId` LinkedIn takes: "Plain text, maximum length of 64 characters" (LinkedIn's Conversions API
 * attributes as Salesforce's LinkedIn CAPI connector page lists them,
 * developer.salesforce.com/docs/data/data-cloud-int/guide/c360-a-linkedincapi-connector.html; not found on
 * learn.microsoft.com in the corpus). A report's customer_event_id may hold 200.
 */
export const MAX_EVENT_ID_LENGTH = 64;

/**
 * The `eventId` sent: `dedupEventId` when LinkedIn takes its length, else its SHA-256 hex (64 characters, the same on
 * every resend, so LinkedIn still counts a resend once; an Insight Tag copy can only match an id of at most 64).
 */
export function linkedInEventId(input: Pick<DeliveryInput, 'customerEventId' | 'eventId'>): string {
  const id = dedupEventId(input);
  return id.length <= MAX_EVENT_ID_LENGTH ? id : sha256Hex(id);
}

/** One element of `elements` as LinkedIn takes it. */
export interface ConversionEventElement {
  conversion: string;
  /** Epoch milliseconds. */
  conversionHappenedAt: number;
  conversionValue?: { currencyCode: string; amount: string };
  /**
   * Stable per conversion, so a resend (and the Insight Tag's copy with the same id) is counted once: `dedupEventId`,
   * the report's customer_event_id. "If we receive an Insight Tag event and a Conversions API event from the same
   * account with the same eventId, we discard the duplicate" (learn.microsoft.com/en-us/linkedin/marketing/integrations/
   * conversions/deduplication).
   */
  eventId: string;
  user: LinkedInUser;
}

export type BuiltEvent =
  | { ok: true; element: ConversionEventElement; summary: RequestSummary }
  | { ok: false; error: DeliveryError; summary: RequestSummary; /** Held back by consent: the action is `skipped`. */ skipped?: true };

/** The headers of every versioned LinkedIn Marketing API call; the token is only ever placed here. */
export function linkedInHeaders(settings: Settings, accessToken: string): Record<string, string> {
  return {
    authorization: `Bearer ${accessToken}`,
    'linkedin-version': settings.linkedin.apiVersion,
    'x-restli-protocol-version': '2.0.0',
  };
}

/** The headers of the batch create call. */
export function batchCreateHeaders(settings: Settings, accessToken: string): Record<string, string> {
  return { ...linkedInHeaders(settings, accessToken), 'x-restli-method': 'BATCH_CREATE' };
}

/** A PII-free description of an element: the rule, the time, the event id, hashes of the user ids, kinds only. */
export function summarise(element: ConversionEventElement): RequestSummary {
  return {
    endpoint: CONVERSION_EVENTS_PATH,
    conversion: element.conversion,
    conversion_happened_at: element.conversionHappenedAt,
    event_id: element.eventId,
    // The email is already a hash; the click id is hashed too, so the summary never carries a tracking id as sent.
    user_ids: element.user.userIds.map((id) => ({ id_type: id.idType, sha256: id.idType === 'SHA256_EMAIL' ? id.idValue : sha256Hex(id.idValue) })),
    user_info: element.user.userInfo ? ['firstName', 'lastName'] : [],
    ...(element.conversionValue ? { conversion_value: { ...element.conversionValue } } : {}),
  };
}

/** The element for one delivery input, or why it can never be sent. `now` is when it is sent. */
export function buildConversionEvent(input: DeliveryInput, now: Date): BuiltEvent {
  const base: RequestSummary = { endpoint: CONVERSION_EVENTS_PATH, event_id: linkedInEventId(input) };
  const config = readLinkedInAction(input.actionConfig);
  if (config === null) {
    return {
      ok: false,
      summary: base,
      error: {
        code: 'invalid_action_config',
        message: 'The action has no valid LinkedIn conversion rule.',
        hint: 'Set config.conversion_rule of this flow action to the id of a LinkedIn conversion rule whose source is the Conversions API, then publish the flow again.',
      },
    };
  }
  // Never after the sending time: a report a few minutes ahead (skew the webhook allows) goes with `now`; further
  // ahead is refused below.
  const reportedAt = input.occurredAt.getTime();
  const happenedAt = Math.min(reportedAt, now.getTime());
  const summary: RequestSummary = { ...base, conversion: config.rule.urn, conversion_happened_at: happenedAt };
  if (now.getTime() - happenedAt > MAX_EVENT_AGE_MS) {
    return {
      ok: false,
      summary,
      error: {
        code: 'conversion_too_old',
        message: 'The conversion happened more than 90 days ago; LinkedIn rejects events older than that.',
        hint: 'Nothing to change for this event; report conversions to cnv as they happen.',
      },
    };
  }
  if (reportedAt - now.getTime() > FUTURE_SKEW_MS) {
    return {
      ok: false,
      summary,
      error: { code: 'conversion_in_future', message: 'The conversion time is in the future.', hint: "Check the clock of the system that reports conversions." },
    };
  }
  if (adUserDataDenied(input)) {
    // Every user id LinkedIn matches on is user data: SHA256_EMAIL, LINKEDIN_FIRST_PARTY_ADS_TRACKING_UUID (li_fat_id,
    // "first party cookie ID" of a member's click), ACXIOM_ID, ORACLE_MOAT_ID, and userInfo (names); LinkedIn requires at
    // least one user id (Conversions API, "userIds … required"). With ad_user_data denied nothing may go: skipped.
    return {
      ok: false,
      skipped: true,
      summary: { ...summary, consent: 'ad_user_data denied' },
      error: consentDenied('LinkedIn', 'every id LinkedIn matches on (hashed email, li_fat_id, names) is user data.'),
    };
  }
  const user = buildUser(input);
  if (user === null) {
    return {
      ok: false,
      summary: { ...summary, user_ids: [] },
      error: {
        code: 'no_user_id',
        message: 'The conversion has no email, no LinkedIn click id (li_fat_id) and no first and last name, so LinkedIn cannot match it to a member.',
        hint:
          'Send the email with the signup report or form, and turn on enhanced conversion tracking (first-party cookies) of the Insight Tag in Campaign Manager so ad clicks carry li_fat_id.',
      },
    };
  }
  const element: ConversionEventElement = {
    conversion: config.rule.urn,
    conversionHappenedAt: happenedAt,
    // The report's own value wins over the action's fixed one (conversionValue: {currencyCode, amount}, the amount a
    // decimal string; Conversions API, "Streaming Conversion Events").
    ...(input.value !== null && input.currency !== null
      ? { conversionValue: { currencyCode: input.currency, amount: String(input.value) } }
      : config.conversionValue ? { conversionValue: config.conversionValue } : {}),
    eventId: linkedInEventId(input),
    user,
  };
  return { ok: true, element, summary: summarise(element) };
}
