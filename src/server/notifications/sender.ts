/**
 * One attempt to deliver a message: a POST of the JSON body with the Standard Webhooks headers, answered 2xx within the
 * timeout or it failed. Redirects are never followed (a 3xx is a failed attempt), and the URL is checked again at
 * send time, its name resolved to public addresses only unless the policy allows private ones (url.ts).
 */
import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { request as httpRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { LookupFunction } from 'node:net';
import { deadline } from '../http/deadline';
import { signedHeaders } from './signing';
import { endpointUrlProblem, isPublicAddress, type EndpointPolicy } from './url';
import type { AttemptOutcome } from './sql';

export interface SendMessage {
  url: string;
  secret: string;
  messageId: string;
  body: string;
}

/** A name that resolved to an address the policy refuses (the code shown with the failed attempt). */
const PRIVATE_ADDRESS = 'EPRIVATEADDRESS';

/** DNS resolution that refuses a name with any non-public address, so the connection goes only where it was checked. */
function publicOnlyLookup(resolve: typeof dnsLookup = dnsLookup): LookupFunction {
  return (hostname, options, callback) => {
    resolve(hostname, { ...options, all: true }, (error, addresses) => {
      if (error) return (callback as (e: Error) => void)(error);
      const list = addresses as unknown as LookupAddress[];
      if (list.length === 0 || list.some((a) => !isPublicAddress(a.address))) {
        return (callback as (e: Error) => void)(Object.assign(new Error(`${hostname} resolves to a private address`), { code: PRIVATE_ADDRESS }));
      }
      if (options.all) return (callback as unknown as (e: null, a: LookupAddress[]) => void)(null, list);
      return callback(null, list[0]!.address, list[0]!.family);
    });
  };
}

/** POSTs `body` to `url` and resolves its status once the headers arrive (the body is not read). No redirect is followed. */
function post(url: URL, headers: Record<string, string>, body: string, signal: AbortSignal, policy: EndpointPolicy): Promise<number> {
  return new Promise((resolve, reject) => {
    const request = (url.protocol === 'https:' ? httpsRequest : httpRequest)(
      url,
      {
        method: 'POST',
        headers: { ...headers, 'content-length': String(Buffer.byteLength(body)) },
        signal,
        ...(policy.privateAddresses ? {} : { lookup: publicOnlyLookup(policy.lookup) }),
      },
      (response: IncomingMessage) => {
        resolve(response.statusCode ?? 0);
        response.destroy();
      },
    );
    request.on('error', reject);
    request.end(body);
  });
}

/** The code of a failed request (ECONNREFUSED, a TLS code…), else its message. */
function causeOf(error: unknown): string {
  const code = (error as { code?: unknown }).code;
  return typeof code === 'string' ? code : (error as Error).message;
}

export async function sendNotification(
  message: SendMessage,
  ctx: { now: () => Date; timeoutMs: number; signal: AbortSignal; policy: EndpointPolicy },
): Promise<AttemptOutcome & { ok: boolean }> {
  const started = performance.now();
  const duration = () => Math.round(performance.now() - started);
  const problem = endpointUrlProblem(message.url, ctx.policy);
  if (problem) return { ok: false, status: null, error: problem, durationMs: 0 };
  const request = deadline(ctx.signal, ctx.timeoutMs);
  try {
    const headers = { 'content-type': 'application/json', 'user-agent': 'cnv-notifications', ...signedHeaders(message.secret, message.messageId, ctx.now(), message.body) };
    const status = await post(new URL(message.url), headers, message.body, request.signal, ctx.policy);
    const ok = status >= 200 && status < 300;
    const error = ok
      ? null
      : status >= 300 && status < 400
        ? `The endpoint answered HTTP ${status} (a redirect); redirects are not followed: register the final URL.`
        : `The endpoint answered HTTP ${status}.`;
    return { ok, status, error, durationMs: duration() };
  } catch (error) {
    if (request.timedOut) return { ok: false, status: null, error: `The endpoint did not answer within ${ctx.timeoutMs / 1000} s.`, durationMs: duration() };
    if (ctx.signal.aborted) return { ok: false, status: null, error: 'interrupted', durationMs: duration() };
    const cause = causeOf(error);
    if (cause === PRIVATE_ADDRESS) {
      return { ok: false, status: null, error: 'The endpoint\'s name resolves to a private address, where this service does not send notifications.', durationMs: duration() };
    }
    return { ok: false, status: null, error: `Could not reach the endpoint: ${cause}.`, durationMs: duration() };
  } finally {
    request.end();
  }
}
