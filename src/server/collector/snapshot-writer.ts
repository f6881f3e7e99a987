/** Group commit for snapshots: those that arrive together go out as one multi-row upsert (see group-commit.ts). */
import { compositeKey } from '../db/composite-key';
import type { Queryable } from '../db/db';
import { upsertSnapshots, type SnapshotWrite, type UpsertSnapshotsOptions } from './sql';
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
  upsert?: Upsert;
  /**
   * Tries a batch of tokens this writer has not stored lately as a plain insert first (upsertSnapshots' `allNew`).
   * The service does so on the embedded store only, which one process owns, so a token turns out stored only after a
   * restart. On PostgreSQL a repeat may come through any instance, and each failed insert would put an error line
   * with the token in the server's log; there the upsert's conflict check costs little anyway. Default false.
   */
  insertFirst?: boolean;
}

/** Keys a writer remembers having stored: a few MB at most, minutes of the busiest site's snapshots, where repeats come. */
const RECENT_KEYS = 50_000;

const keyOf = (write: SnapshotWrite) => compositeKey(write.siteId, write.snapshot.correlation_token);

type Upsert = (db: Queryable, writes: readonly SnapshotWrite[], options?: UpsertSnapshotsOptions) => Promise<void>;

/**
 * The keys this writer stored lately, about `capacity` of them, the oldest forgotten first: two generations of
 * capacity/2, the older dropped whole when the newer fills. Kept as 30-bit hashes (small integers: no string kept
 * alive, about 1 MB for 50,000 keys), so a key may be taken for another; either mistake costs time, never data: a key
 * taken as stored sends its batch to the upsert, and a key forgotten or never seen here (stored by another instance,
 * before a restart) tries the plain insert, which fails whole, and is upserted after all.
 */
export class RecentKeys {
  readonly #half: number;
  #newer = new Set<number>();
  #older = new Set<number>();

  constructor(capacity: number) {
    this.#half = Math.max(1, Math.floor(capacity / 2));
  }

  has(key: string): boolean {
    const hash = fnv1a30(key);
    return this.#newer.has(hash) || this.#older.has(hash);
  }

  add(key: string): void {
    const hash = fnv1a30(key);
    if (this.#newer.has(hash)) return;
    if (this.#newer.size >= this.#half) {
      this.#older = this.#newer;
      this.#newer = new Set();
    }
    this.#newer.add(hash);
  }
}

/** FNV-1a over the string's UTF-16 code units, folded to 30 bits (a V8 small integer). */
function fnv1a30(text: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) hash = Math.imul(hash ^ text.charCodeAt(i), 0x01000193);
  return (hash ^ (hash >>> 30)) & 0x3fffffff;
}

/** Buffers snapshot writes and flushes them in batches, one statement in flight at a time. */
export class SnapshotWriter {
  readonly #db: Queryable;
  readonly #upsert: Upsert;
  readonly #commit: GroupCommit<SnapshotWrite, void>;
  /** With insertFirst: a repeat of one of these tokens is certain to merge, so its batch goes straight to the upsert. */
  readonly #stored: RecentKeys | null;

  constructor(db: Queryable, options: SnapshotWriterOptions = {}) {
    this.#db = db;
    this.#upsert = options.upsert ?? upsertSnapshots;
    this.#stored = options.insertFirst ? new RecentKeys(RECENT_KEYS) : null;
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
      const key = keyOf(job.item);
      const round = seen.get(key) ?? 0;
      seen.set(key, round + 1);
      (rounds[round] ??= []).push(job);
    }
    for (const round of rounds) {
      await writeIsolatingFailures(round, async (jobs) => {
        const stored = this.#stored;
        const allNew = stored !== null && jobs.every((job) => !stored.has(keyOf(job.item)));
        await this.#upsert(this.#db, jobs.map((job) => job.item), { allNew });
        for (const job of jobs) {
          stored?.add(keyOf(job.item));
          job.resolve();
        }
      });
    }
  }
}
