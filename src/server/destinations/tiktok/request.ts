/**
 * One cnv conversion as a TikTok web event, the request around a batch of them, and the PII-free summary cnv stores.
 * What TikTok could never match (nothing to match on) or may not receive (consent denied) is settled here, before
 * sending. Facts: ./index.ts.
 */
import { isIP } from 'node:net';
import { pageUrlForPlatform } from '../browser-signals';
import { adUserDataDenied, consentDenied, dedupEventId, type DeliveryInput, type RequestSummary, carriesPaidValue } from '../destination';
import type { Built } from '../split-batch';
import { tiktokEventName } from './action-config';
import { hashIdentityForTikTok, ttclidOf, ttpOf } from './identity';

/** Events per request cnv sends (see the facts: not verified in a TikTok document). */
export const MAX_EVENTS_PER_REQUEST = 1000;

/** The path of the Events API 2.0 track endpoint, under the Business API base. */
export const TRACK_PATH = '/open_api/v1.3/event/track/';

/** `user` as cnv sends it. */
export interface TikTokUser {
  ttclid?: string;
  ttp?: string;
  email?: string;
  phone?: string;
  external_id?: string;
  ip?: string;
  user_agent?: string;
}

/** One web event in `data`. */
export interface TikTokEvent {
  event: string;
  event_time: number;
  event_id: string;
  user: TikTokUser;
  /** What the event is worth (TikTok: `value` a number, `currency` an ISO 4217 code). */
  properties?: { value: number; currency: string };
  page?: { url: string };
  /**
   * Limited Data Use, when the connection chose it (limited-data-use.ts); absent otherwise. TikTok's own Business SDK
   * sets `limited_data_use: true` on each event in its LDU mode.
   */
  limited_data_use?: true;
}

/** The JSON body of `POST /open_api/v1.3/event/track/`. */
export interface TikTokTrackBody {
  event_source: 'web';
  event_source_id: string;
  test_event_code?: string;
  data: TikTokEvent[];
}

export type BuiltEvent = Built<TikTokEvent>;

/**
 * The `event_id` TikTok deduplicates on: `dedupEventId` (the reporter's `customer_event_id`, what the site gives its
 * TikTok Pixel as the event id, so the browser's copy and the server's are one conversion).
 */
export const tiktokEventId = dedupEventId;

/** Builds the web event for one input and its summary (hashes and kinds only, never an IP, a user agent or a raw field). */
export function buildTikTokEvent(input: DeliveryInput, pixelCode: string, limitedDataUse = false): BuiltEvent {
  const event = tiktokEventName(input.actionConfig, input.trigger, carriesPaidValue(input));
  const eventId = tiktokEventId(input);
  const eventTime = Math.floor(input.occurredAt.getTime() / 1000);
  const base: RequestSummary = { api: 'tiktok-events', pixel_code: pixelCode, event, event_id: eventId, event_time: eventTime };

  if (adUserDataDenied(input)) {
    // TikTok's documents say nothing of sending a click without consent (ttclid and _ttp identify the visitor):
    // nothing about this visitor is shared, and the action is skipped.
    return {
      ok: false,
      skipped: true,
      summary: { ...base, consent: 'ad_user_data denied' },
      error: consentDenied('TikTok', 'its documents allow no web event without a click id or a user identifier.'),
    };
  }

  const hashed = hashIdentityForTikTok(input.identity, input.customerId);
  const user: TikTokUser = {};
  const ttclid = ttclidOf(input.clickIds);
  if (ttclid) user.ttclid = ttclid;
  const ttp = ttpOf(input.cookies);
  if (ttp) user.ttp = ttp;
  if (hashed.email) user.email = hashed.email;
  if (hashed.phone) user.phone = hashed.phone;
  if (hashed.external_id) user.external_id = hashed.external_id;
  if (input.ipAddress && isIP(input.ipAddress) !== 0) user.ip = input.ipAddress;
  if (input.userAgent) user.user_agent = input.userAgent;
  const url = pageUrlForPlatform(input.pageUrl);
  const properties = input.value !== null && input.currency !== null ? { value: input.value, currency: input.currency } : null;
  const built: TikTokEvent = {
    event, event_time: eventTime, event_id: eventId, user, ...(properties ? { properties } : {}), ...(url ? { page: { url } } : {}),
    ...(limitedDataUse ? { limited_data_use: true } : {}),
  };

  const summary: RequestSummary = {
    ...base,
    user: {
      ...(user.ttclid ? { ttclid: 'from the landing’s ttclid' } : {}),
      ...(user.ttp ? { ttp: 'from the _ttp cookie' } : {}),
      ...(user.email ? { email: user.email } : {}),
      ...(user.phone ? { phone: user.phone } : {}),
      ...(user.external_id ? { external_id: user.external_id } : {}),
      ...(user.ip ? { ip: 'sent' } : {}),
      ...(user.user_agent ? { user_agent: 'sent' } : {}),
    },
    ...(properties ? { properties } : {}),
    ...(url ? { page_url: 'sent' } : {}),
    ...(limitedDataUse ? { limited_data_use: true } : {}),
    ...(hashed.skipped.length > 0 ? { skipped: hashed.skipped } : {}),
  };
  if (!user.ttclid && !user.ttp && !user.email && !user.phone && !user.external_id && !(user.ip && user.user_agent)) {
    return {
      ok: false,
      summary,
      error: {
        code: 'no_identifiers',
        message: 'Nothing TikTok can match the conversion on: no TikTok click id, no _ttp cookie, no email, phone or customer_id, no browser details.',
        hint: 'Send the email or phone with the webhook report, or install the cnv loader on the page so the TikTok click is captured.',
      },
    };
  }
  return { ok: true, event: built, summary };
}

/** The body of one request: the events of one pixel, and `test_event_code` only when testing a connection. */
export function buildTrackBody(pixelCode: string, events: TikTokEvent[], testEventCode?: string): TikTokTrackBody {
  return { event_source: 'web', event_source_id: pixelCode, ...(testEventCode ? { test_event_code: testEventCode } : {}), data: events };
}

/** The headers of a track call; the token travels only here, never in a URL or an error. */
export function trackHeaders(accessToken: string): Record<string, string> {
  return { 'access-token': accessToken };
}
