/**
 * Sending a batch to a platform that refuses a whole request for one invalid event (Reddit, TikTok): the refused
 * request is halved and each half sent again, one after the other, until the refused event stands alone; it fails and
 * the others are delivered. A budget of calls keeps a batch full of bad events from turning into hundreds of requests:
 * past it, the events not yet settled are retried later in smaller batches.
 */
import type { DeliveryError, DeliveryOutcome, RequestSummary } from './destination';

/** What one request's answer means for every event in it. */
export type BatchVerdict =
  | { kind: 'delivered'; platformRequestId?: string }
  /** Transient: send again (after `afterMs` when the platform said how long). */
  | { kind: 'retry'; error: DeliveryError; afterMs?: number }
  /** About the connection (pixel, permission): every event fails alike, splitting cannot help. */
  | { kind: 'failed'; error: DeliveryError }
  /** The platform refused the access token: delivery's one mechanism (destination.ts, “Tokens that heal”) takes over. */
  | { kind: 'token_refused'; error: DeliveryError }
  /** One of the events is invalid: a batch is split to find it; a single event fails with this error. */
  | { kind: 'invalid_event'; error: DeliveryError };

/** A transient fault's verdict, after `afterMs` when the platform said how long (a Retry-After; null when it did not). */
export function retryVerdict(code: string, message: string, status: number | undefined, afterMs: number | null = null): BatchVerdict {
  return { kind: 'retry', error: { code, message, ...(status !== undefined ? { status } : {}) }, ...(afterMs === null ? {} : { afterMs }) };
}

/** A refusal's verdict (the connection, its token, or an event), with the hint a person acts on. */
export function refusedVerdict(kind: 'failed' | 'token_refused' | 'invalid_event', code: string, message: string, hint: string, status: number): BatchVerdict {
  return { kind, error: { code, message, hint, status } };
}

/** One event ready to send: where its outcome goes, what is sent, and what is recorded. */
export interface SplitItem<E> {
  index: number;
  event: E;
  summary: RequestSummary;
}

/** Calls one batch may make while isolating refused events. */
export const ISOLATION_BUDGET = 64;

/** The outcome of one event under a verdict; `batchSize` is recorded when the event went with others. */
export function outcomeOf(verdict: BatchVerdict, summary: RequestSummary, batchSize: number): DeliveryOutcome {
  const request = batchSize > 1 ? { ...summary, batch_size: batchSize } : summary;
  switch (verdict.kind) {
    case 'delivered':
      return { kind: 'delivered', request, ...(verdict.platformRequestId ? { platformRequestId: verdict.platformRequestId } : {}) };
    case 'retry':
      return { kind: 'retry', error: verdict.error, request, ...(verdict.afterMs !== undefined ? { afterMs: verdict.afterMs } : {}) };
    case 'token_refused':
      return { kind: 'token_refused', error: verdict.error, request };
    case 'failed':
    case 'invalid_event':
      return { kind: 'failed', error: verdict.error, request };
  }
}

/**
 * Sends `items` with `post` (one request each call), writing one outcome per item into `outcomes` at its index.
 * A request refused for an invalid event is split in halves until that event stands alone.
 */
export async function sendSplitting<E>(
  items: readonly SplitItem<E>[],
  post: (events: E[]) => Promise<BatchVerdict>,
  outcomes: DeliveryOutcome[],
): Promise<void> {
  let budget = ISOLATION_BUDGET;
  const send = async (group: readonly SplitItem<E>[]): Promise<void> => {
    budget -= 1;
    const verdict = await post(group.map((item) => item.event));
    if (verdict.kind === 'invalid_event' && group.length > 1) {
      if (budget < 2) {
        const error: DeliveryError = {
          code: 'isolation_pending',
          message: 'The platform refused a batch with this event in it; it is sent again in a smaller batch.',
          ...(verdict.error.status !== undefined ? { status: verdict.error.status } : {}),
        };
        for (const item of group) outcomes[item.index] = outcomeOf({ kind: 'retry', error }, item.summary, group.length);
        return;
      }
      const middle = Math.ceil(group.length / 2);
      // One half after the other: a split batch should not double the pressure on the account's rate limit.
      await send(group.slice(0, middle));
      await send(group.slice(middle));
      return;
    }
    for (const item of group) outcomes[item.index] = outcomeOf(verdict, item.summary, group.length);
  };
  if (items.length > 0) await send(items);
}

/**
 * One input made into a platform's event (with its summary), or not sent: refused before sending with a permanent
 * error, or held back by consent (`skipped`: the action's status is `skipped`, never `failed`).
 */
export type Built<E> =
  | { ok: true; event: E; summary: RequestSummary }
  | { ok: false; error: DeliveryError; summary: RequestSummary; skipped?: true };

/**
 * Sends a delivery batch: each input built (`build`), the refused ones failed at once, the others posted in requests
 * of at most `perRequest` events, each request split when refused for one event. One outcome per input, in order.
 */
export async function sendBuiltBatch<I, E>(
  inputs: readonly I[],
  build: (input: I) => Built<E>,
  post: (events: E[]) => Promise<BatchVerdict>,
  perRequest: number,
): Promise<DeliveryOutcome[]> {
  const outcomes: DeliveryOutcome[] = new Array(inputs.length);
  const pending: SplitItem<E>[] = [];
  inputs.forEach((input, index) => {
    const built = build(input);
    if (built.ok) pending.push({ index, event: built.event, summary: built.summary });
    else outcomes[index] = built.skipped ? { kind: 'skipped', reason: built.error, request: built.summary } : { kind: 'failed', error: built.error, request: built.summary };
  });
  for (let start = 0; start < pending.length; start += perRequest) {
    await sendSplitting(pending.slice(start, start + perRequest), post, outcomes);
  }
  return outcomes;
}
