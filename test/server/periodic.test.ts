/** startPeriodic: a failed run is logged and retried at the next interval; the store's condition once a minute only. */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { startPeriodic } from '../../src/server/periodic';

afterEach(() => {
  vi.useRealTimers();
});

function diskFull(): Error {
  return Object.assign(new Error('could not extend file: No space left on device'), { code: '53100' });
}

describe('startPeriodic', () => {
  it('logs every failed run of a fault, and a store that cannot work once a minute with the count', async () => {
    vi.useFakeTimers();
    const lines: Array<[Record<string, unknown>, string | undefined]> = [];
    const infos: Array<[Record<string, unknown>, string | undefined]> = [];
    const log = {
      error: (fields: object, message?: string) => void lines.push([fields as Record<string, unknown>, message]),
      info: (fields: object, message?: string) => void infos.push([fields as Record<string, unknown>, message]),
    };
    let failWith: () => Error = () => new Error('a fault');
    let runs = 0;
    const periodic = startPeriodic(async () => {
      runs++;
      const error = failWith();
      if (error) throw error;
    }, 1_000, log, { name: 'housekeeping', failure: 'housekeeping failed; it runs again at the next interval' });
    await vi.advanceTimersByTimeAsync(2_500);
    expect(runs).toBe(3);
    expect(lines.map(([, message]) => message)).toEqual(Array(3).fill('housekeeping failed; it runs again at the next interval'));

    lines.length = 0;
    failWith = diskFull;
    // A run each second: the first refusal at 3 s is logged, the next line a minute later (at 63 s) with the 59 between.
    await vi.advanceTimersByTimeAsync(61_000);
    expect(runs).toBe(64);
    expect(lines.map(([fields, message]) => [message, fields.reason, fields.unlogged])).toEqual([
      ['housekeeping failed; it runs again at the next interval (the store cannot work now: said as it starts, then once a minute while it lasts)', 'disk_full', 0],
      ['housekeeping failed; it runs again at the next interval (the store cannot work now: said as it starts, then once a minute while it lasts)', 'disk_full', 59],
    ]);
    expect(infos).toEqual([]);

    // Space made: the next run works, and says so once.
    failWith = () => undefined as never;
    lines.length = 0;
    await vi.advanceTimersByTimeAsync(3_000);
    expect(lines).toEqual([]);
    expect(infos).toEqual([[{ loop: 'housekeeping', failures: 61, lastReason: 'disk_full', ms: 61_000 }, 'housekeeping: the store works again']]);
    await periodic.stop();
  });
});
