/**
 * One attempt to deliver a message: a POST of the JSON body with the Standard Webhooks headers, answered 2xx within the
 * timeout or it failed. Redirects are never followed (a 3xx is a failed attempt), and the URL is checked again at
 * send time (https, or http to loopback).
 */
import { signedHeaders } from './signing';
import { endpointUrlProblem } from './url';
import type { AttemptOutcome } from './sql';

export interface SendMessage {
  url: string;
  secret: string;
  messageId: string;
  body: string;
}

export async function sendNotification(message: SendMessage, ctx: { now: () => Date; timeoutMs: number; signal: AbortSignal }): Promise<AttemptOutcome & { ok: boolean }> {
  const started = performance.now();
  const duration = () => Math.round(performance.now() - started);
  const problem = endpointUrlProblem(message.url);
  if (problem) return { ok: false, status: null, error: problem, durationMs: 0 };
  const timeout = AbortSignal.timeout(ctx.timeoutMs);
  try {
    const response = await fetch(message.url, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/json', 'user-agent': 'cnv-notifications', ...signedHeaders(message.secret, message.messageId, ctx.now(), message.body) },
      body: message.body,
      signal: AbortSignal.any([ctx.signal, timeout]),
    });
    // The body is not read beyond what arrives; a receiver only has to answer 2xx.
    await response.body?.cancel().catch(() => undefined);
    const ok = response.status >= 200 && response.status < 300;
    const error = ok
      ? null
      : response.status >= 300 && response.status < 400
        ? `The endpoint answered HTTP ${response.status} (a redirect); redirects are not followed: register the final URL.`
        : `The endpoint answered HTTP ${response.status}.`;
    return { ok, status: response.status, error, durationMs: duration() };
  } catch (error) {
    if (timeout.aborted) return { ok: false, status: null, error: `The endpoint did not answer within ${ctx.timeoutMs / 1000} s.`, durationMs: duration() };
    if (ctx.signal.aborted) return { ok: false, status: null, error: 'interrupted', durationMs: duration() };
    const cause = (error as { cause?: { code?: string } }).cause?.code ?? (error as Error).message;
    return { ok: false, status: null, error: `Could not reach the endpoint: ${cause}.`, durationMs: duration() };
  }
}
