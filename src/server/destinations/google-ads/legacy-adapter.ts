/** The one interface every destination adapter implements, and the outcomes a send can have. */
import type { Settings } from '../../settings';
import type { RawIdentity } from './legacy-identity';

/** Click ids known for the conversion (from the paired snapshot), keyed as the loader stores them. */
export type ClickIds = Partial<Record<string, string>>;

/** Everything an adapter needs to send one event action, loaded by the worker. */
export interface DeliveryInput {
  eventId: string;
  eventActionId: string;
  /** Destination type, e.g. `google-ads`. */
  destination: string;
  /** The action's `config.conversion.id`: which conversion to fire at the destination. */
  conversionId: string | null;
  /** When the conversion happened. */
  occurredAt: Date;
  siteKey: string;
  /** IANA timezone of the site. */
  siteTimezone: string;
  /** The reporter's stable id for the conversion (webhook reports); null for browser-only events. */
  customerEventId: string | null;
  clickIds: ClickIds;
  /** Raw identity fields of the report; adapters hash them per their platform's rules and never store them. */
  identity: RawIdentity;
  /** The connected destination's settings (destinations.settings), or null when none is connected for the account. */
  destinationSettings: Record<string, unknown> | null;
}

/** What the worker gives an adapter besides the input. */
export interface DeliveryContext {
  settings: Settings;
  /** Aborts the send (worker stopping); adapters pass it to their HTTP call. */
  signal: AbortSignal;
  /** Per-send timeout in milliseconds. */
  timeoutMs: number;
  now(): Date;
}

/** A delivery error as recorded on the event action and shown through the API. */
export interface DeliveryError {
  code: string;
  message: string;
  /** HTTP status of the destination's answer, when there was one. */
  status?: number;
}

/** A PII-free description of what was sent (hashes and kinds only), stored on the event action. */
export type RequestSummary = Record<string, unknown>;

export type DeliveryOutcome =
  | { kind: 'delivered'; request: RequestSummary }
  /** A transient fault: send again later; `afterMs` is the destination's own wish (Retry-After), if it said. */
  | { kind: 'retry'; error: DeliveryError; afterMs?: number; request?: RequestSummary }
  | { kind: 'failed'; error: DeliveryError; request?: RequestSummary };

/**
 * A destination adapter: builds and sends the destination's real upload for event actions. It gets every due action of
 * its type from one worker round and returns one outcome per input, in the same order, so an API that takes many
 * conversions per request (Google Ads takes up to 2000) is called once instead of once per conversion.
 */
export interface DestinationAdapter {
  readonly type: string;
  send(inputs: readonly DeliveryInput[], ctx: DeliveryContext): Promise<DeliveryOutcome[]>;
}

/** The send succeeded. */
export function delivered(request: RequestSummary): DeliveryOutcome {
  return { kind: 'delivered', request };
}

/** The send may succeed later. */
export function retryLater(error: DeliveryError, afterMs?: number | null, request?: RequestSummary): DeliveryOutcome {
  return afterMs === null || afterMs === undefined
    ? { kind: 'retry', error, ...(request ? { request } : {}) }
    : { kind: 'retry', error, afterMs, ...(request ? { request } : {}) };
}

/** The send can never succeed as it is. */
export function failed(error: DeliveryError, request?: RequestSummary): DeliveryOutcome {
  return { kind: 'failed', error, ...(request ? { request } : {}) };
}
