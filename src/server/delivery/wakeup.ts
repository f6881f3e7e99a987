/**
 * In-process nudge for the delivery worker: code that has just committed new outbox rows (the webhook bridge, the
 * collector) calls `requestDelivery()` so the worker sends at once instead of at its next poll. Other processes on the
 * same PostgreSQL still find the rows by polling.
 */
import type { Database } from '../db/db';

const listeners = new Set<() => void>();

/** Asks every running worker of this process to look for due deliveries now. */
export function requestDelivery(): void {
  for (const listener of listeners) listener();
}

/** Subscribes to delivery requests; returns the unsubscribe function. */
export function onDeliveryRequested(listener: () => void): () => void {
  listeners.add(listener);
  return () => listeners.delete(listener);
}

/**
 * When the webhook's reports last had to queue behind a batch being written, per database handle (so two services in
 * one process, as in tests, never hold each other's workers). The delivery worker holds its rounds back while this is
 * recent: see DeliveryWorkerOptions.holdWhileIntakeBusyMs.
 */
const intakeBusyAt = new WeakMap<Database, number>();

/** Says that reports queued for `db` behind a batch being written (the webhook's report writer calls this). */
export function markIntakeBusy(db: Database): void {
  intakeBusyAt.set(db, performance.now());
}

/** How recent the webhook's last queueing must be for the intake to count as busy. */
export const INTAKE_BUSY_WINDOW_MS = 100;

/**
 * Whether reports queued for `db` within `withinMs` (INTAKE_BUSY_WINDOW_MS by default) of `now` (a performance.now()).
 * The delivery worker asks about the last moment; a task that holds the store for long asks about a longer while, so
 * that a short lull inside a burst does not let it in.
 */
export function intakeBusy(db: Database, { withinMs = INTAKE_BUSY_WINDOW_MS, now = performance.now() }: { withinMs?: number; now?: number } = {}): boolean {
  const at = intakeBusyAt.get(db);
  return at !== undefined && now - at < withinMs;
}
