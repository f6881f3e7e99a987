/** The one way a platform adapter calls its API: JSON (or a form) over fetch, with the timeout, the shutdown signal and transport faults classified. */
import type { DeliveryError, SendContext } from './destination';
import { deadline } from '../http/deadline';

/** The platform answered (any status), or the request never got an answer (a transient fault to retry). */
export type HttpAnswer =
  | { answered: true; status: number; headers: Headers; text: string }
  | { answered: false; error: DeliveryError };

/**
 * Sends a request with a JSON body (or none) and reads the whole answer as text. Never throws: a timeout, a network
 * error or a shutdown becomes `answered: false` with a `timeout`, `network_error` or `interrupted` error.
 */
export async function requestJson(
  platformLabel: string,
  url: string,
  init: { method?: 'GET' | 'POST'; headers: Record<string, string>; body?: unknown; /** Sent form-encoded instead of a JSON body (an OAuth token endpoint). */ form?: Record<string, string> },
  ctx: Pick<SendContext, 'signal' | 'timeoutMs'>,
): Promise<HttpAnswer> {
  const request = deadline(ctx.signal, ctx.timeoutMs);
  try {
    const body = init.form ? new URLSearchParams(init.form).toString() : init.body === undefined ? undefined : JSON.stringify(init.body);
    const contentType = init.form ? 'application/x-www-form-urlencoded' : init.body === undefined ? undefined : 'application/json';
    const response = await fetch(url, {
      method: init.method ?? 'POST',
      headers: contentType ? { 'content-type': contentType, ...init.headers } : init.headers,
      ...(body === undefined ? {} : { body }),
      signal: request.signal,
    });
    return { answered: true, status: response.status, headers: response.headers, text: await response.text() };
  } catch (error) {
    if (ctx.signal.aborted) return { answered: false, error: { code: 'interrupted', message: 'The send was interrupted by a shutdown.' } };
    if (request.timedOut) {
      return { answered: false, error: { code: 'timeout', message: `${platformLabel} did not answer within ${ctx.timeoutMs} ms.` } };
    }
    const cause = (error as { cause?: { code?: string; message?: string } }).cause;
    const detail = cause?.code ?? cause?.message ?? (error as Error).message;
    let origin = url;
    try {
      origin = new URL(url).origin;
    } catch {
      // keep the url as given
    }
    return { answered: false, error: { code: 'network_error', message: `Could not reach ${platformLabel} at ${origin}: ${detail}.` } };
  } finally {
    request.end();
  }
}

/** Parses a JSON answer; null when the text is not JSON. */
export function parseJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return null;
  }
}
