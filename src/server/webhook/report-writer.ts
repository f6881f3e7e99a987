/**
 * Group commit for webhook reports. One transaction per report costs a dozen statements, and the embedded PGlite runs
 * one statement at a time (on a thread of its own in the service), which capped the webhook at a few hundred reports per second with
 * seconds of queueing in the tail. Instead, reports that arrive while a batch is being written wait in a buffer and
 * go out together: set-based reads, then ONE statement that writes them all and commits by itself (see recordReports
 * and group-commit.ts).
 */
import type { Database } from '../db/db';
import type { SaasSignupResponse } from '../../protocol/webhook';
import { recordReports, type ReportOutcome, type ReportSubmission } from './report';
import { GroupCommit, writeIsolatingFailures, type Job } from '../db/group-commit';

export interface ReportWriterOptions {
  /** Most reports in one batch. */
  maxBatch?: number;
  /** How long the first report of an idle writer waits for company, in ms (0: the next turn of the event loop). */
  maxDelayMs?: number;
  /** Records a batch (tests can observe batches or inject faults). */
  record?: (db: Database, submissions: readonly ReportSubmission[]) => Promise<ReportOutcome[]>;
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

/** Buffers reports and records them in batches, one batch in flight at a time. */
export class ReportWriter {
  readonly #db: Database;
  readonly #record: (db: Database, submissions: readonly ReportSubmission[]) => Promise<ReportOutcome[]>;
  readonly #onDeliveriesQueued: () => void;
  readonly #onQueued: () => void;
  readonly #commit: GroupCommit<ReportSubmission, SaasSignupResponse>;

  constructor(db: Database, options: ReportWriterOptions = {}) {
    this.#db = db;
    this.#record = options.record ?? recordReports;
    this.#onDeliveriesQueued = options.onDeliveriesQueued ?? (() => undefined);
    this.#onQueued = options.onQueued ?? (() => undefined);
    this.#commit = new GroupCommit((jobs) => writeIsolatingFailures(jobs, (batch) => this.#writeBatch(batch)), {
      maxBatch: options.maxBatch ?? 250,
      maxDelayMs: options.maxDelayMs ?? 0,
    });
  }

  /** Records one report; resolves with its response (or the first report's, for a repeat) once committed. */
  submit(submission: ReportSubmission): Promise<SaasSignupResponse> {
    return this.#commit.submit(submission);
  }

  /** Records everything buffered so far and waits for it (the webhook plugin's onClose hook calls this). */
  flush(): Promise<void> {
    return this.#commit.flush();
  }

  async #writeBatch(batch: Job<ReportSubmission, SaasSignupResponse>[]): Promise<void> {
    const outcomes = await this.#record(this.#db, batch.map((job) => job.item));
    batch.forEach((job, i) => {
      const outcome = outcomes[i]!;
      if (outcome.ok) job.resolve(outcome.response);
      else job.reject(outcome.error);
    });
    if (this.#commit.buffered >= QUEUED_BURST) this.#onQueued();
    if (outcomes.some((o) => o.ok && o.queuedNow)) this.#onDeliveriesQueued();
  }
}
