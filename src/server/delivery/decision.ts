/** What to do with an event action after a send: record it delivered, fail it for good, or schedule another attempt. */
import type { DeliveryError, DeliveryOutcome, RequestSummary } from '../destinations';
import { backoffDelayMs, type BackoffPolicy } from './backoff';

export type Decision =
  | { kind: 'delivered'; request: RequestSummary }
  | { kind: 'failed'; error: DeliveryError; request: RequestSummary | null }
  /** Deliberately not sent (consent): final, and never a failure. */
  | { kind: 'skipped'; reason: DeliveryError; request: RequestSummary | null }
  | { kind: 'retry'; error: DeliveryError; dueAt: Date };

/**
 * Decides after the `attempts`-th send (1 for the first). A transient fault is retried at the destination's
 * Retry-After if it gave one, else after a full-jitter backoff; once `maxAttempts` sends have failed it fails for good
 * with the last error.
 */
export function decide(outcome: DeliveryOutcome, attempts: number, policy: BackoffPolicy, now: Date, random: () => number): Decision {
  if (outcome.kind === 'delivered') {
    const request = {
      ...outcome.request,
      ...(outcome.duplicate ? { duplicate: true } : {}),
      ...(outcome.platformRequestId ? { platform_request_id: outcome.platformRequestId } : {}),
    };
    return { kind: 'delivered', request };
  }
  if (outcome.kind === 'failed') return { kind: 'failed', error: outcome.error, request: outcome.request ?? null };
  if (outcome.kind === 'skipped') return { kind: 'skipped', reason: outcome.reason, request: outcome.request ?? null };
  if (attempts >= policy.maxAttempts) {
    return {
      kind: 'failed',
      error: { ...outcome.error, message: `${outcome.error.message} (gave up after ${attempts} attempts)` },
      request: outcome.request ?? null,
    };
  }
  // retry_later names its own wait (e.g. a conversion goal created minutes ago); retry honours Retry-After, else backs off.
  // A refused token reaches here only when the round could not heal it: an ordinary retry with backoff.
  const delay =
    outcome.kind === 'retry_later' ? outcome.afterMs : ((outcome.kind === 'retry' ? outcome.afterMs : undefined) ?? backoffDelayMs(attempts, policy, random));
  return { kind: 'retry', error: outcome.error, dueAt: new Date(now.getTime() + delay) };
}
