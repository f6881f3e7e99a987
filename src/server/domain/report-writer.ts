/**
 * Group commit for webhook reports. One transaction per report costs a dozen statements, and the embedded PGlite runs
 * one statement at a time on the main thread, which capped the webhook at a few hundred reports per second with
 * seconds of queueing in the tail. Instead, reports that arrive while a batch is being written wait in a buffer and
 * go out together in ONE transaction of set-based statements (see recordReports); each caller's promise settles only
 * after the transaction holding its report has committed, so an answered report is never lost.
 */
import type { Database } from '../store/db';
import type { SaasSignupResponse } from '../../protocol/webhook';
import { recordReports, type ReportOutcome, type ReportSubmission } from './webhook-report';

export interface ReportWriterOptions {
  /** Most reports in one transaction. */
  maxBatch?: number;
  /** How long the first report of an idle writer waits for company, in ms (0: the next turn of the event loop). */
  maxDelayMs?: number;
  /** Records a batch (tests can observe batches or inject faults). */
  record?: (db: Database, submissions: readonly ReportSubmission[]) => Promise<ReportOutcome[]>;
  /** Called after a batch has committed outbox rows that are due at once (the service wakes its delivery worker). */
  onDeliveriesQueued?: () => void;
}

interface Pending {
  submission: ReportSubmission;
  resolve: (response: SaasSignupResponse) => void;
  reject: (error: unknown) => void;
}

/** Buffers reports and records them in batches, one transaction in flight at a time. */
export class ReportWriter {
  readonly #db: Database;
  readonly #maxBatch: number;
  readonly #maxDelayMs: number;
  readonly #record: (db: Database, submissions: readonly ReportSubmission[]) => Promise<ReportOutcome[]>;
  readonly #onDeliveriesQueued: () => void;
  #buffer: Pending[] = [];
  #timer: ReturnType<typeof setTimeout> | ReturnType<typeof setImmediate> | null = null;
  #running: Promise<void> | null = null;

  constructor(db: Database, options: ReportWriterOptions = {}) {
    this.#db = db;
    this.#maxBatch = Math.max(1, options.maxBatch ?? 250);
    this.#maxDelayMs = options.maxDelayMs ?? 0;
    this.#record = options.record ?? recordReports;
    this.#onDeliveriesQueued = options.onDeliveriesQueued ?? (() => undefined);
  }

  /** Records one report; resolves with its response (or the first report's, for a repeat) once committed. */
  submit(submission: ReportSubmission): Promise<SaasSignupResponse> {
    return new Promise<SaasSignupResponse>((resolve, reject) => {
      this.#buffer.push({ submission, resolve, reject });
      this.#schedule();
    });
  }

  /** Records everything buffered so far and waits for it (the webhook plugin's onClose hook calls this). */
  async flush(): Promise<void> {
    this.#cancelTimer();
    while (this.#running || this.#buffer.length > 0) {
      await (this.#running ?? this.#run());
    }
  }

  #schedule(): void {
    if (this.#running) return; // the running loop takes the buffer when its batch has committed
    if (this.#buffer.length >= this.#maxBatch) {
      this.#cancelTimer();
      void this.#run();
      return;
    }
    if (this.#timer) return;
    const start = () => {
      this.#timer = null;
      if (!this.#running) void this.#run();
    };
    this.#timer = this.#maxDelayMs > 0 ? setTimeout(start, this.#maxDelayMs) : setImmediate(start);
  }

  #cancelTimer(): void {
    if (!this.#timer) return;
    clearTimeout(this.#timer as ReturnType<typeof setTimeout>);
    clearImmediate(this.#timer as ReturnType<typeof setImmediate>);
    this.#timer = null;
  }

  #run(): Promise<void> {
    const running = (async () => {
      try {
        while (this.#buffer.length > 0) {
          await this.#writeBatch(this.#buffer.splice(0, this.#maxBatch));
        }
      } finally {
        this.#running = null;
      }
    })();
    this.#running = running;
    return running;
  }

  async #writeBatch(batch: Pending[]): Promise<void> {
    let outcomes: ReportOutcome[];
    try {
      outcomes = await this.#record(this.#db, batch.map((item) => item.submission));
    } catch (error) {
      if (batch.length === 1) {
        batch[0]!.reject(error);
        return;
      }
      // One bad report must not fail its neighbours: record each on its own, settling each caller by its own outcome.
      for (const item of batch) await this.#writeBatch([item]);
      return;
    }
    batch.forEach((item, i) => {
      const outcome = outcomes[i]!;
      if (outcome.ok) item.resolve(outcome.response);
      else item.reject(outcome.error);
    });
    if (outcomes.some((o) => o.ok && o.queuedNow)) this.#onDeliveriesQueued();
  }
}
