/**
 * Rate limits of the public endpoints (the collector's POSTs and the webhook bridge), per client address and per site
 * key, one set per process shared by its listeners. Counted in memory; on PostgreSQL the instances share their counts
 * through `rate_limit_counts` every `CNV_RATE_LIMIT_SYNC_MS` (docs/limits.md#rate-limits says what that allows).
 */
import type { FastifyInstance, onRequestAsyncHookHandler } from 'fastify';
import type { Database } from '../db/db';
import { serviceKeyedHash } from '../db/secret-box';
import { storeAwareErrorLog } from '../db/store-trouble';
import type { PeriodicLog } from '../periodic';
import type { Settings } from '../settings';
import { bucketOf, limitHook, type LimitedSurface } from './guard';
import { SharedSync } from './shared-sync';
import { WindowCounts } from './window-counts';

export { rateLimitedBody, type LimitedSurface } from './guard';

/** Where a limit's first refusal of a window is told (a warning without any address). */
export interface RateLimitLog extends PeriodicLog {
  warn(obj: object, msg?: string): void;
}

export interface RateLimits {
  /** Whether the counts are shared with other instances (PostgreSQL) or kept in this process only (embedded store). */
  readonly shared: boolean;
  /** The onRequest hook that limits a surface's routes on `app`; null when its limits are off. */
  hook(app: FastifyInstance, surface: LimitedSurface): Promise<onRequestAsyncHookHandler | null>;
  /** Shares the counts now (PostgreSQL; nothing in memory). The timer of {@link RateLimits.start} calls it. */
  sync(): Promise<void>;
  /** Starts sharing every `CNV_RATE_LIMIT_SYNC_MS` (PostgreSQL only). */
  start(log: RateLimitLog): void;
  /** Stops the timer, waiting for a sync under way. Safe to call twice. */
  stop(): Promise<void>;
}

export interface RateLimitOptions {
  settings: Pick<Settings, 'rateLimits' | 'secretKey' | 'dataDir'>;
  /** The store: on PostgreSQL the counts are shared through it; the embedded store keeps them in memory only. */
  db: Database;
  /** The clock in ms of the windows (tests inject one). */
  now?: () => number;
}

/** The limits of one process. */
export function createRateLimits(options: RateLimitOptions): RateLimits {
  const limits = options.settings.rateLimits;
  const shared = options.db.kind === 'postgres';
  // In the shared table a key is a keyed hash, so no client address is ever stored.
  const keyedHash = shared ? serviceKeyedHash(options.settings, 'rate limit key') : null;
  const counts = new WindowCounts({
    windowMs: limits.windowSeconds * 1000,
    now: options.now ?? Date.now,
    ...(keyedHash ? { idOf: (bucket: string, key: string) => keyedHash(`${bucket}\n${key}`).slice(0, 32) } : {}),
  });
  const hot = (
    [
      [bucketOf('collector', 'address'), limits.collectorPerAddress],
      [bucketOf('collector', 'site'), limits.collectorPerSite],
      [bucketOf('webhook', 'address'), limits.webhookPerAddress],
      [bucketOf('webhook', 'site'), limits.webhookPerSite],
    ] as const
  )
    .filter(([, max]) => max !== null)
    .map(([bucket, max]) => ({ bucket, hits: Math.max(1, Math.floor(max! / 2)) }));
  const sync = shared ? new SharedSync(options.db, counts, () => hot) : null;
  let log: RateLimitLog | undefined;
  let timer: { stop(): Promise<void> } | undefined;
  /**
   * Syncs every syncMs, the next one timed from the end of the last (a slow database delays the sharing, never piles up
   * syncs); a failure is logged and the next sync carries the counts.
   */
  const startTimer = (sync: SharedSync, l: RateLimitLog): { stop(): Promise<void> } => {
    let stopped = false;
    let pending: ReturnType<typeof setTimeout> | undefined;
    let running: Promise<void> = Promise.resolve();
    // A store that cannot work fails every sync until it is back: said as it starts, once a minute while it lasts and
    // when a sync works again, not every sync.
    const loopLog = storeAwareErrorLog(l, 'rate-limit sharing');
    const next = () => {
      if (stopped) return;
      pending = setTimeout(() => {
        running = sync
          .sync()
          .then(loopLog.worked, (error: unknown) => loopLog.failed(error, {}, 'could not share the rate-limit counts'))
          .then(next);
      }, limits.syncMs);
      pending.unref();
    };
    next();
    return {
      async stop() {
        stopped = true;
        clearTimeout(pending);
        await running;
      },
    };
  };
  return {
    shared,
    hook: (app, surface) =>
      limitHook(app, surface, limits, counts, (bucket, siteKey) =>
        (log ?? app.log).warn({ limit: bucket, ...(siteKey ? { site_key: siteKey } : {}) }, `rate limit ${bucket} reached: answering 429 until the window ends`),
      ),
    sync: () => sync?.sync() ?? Promise.resolve(),
    start(l) {
      log = l;
      if (!sync || timer || hot.length === 0) return;
      timer = startTimer(sync, l);
    },
    async stop() {
      const running = timer;
      timer = undefined;
      await running?.stop();
    },
  };
}
