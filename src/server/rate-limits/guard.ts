/**
 * The limits of the public endpoints at the HTTP edge: `@fastify/rate-limit`'s limiters over this service's store
 * ({@link WindowCounts}), two per surface (per client address, then per site key), checked in `onRequest`, before the
 * body is read. A refused request is answered 429 with `Retry-After` (whole seconds to the end of the window) and the
 * error envelope (`rate_limit_error`). A request refused by its address limit is not counted against its site, so a
 * flood from one address never uses up a site's allowance.
 */
import type { FastifyInstance, FastifyRequest, onRequestAsyncHookHandler } from 'fastify';
import fastifyRateLimit, { normalizeIP, type FastifyRateLimitStore } from '@fastify/rate-limit';
import { printable, type ErrorBody } from '../http/errors';
import type { RateLimitSettings } from '../settings';
import type { WindowCounts } from './window-counts';

/** The surfaces with limits. */
export type LimitedSurface = 'collector' | 'webhook';

/** What a limit counts by. */
type LimitKind = 'address' | 'site';

/** Told once per key and window when a key first goes over its limit (the address itself is never passed on). */
export type LimitReached = (bucket: string, siteKey: string | null) => void;

/** IPv6 clients are counted per /64 (one customer's network), as @fastify/rate-limit does by default. */
const IPV6_SUBNET = 64;

/** The bucket of a surface's limit: the store counts each bucket's keys apart. */
export function bucketOf(surface: LimitedSurface, kind: LimitKind): string {
  return `${surface}:${kind}`;
}

/** A limiter's options, with the bucket its store child counts in (passed through by @fastify/rate-limit). */
interface BucketOptions {
  cnvBucket?: string;
}

/** @fastify/rate-limit's store interface over {@link WindowCounts}; each child counts one bucket. */
function storeClass(counts: WindowCounts, onReached: LimitReached): new () => FastifyRateLimitStore {
  return class CountsStore implements FastifyRateLimitStore {
    constructor(private readonly bucket = '') {}

    incr(key: string, callback: (error: Error | null, result?: { current: number; ttl: number }) => void, _timeWindow: number, max: number): void {
      const hit = counts.hit(this.bucket, key);
      if (hit.current === max + 1) onReached(this.bucket, this.bucket.endsWith(':site') ? printable(key, 100) : null);
      callback(null, { current: hit.current, ttl: hit.ttlMs });
    }

    child(options: object): FastifyRateLimitStore {
      return new CountsStore((options as BucketOptions).cnvBucket ?? this.bucket);
    }
  } as unknown as new () => FastifyRateLimitStore;
}

function windowWords(seconds: number): string {
  return seconds === 60 ? 'a minute' : seconds === 3600 ? 'an hour' : `per ${seconds} s`;
}

/** The body of a 429, in the service's error envelope. */
export function rateLimitedBody(surface: LimitedSurface, kind: LimitKind, max: number, windowSeconds: number, retryAfterSeconds: number): ErrorBody {
  const what = surface === 'collector' ? 'the collector takes' : 'the webhook bridge takes';
  const per = kind === 'address' ? 'from one client address' : 'for one site';
  return {
    error: {
      type: 'rate_limit_error',
      code: 'rate_limited',
      message:
        `Too many requests ${kind === 'address' ? 'from this address' : 'for this site'}: ${what} at most ${max} requests ${windowWords(windowSeconds)} ${per}. ` +
        `Retry after ${retryAfterSeconds} s (the Retry-After header).`,
    },
  };
}

/**
 * The onRequest hook of a surface's limits, or null when both are off. Registers @fastify/rate-limit on `app` (not
 * globally: only the routes given this hook are limited).
 */
export async function limitHook(
  app: FastifyInstance,
  surface: LimitedSurface,
  limits: RateLimitSettings,
  counts: WindowCounts,
  onReached: LimitReached,
): Promise<onRequestAsyncHookHandler | null> {
  const perAddress = surface === 'collector' ? limits.collectorPerAddress : limits.webhookPerAddress;
  const perSite = surface === 'collector' ? limits.collectorPerSite : limits.webhookPerSite;
  if (perAddress === null && perSite === null) return null;
  if (!app.hasDecorator('createRateLimit')) {
    await app.register(fastifyRateLimit, { global: false, store: storeClass(counts, onReached), skipOnError: true });
  }
  const timeWindow = limits.windowSeconds * 1000;
  const keys: Record<LimitKind, (request: FastifyRequest) => string> = {
    address: (request) => (request.ip ? normalizeIP(request.ip, IPV6_SUBNET) : ''),
    site: (request) => (request.params as { site_key?: string } | undefined)?.site_key ?? '',
  };
  const checks = (['address', 'site'] as const)
    .map((kind) => ({ kind, max: kind === 'address' ? perAddress : perSite }))
    .filter((check): check is { kind: LimitKind; max: number } => check.max !== null)
    .map((check) => ({
      ...check,
      limiter: app.createRateLimit({
        max: check.max,
        timeWindow,
        keyGenerator: keys[check.kind],
        cnvBucket: bucketOf(surface, check.kind),
      } as Parameters<FastifyInstance['createRateLimit']>[0] & BucketOptions),
    }));
  return async function rateLimited(request, reply) {
    for (const check of checks) {
      const result = await check.limiter(request);
      if (result.isAllowed || !result.isExceeded) continue;
      const seconds = Math.max(1, result.ttlInSeconds);
      // Answered here, not thrown: under a flood this is the common answer, and an error's stack trace is its main cost.
      return reply
        .code(429)
        .header('retry-after', String(seconds))
        .send(rateLimitedBody(surface, check.kind, check.max, limits.windowSeconds, seconds));
    }
    return undefined;
  };
}
