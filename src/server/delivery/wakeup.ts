/**
 * In-process nudge for the delivery worker: code that has just committed new outbox rows (the webhook bridge, the
 * collector) calls `requestDelivery()` so the worker sends at once instead of at its next poll. Other processes on the
 * same PostgreSQL still find the rows by polling.
 */
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
