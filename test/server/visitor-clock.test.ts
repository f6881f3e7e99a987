/** A visitor's wrong clock is set right against the collector's: the click is kept, its time moved with the signup's. */
import { describe, expect, it } from 'vitest';
import { CLIENT_CLOCK_TOLERANCE_MS, onServiceClock } from '../../src/server/collector/visitor-clock';
import { snapshotBody } from './support/fixtures';

const received = new Date('2026-11-28T12:00:00.000Z');
const touch = snapshotBody().touch!;
const at = (iso: string) => ({ ...snapshotBody({ occurred_at: iso, touch: { ...touch, captured_at: '2026-11-25T12:00:00.000Z' } }) });

describe('onServiceClock', () => {
  it('keeps the times of a clock within the tolerance as sent (the same object)', () => {
    const payload = at(new Date(received.getTime() - CLIENT_CLOCK_TOLERANCE_MS + 1000).toISOString());
    expect(onServiceClock(payload, received)).toBe(payload);
  });

  it('reads a signup time far from the time received as the clock being off: both times move by the same amount', () => {
    // The visitor's clock runs 2 years behind: the click 3 days before the signup stays 3 days before it.
    const behind = onServiceClock({ ...at('2024-11-28T12:00:00.000Z'), touch: { ...touch, captured_at: '2024-11-25T12:00:00.000Z' } }, received);
    expect(behind.occurred_at).toBe(received.toISOString());
    expect(behind.touch!.captured_at).toBe('2026-11-25T12:00:00.000Z');
    // A clock set to 0001 (a reset device): the signup takes the time received; the click keeps its distance, or if
    // that would put it after the signup, the signup's time.
    const reset = onServiceClock({ ...at('0001-01-01T00:00:00.000Z'), touch: { ...touch, captured_at: '2026-11-27T00:00:00.000Z' } }, received);
    expect(reset.occurred_at).toBe(received.toISOString());
    expect(reset.touch!.captured_at).toBe(received.toISOString());
    // A clock an hour ahead.
    const ahead = onServiceClock({ ...at('2026-11-28T13:00:00.000Z'), touch: { ...touch, captured_at: '2026-11-28T12:30:00.000Z' } }, received);
    expect(ahead).toMatchObject({ occurred_at: '2026-11-28T12:00:00.000Z', touch: { captured_at: '2026-11-28T11:30:00.000Z' } });
  });

  it('puts a click stamped after its signup (a clock set back between them), or longer before it than cnv_click lives, at the signup', () => {
    const later = onServiceClock({ ...at('2026-11-28T11:59:00.000Z'), touch: { ...touch, captured_at: '2030-01-01T00:00:00.000Z' } }, received);
    expect(later).toMatchObject({ occurred_at: '2026-11-28T11:59:00.000Z', touch: { captured_at: '2026-11-28T11:59:00.000Z' } });
    // The clock said 0001 at the click and was right by the signup. The click was at most 90 days before (the cookie
    // that carried it lives no longer); 1970 (or any time beyond 90 days) made Microsoft's request leave the click id
    // out and Meta's fbc carry a creation time decades old: the click would be lost.
    const ancient = onServiceClock({ ...at('2026-11-28T11:59:00.000Z'), touch: { ...touch, captured_at: '0001-01-01T00:00:00.000Z' } }, received);
    expect(ancient.touch!.captured_at).toBe('2026-11-28T11:59:00.000Z');
    const beyond = onServiceClock({ ...at('2026-11-28T11:59:00.000Z'), touch: { ...touch, captured_at: '2026-08-01T00:00:00.000Z' } }, received);
    expect(beyond.touch!.captured_at).toBe('2026-11-28T11:59:00.000Z');
    // 89 days before: as sent.
    const old = onServiceClock({ ...at('2026-11-28T11:59:00.000Z'), touch: { ...touch, captured_at: '2026-08-31T12:00:00.000Z' } }, received);
    expect(old.touch!.captured_at).toBe('2026-08-31T12:00:00.000Z');
    // The click ids, UTM and landing page are kept whatever the clock said.
    expect(ancient.touch).toMatchObject({ click_ids: touch.click_ids, utm: touch.utm, landing_page_url: touch.landing_page_url });
  });

  it('leaves a payload without a touch with its time set right only', () => {
    expect(onServiceClock({ ...at('1999-01-01T00:00:00.000Z'), touch: null }, received)).toMatchObject({ occurred_at: received.toISOString(), touch: null });
  });
});
