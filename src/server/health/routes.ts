/**
 * `GET /healthz` (and `HEAD`): whether this process can serve, for a load balancer's or an orchestrator's health check.
 * No key, and nothing about the data in the answer. 200 `{"status":"ok"}` once the store answers a trivial statement;
 * 503 with the error envelope (`store_unavailable`) when it fails or does not answer within the timeout (PostgreSQL
 * unreachable or every connection of the pool stuck, the embedded store's thread gone), and while requests met the
 * store refusing for lack of resources within the last 30 s (its disk full: reads still work, writes do not; see
 * db/store-trouble.ts). Served on every listener (the webhook-only one too). Checks that arrive together share one
 * statement, so a busy checker adds no load; a change of state is logged once (a warning when the store stops
 * answering, info when it answers again), not every check. Once the process has begun to shut down (SIGTERM: its
 * listeners close first), a check under way or still arriving over an open connection is answered 503
 * `shutting_down`, while the other requests on such connections are still served.
 */
import type { FastifyInstance } from 'fastify';
import type { Queryable } from '../db/db';
import { ApiError } from '../http/errors';
import { STORE_TROUBLE_MESSAGES, STORE_TROUBLE_WINDOW_MS, storeTroubleOf } from '../db/store-trouble';

/** The path of the health check. */
export const HEALTH_PATH = '/healthz';

/** Whether a request's URL (path and query) is the health check's. */
export function isHealthCheck(url: string): boolean {
  return url.startsWith(HEALTH_PATH) && (url.length === HEALTH_PATH.length || url[HEALTH_PATH.length] === '?');
}

/** How long the store may take to answer the check's statement before the process counts as unable to serve, in ms. */
export const HEALTH_STORE_TIMEOUT_MS = 5_000;

export interface HealthOptions {
  db: Queryable;
  /** The store's time limit (tests shorten it). */
  storeTimeoutMs?: number;
}

/** What a check found: the store answers, or why it does not (for the log) and what the answer says. */
type StoreState = { ok: true } | { ok: false; reason: string; message: string };

/** Runs `select 1`, settling as a state within `timeoutMs` whatever the store does. */
function checkStore(db: Queryable, timeoutMs: number): Promise<StoreState> {
  return new Promise((resolve) => {
    const timer = setTimeout(
      () => resolve({ ok: false, reason: 'timeout', message: `The store did not answer within ${timeoutMs / 1000} s: this process cannot serve now.` }),
      timeoutMs,
    );
    db.query('select 1').then(
      () => resolve({ ok: true }),
      (error: unknown) => {
        const trouble = storeTroubleOf(error);
        resolve({
          ok: false,
          reason: trouble ?? 'error',
          message: `${trouble ? STORE_TROUBLE_MESSAGES[trouble] : 'The store answered with an error'}: this process cannot serve now.`,
        });
      },
    ).finally(() => clearTimeout(timer));
  });
}

export default async function healthRoutes(app: FastifyInstance, options: HealthOptions): Promise<void> {
  const timeoutMs = options.storeTimeoutMs ?? HEALTH_STORE_TIMEOUT_MS;
  let inFlight: Promise<StoreState> | null = null;
  let lastOk: boolean | null = null;
  // Set as the listener begins to close: a checker that reaches this process now must send its traffic elsewhere.
  let shuttingDown = false;
  app.addHook('preClose', async () => {
    shuttingDown = true;
  });

  const check = (): Promise<StoreState> => {
    inFlight ??= checkStore(options.db, timeoutMs).finally(() => (inFlight = null));
    return inFlight;
  };

  app.get(HEALTH_PATH, async (_request, reply) => {
    reply.header('cache-control', 'no-store');
    const goingAway = () =>
      reply.code(503).send(new ApiError(503, 'api_error', 'shutting_down', 'This process is shutting down: send requests to another one.').toBody());
    if (shuttingDown) return goingAway();
    let state = await check();
    if (shuttingDown) return goingAway(); // the SIGTERM came while the store answered
    // A store that answers a read may still refuse every write (its disk full): what requests met lately counts too.
    const refusing = state.ok ? app.storeTrouble.recent() : null;
    if (refusing) {
      const message = `${STORE_TROUBLE_MESSAGES[refusing]}: requests were refused for it within the last ${STORE_TROUBLE_WINDOW_MS / 1000} s.`;
      state = { ok: false, reason: refusing, message };
    }
    if (state.ok !== lastOk) {
      // The error's own text may name a host or a user: the log says what kind of failure it was, never the text.
      if (!state.ok) app.log.warn({ reason: state.reason, timeoutMs }, 'health check: the store does not answer');
      else if (lastOk === false) app.log.info('health check: the store answers again');
      lastOk = state.ok;
    }
    if (state.ok) return reply.send({ status: 'ok' });
    return reply.code(503).send(new ApiError(503, 'api_error', 'store_unavailable', state.message).toBody());
  });
}
