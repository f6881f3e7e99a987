/**
 * An outgoing request's signal (http/deadline.ts): aborted by the shutdown or by its timeout, and nothing of it left
 * on the long-lived shutdown signal once the request is over. AbortSignal.any, which it replaces, kept a WeakRef per
 * call in the shutdown signal's dependents on Node 20 (nodejs/node#55351): a leak of every platform send.
 */
import { getEventListeners } from 'node:events';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { deadline } from '../../src/server/http/deadline';

/** What a signal holds of the signals made from it: its abort listeners, and the dependents Node keeps for AbortSignal.any. */
function attached(signal: AbortSignal): number {
  const dependents = Object.getOwnPropertySymbols(signal)
    .filter((symbol) => /dependant|dependent/i.test(String(symbol.description)))
    .map((symbol) => (signal as unknown as Record<symbol, unknown>)[symbol])
    .reduce<number>((sum, value) => sum + ((value as { size?: unknown } | undefined)?.size as number | undefined ?? 0), 0);
  return getEventListeners(signal, 'abort').length + dependents;
}

describe('deadline', () => {
  afterEach(() => vi.useRealTimers());

  it('leaves nothing on the shutdown signal after the requests end (AbortSignal.any did)', () => {
    const shutdown = new AbortController();
    for (let i = 0; i < 1000; i++) deadline(shutdown.signal, 30_000).end();
    expect(attached(shutdown.signal)).toBe(0);

    // The measure sees the leak it guards against, where Node has it.
    const leaky = new AbortController();
    for (let i = 0; i < 10; i++) AbortSignal.any([leaky.signal, AbortSignal.timeout(30_000)]);
    const [major] = process.versions.node.split('.').map(Number);
    if (major === 20) expect(attached(leaky.signal)).toBeGreaterThan(0);
  });

  it('aborts when the timeout passes, and says so', () => {
    vi.useFakeTimers();
    const shutdown = new AbortController();
    const request = deadline(shutdown.signal, 5_000);
    vi.advanceTimersByTime(4_999);
    expect(request.signal.aborted).toBe(false);
    vi.advanceTimersByTime(1);
    expect(request.signal.aborted).toBe(true);
    expect(request.timedOut).toBe(true);
    expect((request.signal.reason as DOMException).name).toBe('TimeoutError');
    request.end();
    expect(attached(shutdown.signal)).toBe(0);
  });

  it('aborts with the shutdown, at once when the shutdown came first, and not as a timeout', () => {
    vi.useFakeTimers();
    const shutdown = new AbortController();
    const request = deadline(shutdown.signal, 5_000);
    shutdown.abort(new Error('stopping'));
    expect(request.signal.aborted).toBe(true);
    expect(request.timedOut).toBe(false);
    expect((request.signal.reason as Error).message).toBe('stopping');
    vi.advanceTimersByTime(10_000);
    expect(request.timedOut).toBe(false);
    request.end();

    const late = deadline(shutdown.signal, 5_000);
    expect(late.signal.aborted).toBe(true);
    expect(late.timedOut).toBe(false);
    late.end();
  });

  it('never fires after the request ended', () => {
    vi.useFakeTimers();
    const request = deadline(new AbortController().signal, 1_000);
    request.end();
    vi.advanceTimersByTime(5_000);
    expect(request.signal.aborted).toBe(false);
  });
});
