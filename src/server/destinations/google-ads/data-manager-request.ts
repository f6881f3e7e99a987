/**
 * Builds the Data Manager API ingestion request for Google Ads offline conversions:
 * `POST {dataManagerApiBase}/v1/events:ingest` with an IngestEventsRequest
 * (https://developers.google.com/data-manager/api/reference/rest/v1/events/ingest). Pure: no I/O, no clock.
 *
 * One request goes to one destination (one conversion action): the API fails a whole request when one part is
 * invalid (https://developers.google.com/data-manager/api/devguides/concepts/understand-errors, "fail-fast model"),
 * so a bad conversion action id never holds back the events of another action.
 */
import { adUserDataDenied, consentDenied, type ConsentSignals, type DeliveryError, type DeliveryInput, type DeliveryOutcome, type RequestSummary } from '../destination';
import { sha256Hex } from '../hashing';
import type { Settings } from '../../settings';
import { hashedUserIdentifiers, type HashedUserIdentifier } from './identity';

/** Path of events.ingest under the API base. */
export const INGEST_PATH = '/v1/events:ingest';

/** Most events in one IngestEventsRequest (https://developers.google.com/data-manager/api/limits: 2,000). */
export const MAX_EVENTS_PER_INGEST = 2000;

/** A Google Ads account as the API names it (`product` is deprecated in favour of `accountType`). */
export interface ProductAccount {
  accountType: 'GOOGLE_ADS';
  accountId: string;
}

/** Where events go: the operating account, the manager it is reached through (if any), the conversion action. */
export interface IngestDestination {
  operatingAccount: ProductAccount;
  loginAccount?: ProductAccount;
  productDestinationId: string;
}

export type ConsentStatus = 'CONSENT_GRANTED' | 'CONSENT_DENIED';

/** DMA consent of the visitor; a signal the page never gave is left out (CONSENT_STATUS_UNSPECIFIED). */
export interface IngestConsent {
  adUserData?: ConsentStatus;
  adPersonalization?: ConsentStatus;
}

/** Google click ids of an event: exactly one is sent. */
export const GOOGLE_CLICK_ID_KINDS = ['gclid', 'gbraid', 'wbraid'] as const;
export type GoogleClickIdKind = (typeof GOOGLE_CLICK_ID_KINDS)[number];
export type AdIdentifiers = { gclid: string } | { gbraid: string } | { wbraid: string };

/** One Event in the REST JSON mapping (lowerCamelCase); only the fields we send. */
export interface IngestEvent {
  transactionId: string;
  /** RFC 3339 timestamp (https://developers.google.com/data-manager/api/devguides/concepts/formatting). */
  eventTimestamp: string;
  eventSource: 'WEB';
  adIdentifiers?: AdIdentifiers;
  userData?: { userIdentifiers: HashedUserIdentifier[] };
  consent?: IngestConsent;
  /**
   * The conversion's value and its currency: `Event.conversion_value` ("The conversion value associated with the
   * event, for value-based conversions", a double) and `Event.currency` ("The currency code associated with all
   * monetary values within this event"), google/ads/datamanager/v1/event.proto in googleapis/googleapis.
   */
  conversionValue?: number;
  currency?: string;
}

/** The IngestEventsRequest body. `encoding` is required whenever userData is present, so it is always set. */
export interface IngestEventsBody {
  destinations: IngestDestination[];
  events: IngestEvent[];
  encoding: 'HEX';
  validateOnly?: true;
}

/** The connected account, from the connection's settings (`customer_id`, `login_customer_id`, as connect.ts stores them). */
export interface DataManagerAccount {
  customerId: string;
  loginCustomerId: string | null;
}

/** One event ready to send, with the PII-free summary recorded on its event action. */
export interface PreparedEvent {
  input: DeliveryInput;
  destination: IngestDestination;
  event: IngestEvent;
  summary: RequestSummary;
}

export type Preparation = { ok: true; prepared: PreparedEvent } | { ok: false; outcome: DeliveryOutcome };

/** Events of one request, with their positions in the batch the adapter was given. */
export interface IngestGroup {
  destination: IngestDestination;
  items: { position: number; prepared: PreparedEvent }[];
}

function customerIdOf(value: unknown): string | null {
  if (typeof value === 'number' && Number.isInteger(value)) value = String(value);
  if (typeof value !== 'string') return null;
  const digits = value.replace(/[\s-]/g, '');
  return /^\d{10}$/.test(digits) ? digits : null;
}

/** Reads the Google Ads account of a connection; null when its customer id is missing or malformed. */
export function readDataManagerAccount(settings: Record<string, unknown>): DataManagerAccount | null {
  const customerId = customerIdOf(settings.customer_id);
  if (!customerId) return null;
  return { customerId, loginCustomerId: customerIdOf(settings.login_customer_id) };
}

/**
 * The conversion action id of a flow action's config (`conversion.id`): the numeric id, or the Google Ads resource
 * name `customers/{customer_id}/conversionActions/{id}` reduced to its id. Null when neither.
 */
export function conversionActionId(actionConfig: Record<string, unknown>): string | null {
  const conversion = actionConfig.conversion;
  if (typeof conversion !== 'object' || conversion === null) return null;
  let id = (conversion as Record<string, unknown>).id;
  if (typeof id === 'number' && Number.isInteger(id) && id > 0) id = String(id);
  if (typeof id !== 'string') return null;
  const text = id.trim();
  if (/^\d+$/.test(text)) return text;
  const match = /^customers\/\d+\/conversionActions\/(\d+)$/.exec(text);
  return match ? match[1]! : null;
}

/** The destination of a request for one conversion action of the account. */
export function ingestDestination(account: DataManagerAccount, productDestinationId: string): IngestDestination {
  return {
    operatingAccount: { accountType: 'GOOGLE_ADS', accountId: account.customerId },
    // A manager (MCC) account the signed-in user reaches the operating account through is the login account
    // (https://developers.google.com/data-manager/api/devguides/events/send-events, "Prepare destinations").
    ...(account.loginCustomerId && account.loginCustomerId !== account.customerId
      ? { loginAccount: { accountType: 'GOOGLE_ADS' as const, accountId: account.loginCustomerId } }
      : {}),
    productDestinationId,
  };
}

/**
 * A transaction id stable per (event, action), so a resend of the same conversion is the same transaction and Google
 * counts it once (duplicates surface as DUPLICATE_TRANSACTION_ID in diagnostics). Hashed: ids never carry PII.
 */
export function transactionIdFor(input: Pick<DeliveryInput, 'eventId' | 'eventActionId'>): string {
  return sha256Hex(`cnv:${input.eventId}:${input.eventActionId}`).slice(0, 32);
}

/** The first Google click id of a touch, gclid before gbraid before wbraid; null when it has none. */
export function pickClickId(clickIds: Record<string, string>): { kind: GoogleClickIdKind; value: string } | null {
  for (const kind of GOOGLE_CLICK_ID_KINDS) {
    const value = clickIds[kind]?.trim();
    if (value) return { kind, value };
  }
  return null;
}

function consentStatus(signal: 'granted' | 'denied' | null): ConsentStatus | undefined {
  if (signal === 'granted') return 'CONSENT_GRANTED';
  if (signal === 'denied') return 'CONSENT_DENIED';
  return undefined;
}

/** Maps Consent Mode signals to the API's Consent; undefined when the page gave neither. */
export function mapConsent(consent: ConsentSignals): IngestConsent | undefined {
  const adUserData = consentStatus(consent.ad_user_data);
  const adPersonalization = consentStatus(consent.ad_personalization);
  if (!adUserData && !adPersonalization) return undefined;
  return { ...(adUserData ? { adUserData } : {}), ...(adPersonalization ? { adPersonalization } : {}) };
}

/** `conversionValue` and `currency` of an event with a value; nothing when it has none (the action's default applies). */
export function valueFields(input: Pick<DeliveryInput, 'value' | 'currency'>): Pick<IngestEvent, 'conversionValue' | 'currency'> {
  return input.value !== null && input.currency !== null ? { conversionValue: input.value, currency: input.currency } : {};
}

function identifierKind(identifier: HashedUserIdentifier): { kind: 'email' | 'phone'; sha256: string } {
  return 'emailAddress' in identifier
    ? { kind: 'email', sha256: identifier.emailAddress }
    : { kind: 'phone', sha256: identifier.phoneNumber };
}

function failed(error: DeliveryError, request?: RequestSummary): Preparation {
  return { ok: false, outcome: { kind: 'failed', error, ...(request ? { request } : {}) } };
}

/**
 * Turns one delivery input into a Data Manager event, or a permanent failure when Google could never accept it: no
 * conversion action id, or neither a Google click id nor a hashed identifier (Google refuses such an event with
 * NO_IDENTIFIERS_PROVIDED, and fail-fast would take the whole request down with it).
 */
export function prepareEvent(input: DeliveryInput, account: DataManagerAccount): Preparation {
  const actionId = conversionActionId(input.actionConfig);
  if (!actionId) {
    return failed({
      code: 'conversion_action_missing',
      message: 'The flow action has no Google Ads conversion action id.',
      hint: "Set the action's conversion.id to the numeric id of a Google Ads conversion action of type 'Import from clicks'.",
    });
  }
  const destination = ingestDestination(account, actionId);
  const click = pickClickId(input.clickIds);
  // Ad user data denied: the visitor refused sharing their data with Google for ads, so no hashed identifier is sent.
  // The click id goes with `consent.adUserData: DENIED`: the Data Manager API's Event carries the visitor's consent
  // ("consent: Information about whether the associated user has provided different types of consent", Event
  // reference) so Google applies it to the click, as the Google tag does for a denied page in consent mode.
  const identifiers = adUserDataDenied(input) ? [] : hashedUserIdentifiers(input.identity);
  const consent = mapConsent(input.consent);
  const event: IngestEvent = {
    transactionId: transactionIdFor(input),
    eventTimestamp: input.occurredAt.toISOString(),
    eventSource: 'WEB',
    ...(click ? { adIdentifiers: { [click.kind]: click.value } as AdIdentifiers } : {}),
    ...(identifiers.length > 0 ? { userData: { userIdentifiers: identifiers } } : {}),
    ...(consent ? { consent } : {}),
    ...valueFields(input),
  };
  const summary: RequestSummary = {
    api: 'google-data-manager',
    operatingAccountId: destination.operatingAccount.accountId,
    ...(destination.loginAccount ? { loginAccountId: destination.loginAccount.accountId } : {}),
    productDestinationId: actionId,
    transactionId: event.transactionId,
    eventTimestamp: event.eventTimestamp,
    clickIdKind: click?.kind ?? null,
    clickId: click?.value ?? null,
    userIdentifiers: identifiers.map(identifierKind),
    consent: consent ?? null,
    ...(event.conversionValue !== undefined ? { conversionValue: event.conversionValue, currency: event.currency } : {}),
  };
  if (!click && adUserDataDenied(input)) {
    return { ok: false, outcome: { kind: 'skipped', reason: consentDenied('Google Ads', 'no Google click id was recorded, and the email and phone may not be sent.'), request: summary } };
  }
  if (!click && identifiers.length === 0) {
    return failed(
      {
        code: 'no_identifiers',
        message: 'The conversion has no Google click id and no email or phone Google can match, so Google Ads would refuse it.',
        hint: 'Google matches a conversion by its ad click (gclid, gbraid, wbraid) or by the email or phone (with country code) of the person: report one of them.',
      },
      summary,
    );
  }
  return { ok: true, prepared: { input, destination, event, summary } };
}

/** Groups prepared events by conversion action and cuts each group to the per-request limit, keeping batch order. */
export function groupForIngest(items: { position: number; prepared: PreparedEvent }[]): IngestGroup[] {
  const byAction = new Map<string, { position: number; prepared: PreparedEvent }[]>();
  for (const item of items) {
    const key = JSON.stringify(item.prepared.destination);
    const list = byAction.get(key) ?? [];
    list.push(item);
    byAction.set(key, list);
  }
  const groups: IngestGroup[] = [];
  for (const list of byAction.values()) {
    for (let start = 0; start < list.length; start += MAX_EVENTS_PER_INGEST) {
      const chunk = list.slice(start, start + MAX_EVENTS_PER_INGEST);
      groups.push({ destination: chunk[0]!.prepared.destination, items: chunk });
    }
  }
  return groups;
}

/** The JSON body of one ingest request; `validateOnly` asks Google to check it without recording anything. */
export function buildIngestBody(destination: IngestDestination, events: IngestEvent[], options: { validateOnly?: boolean } = {}): IngestEventsBody {
  return { destinations: [destination], events, encoding: 'HEX', ...(options.validateOnly ? { validateOnly: true as const } : {}) };
}

/** The events.ingest URL under the configured API base. */
export function ingestUrl(settings: Settings): string {
  return `${settings.google.dataManagerApiBase}${INGEST_PATH}`;
}
