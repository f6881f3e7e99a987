/**
 * Platforms whose token endpoint refused this service's own OAuth client (`oauth_client_refused`: the operator's
 * `CNV_<PLATFORM>_OAUTH_CLIENT_ID/SECRET` are wrong, expired, rotated or deleted). A fact about the service, not about
 * one connection: kept in the store's `service_facts` (one row per platform, with the reason and since when), so every
 * process sharing the store shows it on the destinations of that platform (API, dashboard) while it lasts. A refresh
 * that works again forgets it, and so does a start (the settings may have been corrected: the waiting items are due
 * again then, see delivery's resumeOAuthClientWaits, and a start that still has the refused client records it again at
 * its first refresh).
 */
import type { Queryable } from '../db/db';
import type { DeliveryError } from './destination';

const PREFIX = 'oauth_client_refused:';

/** A platform's refused client: why (the error its waiting items show) and since when. */
export interface ClientRefusal {
  error: DeliveryError;
  since: Date;
}

/** Records that `type`'s token endpoint refused the service's client (the first refusal's time is kept). */
export async function recordClientRefused(db: Queryable, type: string, error: DeliveryError, at: Date): Promise<void> {
  await db.query(
    `insert into service_facts (name, value, recorded_at) values ($1, $2, $3)
     on conflict (name) do update set value = excluded.value`,
    [PREFIX + type, JSON.stringify(error), at],
  );
}

/** Forgets `type`'s refused client (a refresh with it worked); true when one was recorded. */
export async function forgetClientRefused(db: Queryable, type: string): Promise<boolean> {
  return (await db.query('delete from service_facts where name = $1 returning name', [PREFIX + type])).length > 0;
}

/** Forgets every platform's refused client (a start: its settings may be corrected). */
export async function forgetClientRefusals(db: Queryable): Promise<void> {
  await db.query('delete from service_facts where name like $1', [`${PREFIX}%`]);
}

/** The platforms whose client is refused now, by type. */
export async function clientRefusals(db: Queryable): Promise<Map<string, ClientRefusal>> {
  const rows = await db.query<{ name: string; value: string; recorded_at: Date | string }>(
    'select name, value, recorded_at from service_facts where name like $1',
    [`${PREFIX}%`],
  );
  const found = new Map<string, ClientRefusal>();
  for (const row of rows) {
    try {
      found.set(row.name.slice(PREFIX.length), { error: JSON.parse(row.value) as DeliveryError, since: new Date(row.recorded_at) });
    } catch {
      // A value this version did not write: ignored.
    }
  }
  return found;
}
