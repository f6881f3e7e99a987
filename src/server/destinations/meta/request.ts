/**
 * One cnv conversion as a Conversions API server event, the request around a batch of them, and the PII-free summary
 * cnv stores. Everything Meta would refuse for one event (too old, nothing to match on) is caught here, before sending,
 * because Meta refuses a whole batch for one bad event.
 *
 * https://developers.facebook.com/documentation/ads-commerce/conversions-api/using-the-api
 * https://developers.facebook.com/documentation/ads-commerce/conversions-api/parameters/server-event
 *
 * The version (CNV_META_GRAPH_API_VERSION, default v24.0), checked on 2026-11-27: the Conversions API follows the Graph
 * API's schedule, not the Marketing API's ("Marketing and Graph APIs have different version deprecation schedules. Our
 * release cycle is aligned with the Graph API, so every version is supported for at least two years. This exception is
 * only valid for the Conversions API", Using the API, updated 6 February 2026: read by a reviewer this session, not
 * found again by a second search), and the Graph API serves v24.0 until 18 February 2028
 * (developers.facebook.com/docs/graph-api/changelog/versions, checked). The Marketing API's shorter schedule (90 days
 * after a newer version) does not apply here. A version Meta stopped serving answers #2635 (response.ts).
 */
import { isIP } from 'node:net';
import { pageUrlForPlatform } from '../browser-signals';
import { adUserDataDenied, consentDenied, dedupEventId, type DeliveryError, type DeliveryInput, type RequestSummary, carriesPaidValue } from '../destination';
import { metaEventName } from './action-config';
import { buildFbc, fbpFromCookies, hashIdentityForMeta, type FbcSource } from './identity';

/** "The event_time can be up to 7 days before you send an event to Meta" (Using the API, Event Transaction Time). */
export const MAX_EVENT_AGE_MS = 7 * 24 * 60 * 60 * 1000;

/** "You can send up to 1,000 events in data" (Using the API, Batch Requests). */
export const MAX_EVENTS_PER_REQUEST = 1000;

/** `user_data` as cnv sends it: hashed contact fields, unhashed click/browser ids and the visitor's browser. */
export interface MetaUserData {
  em?: string[];
  ph?: string[];
  fn?: string;
  ln?: string;
  fbc?: string;
  fbp?: string;
  client_ip_address?: string;
  client_user_agent?: string;
  /** Only in cnv's connection test: a hashed constant, so the test event carries no one's data. */
  external_id?: string[];
}

/**
 * `custom_data` as cnv sends it: the conversion's value and its ISO 4217 currency ("Include the value and currency in
 * the custom_data parameter", Integration Guidance: Value Optimization,
 * https://developers.facebook.com/documentation/ads-commerce/conversions-api/guides/value-optimization).
 */
export interface MetaCustomData {
  value: number;
  currency: string;
}

/** One server event in `data`. */
export interface MetaServerEvent {
  event_name: string;
  event_time: number;
  event_id: string;
  action_source: 'website' | 'other';
  event_source_url?: string;
  user_data: MetaUserData;
  custom_data?: MetaCustomData;
  /**
   * Limited Data Use, when the connection chose it (limited-data-use.ts): `["LDU"]` with country and state 0, "to
   * request that we geolocate that event" (Data Processing Options for US Users). Absent otherwise.
   */
  data_processing_options?: readonly ['LDU'];
  data_processing_options_country?: 0;
  data_processing_options_state?: 0;
}

/** The fields of an event sent as Limited Data Use, Meta locating the person (country and state 0). */
export const META_LIMITED_DATA_USE = { data_processing_options: ['LDU'], data_processing_options_country: 0, data_processing_options_state: 0 } as const satisfies Partial<MetaServerEvent>;

/** The JSON body of `POST /{version}/{pixel_id}/events`. */
export interface MetaEventsBody {
  data: MetaServerEvent[];
  test_event_code?: string;
  access_token: string;
}

/** An input made into an event (with its summary), or refused before sending with a permanent error. */
export type BuiltEvent =
  | { ok: true; event: MetaServerEvent; summary: RequestSummary }
  | { ok: false; error: DeliveryError; summary: RequestSummary; /** Held back by consent: the action is `skipped`. */ skipped?: true };

/**
 * The `event_id`, stable for a conversion so every resend is the same event: `dedupEventId` (the webhook's
 * `customer_event_id`, the form's `submission_id`), which a site also gives its Meta Pixel as `eventID` so Meta
 * deduplicates browser and server ("event_id … used for deduplication", Conversions API › Deduplicate Pixel and
 * Server Events, developers.facebook.com/docs/marketing-api/conversions-api/deduplicate-pixel-and-server-events).
 */
export const metaEventId = dedupEventId;

/**
 * Builds the server event for one input, checked against the 7-day limit with `now`, and its PII-free summary;
 * `limitedDataUse` sends it as Limited Data Use (the connection's choice).
 */
export function buildServerEvent(input: DeliveryInput, pixelId: string, now: Date, limitedDataUse = false): BuiltEvent {
  const eventName = metaEventName(input.actionConfig, input.trigger, carriesPaidValue(input));
  const eventId = metaEventId(input);
  // "The specified time may be earlier than the time you send the event" (Server Event Parameters): never later. A
  // report's occurred_at may be up to 5 minutes ahead (clock skew the webhook allows); Meta gets the sending time then.
  const eventTime = Math.floor(Math.min(input.occurredAt.getTime(), now.getTime()) / 1000);
  const base: RequestSummary = { api: 'meta-conversions', pixel_id: pixelId, event_name: eventName, event_id: eventId, event_time: eventTime };

  if (now.getTime() - input.occurredAt.getTime() > MAX_EVENT_AGE_MS) {
    return {
      ok: false,
      summary: base,
      error: {
        code: 'event_too_old',
        message: 'The conversion happened more than 7 days ago; Meta accepts server events for 7 days only.',
        hint: 'Nothing can be done for this conversion. Keep delivery running so conversions reach Meta within 7 days.',
      },
    };
  }
  if (adUserDataDenied(input)) {
    // Consent Mode is Google's, and Meta's API has no consent field; but a visitor who refused sharing their data for
    // advertising refused it for Meta as much as for Google. Every match key Meta takes is a "customer information
    // parameter" of user_data (em, ph, fbc, fbp, client_ip_address, client_user_agent: Conversions API › Customer
    // Information Parameters), and Meta requires at least one, so nothing can be sent: the action is skipped.
    return {
      ok: false,
      skipped: true,
      summary: { ...base, consent: 'ad_user_data denied' },
      error: consentDenied('Meta', 'every key Meta matches on (email, phone, fbc/fbp, IP address, user agent) is user data.'),
    };
  }

  const hashed = hashIdentityForMeta(input.identity);
  const userData: MetaUserData = {};
  if (hashed.em) userData.em = [hashed.em];
  if (hashed.ph) userData.ph = [hashed.ph];
  if (hashed.fn) userData.fn = hashed.fn;
  if (hashed.ln) userData.ln = hashed.ln;
  const fbc = buildFbc(input.cookies, input.clickIds, input.touchCapturedAt ?? input.occurredAt);
  if (fbc) userData.fbc = fbc.value;
  const fbp = fbpFromCookies(input.cookies);
  if (fbp) userData.fbp = fbp;
  // "must be a valid IPV4 or IPV6 address": anything else would make Meta refuse the whole batch.
  if (input.ipAddress && isIP(input.ipAddress) !== 0) userData.client_ip_address = input.ipAddress;
  if (input.userAgent) userData.client_user_agent = input.userAgent;

  const pageUrl = pageUrlForPlatform(input.pageUrl);
  // "Website events … require the client_user_agent, action_source, and event_source_url parameters" (Parameters page).
  // A signup reported by the webhook with no browser snapshot has neither, so it is honestly "other", not a website event.
  const website = pageUrl !== null && userData.client_user_agent !== undefined;
  const event: MetaServerEvent = {
    event_name: eventName,
    event_time: eventTime,
    event_id: eventId,
    action_source: website ? 'website' : 'other',
    ...(website ? { event_source_url: pageUrl } : {}),
    user_data: userData,
    ...(input.value !== null && input.currency !== null ? { custom_data: { value: input.value, currency: input.currency } } : {}),
    ...(limitedDataUse ? META_LIMITED_DATA_USE : {}),
  };
  const summary = summarize(base, event, fbc?.source ?? null, hashed.skipped);

  if (eventName === 'Purchase' && event.custom_data === undefined) {
    return {
      ok: false,
      summary,
      error: {
        code: 'value_missing',
        message: 'Meta requires a value and a currency on a Purchase event, and this report carried none.',
        hint: 'Send value and currency with the report, or set the action\'s event_name to an event without a value (Lead, Subscribe).',
      },
    };
  }
  const matchable = userData.em || userData.ph || userData.fbc || userData.fbp || (userData.client_ip_address && userData.client_user_agent);
  if (!matchable) {
    return {
      ok: false,
      summary,
      error: {
        code: 'no_identifiers',
        message: 'Nothing Meta can match the conversion on: no email, phone, Meta click id, Meta browser id, or browser details.',
        hint: 'Send the email or phone with the webhook report, or install the cnv loader on the page so the click is captured.',
      },
    };
  }
  return { ok: true, event, summary };
}

function summarize(base: RequestSummary, event: MetaServerEvent, fbcSource: FbcSource | null, skipped: string[]): RequestSummary {
  const u = event.user_data;
  // Hashes and kinds only: never the IP address, the user agent or a raw identity field.
  return {
    ...base,
    action_source: event.action_source,
    user_data: {
      ...(u.em ? { em: u.em } : {}),
      ...(u.ph ? { ph: u.ph } : {}),
      ...(u.fn ? { fn: u.fn } : {}),
      ...(u.ln ? { ln: u.ln } : {}),
      ...(u.fbc ? { fbc: fbcSource === 'cookie' ? 'from the _fbc cookie' : 'built from fbclid' } : {}),
      ...(u.fbp ? { fbp: 'from the _fbp cookie' } : {}),
      ...(u.client_ip_address ? { client_ip_address: 'sent' } : {}),
      ...(u.client_user_agent ? { client_user_agent: 'sent' } : {}),
    },
    ...(event.custom_data ? { custom_data: { ...event.custom_data } } : {}),
    ...(event.data_processing_options ? { limited_data_use: true } : {}),
    ...(skipped.length > 0 ? { skipped } : {}),
  };
}

/** The events URL; the token travels in the body, so it never appears in a URL, a proxy log or an error message. */
export function eventsUrl(graphApiBase: string, apiVersion: string, pixelId: string): string {
  return `${graphApiBase}/${encodeURIComponent(apiVersion)}/${encodeURIComponent(pixelId)}/events`;
}

/** The body of one request: the events, and `test_event_code` only when testing a connection. */
export function buildEventsBody(events: MetaServerEvent[], accessToken: string, testEventCode?: string): MetaEventsBody {
  return { data: events, ...(testEventCode ? { test_event_code: testEventCode } : {}), access_token: accessToken };
}
