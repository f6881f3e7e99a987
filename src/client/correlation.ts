/** Finding the signup correlation token in what a customer's backend has at hand: a request or a Cookie header. */
import { CORRELATION_COOKIE, isCorrelationToken } from '../protocol/cookies';
import { cookieValues } from './cookie-header';

/** Anything with request headers: a Node `IncomingMessage` (Express, Fastify's `request.raw`), a Fetch `Request`, or a plain `{ headers: { cookie } }`. */
export type RequestLike =
  | { headers: { get(name: string): string | null } }
  | { headers: Record<string, string | readonly string[] | undefined> };

/** What was found: a token, nothing, or a cookie whose value is not a token (ignored: a tampered or foreign value). */
export type CorrelationLookup =
  | { token: string; problem: null }
  | { token: null; problem: 'missing' | 'malformed' };

/** The raw Cookie header of a request, or null when it has none. */
export function cookieHeaderOf(request: RequestLike): string | readonly string[] | null {
  const headers = request.headers as unknown;
  if (!headers || typeof headers !== 'object') return null;
  if (typeof (headers as { get?: unknown }).get === 'function') {
    return (headers as { get(name: string): string | null }).get('cookie');
  }
  const record = headers as Record<string, string | readonly string[] | undefined>;
  return record.cookie ?? record.Cookie ?? null;
}

/** Looks up the correlation cookie in a Cookie header: the first value shaped like a token wins. */
export function lookupCorrelationToken(cookieHeader: string | readonly string[] | null | undefined): CorrelationLookup {
  const values = cookieValues(cookieHeader, CORRELATION_COOKIE);
  const token = values.find(isCorrelationToken);
  if (token) return { token, problem: null };
  return { token: null, problem: values.length > 0 ? 'malformed' : 'missing' };
}

/** The correlation token of a request or Cookie header, or null when there is none (or it is not a valid token). */
export function readCorrelationToken(source: RequestLike | string | null | undefined): string | null {
  const header = source && typeof source === 'object' ? cookieHeaderOf(source) : source;
  return lookupCorrelationToken(header).token;
}
