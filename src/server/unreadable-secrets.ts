/**
 * At start: the sealed values of the store that do not open with the service's key (destinations' credentials,
 * notification endpoints' signing secrets), e.g. after a restore with another CNV_SECRET_KEY. Said once, with what to
 * do; delivery and notifications handle each such row on its own (it never stops the others).
 */
import type { Queryable } from './db/db';
import type { SecretBox } from './db/secret-box';
import { opens } from './destinations';

export interface UnreadableSecrets {
  /** Ids of destinations whose stored credentials do not open (those already awaiting a reconnect included). */
  destinations: string[];
  /** Ids of notification endpoints whose signing secret does not open. */
  notificationEndpoints: string[];
}

/** Finds the sealed values that do not open with `box`. */
export async function findUnreadableSecrets(db: Queryable, box: SecretBox): Promise<UnreadableSecrets> {
  const destinations = await db.query<{ id: string; credentials: string }>(`select id, credentials from destinations where credentials is not null order by id`);
  const endpoints = await db.query<{ id: string; secret: string }>(`select id, secret from notification_endpoints order by id`);
  return {
    destinations: destinations.filter((r) => !opens(box, r.credentials)).map((r) => r.id),
    notificationEndpoints: endpoints.filter((r) => !opens(box, r.secret)).map((r) => r.id),
  };
}

/** The start's warning for them, or null when every sealed value opens. */
export function unreadableSecretsWarning(found: UnreadableSecrets): { obj: object; msg: string } | null {
  const d = found.destinations.length;
  const n = found.notificationEndpoints.length;
  if (d === 0 && n === 0) return null;
  const counted = [d > 0 ? `${d} destination${d === 1 ? '' : 's'}` : null, n > 0 ? `${n} notification endpoint${n === 1 ? '' : 's'}` : null]
    .filter(Boolean)
    .join(' and ');
  return {
    obj: { destinations: found.destinations, notificationEndpoints: found.notificationEndpoints },
    msg:
      `stored secrets of ${counted} do not open with the current CNV_SECRET_KEY (they were sealed with another key, e.g. before a restore): ` +
      `restart with the key that sealed them, or connect those destinations again (their conversions wait, marked reauthorization_required) ` +
      `and delete and create those notification endpoints again (their notifications fail); everything else is delivered as usual`,
  };
}
