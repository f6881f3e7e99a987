/**
 * When the store cannot work, as opposed to a statement being wrong: its disk full, its memory or connections
 * exhausted, the server unreachable or shutting down, the embedded store's thread gone. A request that meets one is
 * answered 503 `store_unavailable` with `Retry-After` (nothing was done; the client's retry will be welcome once the
 * operator has fixed it), not 500; the health check stays 503 for a while after the last one (health/routes.ts); and
 * the log says so once, then once a minute with a count, not once per request: a full disk under load refused 2,660
 * snapshots in a few seconds when it was first tried on a 120 MB tmpfs, each with an error line.
 */

/** Why the store cannot work, as the envelope's message and the log name it. */
export type StoreTroubleReason =
  | 'disk_full'
  | 'out_of_memory'
  | 'too_many_connections'
  | 'insufficient_resources'
  | 'disk_error'
  | 'unreachable'
  | 'shutting_down'
  | 'stopped';

/** Codes the network layer gives a connection that fails (Node's `error.code`). */
const CONNECTION_ERRORS = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'ENOTFOUND', 'EHOSTUNREACH', 'ENETUNREACH', 'EPIPE', 'EAI_AGAIN']);

/** The mark of a network error met talking to the store (a platform's unreachable API has the same codes). */
const FROM_THE_STORE = 'cnvFromTheStore';

/**
 * Marks a network error met talking to the store, so that storeTroubleOf names it `unreachable`: the same codes come
 * from an ad platform's API that cannot be reached, which is no reason to answer 503 for the store. The database
 * adapter (db.ts) calls it on every error of the store's driver; returns the error.
 */
export function fromTheStore(error: unknown): unknown {
  const code = (error as { code?: unknown } | null)?.code;
  if (typeof code === 'string' && CONNECTION_ERRORS.has(code)) Object.assign(error as object, { [FROM_THE_STORE]: true });
  return error;
}

/** The `code` this service gives the error of an embedded store whose thread has ended or could not start. */
export const STORE_STOPPED_CODE = 'CNV_STORE_STOPPED';

/**
 * Why `error` says the store cannot work now, or null when it is any other error. PostgreSQL's SQLSTATE classes 53
 * (insufficient resources), 58 (system error: an I/O error, a file of the store missing) and 08 (connection exception),
 * and 57P01 to 57P03 (the server shutting down or not yet accepting connections); a network error marked by
 * fromTheStore; node-postgres's own words for a connection lost or a pool that found none in time, and for a store
 * closed under a request (the service stopping).
 */
export function storeTroubleOf(error: unknown): StoreTroubleReason | null {
  if (typeof error !== 'object' || error === null) return null;
  const { code, message } = error as { code?: unknown; message?: unknown };
  if (typeof code === 'string') {
    if (code === '53100') return 'disk_full';
    if (code === '53200') return 'out_of_memory';
    if (code === '53300') return 'too_many_connections';
    if (/^53[0-9A-Z]{3}$/.test(code)) return 'insufficient_resources';
    if (/^58[0-9A-Z]{3}$/.test(code)) return 'disk_error';
    if (/^08[0-9A-Z]{3}$/.test(code) || (CONNECTION_ERRORS.has(code) && (error as Record<string, unknown>)[FROM_THE_STORE] === true)) {
      return 'unreachable';
    }
    if (code === '57P01' || code === '57P02' || code === '57P03') return 'shutting_down';
    if (code === STORE_STOPPED_CODE) return 'stopped';
  }
  if (typeof message === 'string') {
    if (/^(Connection terminated unexpectedly|timeout exceeded when trying to connect|Client has encountered a connection error and is not queryable)/.test(message)) {
      return 'unreachable';
    }
    // The store closed under a request: the service is stopping.
    if (/^(Client was closed and is not queryable|Cannot use a pool after calling end on the pool)/.test(message)) return 'shutting_down';
  }
  return null;
}

/** What the envelope says of each reason. */
export const STORE_TROUBLE_MESSAGES: Record<StoreTroubleReason, string> = {
  disk_full: "The service's store has no space left on its disk",
  out_of_memory: "The service's store is out of memory",
  too_many_connections: "The service's store has no connection left",
  insufficient_resources: "The service's store is out of a resource it needs",
  disk_error: "The service's store cannot read or write its files",
  unreachable: "The service cannot reach its store",
  shutting_down: "The service's store is shutting down or starting",
  stopped: "The service's embedded store has stopped",
};

/** How long after the last refusal the health check still answers 503, in ms. */
export const STORE_TROUBLE_WINDOW_MS = 30_000;
/** At most one log line per reason in this time, in ms. */
export const STORE_TROUBLE_LOG_EVERY_MS = 60_000;

/** A logger's error method, as the service's loggers have it (pino's signature). */
export interface ErrorLog {
  error(fields: object, message: string): void;
}

/**
 * The store's last refusals, for the health check and the log's pace: one for the process's listeners (the service
 * shares it), one for each background loop.
 */
export class StoreTrouble {
  readonly #clock: () => number;
  #last: { reason: StoreTroubleReason; atMs: number } | null = null;
  #logged: { atMs: number; since: number } | null = null;

  constructor(clock: () => number = Date.now) {
    this.#clock = clock;
  }

  /**
   * Records a refusal; returns whether to log it, and how many refusals went unlogged before it (0 for the first, then
   * the count of the minute before). One pace for every reason: a PostgreSQL that stops refuses first as shutting down
   * (57P01, 57P03), a tenth of a second later as unreachable (its socket closed), and that is one trouble, said once.
   */
  record(reason: StoreTroubleReason): { log: boolean; unlogged: number } {
    const now = this.#clock();
    this.#last = { reason, atMs: now };
    const logged = this.#logged;
    if (logged && now - logged.atMs < STORE_TROUBLE_LOG_EVERY_MS) {
      logged.since += 1;
      return { log: false, unlogged: logged.since };
    }
    this.#logged = { atMs: now, since: 0 };
    return { log: true, unlogged: logged?.since ?? 0 };
  }

  /**
   * When `error` is the store's condition: records it, and logs it (`fields`, the reason and `unlogged` beside the
   * error) unless a line was written within the minute; returns the reason, or null for any other
   * error (neither recorded nor logged).
   */
  report(error: unknown, log: ErrorLog, fields: object, message: string): StoreTroubleReason | null {
    const reason = storeTroubleOf(error);
    if (!reason) return null;
    const { log: write, unlogged } = this.record(reason);
    if (write) log.error({ err: error, ...fields, reason, unlogged }, message);
    return reason;
  }

  /** The last refusal's reason while it is recent (STORE_TROUBLE_WINDOW_MS), else null. */
  recent(): StoreTroubleReason | null {
    return this.#last && this.#clock() - this.#last.atMs < STORE_TROUBLE_WINDOW_MS ? this.#last.reason : null;
  }
}

/** A background loop's log: errors, and the line that says the store works again. */
export interface LoopLog extends ErrorLog {
  info(fields: object, message: string): void;
}

/** What storeAwareErrorLog returns: how a background loop says a round failed, and that one worked. */
export interface StoreAwareLog {
  /** A round (or a part of one) failed with `error`. */
  failed(error: unknown, fields: object, message: string): void;
  /** A round reached the store and it answered: ends a trouble under way, with one line. */
  worked(): void;
}

/**
 * How a background loop (delivery, notifications, the rate limits' sharing, periodic.ts: maintenance and retention)
 * logs a failed round: as it is when the store is not the cause; when it is, one line as the trouble starts, then one a
 * minute with the count left out while it lasts (whatever the reasons it goes through: a stopping PostgreSQL is
 * `shutting_down` then `unreachable`), and one line (info) when a round works again, with how long and how many
 * rounds failed. While PostgreSQL was unreachable for 30 s the first three loops wrote 207 error lines (4.6 a second
 * from the delivery worker alone), which would have been some 4,000 over a ten-minute outage. `loop` names the loop in
 * the line that says it works again.
 */
export function storeAwareErrorLog(log: LoopLog, loop: string, clock: () => number = Date.now): StoreAwareLog {
  // The trouble under way (null while the store works): its pace, when it started, how many failures it caused.
  let trouble: { pace: StoreTrouble; startedMs: number; failures: number; reason: StoreTroubleReason } | null = null;
  return {
    failed(error, fields, message) {
      const reason = storeTroubleOf(error);
      if (!reason) {
        log.error({ err: error, ...fields }, message);
        return;
      }
      trouble ??= { pace: new StoreTrouble(clock), startedMs: clock(), failures: 0, reason };
      trouble.failures += 1;
      trouble.reason = reason;
      trouble.pace.report(error, log, fields, `${message} (the store cannot work now: said as it starts, then once a minute while it lasts)`);
    },
    worked() {
      if (!trouble) return;
      const { startedMs, failures, reason } = trouble;
      trouble = null;
      log.info({ loop, failures, lastReason: reason, ms: Math.max(0, clock() - startedMs) }, `${loop}: the store works again`);
    },
  };
}
