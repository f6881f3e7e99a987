/**
 * The live flows a batch of reports fans out to, kept in memory on the embedded store. Reading them was one of a
 * batch's three statements; on the embedded store every statement is a round trip to PGlite's thread, which waits for
 * the HTTP thread to take each answer (measured under the webhook benchmark: 4.5 ms of the connection's time per batch
 * for a read that runs in 1.6 ms).
 *
 * Only the embedded store: one process holds its data directory, so every write to flows goes through this process's
 * flows SQL, which notes it (db/table-changes.ts), and a list read while a write was under way is used but not kept.
 * On PostgreSQL other instances write flows too: every batch reads them. A kept list lives at most LIVE_FLOWS_TTL_MS,
 * a bound on what a write made some other way (there is none in the service) could leave stale. A trigger without
 * flows is not kept: the flow created for it is found at once, however it was made.
 */
import type { Database } from '../db/db';
import { tableChanges } from '../db/table-changes';
import { liveFlowsForTriggers, siteTriggerKey, type FanOutFlow, type ReportKind } from './report-sql';

/** How long a kept list of live flows is used. */
export const LIVE_FLOWS_TTL_MS = 2_000;

/** Beyond this many kept lists, the cache starts over (a bound on its memory). */
const MAX_KEPT = 10_000;

interface Kept {
  flows: FanOutFlow[];
  until: number;
  changes: number;
}

const keptByDb = new WeakMap<Database, Map<string, Kept>>();

type Trigger = { siteId: string; triggerKey: string; kind: ReportKind };

/** liveFlowsForTriggers, from memory when the store is the embedded one and nothing changed flows since. */
export async function liveFlowsOf(db: Database, triggers: readonly Trigger[], now: () => number = Date.now): Promise<Map<string, FanOutFlow[]>> {
  if (db.kind !== 'pglite') return liveFlowsForTriggers(db, triggers);
  let kept = keptByDb.get(db);
  if (!kept) keptByDb.set(db, (kept = new Map()));
  const changes = tableChanges('flows');
  const found = new Map<string, FanOutFlow[]>();
  const missing: Trigger[] = [];
  for (const trigger of triggers) {
    const key = siteTriggerKey(trigger.siteId, trigger.triggerKey, trigger.kind);
    const entry = kept.get(key);
    if (entry && entry.changes === changes && entry.until > now()) found.set(key, entry.flows);
    else missing.push(trigger);
  }
  if (missing.length === 0) return found;
  const read = await liveFlowsForTriggers(db, missing);
  // Kept only when no write to flows began or ended while this read was under way.
  const keep = tableChanges('flows') === changes;
  if (keep && kept.size >= MAX_KEPT) kept.clear();
  for (const [key, flows] of read) {
    found.set(key, flows);
    if (keep) kept.set(key, { flows, until: now() + LIVE_FLOWS_TTL_MS, changes });
  }
  return found;
}
