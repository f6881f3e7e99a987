/** The time an adjustment is sent with (delivery/adjustments.ts): after its conversion and after the one before it. */
import { describe, expect, it } from 'vitest';
import { adjustmentSendTime } from '../../../src/server/delivery/adjustments';

const CONVERSION = new Date('2026-11-20T10:00:00.400Z');
const at = (iso: string) => new Date(iso);

describe('the time an adjustment is sent with', () => {
  it('is its own occurred_at, to the second, when that is after the conversion and the adjustments before it', () => {
    expect(adjustmentSendTime(CONVERSION, [at('2026-11-21T08:00:00.900Z')]).toISOString()).toBe('2026-11-21T08:00:00.000Z');
  });

  it('is a second after the conversion when dated at or before it, or in the same second', () => {
    for (const when of ['2026-11-19T00:00:00Z', '2026-11-20T10:00:00.400Z', '2026-11-20T10:00:00.900Z']) {
      expect(adjustmentSendTime(CONVERSION, [at(when)]).toISOString()).toBe('2026-11-20T10:00:01.000Z');
    }
  });

  it('is a second after the previous adjustment of the same conversion, in the order they arrived', () => {
    const same = at('2026-11-20T09:00:00Z');
    expect(adjustmentSendTime(CONVERSION, [same, same]).toISOString()).toBe('2026-11-20T10:00:02.000Z');
    expect(adjustmentSendTime(CONVERSION, [at('2026-11-21T12:00:00Z'), at('2026-11-21T11:00:00Z')]).toISOString()).toBe('2026-11-21T12:00:01.000Z');
    expect(adjustmentSendTime(CONVERSION, [at('2026-11-21T12:00:00.100Z'), at('2026-11-21T12:00:00.700Z')]).toISOString()).toBe('2026-11-21T12:00:01.000Z');
  });
});
