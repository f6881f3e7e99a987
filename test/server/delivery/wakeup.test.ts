/**
 * The webhook's "intake busy" signal (delivery/wakeup.ts): reports queued lately, per database handle. The delivery
 * worker asks about the last INTAKE_BUSY_WINDOW_MS; the embedded store's maintenance about the last 2 s.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { Database } from '../../../src/server/db/db';
import { INTAKE_BUSY_WINDOW_MS, intakeBusy, markIntakeBusy } from '../../../src/server/delivery/wakeup';

describe('intake busy', () => {
  afterEach(() => vi.restoreAllMocks());
  const markedAt = (db: Database, at: number) => {
    vi.spyOn(performance, 'now').mockReturnValueOnce(at);
    markIntakeBusy(db);
  };

  it('is busy within its window after reports queued, and for that database only', () => {
    const db = {} as Database;
    const other = {} as Database;
    expect(intakeBusy(db, { now: 1_000 })).toBe(false);
    markedAt(db, 1_000);
    expect(intakeBusy(db, { now: 1_000 + INTAKE_BUSY_WINDOW_MS - 1 })).toBe(true);
    expect(intakeBusy(db, { now: 1_000 + INTAKE_BUSY_WINDOW_MS })).toBe(false);
    expect(intakeBusy(other, { now: 1_000 })).toBe(false);
  });

  it('answers for a longer while when asked', () => {
    const db = {} as Database;
    markedAt(db, 5_000);
    expect(intakeBusy(db, { withinMs: 2_000, now: 6_500 })).toBe(true);
    expect(intakeBusy(db, { withinMs: 2_000, now: 7_000 })).toBe(false);
  });
});
