/**
 * What TikTok's answer to one track request means for every event in it. TikTok answers HTTP 200 with a numeric
 * `code` (0 is success) and a `message`; gateways may still answer 429 or 5xx. Codes: ./index.ts.
 */
import { parseRetryAfterMs } from '../../../protocol/retry-after';
import { parseJson, type HttpAnswer } from '../http';
import { platformText } from '../platform-text';
import { refusedVerdict, retryVerdict, type BatchVerdict } from '../split-batch';

/** TikTok's rate limit ("Too many requests"). */
export const RATE_LIMITED = 40100;
/** The access token is missing or invalid (also 40104/40102/40103: empty, expired, or not a token of TikTok's). */
const INVALID_TOKEN = new Set([40102, 40103, 40104, 40105]);
/** No permission: the token may not report to this pixel. */
const NO_PERMISSION = new Set([40001, 40300]);
/** Invalid parameters in the request. */
const INVALID_PARAMETERS = 40002;

/** TikTok's own words, cleaned of what identifies a person or a credential (platform-text.ts), cut short. */
function said(message: unknown): string {
  const text = typeof message === 'string' && message.trim() !== '' ? message : 'no message';
  return platformText(text, 200);
}

/** Classifies TikTok's answer to one track request. */
export function classifyTikTokAnswer(answer: HttpAnswer, nowMs: number): BatchVerdict {
  if (!answer.answered) return { kind: 'retry', error: answer.error };
  const { status, headers } = answer;
  const body = parseJson(answer.text) as { code?: unknown; message?: unknown; request_id?: unknown } | null;
  const code = typeof body?.code === 'number' ? body.code : undefined;
  const requestId = typeof body?.request_id === 'string' ? body.request_id : undefined;
  const what = `TikTok answered ${code !== undefined ? `code ${code}` : `HTTP ${status}`} (${said(body?.message)})`;
  const wait = parseRetryAfterMs(headers.get('retry-after'), nowMs);

  if (status >= 200 && status < 300 && code === 0) return { kind: 'delivered', ...(requestId ? { platformRequestId: requestId } : {}) };
  if (status === 429 || code === RATE_LIMITED) return retryVerdict('rate_limited', `${what}: too many requests for now.`, status, wait);
  if (status >= 500 || (code !== undefined && code >= 50000)) return retryVerdict('platform_unavailable', `${what}: a temporary fault at TikTok.`, status, wait);
  if (status === 401 || (code !== undefined && INVALID_TOKEN.has(code))) {
    // An Events API token has no refresh: delivery marks the connection reauthorization_required and keeps its
    // conversions queued until a new handoff brings a new token.
    const hint = 'Generate a new access token in TikTok Events Manager (your pixel → Settings → Events API → Generate Access Token) and connect TikTok again.';
    return refusedVerdict('token_refused', 'invalid_token', `${what}: the Events API access token is invalid or was revoked.`, hint, status);
  }
  if (status === 403 || (code !== undefined && NO_PERMISSION.has(code))) {
    const hint = 'Check the pixel code, and that the access token was generated for that pixel in Events Manager; then connect TikTok again.';
    return refusedVerdict('failed', 'permission_denied', `${what}: this token may not report events to the pixel.`, hint, status);
  }
  if (code === INVALID_PARAMETERS || status === 400) {
    const hint = 'TikTok refused a field of this event; its message above names the field. A custom event_name TikTok does not accept is a common cause.';
    return refusedVerdict('invalid_event', 'invalid_parameter', `${what}: TikTok refused the event.`, hint, status);
  }
  if (status >= 200 && status < 300 && code === undefined) return retryVerdict('unexpected_answer', `TikTok answered HTTP ${status} without a result code.`, status);
  return refusedVerdict('failed', 'tiktok_rejected', `${what}; HTTP ${status}.`, 'Check the TikTok connection (pixel code and access token) and connect TikTok again if it changed.', status);
}
