/**
 * What the fakes of pixel-keyed conversion APIs (Reddit, TikTok) share on top of the fake server: the faults a test can
 * plan for them alike, the options they take alike, the ledger that counts each accepted event once and drops a
 * duplicate within the platform's deduplication window, and the checks of a value with its currency. Each platform's
 * fake holds only its own endpoint, field rules and answers.
 */
import { startFakeServer, type FakeHandler, type FakeRequest, type FakeServer } from './fake-server';

/** Faults every pixel fake takes (each platform adds its own). */
export type PixelFakePlan =
  /** Accept the next request even with problems (to test what cnv does with a success). */
  | 'accept'
  /** The platform's rate limit (optionally with a Retry-After header, in seconds). */
  | 'rate_limit'
  | { kind: 'rate_limit'; retryAfterSeconds: number }
  | 'server_error'
  | 'invalid_token'
  /** Never answer the next request. */
  | 'hang';

export interface PixelFakeOptions {
  /** The only stored access token the fake accepts. */
  accessToken?: string;
  /** The fake's clock, for event-time limits and deduplication. */
  now?: () => Date;
  port?: number;
}

/** What a pixel fake adds to a fake server: the events it counted, and how many it dropped as duplicates. */
export interface CountingFake<Plan, Counted> extends FakeServer<Plan> {
  /** Events counted, oldest first (duplicates dropped, as the platform does). */
  counted(): Counted[];
  /** How many received events were duplicates of counted ones. */
  duplicates(): number;
}

/** Counts accepted events once: an event whose key was counted within `windowMs` is a duplicate. */
export interface DedupLedger<Counted> {
  /** Counts `entry` unless its `key` (null: no key, always counted) was counted within the window; false for a duplicate. */
  count(key: string | null, entry: Counted, nowMs: number): boolean;
  counted(): Counted[];
  duplicates(): number;
  clear(): void;
}

export function dedupLedger<Counted>(windowMs: number): DedupLedger<Counted> {
  const counted: Counted[] = [];
  const seen = new Map<string, number>();
  let duplicates = 0;
  return {
    count(key, entry, nowMs) {
      const first = key === null ? undefined : seen.get(key);
      if (first !== undefined && nowMs - first <= windowMs) {
        duplicates += 1;
        return false;
      }
      if (key !== null) seen.set(key, nowMs);
      counted.push(entry);
      return true;
    },
    counted: () => counted.slice(),
    duplicates: () => duplicates,
    clear() {
      counted.length = 0;
      seen.clear();
      duplicates = 0;
    },
  };
}

/** Starts a fake whose `counted`, `duplicates` and `reset` come from its ledger, with `extra` (further methods) added. */
export async function startCountingFake<Plan, Counted, Extra extends object>(
  name: string,
  handler: FakeHandler<Plan>,
  ledger: DedupLedger<Counted>,
  options: { port?: number; takesPlan?: (request: FakeRequest, plan: Plan) => boolean },
  extra: (server: FakeServer<Plan>) => Extra,
): Promise<CountingFake<Plan, Counted> & Extra> {
  const server = await startFakeServer<Plan>(name, handler, {
    ...(options.port ? { port: options.port } : {}),
    ...(options.takesPlan ? { takesPlan: options.takesPlan } : {}),
  });
  const reset = server.reset;
  return Object.assign(server, extra(server), {
    counted: ledger.counted,
    duplicates: ledger.duplicates,
    reset() {
      reset();
      ledger.clear();
    },
  });
}

export const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * Problems of a value and its currency where a platform takes them (`at` names the object): a finite number of at
 * least 0, an ISO 4217 code of three capital letters, and no value without its currency.
 */
export function valueProblems(at: string, value: unknown, currency: unknown): string[] {
  const problems: string[] = [];
  if (value !== undefined && (typeof value !== 'number' || !Number.isFinite(value) || value < 0)) problems.push(`${at}.value must be a number of at least 0`);
  if (currency !== undefined && (typeof currency !== 'string' || !/^[A-Z]{3}$/.test(currency))) problems.push(`${at}.currency must be an ISO 4217 code`);
  if (value !== undefined && currency === undefined) problems.push(`${at}.value needs a currency`);
  return problems;
}
