/**
 * The notification worker: its own loop beside the delivery worker (so a slow or dead receiver never slows delivery to
 * the ad platforms), polling the notification outbox, sending due messages side by side, retrying on the Standard
 * Webhooks schedule with jitter. Messages stay in the table until an attempt settles them, so a restart or a kill -9
 * loses none: a message whose lease expired is claimed again.
 */
import type { Database } from '../db/db';
import type { Settings } from '../settings';
import { openedOrNull, serviceSecretBox } from '../db/secret-box';
import { storeAwareErrorLog } from '../db/store-trouble';
import { MAX_ATTEMPTS, RECEIVER_TIMEOUT_MS, retryDelayMs } from './kinds';
import { claimNotifications, recordNotificationAttempt } from './sql';
import { sendNotification } from './sender';
import { workInFlight } from '../http/deadline';

/** Why a message to an endpoint whose signing secret does not open failed (its attempt's error). */
export const UNREADABLE_SECRET =
  "The endpoint's signing secret was encrypted with another CNV_SECRET_KEY (the service now runs with a different key), so the message could not be signed. Delete the endpoint and create it again (a new secret), or restart the service with the key that sealed it.";

export interface NotificationLogger {
  info(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
  error(obj: object, msg?: string): void;
}

export interface NotificationWorkerOptions {
  db: Database;
  settings: Settings;
  log: NotificationLogger;
  now?: () => Date;
  random?: () => number;
  /** Per-attempt timeout (default 10 s). */
  timeoutMs?: number;
  /**
   * How long stop() lets the messages in flight end and be recorded before it interrupts them (default: the
   * per-attempt timeout). An interrupted one is sent again once its lease expires, which the endpoint sees twice
   * (with the same webhook-id).
   */
  stopGraceMs?: number;
  /** Poll interval when idle (default 1 s). */
  pollIntervalMs?: number;
  /** Messages claimed per round (default 20), sent side by side. */
  batchSize?: number;
  /** False: only drain() sends (tests). */
  autoStart?: boolean;
}

export interface NotificationWorker {
  /** Sends everything due now, round after round, until nothing due is left; returns how many attempts were made. */
  drain(): Promise<number>;
  stop(): Promise<void>;
}

export function startNotificationWorker(options: NotificationWorkerOptions): NotificationWorker {
  const now = options.now ?? (() => new Date());
  const random = options.random ?? Math.random;
  const timeoutMs = options.timeoutMs ?? RECEIVER_TIMEOUT_MS;
  const leaseMs = timeoutMs + 30_000;
  const limit = options.batchSize ?? 20;
  const box = serviceSecretBox(options.settings);
  const stopGraceMs = Math.max(0, options.stopGraceMs ?? timeoutMs);
  const stopping = new AbortController();
  // Set by stop(): no round starts any more, while the messages under way may still end (see stopGraceMs).
  let closing = false;
  let running: Promise<number> | null = null;
  // Every drain under way (the poll's and callers'), which stop() lets end.
  const inFlight = workInFlight();
  const track = inFlight.track;

  const round = async (): Promise<number> => {
    const claims = await claimNotifications(options.db, { now: now(), leaseMs, limit });
    await Promise.all(
      claims.map(async (claim) => {
        const secret = openedOrNull(box, claim.sealedSecret);
        if (secret === null) {
          // Sealed under another CNV_SECRET_KEY: no message can be signed for this endpoint, now or later. This one
          // fails with the reason (the others of the round go out); the endpoint must be created again.
          const recorded = await recordNotificationAttempt(options.db, claim, { status: null, error: UNREADABLE_SECRET, durationMs: 0 }, { status: 'failed' }, now());
          if (recorded) options.log.warn({ notification: claim.messageId }, 'notification failed: its endpoint secret does not open with the current CNV_SECRET_KEY');
          return;
        }
        const outcome = await sendNotification({ url: claim.url, secret, messageId: claim.messageId, body: claim.payload }, { now, timeoutMs, signal: stopping.signal, policy: { privateAddresses: options.settings.notificationPrivateAddresses } });
        if (stopping.signal.aborted && !outcome.ok) return; // interrupted: the lease expires and it is sent again
        const attempts = claim.attempts + 1;
        const delay = outcome.ok ? null : retryDelayMs(attempts, random);
        const at = now();
        const next = outcome.ok
          ? ({ status: 'delivered' } as const)
          : delay === null || attempts >= MAX_ATTEMPTS
            ? ({ status: 'failed' } as const)
            : ({ status: 'pending', retryAt: new Date(at.getTime() + delay) } as const);
        await recordNotificationAttempt(options.db, claim, outcome, next, at);
        if (!outcome.ok) options.log.warn({ notification: claim.messageId, attempt: attempts, status: outcome.status, final: next.status === 'failed' }, 'notification not accepted');
      }),
    );
    return claims.length;
  };

  const drain = async (): Promise<number> => {
    let total = 0;
    for (;;) {
      if (closing) return total;
      const n = await round();
      total += n;
      if (n === 0) return total;
    }
  };

  // A store that cannot work fails every round until it is back: said as it starts, once a minute while it lasts and
  // when a round works again, not every second.
  const loopLog = storeAwareErrorLog(options.log, 'notifications');
  const tick = () => {
    if (running || closing) return;
    running = track(drain())
      .then(
        (n) => {
          loopLog.worked();
          return n;
        },
        (error: unknown) => {
          loopLog.failed(error, {}, 'notification round failed');
          return 0;
        },
      )
      .finally(() => {
        running = null;
      });
  };
  const timer = options.autoStart === false ? null : setInterval(tick, options.pollIntervalMs ?? 1000);
  timer?.unref?.();

  return {
    drain: async () => {
      if (running) await running;
      return track(drain());
    },
    async stop() {
      if (timer) clearInterval(timer);
      closing = true;
      await inFlight.settledWithin(stopGraceMs);
      stopping.abort();
      await inFlight.settled();
    },
  };
}
