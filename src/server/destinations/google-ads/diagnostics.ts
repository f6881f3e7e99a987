/**
 * Diagnostics of an accepted upload. Google processes ingested events asynchronously, so per-event problems (click too
 * old, conversion before the click, duplicate) appear only here, by count and reason:
 * `GET {base}/v1/requestStatus:retrieve?requestId=…`
 * (https://developers.google.com/data-manager/api/reference/rest/v1/requestStatus/retrieve; workflow and timing:
 * https://developers.google.com/data-manager/api/devguides/diagnostics: ask 30 minutes after the upload, then back off
 * until each destination is SUCCESS, PARTIAL_SUCCESS or FAILED; it may take up to 24 hours).
 */
import type { DeliveryError, SendContext } from '../destination';
import { parseJson, requestJson } from '../http';
import type { Settings } from '../../settings';
import { classifyIngestAnswer } from './data-manager-response';

/** The request status of one destination. */
export type RequestState = 'processing' | 'success' | 'partial_success' | 'failed' | 'unknown';

/** What the diagnostics of one upload say, short enough to show the user. */
export interface DiagnosticsSummary {
  state: RequestState;
  /** Events counted by Google across destinations. */
  recordCount: number;
  /** Problem counts by Google's processing reason, with a plain explanation. */
  errors: { reason: string; count: number; explanation: string }[];
  /** One sentence for the user. */
  message: string;
}

/** Plain explanations of the processing reasons an offline conversion upload may get (ProcessingErrorReason). */
const EXPLANATIONS: Record<string, string> = {
  PROCESSING_ERROR_REASON_EVENT_TOO_OLD: "the conversion came after the conversion action's click window had closed",
  PROCESSING_ERROR_REASON_CONVERSION_PRECEDES_CLICK: 'the conversion time is earlier than the ad click',
  PROCESSING_ERROR_REASON_TOO_RECENT_CLICK: 'the click was too recent to import yet; send it again in a few hours',
  PROCESSING_ERROR_REASON_CLICK_NOT_FOUND: 'Google found no click for the click id (it can take hours to appear)',
  PROCESSING_ERROR_REASON_INVALID_CLICK: 'the conversion could not be attributed to the click',
  PROCESSING_ERROR_REASON_INVALID_GCLID: 'the gclid could not be decoded',
  PROCESSING_ERROR_REASON_INVALID_GBRAID: 'the gbraid could not be decoded',
  PROCESSING_ERROR_REASON_INVALID_WBRAID: 'the wbraid could not be decoded',
  PROCESSING_ERROR_OPERATING_ACCOUNT_MISMATCH_FOR_AD_IDENTIFIER: 'the click belongs to another Google Ads account',
  PROCESSING_ERROR_REASON_INVALID_OPERATING_ACCOUNT_FOR_CLICK: 'the click belongs to another Google Ads account',
  PROCESSING_ERROR_REASON_DUPLICATE_TRANSACTION_ID: 'already uploaded (same transaction): counted once',
  PROCESSING_ERROR_REASON_DUPLICATE_GCLID: 'a conversion with the same click and time already exists',
  PROCESSING_ERROR_REASON_DENIED_CONSENT: 'the visitor (or the account default) denied ad user data consent',
  PROCESSING_ERROR_REASON_NO_CONSENT: 'the advertiser has not given consent for Google Ads core platform services',
  PROCESSING_ERROR_REASON_UNKNOWN_CONSENT: 'consent could not be determined for the visitor',
  PROCESSING_ERROR_REASON_DESTINATION_ACCOUNT_ENHANCED_CONVERSIONS_TERMS_NOT_SIGNED:
    'the account has not accepted the enhanced conversions terms',
  PROCESSING_ERROR_REASON_INVALID_EVENT: 'Google found the event invalid',
  PROCESSING_ERROR_REASON_INVALID_FORMAT: 'a field of the event was badly formatted',
  PROCESSING_ERROR_REASON_INTERNAL_ERROR: 'an internal error at Google',
};

const STATES: Record<string, RequestState> = {
  SUCCESS: 'success',
  PROCESSING: 'processing',
  FAILED: 'failed',
  PARTIAL_SUCCESS: 'partial_success',
};

/** URL of requestStatus.retrieve for one ingest request id. */
export function requestStatusUrl(settings: Settings, requestId: string): string {
  return `${settings.google.dataManagerApiBase}/v1/requestStatus:retrieve?requestId=${encodeURIComponent(requestId)}`;
}

function count(value: unknown): number {
  // int64 fields arrive as JSON strings.
  const n = typeof value === 'number' ? value : typeof value === 'string' ? Number(value) : NaN;
  return Number.isFinite(n) ? n : 0;
}

/** Reads a RetrieveRequestStatusResponse into a short summary (the worst state across destinations wins). */
export function readRequestStatus(body: unknown): DiagnosticsSummary {
  const list = body && typeof body === 'object' ? (body as { requestStatusPerDestination?: unknown }).requestStatusPerDestination : undefined;
  const destinations = Array.isArray(list) ? (list as Record<string, any>[]) : [];
  // The state of the whole upload is its least finished or worst destination's.
  const rank: Record<RequestState, number> = { success: 0, unknown: 1, partial_success: 2, processing: 3, failed: 4 };
  let state: RequestState = destinations.length === 0 ? 'unknown' : 'success';
  let recordCount = 0;
  const byReason = new Map<string, number>();
  for (const destination of destinations) {
    const s = STATES[String(destination?.requestStatus)] ?? 'unknown';
    if (rank[s] > rank[state]) state = s;
    recordCount += count(destination?.eventsIngestionStatus?.recordCount);
    const errorCounts = destination?.errorInfo?.errorCounts;
    for (const entry of Array.isArray(errorCounts) ? errorCounts : []) {
      const reason = String(entry?.reason ?? 'PROCESSING_ERROR_REASON_UNSPECIFIED');
      byReason.set(reason, (byReason.get(reason) ?? 0) + count(entry?.recordCount));
    }
  }
  const errors = [...byReason].map(([reason, n]) => ({ reason, count: n, explanation: EXPLANATIONS[reason] ?? 'see the reason code' }));
  const problems = errors.map((e) => `${e.count} ${e.explanation}`).join('; ');
  const message =
    state === 'processing'
      ? 'Google is still processing the upload; ask again later.'
      : state === 'success' && errors.length === 0
        ? `Google processed all ${recordCount} event(s) of the upload.`
        : state === 'unknown'
          ? 'Google did not report a status for the upload.'
          : `Google processed the upload with problems (${state.replace('_', ' ')}): ${problems || 'no reason given'}.`;
  return { state, recordCount, errors, message };
}

/** Asks Google for the diagnostics of an upload; an error when Google could not be asked or refused. */
export async function retrieveRequestStatus(
  requestId: string,
  ctx: Pick<SendContext, 'settings' | 'accessToken' | 'signal' | 'timeoutMs' | 'now'>,
): Promise<{ ok: true; summary: DiagnosticsSummary } | { ok: false; error: DeliveryError }> {
  const token = await ctx.accessToken();
  const answer = await requestJson('Google Ads (Data Manager API)', requestStatusUrl(ctx.settings, requestId), { method: 'GET', headers: { authorization: `Bearer ${token}` } }, ctx);
  if (answer.answered && answer.status >= 200 && answer.status < 300) return { ok: true, summary: readRequestStatus(parseJson(answer.text)) };
  const verdict = classifyIngestAnswer(answer, ctx.now().getTime());
  const error: DeliveryError =
    verdict.kind === 'all' ? verdict.outcome.error : verdict.kind === 'unattributed' ? verdict.error : { code: 'diagnostics_unavailable', message: 'Google did not return the diagnostics.' };
  return { ok: false, error };
}
