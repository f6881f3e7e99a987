/**
 * SQL of adjustments: one per (site, adjustment_id), written with one queued result per event action of the report it
 * adjusts, in one transaction; a repeat (or a concurrent copy, which waits on the unique index) writes nothing.
 */
import type { Queryable } from '../db/db';
import { newId } from '../db/ids';
import type { AdjustmentType } from '../../protocol/webhook';

/** An adjustment to record. */
export interface NewAdjustment {
  siteId: string;
  adjustmentId: string;
  customerEventId: string;
  type: AdjustmentType;
  value: number | null;
  currency: string | null;
  occurredAt: Date;
}

/** What became of it: the number of events it applies to, or `unknown_report` when no report has that customer_event_id. */
export type AdjustmentRecorded = { ok: true; events: number; inserted: boolean } | { ok: false; reason: 'unknown_report' };

/** Records an adjustment and its results, in the caller's transaction; a repeat answers with the first one's count. */
export async function insertAdjustment(tx: Queryable, adjustment: NewAdjustment): Promise<AdjustmentRecorded> {
  const existing = await tx.query<{ events: number }>('select events from adjustments where site_id = $1 and adjustment_id = $2', [
    adjustment.siteId,
    adjustment.adjustmentId,
  ]);
  if (existing[0]) return { ok: true, events: Number(existing[0].events), inserted: false };
  // Locked: a writer building its events (deferred-fanout.ts, another process on one PostgreSQL) commits them first.
  const [report] = await tx.query<{ id: string }>('select id from reports where site_id = $1 and customer_event_id = $2 for update', [
    adjustment.siteId,
    adjustment.customerEventId,
  ]);
  if (!report) return { ok: false, reason: 'unknown_report' };
  const actions = await tx.query<{ id: string; destination: string; event_id: string }>(
    `select a.id, a.destination, a.event_id from events e join event_actions a on a.event_id = e.id
     where e.report_id = $1 order by e.sort_at, a.position`,
    [report.id],
  );
  const events = new Set(actions.map((a) => a.event_id)).size;
  const id = newId('adj');
  const inserted = await tx.query<{ id: string }>(
    `insert into adjustments (id, site_id, adjustment_id, report_id, type, value, currency, occurred_at, events)
     values ($1, $2, $3, $4, $5, $6, $7, $8, $9)
     on conflict (site_id, adjustment_id) do nothing returning id`,
    [id, adjustment.siteId, adjustment.adjustmentId, report.id, adjustment.type, adjustment.value, adjustment.currency, adjustment.occurredAt, events],
  );
  if (inserted.length === 0) {
    // A concurrent copy committed first (it held the unique index until then): answer with its count.
    const [first] = await tx.query<{ events: number }>('select events from adjustments where site_id = $1 and adjustment_id = $2', [
      adjustment.siteId,
      adjustment.adjustmentId,
    ]);
    return { ok: true, events: Number(first!.events), inserted: false };
  }
  if (actions.length > 0) {
    await tx.query(
      `insert into adjustment_results (id, adjustment_id, event_action_id, destination)
       select * from unnest($1::text[], $2::text[], $3::text[], $4::text[])`,
      [actions.map(() => newId('adr')), actions.map(() => id), actions.map((a) => a.id), actions.map((a) => a.destination)],
    );
  }
  return { ok: true, events, inserted: true };
}
