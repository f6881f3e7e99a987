/**
 * A visitor's clock, set right by the service's. The loader stamps `occurred_at` when it sends (a signup intent, a form
 * tool's submission) and the touch's `captured_at` when the ad click landed, both with the browser's clock, which may
 * be off by minutes, years, or set to 0001. The collector keeps the click whatever the clock said, on its own clock:
 *
 * - `occurred_at` more than CLIENT_CLOCK_TOLERANCE_MS from the time the request was received is read as the visitor's
 *   clock being off: it becomes the time received, and `captured_at`, stamped by the same clock, moves by the same
 *   amount (so a click 3 days before the signup stays 3 days before it).
 * - `captured_at` after `occurred_at` (a clock set back between the click and the signup) becomes `occurred_at`: a
 *   click never follows the signup it led to. So does one more than CLICK_COOKIE_DAYS before it (a clock wrong at the
 *   click, 0001, set right by the signup): the cookie that carried the touch lives no longer, so the time is wrong, and
 *   an older one makes platforms drop the click (Microsoft's request leaves a click id older than 90 days out, Meta's
 *   fbc carries the time as its creation time). The signup's time is the one that keeps the click.
 *
 * A snapshot is sent at once, so the tolerance only has to cover the network and a busy page; a delay past it costs the
 * signup's time a few minutes, never the click.
 */
import type { Touch } from '../../protocol/collector';
import { CLICK_COOKIE_DAYS } from '../../protocol/cookies';

/** How far a sent `occurred_at` may be from the time the collector received it before it is taken as a wrong clock. */
export const CLIENT_CLOCK_TOLERANCE_MS = 10 * 60_000;

/**
 * The oldest a touch can be at its signup: the loader keeps it in cnv_click for CLICK_COOKIE_DAYS (a max-age, counted
 * by the browser however its clock is set), plus the tolerance.
 */
const CLICK_MAX_AGE_MS = CLICK_COOKIE_DAYS * 86_400_000 + CLIENT_CLOCK_TOLERANCE_MS;

/** The payload with its times on the service's clock (the same object when nothing had to change). */
export function onServiceClock<T extends { occurred_at: string; touch: Touch | null }>(payload: T, receivedAt: Date): T {
  const sent = Date.parse(payload.occurred_at);
  const received = receivedAt.getTime();
  const skew = received - sent;
  const clockOff = Math.abs(skew) > CLIENT_CLOCK_TOLERANCE_MS;
  const occurred = clockOff ? received : sent;
  let touch = payload.touch;
  if (touch) {
    const stamped = Date.parse(touch.captured_at);
    const moved = stamped + (clockOff ? skew : 0);
    // Out of what can be (after the signup, or older than the cookie that carried it lives): the signup's time.
    const possible = moved <= occurred && moved >= occurred - CLICK_MAX_AGE_MS;
    const captured = possible ? moved : occurred;
    if (captured !== stamped) touch = { ...touch, captured_at: new Date(captured).toISOString() };
  }
  if (!clockOff && touch === payload.touch) return payload;
  return { ...payload, occurred_at: clockOff ? new Date(occurred).toISOString() : payload.occurred_at, touch };
}
