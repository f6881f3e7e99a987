/**
 * Group commit for snapshots. The embedded PGlite runs one statement at a time, so one transaction per request would cap
 * ingest at a few hundred per second. Instead, snapshots that arrive while a write is in flight wait in a buffer and go
 * out together as one multi-row upsert; each caller's promise settles only after the statement holding its snapshot
 * has committed, so an answered snapshot is never lost.
 */
import type { Queryable } from '../store/db';
import { upsertSnapshots, type SnapshotWrite } from '../store/snapshots';

export interface SnapshotWriterOptions {
  /** Most snapshots in one statement. */
  maxBatch?: number;
  /**
   * How long the first snapshot of an idle writer waits for company, in ms (0: the next turn of the event loop).
   * A statement's fixed cost on PGlite is worth some 25 rows, so gathering a fuller batch is cheaper than it delays.
   */
  maxDelayMs?: number;
  /** The upsert to run (tests can observe batches). */
  upsert?: (db: Queryable, writes: readonly SnapshotWrite[]) => Promise<void>;
}

interface Pending {
  write: SnapshotWrite;
  resolve: () => void;
  reject: (error: unknown) => void;
}

/** Buffers snapshot writes and flushes them in batches, one statement in flight at a time. */
export class SnapshotWriter {
  readonly #db: Queryable;
  readonly #maxBatch: number;
  readonly #maxDelayMs: number;
  readonly #upsert: (db: Queryable, writes: readonly SnapshotWrite[]) => Promise<void>;
  #buffer: Pending[] = [];
  #timer: ReturnType<typeof setTimeout> | ReturnType<typeof setImmediate> | null = null;
  #running: Promise<void> | null = null;

  constructor(db: Queryable, options: SnapshotWriterOptions = {}) {
    this.#db = db;
    this.#maxBatch = options.maxBatch ?? 500;
    this.#maxDelayMs = options.maxDelayMs ?? 2;
    this.#upsert = options.upsert ?? upsertSnapshots;
  }

  /** Stores one snapshot; resolves once it is committed. */
  write(write: SnapshotWrite): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      this.#buffer.push({ write, resolve, reject });
      this.#schedule();
    });
  }

  /** Writes everything buffered so far and waits for it (the app's onClose hook calls this). */
  async flush(): Promise<void> {
    this.#cancelTimer();
    while (this.#running || this.#buffer.length > 0) {
      await (this.#running ?? this.#run());
    }
  }

  #schedule(): void {
    if (this.#running) return; // a running flush picks the buffer up when it finishes
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
          await this.#writeBatch(batch);
        }
      } finally {
        this.#running = null;
      }
    })();
    this.#running = running;
    return running;
  }

  /** Writes a batch in rounds (a token repeated within the batch goes in a later round, so repeats merge in order). */
  async #writeBatch(batch: Pending[]): Promise<void> {
    const rounds: Pending[][] = [];
    const seen = new Map<string, number>();
    for (const item of batch) {
      const key = `${item.write.siteId}\u0000${item.write.snapshot.correlation_token}`;
      const round = seen.get(key) ?? 0;
      seen.set(key, round + 1);
      (rounds[round] ??= []).push(item);
    }
    for (const round of rounds) {
      try {
        await this.#upsert(this.#db, round.map((item) => item.write));
        for (const item of round) item.resolve();
      } catch (error) {
        if (round.length === 1) {
          round[0]!.reject(error);
          continue;
        }
        // One bad row must not fail its neighbours: retry each on its own, settling each caller by its own outcome.
        for (const item of round) {
          await this.#upsert(this.#db, [item.write]).then(item.resolve, item.reject);
        }
      }
    }
  }
}
