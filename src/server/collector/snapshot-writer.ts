/** Group commit for snapshots: those that arrive together go out as one multi-row upsert (see group-commit.ts). */
import { compositeKey } from '../db/composite-key';
import type { Queryable } from '../db/db';
import { upsertSnapshots, type SnapshotWrite } from './sql';
import { GroupCommit, writeIsolatingFailures, type Job } from '../db/group-commit';

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

/** Buffers snapshot writes and flushes them in batches, one statement in flight at a time. */
export class SnapshotWriter {
  readonly #db: Queryable;
  readonly #upsert: (db: Queryable, writes: readonly SnapshotWrite[]) => Promise<void>;
  readonly #commit: GroupCommit<SnapshotWrite, void>;

  constructor(db: Queryable, options: SnapshotWriterOptions = {}) {
    this.#db = db;
    this.#upsert = options.upsert ?? upsertSnapshots;
    this.#commit = new GroupCommit((jobs) => this.#writeBatch(jobs), {
      maxBatch: options.maxBatch ?? 500,
      maxDelayMs: options.maxDelayMs ?? 2,
    });
  }

  /** Stores one snapshot; resolves once it is committed. */
  write(write: SnapshotWrite): Promise<void> {
    return this.#commit.submit(write);
  }

  /** Writes everything buffered so far and waits for it (the app's onClose hook calls this). */
  flush(): Promise<void> {
    return this.#commit.flush();
  }

  /** Writes a batch in rounds (a token repeated within the batch goes in a later round, so repeats merge in order). */
  async #writeBatch(batch: Job<SnapshotWrite, void>[]): Promise<void> {
    const rounds: Job<SnapshotWrite, void>[][] = [];
    const seen = new Map<string, number>();
    for (const job of batch) {
      const key = compositeKey(job.item.siteId, job.item.snapshot.correlation_token);
      const round = seen.get(key) ?? 0;
      seen.set(key, round + 1);
      (rounds[round] ??= []).push(job);
    }
    for (const round of rounds) {
      await writeIsolatingFailures(round, async (jobs) => {
        await this.#upsert(this.#db, jobs.map((job) => job.item));
        for (const job of jobs) job.resolve();
      });
    }
  }
}
