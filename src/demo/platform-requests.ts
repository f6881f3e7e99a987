/**
 * The requests the local fake ad platforms received, found per event and destination so a page can show exactly what
 * was sent: method, path and JSON body, with the access token taken out (it never reaches a page).
 */
import type { FakeRequest } from './fakes/fake-server';
import type { EventFacts } from './event-facts';

/** One request as a fake platform received it, ready to show. */
export interface ReceivedRequest {
  method: string;
  /** The path, and the query without any access token. */
  path: string;
  /** The JSON body as received (a form-encoded Graph API body shown as JSON), access token removed. */
  body: unknown;
  answeredStatus: number | null;
  /** What the fake found wrong with the request (empty for a well-formed one). */
  problems: string[];
  receivedAt: Date;
}

/** Where the fakes' received requests are (the running fakes, in the demo process). */
export interface PlatformRequestSources {
  google: { server: { requests: readonly FakeRequest[] } };
  meta: { requests: readonly FakeRequest[] };
  microsoft: { requests: readonly FakeRequest[] };
  linkedin: { requests: readonly FakeRequest[] };
  reddit: { requests: readonly FakeRequest[] };
  tiktok: { requests: readonly FakeRequest[] };
}

/**
 * Finds, for an event, the requests one destination's fake received for it: the conversion itself, or (`adjustment`)
 * the adjustments of it the platform has an operation for.
 */
export type RequestFinder = (destination: string, event: EventFacts, kind?: 'conversion' | 'adjustment') => ReceivedRequest[];

const TOKEN_KEYS = new Set(['access_token']);

function isRecord(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

function list(value: unknown): Record<string, unknown>[] {
  return Array.isArray(value) ? value.filter(isRecord) : [];
}

/** Meta's `data` is a JSON array, or (form-encoded) a JSON string of one. */
function metaData(body: unknown): Record<string, unknown>[] {
  if (!isRecord(body)) return [];
  if (typeof body.data !== 'string') return list(body.data);
  try {
    return list(JSON.parse(body.data));
  } catch {
    return [];
  }
}

/** The request as a page may show it: no access token in the query or the body. */
export function shownRequest(request: FakeRequest): ReceivedRequest {
  const query = new URLSearchParams(request.query);
  for (const key of TOKEN_KEYS) query.delete(key);
  let body: unknown = request.body ?? request.text;
  if (isRecord(body)) {
    body = Object.fromEntries(
      Object.entries(body)
        .filter(([key]) => !TOKEN_KEYS.has(key))
        .map(([key, value]) => [key, key === 'data' && typeof value === 'string' ? metaData(body) : value]),
    );
  }
  const search = query.toString();
  return {
    method: request.method,
    path: `${request.path}${search ? `?${search}` : ''}`,
    body,
    answeredStatus: request.answeredStatus,
    problems: request.problems.slice(),
    receivedAt: request.receivedAt,
  };
}

/**
 * How each platform's request names the event, by what cnv puts in it: Google's `eventTimestamp` and Microsoft's
 * `ConversionTime` are the event's time, Meta's `event_id`, Reddit's `conversion_id`, TikTok's `event_id` and LinkedIn's
 * `eventId` are the reporter's id.
 */
const MATCHERS: Record<string, { of(sources: PlatformRequestSources): readonly FakeRequest[]; carries(request: FakeRequest, event: EventFacts): boolean }> = {
  'google-ads': {
    of: (s) => s.google.server.requests,
    carries: (r, e) =>
      r.path === '/v1/events:ingest' &&
      isRecord(r.body) &&
      list(r.body.events).some((x) => x.eventTimestamp === e.occurredAt && (!e.clickIds.gclid || (isRecord(x.adIdentifiers) && x.adIdentifiers.gclid === e.clickIds.gclid))),
  },
  meta: {
    of: (s) => s.meta.requests,
    carries: (r, e) => /\/events$/.test(r.path) && metaData(r.body).some((x) => x.event_id === (e.customerEventId ?? e.id)),
  },
  'microsoft-ads': {
    of: (s) => s.microsoft.requests,
    carries: (r, e) => r.path.endsWith('/OfflineConversions/Apply') && isRecord(r.body) && list(r.body.OfflineConversions).some((x) => x.ConversionTime === e.occurredAt),
  },
  linkedin: {
    of: (s) => s.linkedin.requests,
    carries: (r, e) => r.path === '/rest/conversionEvents' && isRecord(r.body) && list(r.body.elements).some((x) => x.eventId === (e.customerEventId ?? e.id)),
  },
  reddit: {
    of: (s) => s.reddit.requests,
    carries: (r, e) =>
      /\/conversion_events$/.test(r.path) &&
      isRecord(r.body) &&
      isRecord(r.body.data) &&
      list(r.body.data.events).some((x) => isRecord(x.metadata) && x.metadata.conversion_id === (e.customerEventId ?? e.id)),
  },
  tiktok: {
    of: (s) => s.tiktok.requests,
    carries: (r, e) => r.path === '/open_api/v1.3/event/track/' && isRecord(r.body) && list(r.body.data).some((x) => x.event_id === (e.customerEventId ?? e.id)),
  },
};

/**
 * How each platform's adjustment request names the conversion it adjusts: Microsoft's OfflineConversionAdjustments by
 * the conversion's `ConversionTime`; Google's by the same event again (Data Manager API: `transactionId`), or the
 * legacy API's ConversionAdjustmentUploadService by `gclidDateTimePair.conversionDateTime`.
 */
const ADJUSTMENT_MATCHERS: typeof MATCHERS = {
  'microsoft-ads': {
    of: (s) => s.microsoft.requests,
    carries: (r, e) =>
      r.path.endsWith('/OfflineConversionAdjustments/Apply') && isRecord(r.body) && list(r.body.OfflineConversionAdjustments).some((x) => x.ConversionTime === e.occurredAt),
  },
  'google-ads': {
    of: (s) => s.google.server.requests,
    carries: (r, e) =>
      r.path.endsWith(':uploadConversionAdjustments') &&
      isRecord(r.body) &&
      list(r.body.conversionAdjustments).some((x) => isRecord(x.gclidDateTimePair) && x.gclidDateTimePair.gclid === e.clickIds.gclid),
  },
};

/** A finder over the fakes' logs: every request of `destination` that carried the event, oldest first (retries included). */
export function platformRequestFinder(sources: PlatformRequestSources): RequestFinder {
  return (destination, event, kind = 'conversion') => {
    const matcher = (kind === 'adjustment' ? ADJUSTMENT_MATCHERS : MATCHERS)[destination];
    if (!matcher) return [];
    return matcher.of(sources).filter((r) => matcher.carries(r, event)).map(shownRequest);
  };
}
