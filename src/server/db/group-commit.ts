/**
 * Group commit: items that arrive while a write is in flight wait in a buffer and go out together, one batch in flight
 * at a time. The embedded PGlite runs one statement at a time, so one transaction per request would cap the hot paths
 * at a few hundred per second. Each caller's promise settles only when the batch writer settles its job, after the
 * statement holding its item has committed, so an answered request is never lost.
 */

/** One buffered item and the settlement of its caller's promise. */
export interface Job<I, R> {
  item: I;
  resolve(result: R): void;
  reject(error: unknown): void;
}

export interface GroupCommitOptions {
  /** Most items in one batch. */
  maxBatch: number;
  /** How long the first item of an idle writer waits for company, in ms (0: the next turn of the event loop). */
  maxDelayMs: number;
}

/** Buffers items and hands them to `writeBatch` in batches; writeBatch must settle every job it is given. */
export class GroupCommit<I, R> {
  readonly #writeBatch: (jobs: Job<I, R>[]) => Promise<void>;
  readonly #maxBatch: number;
  readonly #maxDelayMs: number;
  #buffer: Job<I, R>[] = [];
  #timer: ReturnType<typeof setTimeout> | ReturnType<typeof setImmediate> | null = null;
  #running: Promise<void> | null = null;

  constructor(writeBatch: (jobs: Job<I, R>[]) => Promise<void>, options: GroupCommitOptions) {
    this.#writeBatch = writeBatch;
    this.#maxBatch = Math.max(1, options.maxBatch);
    this.#maxDelayMs = options.maxDelayMs;
  }

  /** Items waiting for the batch in flight to be written. */
  get buffered(): number {
    return this.#buffer.length;
  }

  /** Buffers one item; settles when its batch has been written. */
  submit(item: I): Promise<R> {
    return new Promise<R>((resolve, reject) => {
      this.#buffer.push({ item, resolve, reject });
      this.#schedule();
    });
  }

  /** Writes everything buffered so far and waits for it (onClose hooks call this). */
  async flush(): Promise<void> {
    this.#cancelTimer();
    while (this.#running || this.#buffer.length > 0) {
      await (this.#running ?? this.#run());
    }
  }

  #schedule(): void {
    if (this.#running) return; // the running loop takes the buffer when its batch is written
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
          const batch = this.#buffer.splice(0, this.#maxBatch);
          // writeBatch settles its jobs; an error escaping it still settles every one of them.
          await this.#writeBatch(batch).catch((error: unknown) => batch.forEach((job) => job.reject(error)));
        }
      } finally {
        this.#running = null;
      }
    })();
    this.#running = running;
    return running;
  }
}

/**
 * Writes jobs together; when that fails, writes each on its own, so one bad item never fails its neighbours and
 * each caller is settled by its own outcome. `write` settles the jobs it wrote.
 */
export async function writeIsolatingFailures<I, R>(jobs: Job<I, R>[], write: (jobs: Job<I, R>[]) => Promise<void>): Promise<void> {
  try {
    await write(jobs);
  } catch (error) {
    if (jobs.length === 1) return jobs[0]!.reject(error);
    for (const job of jobs) await writeIsolatingFailures([job], write);
  }
}
