/**
 * When the service last received a request that somebody waits on, per database handle (the store that request will
 * use; two services in one process, as in tests, never see each other's). The embedded store's maintenance starts its
 * long statements (a vacuum of dead rows, up to a second on a big table, during which PGlite runs nothing else) only
 * once no request has come for a while: see db/maintenance.ts. Health checks do not count: a load balancer's polling
 * is nobody waiting, and would otherwise keep the store from ever counting as quiet.
 */
import type { Database } from '../db/db';

const lastRequestAt = new WeakMap<Database, number>();

/** Says that a request for `db` arrived at `now` (a performance.now()). */
export function markRequest(db: Database, now: number = performance.now()): void {
  lastRequestAt.set(db, now);
}

/** Whether no request for `db` arrived within `ms` before `now` (a performance.now()); true before the first. */
export function requestsQuietFor(db: Database, ms: number, now: number = performance.now()): boolean {
  const at = lastRequestAt.get(db);
  return at === undefined || now - at >= ms;
}
