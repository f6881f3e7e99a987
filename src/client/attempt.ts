/** One signed POST of a report, bounded by a timeout, classified into what the retry loop needs to know. */
import { computeSignature, unixSeconds } from '../protocol/hmac-node';
import { parseRetryAfterMs } from '../protocol/retry-after';
import { formatSignatureHeader, SIGNATURE_HEADER, type SaasSignupResponse } from '../protocol/webhook';
import { parseServiceError, type ServiceError } from './service-error';

/** Why an attempt failed in a way worth retrying. */
export type TransientFailure =
  | { kind: 'http'; httpStatus: number; error: ServiceError | null }
  | { kind: 'timeout'; timeoutMs: number }
  | { kind: 'network'; message: string };

export type AttemptOutcome =
  | { kind: 'delivered'; response: SaasSignupResponse }
  | { kind: 'rejected'; httpStatus: number; error: ServiceError | null; location: string | null }
  | { kind: 'unexpected_response'; httpStatus: number; message: string }
  | { kind: 'transient'; failure: TransientFailure; retryAfterMs: number | null };

export interface AttemptRequest {
  fetch: typeof fetch;
  url: string;
  path: string;
  bytes: Uint8Array<ArrayBuffer>;
  secret: string;
  timeoutMs: number;
  /** Clock in ms: the timestamp is taken per attempt, so every retry carries a fresh signature. */
  nowMs: number;
}

/** Statuses after which the same request may succeed later. */
function isTransientStatus(status: number): boolean {
  return status >= 500 || status === 429 || status === 408;
}

/** Signs with the attempt's own timestamp, sends, and reads the answer, all within `timeoutMs`. */
export async function sendAttempt(req: AttemptRequest): Promise<AttemptOutcome> {
  const timestamp = unixSeconds(req.nowMs);
  const signature = formatSignatureHeader(timestamp, [computeSignature(req.secret, timestamp, req.path, req.bytes)]);
  const controller = new AbortController();
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    controller.abort();
  }, req.timeoutMs);
  try {
    const response = await req.fetch(req.url, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', [SIGNATURE_HEADER]: signature, 'User-Agent': 'cnv-node-client' },
      body: req.bytes,
      // A redirect would change the signed path (and turn the POST into a GET): report it instead of following.
      redirect: 'manual',
      signal: controller.signal,
    });
    const text = await response.text();
    return classify(response, text, req.nowMs);
  } catch (err) {
    if (timedOut) return { kind: 'transient', failure: { kind: 'timeout', timeoutMs: req.timeoutMs }, retryAfterMs: null };
    return { kind: 'transient', failure: { kind: 'network', message: networkMessage(err) }, retryAfterMs: null };
  } finally {
    clearTimeout(timer);
  }
}

function classify(response: Response, text: string, nowMs: number): AttemptOutcome {
  const status = response.status;
  if (status >= 200 && status < 300) {
    const body = parseResponseBody(text);
    if (body) return { kind: 'delivered', response: body };
    return {
      kind: 'unexpected_response',
      httpStatus: status,
      message: `HTTP ${status} but the body is not a webhook response: ${text.slice(0, 200)}`,
    };
  }
  const error = parseServiceError(text);
  if (isTransientStatus(status)) {
    const retryAfterMs = parseRetryAfterMs(response.headers.get('retry-after'), nowMs);
    return { kind: 'transient', failure: { kind: 'http', httpStatus: status, error }, retryAfterMs };
  }
  return { kind: 'rejected', httpStatus: status, error, location: response.headers.get('location') };
}

function parseResponseBody(text: string): SaasSignupResponse | null {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return null;
  }
  const body = parsed as (Partial<SaasSignupResponse> & { adjustment_id?: unknown; events?: unknown }) | null;
  if (!body || typeof body !== 'object') return null;
  // An adjustment's answer: {status: 'accepted', adjustment_id, events}.
  if ((body.status as string | undefined) === 'accepted' && typeof body.adjustment_id === 'string' && typeof body.events === 'number') return body as unknown as SaasSignupResponse;
  if (
    typeof body.status !== 'string' ||
    typeof body.promoted_count !== 'number' ||
    typeof body.customer_event_id !== 'string' ||
    typeof body.correlated !== 'boolean'
  ) {
    return null;
  }
  return body as SaasSignupResponse;
}

/** fetch hides the socket error in `cause`; surface its code (ECONNRESET, ECONNREFUSED, …) for the log. */
function networkMessage(err: unknown): string {
  const error = err as { message?: string; cause?: { code?: string; message?: string } } | undefined;
  const cause = error?.cause?.code ?? error?.cause?.message;
  const message = error?.message ?? String(err);
  return cause ? `${message} (${cause})` : message;
}
