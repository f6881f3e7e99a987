/**
 * One cnv conversion as a Reddit Conversions API v3 event, the request around a batch of them, and the PII-free
 * summary cnv stores. What Reddit would refuse for one event (too old) or may not receive (consent denied) is settled
 * here, before sending, because Reddit refuses a whole request for one invalid event. Facts: ./index.ts.
 */
import { pageUrlForPlatform } from '../browser-signals';
import { adUserDataDenied, consentDenied, dedupEventId, type DeliveryInput, type RequestSummary, carriesPaidValue } from '../destination';
import type { Built } from '../split-batch';
import { redditEventType, WITHOUT_VALUE, type RedditEventType } from './action-config';
import { clickIdOf, hashedIp, hashIdentityForReddit, uuidOf } from './identity';

/** “1,000 events/request”. */
export const MAX_EVENTS_PER_REQUEST = 1000;

/** “Events must be sent within 7 days after they occur.” */
export const MAX_EVENT_AGE_MS = 7 * 24 * 60 * 60 * 1000;

/** A descriptive User-Agent: Reddit rate-limits default user agents. */
export const USER_AGENT = 'cnv-conversions/1.0 (server-side conversion tracking)';

/** `user` as cnv sends it. */
export interface RedditUser {
  email?: string;
  phone_number?: string;
  ip_address?: string;
  user_agent?: string;
  uuid?: string;
  external_id?: string;
}

/** One conversion event in `data.events`. */
export interface RedditEvent {
  event_at: number;
  action_source: 'WEBSITE' | 'OTHER';
  type: RedditEventType;
  click_id?: string;
  event_source_url?: string;
  user: RedditUser;
  metadata: { conversion_id: string; value?: number; currency?: string };
}

/** The JSON body of `POST /api/v3/pixels/{pixel_id}/conversion_events`. */
export interface RedditBody {
  data: { test_id?: string; events: RedditEvent[] };
}

export type BuiltEvent = Built<RedditEvent>;

/**
 * The `conversion_id` Reddit deduplicates on: `dedupEventId` (the reporter's `customer_event_id`, what the site gives
 * its Reddit Pixel as the conversion ID, so the browser's copy and the server's are one conversion).
 */
export const redditConversionId = dedupEventId;

/** Builds the event for one input, checked against the 7-day limit with `now`, and its summary. */
export function buildRedditEvent(input: DeliveryInput, pixelId: string, now: Date): BuiltEvent {
  const type = redditEventType(input.actionConfig, input.trigger, carriesPaidValue(input));
  const conversionId = redditConversionId(input);
  const eventAt = input.occurredAt.getTime();
  const base: RequestSummary = { api: 'reddit-conversions-v3', pixel_id: pixelId, type, conversion_id: conversionId, event_at: eventAt };

  if (now.getTime() - eventAt > MAX_EVENT_AGE_MS) {
    return {
      ok: false,
      summary: base,
      error: {
        code: 'event_too_old',
        message: 'The conversion happened more than 7 days ago; Reddit accepts conversions sent within 7 days only.',
        hint: 'Nothing can be done for this conversion. Keep delivery running so conversions reach Reddit within 7 days.',
      },
    };
  }
  if (adUserDataDenied(input)) {
    // Reddit's documents say nothing of sending a click without consent (its click id and browser id identify the
    // visitor): nothing about this visitor is shared, and the action is skipped.
    return {
      ok: false,
      skipped: true,
      summary: { ...base, consent: 'ad_user_data denied' },
      error: consentDenied('Reddit', 'its documents allow no conversion without a click id or a user identifier.'),
    };
  }

  const hashed = hashIdentityForReddit(input.identity, input.customerId);
  const user: RedditUser = {};
  if (hashed.email) user.email = hashed.email;
  if (hashed.phone_number) user.phone_number = hashed.phone_number;
  if (hashed.external_id) user.external_id = hashed.external_id;
  const ip = hashedIp(input.ipAddress);
  if (ip) user.ip_address = ip;
  if (input.userAgent) user.user_agent = input.userAgent;
  const uuid = uuidOf(input.cookies);
  if (uuid) user.uuid = uuid;
  // Value and currency where the tracking type takes them (Reddit: not PAGE_VISIT, VIEW_CONTENT or SEARCH).
  const valued = input.value !== null && input.currency !== null && !WITHOUT_VALUE.has(type.tracking_type);
  const clickId = clickIdOf(input.clickIds);
  const url = pageUrlForPlatform(input.pageUrl);
  // A report with no browser behind it (no page, no user agent) did not happen on the website as Reddit means it.
  const website = url !== null || input.userAgent !== null || clickId !== null;
  const event: RedditEvent = {
    event_at: eventAt,
    action_source: website ? 'WEBSITE' : 'OTHER',
    type,
    ...(clickId ? { click_id: clickId } : {}),
    ...(website && url ? { event_source_url: url } : {}),
    user,
    metadata: { conversion_id: conversionId, ...(valued ? { value: input.value!, currency: input.currency! } : {}) },
  };

  const summary: RequestSummary = {
    ...base,
    action_source: event.action_source,
    ...(clickId ? { click_id: 'from the landing’s rdt_cid' } : {}),
    user: {
      ...(user.email ? { email: user.email } : {}),
      ...(user.phone_number ? { phone_number: user.phone_number } : {}),
      ...(user.ip_address ? { ip_address: user.ip_address } : {}),
      ...(user.user_agent ? { user_agent: 'sent' } : {}),
      ...(user.uuid ? { uuid: 'from the _rdt_uuid cookie' } : {}),
      ...(user.external_id ? { external_id: user.external_id } : {}),
    },
    ...(valued ? { value: input.value, currency: input.currency } : {}),
    ...(hashed.skipped.length > 0 ? { skipped: hashed.skipped } : {}),
  };
  if (!clickId && !user.email && !user.phone_number && !user.uuid && !user.external_id && !(user.ip_address && user.user_agent)) {
    return {
      ok: false,
      summary,
      error: {
        code: 'no_identifiers',
        message: 'Nothing Reddit can match the conversion on: no Reddit click id, no _rdt_uuid cookie, no email, phone or customer_id, no browser details.',
        hint: 'Send the email or phone with the webhook report, or install the cnv loader on the page so the Reddit click is captured.',
      },
    };
  }
  return { ok: true, event, summary };
}

/** The URL of one pixel's conversion events. */
export function conversionEventsUrl(apiBase: string, pixelId: string): string {
  return `${apiBase}/api/v3/pixels/${encodeURIComponent(pixelId)}/conversion_events`;
}

/** The body of one request; `test_id` only when testing a connection. */
export function buildRedditBody(events: RedditEvent[], testId?: string): RedditBody {
  return { data: { ...(testId ? { test_id: testId } : {}), events } };
}

/** The headers of a call; the token travels only here. */
export function redditHeaders(accessToken: string): Record<string, string> {
  return { authorization: `Bearer ${accessToken}`, 'user-agent': USER_AGENT };
}
