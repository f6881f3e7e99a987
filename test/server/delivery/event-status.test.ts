import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventStatusAggregate, eventStatusFor } from '../../../src/server/delivery/sql';
import { decide } from '../../../src/server/delivery/decision';
import type { Database } from '../../../src/server/db/db';
import { DATABASE_KINDS } from '../support/databases';

const CASES: Array<[string[], string]> = [
    [['queued'], 'queued'],
    [['delivered', 'queued'], 'queued'],
    [['failed', 'queued'], 'queued'],
    [['delivered'], 'completed'],
    [['delivered', 'delivered'], 'completed'],
    [[], 'completed'],
    [['delivered', 'failed'], 'failed'],
    [['failed'], 'failed'],
    [['skipped'], 'completed'],
    [['skipped', 'delivered'], 'completed'],
    [['skipped', 'failed'], 'failed'],
];

describe("an event's status from its actions", () => {
  it.each(CASES)('is %j -> %s', (statuses, expected) => {
    expect(eventStatusFor(statuses)).toBe(expected);
  });
});

describe.each(DATABASE_KINDS)("the delivery statements' event status on $name", (kind) => {
  let db: Database;
  beforeAll(async () => {
    db = await kind.open();
  });
  afterAll(() => db.close());

  it('agrees with eventStatusFor for every case (no statuses: a left join that found no action)', async () => {
    for (const [statuses, expected] of CASES) {
      const rows = await db.query<{ status: string }>(
        `select ${eventStatusAggregate('s.status')} as status from (select 1) one left join unnest($1::text[]) as s(status) on true`,
        [statuses],
      );
      expect([statuses, rows[0]!.status]).toEqual([statuses, expected]);
    }
  });
});

describe('the decision after a send', () => {
  const policy = { baseMs: 1000, capMs: 600_000, maxAttempts: 3 };
  const now = new Date('2026-11-21T10:00:00Z');
  const error = { code: 'UNAVAILABLE', message: 'down' };

  it("retries at the destination's Retry-After when it gave one, else after the jittered backoff", () => {
    expect(decide({ kind: 'retry', error, afterMs: 30_000 }, 1, policy, now, () => 0.5)).toEqual({ kind: 'retry', error, dueAt: new Date(now.getTime() + 30_000) });
    expect(decide({ kind: 'retry', error }, 2, policy, now, () => 0.5)).toEqual({ kind: 'retry', error, dueAt: new Date(now.getTime() + 1000) });
  });

  it('fails for good with the last error once the last attempt failed', () => {
    expect(decide({ kind: 'retry', error }, 3, policy, now, () => 0.5)).toEqual({
      kind: 'failed', error: { code: 'UNAVAILABLE', message: 'down (gave up after 3 attempts)' }, request: null,
    });
  });
});
