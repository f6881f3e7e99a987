/**
 * The delivery worker: polls the outbox (every 250 ms, or at once when woken), claims due rows in batches under a
 * lease, and sends each batch through the destination adapters (one upload per Google Ads account, not one per row).
 * Rows stay in the outbox until their outcome is recorded, so nothing is lost across a restart; a row whose lease
 * expired (a crash mid-send) is claimed again, and the destination dedupes the resend by its order id.
 */
import type { Database } from '../db/db';
import type { Settings } from '../settings';
import { claimDeliveries, resumeOAuthClientWaits } from './outbox-sql';
import { DEFAULT_BACKOFF, type BackoffPolicy } from './backoff';
import { prepareDeliveryRound, type ConnectionBatch, type DeliveryLogger, type RoundDeps, type RoundResult } from './round';
import { AccessTokens, forgetClientRefusals } from '../destinations';
import { serviceSecretBox } from '../db/secret-box';
import { storeAwareErrorLog } from '../db/store-trouble';
import { checkDiagnostics } from './diagnostics';
import { runAdjustmentRound } from './adjustments';
import { INTAKE_BUSY_WINDOW_MS, intakeBusy, onDeliveryRequested } from './wakeup';
import { notifyReauthorizationRequired } from '../notifications';
import { workInFlight } from '../http/deadline';

export type { DeliveryLogger, JobResult, RoundResult } from './round';

export interface DeliveryWorkerOptions {
  db: Database;
  settings: Settings;
  log: DeliveryLogger;
  /** Pause between polls when there is nothing due (default 250 ms). */
  pollIntervalMs?: number;
  /** The clock (tests inject one to step through backoff without waiting). */
  now?: () => Date;
  /** Rows claimed per round, sent together (default 200; 100 on PGlite, see WORKER_DEFAULTS). */
  batchSize?: number;
  /** Rounds that may run at once (default 4; 1 on PGlite). */
  concurrency?: number;
  /**
   * After a round that had rows, rest this many times the round's duration before starting the next one (default 0;
   * 1 on PGlite). A duty cycle: the worker then takes at most 1 / (1 + restFactor) of the time, and less when the
   * database is busy (its rounds take longer, so it rests longer). On the embedded store (whose one connection counts
   * who waited for it, Database.waits) the worker rests only after a round during which a caller waited: a backlog
   * with nobody waiting is sent round after round.
   */
  restFactor?: number;
  /**
   * While reports keep arriving, start a round at most this often, in ms (default 100): each round then carries the
   * deliveries of many report batches (fewer statements, one upload per account for all of them) instead of one round
   * per batch. A round that claimed nothing, or a full batch, does not hold the next one back; a lone report after a
   * quiet spell goes out at once.
   */
  gatherMs?: number;
  /**
   * Intake first: while the webhook's reports queue behind one another (a burst: an import, a retry storm), hold
   * rounds back for up to this long from when it began to hold (default 30 s; 0 never holds). The reports are
   * stored and their 200 sent meanwhile; their conversions go out right after the burst, or once this time has passed
   * (then rounds run as usual, however long the burst lasts). Measured: the webhook took 30 to 45 % more reports per
   * second with delivery out of its way (docs/benchmarks.md), and platforms take conversions hours after the fact.
   */
  holdWhileIntakeBusyMs?: number;
  /** Most outcomes written per transaction (default: a batch's all; 20 on PGlite, see RoundDeps). */
  outcomesPerTransaction?: number;
  /** How long a claim holds a row; must exceed the send timeout (default 60 s). */
  leaseMs?: number;
  /** Per-send timeout (default 10 s). */
  sendTimeoutMs?: number;
  /**
   * How long stop() lets the sends and rounds in flight end on their own before it interrupts them (default: the send
   * timeout, by which a send has ended anyway). A send that ends is recorded once; one interrupted after the platform
   * took it goes back to the outbox and is sent again, a double the platform must dedupe by the conversion's id.
   */
  stopGraceMs?: number;
  backoff?: Partial<BackoffPolicy>;
  /** Jitter source in [0, 1) (default Math.random). */
  random?: () => number;
  /** False: do not poll; only drain() sends (tests). Default true. */
  autoStart?: boolean;
  /** How often delivered requests' platform diagnostics are looked for (default 5 minutes). */
  diagnosticsIntervalMs?: number;
}

export interface DeliveryWorker {
  /**
   * Stops polling and claiming, lets the sends in flight end and be recorded (for up to `stopGraceMs`), then interrupts
   * what is still going (those rows go back to the outbox unchanged) and waits for the rounds to end.
   */
  stop(): Promise<void>;
  /** Processes everything due now, round after round, until nothing due is left. */
  drain(): Promise<RoundResult[]>;
  /** Looks for due rows at once instead of at the next poll. */
  wake(): void;
  /** Asks the platforms about delivered requests whose diagnostics are due; returns how many were asked. */
  checkDiagnostics(): Promise<number>;
}

/**
 * Defaults by database. The embedded PGlite runs one statement at a time (on its own thread in the service): rounds in
 * parallel gain nothing there, and a worker running rounds back to back through a backlog would take the database from
 * the webhook and the collector, whose callers wait for their answer (a report's delivery can wait a little). So on
 * PGlite one round at a time, of moderate size (a shorter hold of the database per statement), with a rest as long as
 * the round after one during which callers waited for the database. A burst of reports holds rounds back altogether
 * (holdWhileIntakeBusyMs), so the rest only shares the store under moderate load: a rest of four rounds measured
 * 1,032 and 1,064 reports/s (p99 107 and 143 ms), of one round 1,074 and 1,108/s (p99 87 and 76 ms), the delivery
 * sample's p99 116 to 190 ms either way. On PostgreSQL, rounds run in parallel without rest.
 */
export const WORKER_DEFAULTS = {
  pglite: { batchSize: 100, concurrency: 1, restFactor: 1, gatherMs: 100, outcomesPerTransaction: 20 },
  postgres: { batchSize: 200, concurrency: 4, restFactor: 0, gatherMs: 100, outcomesPerTransaction: undefined },
} as const;

/** Starts the delivery worker of this process. */
export function startDeliveryWorker(options: DeliveryWorkerOptions): DeliveryWorker {
  const defaults = WORKER_DEFAULTS[options.db.kind];
  const pollIntervalMs = options.pollIntervalMs ?? 250;
  const batchSize = options.batchSize ?? defaults.batchSize;
  const concurrency = Math.max(1, options.concurrency ?? defaults.concurrency);
  const restFactor = Math.max(0, options.restFactor ?? defaults.restFactor);
  const gatherMs = Math.max(0, options.gatherMs ?? defaults.gatherMs);
  const holdMs = Math.max(0, options.holdWhileIntakeBusyMs ?? 30_000);
  const sendTimeoutMs = options.sendTimeoutMs ?? 10_000;
  const leaseMs = Math.max(options.leaseMs ?? 60_000, sendTimeoutMs + 5_000);
  const stopGraceMs = Math.max(0, options.stopGraceMs ?? sendTimeoutMs);
  const stopping = new AbortController();
  // Set by stop(): no round starts or claims any more, while the sends under way may still end (see stopGraceMs).
  let closing = false;
  const now = options.now ?? (() => new Date());
  const box = serviceSecretBox(options.settings);
  const deps: RoundDeps = {
    db: options.db,
    settings: options.settings,
    log: options.log,
    now,
    box,
    tokens: new AccessTokens({ db: options.db, settings: options.settings, box, now, onReauthorizationRequired: notifyReauthorizationRequired, log: options.log }),
    backoff: { ...DEFAULT_BACKOFF, ...options.backoff },
    random: options.random ?? Math.random,
    sendTimeoutMs,
    signal: stopping.signal,
    outcomesPerTransaction: options.outcomesPerTransaction ?? defaults.outcomesPerTransaction,
  };

  // Batches of one connection go one after another (a lane); lanes run side by side, so a hanging account holds
  // only its own lane while the next rounds keep delivering everyone else's conversions.
  const lanes = new Map<string, Promise<RoundResult[]>>();
  // A store that cannot work fails every round until it is back: said as it starts, once a minute while it lasts
  // and when a round works again, not every round (one trouble for the rounds, the batches, adjustments, diagnostics).
  const loopLog = storeAwareErrorLog(options.log, 'delivery', () => now().getTime());
  const logError = loopLog.failed;
  const dispatch = (batch: ConnectionBatch): Promise<RoundResult[]> => {
    const previous = lanes.get(batch.lane) ?? Promise.resolve([]);
    const run = previous
      .catch(() => [])
      .then(() => batch.run())
      .catch((error: unknown): RoundResult[] => {
        // A database fault while recording: the leases expire and the rows are claimed again later.
        logError(error, {}, 'delivery batch failed');
        return [];
      });
    lanes.set(batch.lane, run);
    void run.finally(() => {
      if (lanes.get(batch.lane) === run) lanes.delete(batch.lane);
    });
    return track(run);
  };

  // A start may have corrected a platform's OAuth client (an operator's setting): what waited for it is due now, once,
  // before the first claim (again at the next round if the store could not do it).
  let clientWaitsResumed: Promise<void> | null = null;
  const resumeClientWaits = (): Promise<void> =>
    (clientWaitsResumed ??= (async () => {
      // Two statements, each whole on its own (no transaction needed: a refusal recorded between them is recorded again).
      await forgetClientRefusals(options.db);
      const resumed = await resumeOAuthClientWaits(options.db);
      if (resumed > 0) options.log.info({ resumed }, "conversions and adjustments that waited for a platform to accept this service's OAuth client are due again (the service started)");
    })()
      .catch((error: unknown) => {
        clientWaitsResumed = null;
        throw error;
      }));

  /** Claims due rows, records what cannot be sent now, and dispatches the rest to their lanes. */
  const round = async (): Promise<{ settled: RoundResult[]; sending: Promise<RoundResult[]>[]; claimed: number }> => {
    if (closing) return { settled: [], sending: [], claimed: 0 };
    await resumeClientWaits();
    const claims = await claimDeliveries(options.db, { now: deps.now(), leaseMs, limit: batchSize });
    loopLog.worked(); // the claim reached the store: a trouble under way is over
    // Adjustments of conversions whose delivery has settled go out beside the round (each is queued behind its original).
    const adjusting = track(
      runAdjustmentRound(deps, { leaseMs, limit: batchSize }).catch((error: unknown): RoundResult[] => {
        logError(error, {}, 'adjustment round failed');
        return [];
      }),
    );
    try {
      const prepared = await prepareDeliveryRound(claims, deps);
      return { settled: prepared.settled, sending: [...prepared.batches.map(dispatch), adjusting], claimed: claims.length };
    } catch (error) {
      // A database fault: the leases expire and the rows are claimed again later.
      logError(error, { rows: claims.length }, 'delivery round failed');
      return { settled: claims.map((c) => ({ eventActionId: c.eventActionId, result: 'error' as const })), sending: [adjusting], claimed: claims.length };
    }
  };

  // Rounds in flight. Several may run at once (each claims its own rows), so rows that become due while one round
  // waits on the destination start at once in the next instead of queueing behind it.
  const inFlight = workInFlight();
  const track = inFlight.track;

  // Rounds that are claiming and preparing (sends in lanes do not count: a hanging lane never stops the next round).
  let roundsInFlight = 0;
  const polling = options.autoStart !== false;
  let wanted = true; // a poll or a wake asked for a round
  let restUntil = 0; // performance.now() before which no round starts (see restFactor)
  let restTimer: ReturnType<typeof setTimeout> | null = null;
  let holdingSince: number | null = null; // performance.now() when a burst of reports began holding rounds back
  const restFor = (ms: number) => {
    restTimer = setTimeout(() => {
      restTimer = null;
      pump();
    }, ms);
  };
  const pump = () => {
    if (!polling || !wanted || closing || restTimer) return;
    const rest = restUntil - performance.now();
    if (rest > 0) return restFor(rest);
    if (holdMs > 0 && intakeBusy(options.db)) {
      holdingSince ??= performance.now();
      // A hold looks again as often as the intake's busy window.
      if (performance.now() - holdingSince < holdMs) return restFor(INTAKE_BUSY_WINDOW_MS);
    } else {
      holdingSince = null;
    }
    while (wanted && roundsInFlight < concurrency) {
      wanted = false;
      const started = performance.now();
      const waitsBefore = options.db.waits?.();
      roundsInFlight++;
      const current = track(round());
      void current.finally(() => roundsInFlight--).catch(() => undefined);
      current.then(
        ({ claimed }) => {
          if (claimed >= batchSize) wanted = true; // more may be due: no pause
          // Unknown (a store without the count): rest as if someone waited.
          const callersWaited = waitsBefore === undefined || options.db.waits!() > waitsBefore;
          if (claimed > 0 && restFactor > 0 && callersWaited) {
            const ended = performance.now();
            restUntil = Math.max(restUntil, ended + (ended - started) * restFactor);
          }
          // Rows were due but fewer than a batch: let the next ones gather (see gatherMs).
          if (claimed > 0 && claimed < batchSize) restUntil = Math.max(restUntil, started + gatherMs);
          pump();
        },
        (error) => {
          logError(error, {}, 'delivery round failed');
          pump();
        },
      );
    }
  };
  const wake = () => {
    wanted = true;
    pump();
  };

  const unsubscribe = onDeliveryRequested(wake);
  const timer = polling ? setInterval(wake, pollIntervalMs) : null;
  const diagnose = () =>
    track(checkDiagnostics({ db: options.db, settings: options.settings, box, tokens: deps.tokens, now, signal: stopping.signal, timeoutMs: sendTimeoutMs }));
  const diagnosticsTimer = polling
    ? setInterval(() => {
        if (!closing) diagnose().catch((error: unknown) => logError(error, {}, 'diagnostics round failed'));
      }, options.diagnosticsIntervalMs ?? 5 * 60_000)
    : null;
  pump();

  return {
    async stop() {
      unsubscribe();
      if (timer) clearInterval(timer);
      if (diagnosticsTimer) clearInterval(diagnosticsTimer);
      if (restTimer) clearTimeout(restTimer);
      closing = true;
      await inFlight.settledWithin(stopGraceMs);
      stopping.abort();
      await inFlight.settled();
    },
    async drain() {
      await inFlight.settled();
      const all: RoundResult[] = [];
      for (;;) {
        const { settled, sending } = await track(round());
        const results = [...settled, ...(await Promise.all(sending)).flat()];
        all.push(...results);
        // Rows put back due now (interrupted) or left leased (error) would loop: such a round ends the drain.
        if (results.length === 0 || results.every((r) => r.result === 'interrupted' || r.result === 'error')) return all;
      }
    },
    wake,
    checkDiagnostics: diagnose,
  };
}
