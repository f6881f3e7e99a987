/**
 * Group commit for webhook reports. One transaction per report costs a dozen statements, and the embedded PGlite runs
 * one statement at a time (on a thread of its own in the service), which capped the webhook at a few hundred reports per second with
 * seconds of queueing in the tail. Instead, reports that arrive while a batch is being written wait in a buffer and
 * go out together: set-based reads, then ONE statement that writes them all and commits by itself (see recordReports
 * and group-commit.ts).
 */
import type { Database } from '../db/db';
import type { SaasSignupResponse } from '../../protocol/webhook';
import { recordReports, type RecordOptions, type ReportOutcome, type ReportSubmission } from './report';
import { fanOutPendingReports, FANOUT_BATCH, type FanOutResult } from './deferred-fanout';
import { GroupCommit, writeIsolatingFailures, type Job } from '../db/group-commit';

export interface ReportWriterOptions {
  /** Most reports in one batch. */
  maxBatch?: number;
  /** How long the first report of an idle writer waits for company, in ms (0: the next turn of the event loop). */
  maxDelayMs?: number;
  /** Records a batch (tests can observe batches or inject faults). */
  record?: (db: Database, submissions: readonly ReportSubmission[], options: RecordOptions) => Promise<ReportOutcome[]>;
  /** Builds the events of reports stored during a burst (tests can observe or inject faults). */
  fanOut?: (db: Database) => Promise<FanOutResult>;
  /**
   * Whether a burst's signups are stored first and their events built after it (deferred-fanout.ts); default true.
   * Off: every report is written with its events.
   */
  deferBursts?: boolean;
  /** Reports stored waiting for their events beyond which a burst's reports are written whole again. */
  maxDeferred?: number;
  /** How long after a burst's last batch its events start being built, in ms (FANOUT_QUIET_MS). */
  fanOutQuietMs?: number;
  /** How long reports wait for their events at most while a burst lasts, in ms (FANOUT_MAX_HOLD_MS). */
  fanOutMaxHoldMs?: number;
  /** The clock of those two, in ms (performance.now by default; tests inject one). */
  clock?: () => number;
  /** Told when building events failed (the reports stay waiting; the next sweep or burst tries again). */
  onFanOutError?: (error: unknown) => void;
  /** Called after a batch has committed outbox rows that are due at once (the service wakes its delivery worker). */
  onDeliveriesQueued?: () => void;
  /**
   * Called after a batch was written while at least QUEUED_BURST reports waited for it: a burst, during which the delivery
   * worker holds back. A trickle (a report or two waiting now and then) is no burst.
   */
  onQueued?: () => void;
}

/**
 * Reports waiting behind a batch that make a burst. The benchmark's 50 connections keep 20 to 50 waiting; its trickle of
 * 50 reports/s, one or two now and then, and holding delivery back for those delayed the trickle's conversions by up
 * to a second.
 */
export const QUEUED_BURST = 8;

/**
 * Reports of this process waiting for their events beyond which a burst's reports are written whole again: a bound on
 * how far the events of a long overload may lag (about 20 s of building on the embedded store, docs/benchmarks.md).
 * A burst that outlasts it slows to the speed of whole writes instead of piling up.
 */
export const MAX_DEFERRED_REPORTS = 40_000;

/**
 * How long after a burst's last batch the building of its events starts: a lull of the load (a client between two
 * waves, the benchmark between its warm-up and its run) is not the burst's end.
 */
export const FANOUT_QUIET_MS = 200;

/**
 * How long reports wait for their events at most while a burst lasts: then one batch of them is built after each batch
 * of reports, so a burst that lasts slows down a little instead of leaving its events unbuilt (the same bound as
 * delivery's hold, DeliveryWorkerOptions.holdWhileIntakeBusyMs).
 */
export const FANOUT_MAX_HOLD_MS = 30_000;

/**
 * Buffers reports and records them in batches, one batch in flight at a time. A batch cut from a burst (at least
 * QUEUED_BURST reports that queued behind the batch before it, or any batch within FANOUT_QUIET_MS of such a batch)
 * stores its signups first and leaves their events for later (deferred-fanout.ts); the writer
 * builds them once no report waits, a batch of FANOUT_BATCH at a time, each between the batches of reports that
 * arrive meanwhile.
 */
export class ReportWriter {
  readonly #db: Database;
  readonly #record: (db: Database, submissions: readonly ReportSubmission[], options: RecordOptions) => Promise<ReportOutcome[]>;
  readonly #fanOut: (db: Database) => Promise<FanOutResult>;
  readonly #onDeliveriesQueued: () => void;
  readonly #onQueued: () => void;
  readonly #onFanOutError: (error: unknown) => void;
  readonly #commit: GroupCommit<ReportSubmission, SaasSignupResponse>;
  readonly #deferBursts: boolean;
  readonly #maxDeferred: number;
  /** Reports this writer stored waiting for their events and has not seen built yet (an estimate: see #fanOutStep). */
  #deferred = 0;
  /** Whether reports may wait for their events (this writer deferred some, or a sweep was asked for). */
  #fanOutDue = false;
  #fanOutScheduled = false;
  #fanOutTimer: ReturnType<typeof setTimeout> | null = null;
  /** The fan-out pass under way, if any (close waits for it). */
  #fanOutRunning: Promise<void> | null = null;
  #closed = false;
  /** Reports that queued behind the last batch while it was written: they make the next batch. */
  #queuedBehind = 0;
  readonly #quietMs: number;
  readonly #maxHoldMs: number;
  readonly #clock: () => number;
  /** When the last batch that deferred reports ended. */
  #lastDeferredAt = -Infinity;
  /** When the last batch cut from a burst (QUEUED_BURST or more queued behind the one before) was. */
  #lastBurstAt = -Infinity;
  /** When the oldest report still waiting (as far as this writer knows) was stored; null when none waits. */
  #waitingSince: number | null = null;

  constructor(db: Database, options: ReportWriterOptions = {}) {
    this.#db = db;
    this.#record = options.record ?? recordReports;
    this.#fanOut = options.fanOut ?? ((target) => fanOutPendingReports(target, { limit: FANOUT_BATCH }));
    this.#onDeliveriesQueued = options.onDeliveriesQueued ?? (() => undefined);
    this.#onQueued = options.onQueued ?? (() => undefined);
    this.#onFanOutError = options.onFanOutError ?? (() => undefined);
    this.#deferBursts = options.deferBursts ?? true;
    this.#maxDeferred = options.maxDeferred ?? MAX_DEFERRED_REPORTS;
    this.#quietMs = options.fanOutQuietMs ?? FANOUT_QUIET_MS;
    this.#maxHoldMs = options.fanOutMaxHoldMs ?? FANOUT_MAX_HOLD_MS;
    this.#clock = options.clock ?? (() => performance.now());
    this.#commit = new GroupCommit((jobs) => writeIsolatingFailures(jobs, (batch) => this.#writeBatch(batch)), {
      maxBatch: options.maxBatch ?? 250,
      maxDelayMs: options.maxDelayMs ?? 0,
    });
  }

  /** Records one report; resolves with its response (or the first report's, for a repeat) once committed. */
  submit(submission: ReportSubmission): Promise<SaasSignupResponse> {
    return this.#commit.submit(submission);
  }

  /**
   * Looks for reports waiting for their events (left by a crash, or by another process on one PostgreSQL that is
   * gone) and builds them when no report waits: the service calls this at start and now and then.
   */
  sweep(): void {
    this.#fanOutDue = true;
    this.#scheduleFanOut();
  }

  /**
   * Records everything buffered so far and waits for it, and for a fan-out pass under way (the webhook plugin's onClose
   * hook calls this). Reports still waiting for their events stay stored so: the next start builds them.
   */
  async flush(): Promise<void> {
    await this.#commit.flush();
    await this.#fanOutRunning;
  }

  /** Stops building events (the service is closing); what waits is built at the next start. */
  async close(): Promise<void> {
    this.#closed = true;
    if (this.#fanOutTimer) clearTimeout(this.#fanOutTimer);
    await this.flush();
  }

  async #writeBatch(batch: Job<ReportSubmission, SaasSignupResponse>[]): Promise<void> {
    // A burst: this batch's reports queued behind the batch before it (reports arriving at an idle writer, however many
    // at once, are written whole). A small batch within the quiet time of a burst's batch is the same burst (its
    // batches come and go in waves): written whole, it would cost the store three times as much as stored first and
    // hold up the burst's next batch (measured: the whole writes among a burst's batches were most of the store's
    // slowest statements, docs/benchmarks.md). It does not extend the burst: a trickle after it is written whole.
    const now = this.#clock();
    const burstBatch = this.#queuedBehind >= QUEUED_BURST && batch.length >= QUEUED_BURST;
    if (burstBatch) this.#lastBurstAt = now;
    const inBurst = burstBatch || now - this.#lastBurstAt < this.#quietMs;
    const defer = this.#deferBursts && inBurst && this.#deferred < this.#maxDeferred;
    const outcomes = await this.#record(this.#db, batch.map((job) => job.item), { defer });
    const settle = () => batch.forEach((job, i) => {
      const outcome = outcomes[i]!;
      if (outcome.ok) job.resolve(outcome.response);
      else job.reject(outcome.error);
    });
    // With reports queued behind this batch, their batch goes to the store first (it is cut and sent in this turn of
    // the event loop) and this batch's answers are written on the next: the store then works on the next batch while
    // the answers are written, instead of waiting idle for them (measured under the webhook benchmark: the store's
    // idle time between two batches 0.8 ms at the median instead of 1.8; 3,251 and 3,406 reports/s against 2,842 and 2,914,
    // docs/benchmarks.md, eighth pass). Every answer still follows its own batch's commit.
    if (this.#commit.buffered > 0) setImmediate(settle);
    else settle();
    const deferred = outcomes.filter((o) => o.ok && o.deferred).length;
    if (deferred > 0) {
      this.#deferred += deferred;
      this.#fanOutDue = true;
      this.#lastDeferredAt = this.#clock();
      this.#waitingSince ??= this.#lastDeferredAt;
    }
    this.#queuedBehind = this.#commit.buffered;
    if (this.#queuedBehind >= QUEUED_BURST) this.#onQueued();
    if (outcomes.some((o) => o.ok && o.queuedNow)) this.#onDeliveriesQueued();
    this.#scheduleFanOut();
  }

  /**
   * Builds waiting events on a later turn: once no report is buffered and the burst has been over for the quiet time
   * (a report arriving first goes first; the end of its batch schedules this again), or, after the longest hold, between
   * batches whatever is buffered.
   */
  #scheduleFanOut(): void {
    if (!this.#fanOutDue || this.#fanOutRunning || this.#closed) return;
    // A wait already set is worked out again: a batch or a sweep since may have moved it.
    if (this.#fanOutTimer) clearTimeout(this.#fanOutTimer);
    this.#fanOutTimer = null;
    if (this.#fanOutScheduled) return;
    const overdue = () => this.#waitingSince !== null && this.#clock() - this.#waitingSince >= this.#maxHoldMs;
    const run = () => {
      this.#fanOutScheduled = false;
      this.#fanOutTimer = null;
      if (this.#fanOutRunning || this.#closed) return;
      if (!overdue()) {
        if (this.#commit.buffered > 0) return; // the next batch's end schedules it again
        const wait = this.#lastDeferredAt + this.#quietMs - this.#clock();
        if (wait > 0) {
          this.#fanOutTimer = setTimeout(() => this.#scheduleFanOut(), wait);
          this.#fanOutTimer.unref();
          return;
        }
      }
      this.#fanOutRunning = this.#fanOutStep().finally(() => {
        this.#fanOutRunning = null;
        this.#scheduleFanOut();
      });
    };
    this.#fanOutScheduled = true;
    setImmediate(run);
  }

  /** One batch of waiting reports built; when fewer than a batch were left, nothing is due any more. */
  async #fanOutStep(): Promise<void> {
    let result: FanOutResult;
    try {
      result = await this.#fanOut(this.#db);
    } catch (error) {
      // The store failed (it is closing, or down): the reports stay waiting; the next sweep or burst retries.
      this.#fanOutDue = false;
      if (!this.#closed) this.#onFanOutError(error);
      return;
    }
    this.#deferred = Math.max(0, this.#deferred - result.built);
    if (result.built < FANOUT_BATCH) {
      this.#fanOutDue = false;
      this.#deferred = 0;
      this.#waitingSince = null;
    }
    if (result.queuedNow) this.#onDeliveriesQueued();
  }
}
