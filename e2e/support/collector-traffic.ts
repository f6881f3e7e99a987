/**
 * Observes (never mocks) the requests pages make to the real service, in the spirit of Plausible's
 * expectPlausibleInAction: a spec states which collector requests an action sends and which it must NOT send.
 */
import { expect, type BrowserContext, type Page, type Request } from '@playwright/test';
import type { Snapshot } from '../../src/protocol/collector';
import { QUICK_POLL } from './poll';

export type CollectorKind = 'loader' | 'config' | 'snapshot' | 'other';

/** One request a page made to the service. */
export interface CollectorCall {
  kind: CollectorKind;
  url: URL;
  method: string;
  /** The site key in the collector path, '' for the loader script. */
  siteKey: string;
  request: Request;
  /** Whether the request has finished (a response read to the end, or a failure). */
  done: boolean;
}

/** A request matcher: a kind, optionally narrowed by site key and by a predicate over the parsed snapshot body. */
export interface CallMatcher {
  kind: CollectorKind;
  siteKey?: string;
  snapshot?: (body: Snapshot) => boolean;
  /** How many matching requests are expected (for `sent`); default: at least one. */
  times?: number;
}

const COLLECT_PATH = /^\/collect\/v1\/sites\/([^/]+)\/(config|snapshots)$/;

/** Records every request of a browser context to the service origin. */
export class CollectorTraffic {
  readonly calls: CollectorCall[] = [];

  private constructor(private readonly serviceOrigin: string) {}

  /**
   * Starts recording a context's requests to the service. The collector paths pass through a route that continues
   * every request unchanged: Chromium reports no body for a Blob sent with navigator.sendBeacon
   * (microsoft/playwright#12231) unless the request is intercepted, and the snapshot body is what the specs check.
   */
  static async attach(context: BrowserContext, serviceOrigin: string): Promise<CollectorTraffic> {
    const traffic = new CollectorTraffic(serviceOrigin);
    context.on('request', (request) => traffic.observe(request));
    const finish = (request: Request) => {
      const call = traffic.calls.find((c) => c.request === request);
      if (call) call.done = true;
    };
    context.on('requestfinished', finish);
    context.on('requestfailed', finish);
    await context.route(`${serviceOrigin}/collect/**`, (route) => route.continue());
    return traffic;
  }

  private observe(request: Request): void {
    const url = new URL(request.url());
    if (url.origin !== this.serviceOrigin) return;
    const match = COLLECT_PATH.exec(url.pathname);
    const kind: CollectorKind = match ? (match[2] === 'config' ? 'config' : 'snapshot') : url.pathname === '/loader.js' ? 'loader' : 'other';
    this.calls.push({ kind, url, method: request.method(), siteKey: match ? decodeURIComponent(match[1]!) : '', request, done: false });
  }

  /** Calls of one kind, from index `since` on. */
  of(kind: CollectorKind, since = 0): CollectorCall[] {
    return this.calls.slice(since).filter((c) => c.kind === kind);
  }

  /** The parsed snapshot bodies sent so far (from index `since` on). */
  snapshots(since = 0): Snapshot[] {
    return this.of('snapshot', since).map(snapshotBody);
  }

  /** Requests that have started but not finished. */
  inFlight(): number {
    return this.calls.filter((c) => !c.done).length;
  }

  /**
   * Waits until no collector request is in flight, then gives the page a short quiet window. A request that is
   * NOT sent can only be observed over a window of time; this is that window, not a timing assertion.
   */
  async settle(page: Page): Promise<void> {
    await expect.poll(() => this.inFlight(), { message: 'collector requests still in flight', ...QUICK_POLL }).toBe(0);
    if (!page.isClosed()) await page.waitForTimeout(250);
    await expect.poll(() => this.inFlight(), { message: 'collector requests still in flight', ...QUICK_POLL }).toBe(0);
  }

  /** Waits for the first snapshot (from index `since`) that satisfies `predicate`, and returns it with its call. */
  async waitForSnapshot(since = 0, predicate: (body: Snapshot) => boolean = () => true): Promise<{ body: Snapshot; call: CollectorCall }> {
    let found: CollectorCall | undefined;
    await expect
      .poll(() => (found = this.of('snapshot', since).find((c) => predicate(snapshotBody(c)))) !== undefined, {
        message: 'a snapshot request to the collector',
        ...QUICK_POLL,
      })
      .toBe(true);
    return { body: snapshotBody(found!), call: found! };
  }
}

/** The JSON of a snapshot request's text/plain body. */
export function snapshotBody(call: CollectorCall): Snapshot {
  const raw = call.request.postData();
  if (raw === null) throw new Error(`snapshot request ${call.url.href} has no body`);
  return JSON.parse(raw) as Snapshot;
}

/** The HTTP status the service answered a call with (null when the browser did not report a response). */
export async function responseStatus(call: CollectorCall): Promise<number | null> {
  const response = await call.request.response();
  return response ? response.status() : null;
}

function matches(call: CollectorCall, matcher: CallMatcher): boolean {
  if (call.kind !== matcher.kind) return false;
  if (matcher.siteKey !== undefined && call.siteKey !== matcher.siteKey) return false;
  if (matcher.snapshot && !(call.kind === 'snapshot' && matcher.snapshot(snapshotBody(call)))) return false;
  return true;
}

function describe(matcher: CallMatcher): string {
  return `${matcher.kind}${matcher.siteKey ? ` of ${matcher.siteKey}` : ''}${matcher.snapshot ? ' (matching predicate)' : ''}`;
}

/**
 * Runs `action`, then asserts that each `sent` matcher was met (exactly `times` when given) and, after the traffic
 * settles, that no request matched a `notSent` matcher. Returns the calls the action caused.
 */
export async function expectCollectorRequests(
  traffic: CollectorTraffic,
  page: Page,
  action: () => Promise<unknown>,
  expected: { sent?: CallMatcher[]; notSent?: CallMatcher[] },
): Promise<CollectorCall[]> {
  const since = traffic.calls.length;
  await action();
  const newCalls = () => traffic.calls.slice(since);
  for (const matcher of expected.sent ?? []) {
    await expect
      .poll(() => newCalls().filter((c) => matches(c, matcher)).length, { message: `expected ${describe(matcher)} to be sent` })
      .toBeGreaterThanOrEqual(matcher.times ?? 1);
  }
  await traffic.settle(page);
  for (const matcher of expected.sent ?? []) {
    if (matcher.times !== undefined) {
      expect(newCalls().filter((c) => matches(c, matcher)).length, `exactly ${matcher.times} × ${describe(matcher)}`).toBe(matcher.times);
    }
  }
  for (const matcher of expected.notSent ?? []) {
    const unexpected = newCalls().filter((c) => matches(c, matcher));
    expect(unexpected.map((c) => `${c.method} ${c.url.pathname}`), `expected no ${describe(matcher)} to be sent`).toEqual([]);
  }
  return newCalls();
}
