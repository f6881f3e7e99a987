/**
 * What cnv tells an account's notification endpoints, and when it tries again (DESIGN.md, "Outbound notifications
 * (contract)"). Delivery follows the Standard Webhooks specification (https://www.standardwebhooks.com/).
 */

/** The kinds of notifications, as endpoints subscribe to them. */
export const NOTIFICATION_KINDS = ['event.failed', 'destination.reauthorization_required', 'destination.recovered'] as const;
export type NotificationKind = (typeof NOTIFICATION_KINDS)[number];

/** The `data` of a notification. `event_id` for event kinds; `destination` for destination kinds (and the failed action's). */
export interface NotificationData {
  site_id: string | null;
  event_id?: string;
  destination?: { id: string | null; type: string };
  reason: string;
}

/** The JSON body sent: `{type, timestamp, data}`. */
export interface NotificationPayload {
  type: NotificationKind;
  timestamp: string;
  data: NotificationData;
}

/**
 * Waits before each retry, the Standard Webhooks schedule: after the first attempt 5 s, then 5 min, 30 min, 2 h, 5 h,
 * 10 h, 10 h (about a day in all); eight attempts, then the notification is given up.
 */
export const RETRY_SCHEDULE_MS = [5_000, 5 * 60_000, 30 * 60_000, 2 * 3_600_000, 5 * 3_600_000, 10 * 3_600_000, 10 * 3_600_000] as const;
export const MAX_ATTEMPTS = RETRY_SCHEDULE_MS.length + 1;

/** The wait after the `attempts`-th failed attempt, with ±20 % jitter (`random` in [0, 1)); null when none is left. */
export function retryDelayMs(attempts: number, random: () => number): number | null {
  const base = RETRY_SCHEDULE_MS[attempts - 1];
  if (base === undefined) return null;
  return Math.round(base * (0.8 + 0.4 * random()));
}

/** How long a receiver has to answer 2xx. */
export const RECEIVER_TIMEOUT_MS = 10_000;
