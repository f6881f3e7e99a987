/**
 * SQL of adjustments: one per (site, adjustment_id), written with one queued result per event action of the report it
 * adjusts, in one transaction; a repeat (or a concurrent copy, which waits on the unique index) writes nothing, and an
 * adjustment_id reused for another adjustment is refused. An erased adjustment (its adjustment_id maybe replaced by the
 * erasure) is found by the keyed hash it keeps; an erased conversion takes no new adjustment. A restatement dated
 * before the restatement its conversion stands at is recorded superseded, its results settled (supersededReason).
 * Adjustments are numbered (seq) in the order they arrived: drawn after the lock on the report's row, so in the order
 * they commit.
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
  /**
   * The keyed hashes under which an erased report keeps its customer_event_id and an erased adjustment its
   * adjustment_id (ErasedIdHash of src/server/api/erasures); absent: erased rows whose id was replaced are not found.
   */
  erasedIdHashes?: { customerEventId: string; adjustmentId: string };
}

/** What of an adjustment's body differs from the stored adjustment of its adjustment_id. */
export type AdjustmentField = 'customer_event_id' | 'type' | 'value' | 'currency';

/**
 * What became of it: the number of events it applies to (a repeat: the first one's); `unknown_report` when no report has
 * that customer_event_id; `erased_report` when that report's person was erased; `retracted_report` when a restatement
 * names a conversion already retracted (a retraction is final: see insertAdjustment); `reused` when the adjustment_id is
 * stored for another adjustment (`differs` says what differs). Nothing is written unless `inserted`.
 */
export type AdjustmentRecorded =
  | { ok: true; events: number; inserted: boolean }
  | { ok: false; reason: 'unknown_report' | 'erased_report' | 'retracted_report' }
  | { ok: false; reason: 'reused'; differs: AdjustmentField[] };

interface StoredAdjustment {
  events: number;
  type: string;
  value: string | number | null;
  currency: string | null;
  /** Whether its report is the one the new body names (by customer_event_id, or the keyed hash an erased one keeps). */
  same_report: boolean;
}

/**
 * The stored adjustment of the body's adjustment_id, or of an erased one that keeps its keyed hash (looked for only
 * when none has the id itself), with whether its report is the body's.
 */
async function storedAdjustment(tx: Queryable, adjustment: NewAdjustment): Promise<StoredAdjustment | null> {
  const hashes = adjustment.erasedIdHashes;
  const select = (where: string, id: string) =>
    tx.query<StoredAdjustment>(
      `select j.events, j.type, j.value, j.currency,
         (r.customer_event_id = $3 or ($4::text is not null and r.erased_id_hash = $4::text)) as same_report
       from adjustments j join reports r on r.id = j.report_id where j.site_id = $1 and ${where} limit 1`,
      [adjustment.siteId, id, adjustment.customerEventId, hashes?.customerEventId ?? null],
    );
  const [byId] = await select('j.adjustment_id = $2', adjustment.adjustmentId);
  if (byId || !hashes) return byId ?? null;
  const [erased] = await select('j.erased_id_hash = $2', hashes.adjustmentId);
  return erased ?? null;
}

/** A repeat: the first one's count when the body is the same, else what differs. */
function repeatOf(stored: StoredAdjustment, adjustment: NewAdjustment): AdjustmentRecorded {
  const differs: AdjustmentField[] = [];
  if (!stored.same_report) differs.push('customer_event_id');
  if (stored.type !== adjustment.type) differs.push('type');
  if ((stored.value === null ? null : Number(stored.value)) !== adjustment.value) differs.push('value');
  if ((stored.currency ?? null) !== adjustment.currency) differs.push('currency');
  return differs.length > 0 ? { ok: false, reason: 'reused', differs } : { ok: true, events: Number(stored.events), inserted: false };
}

/**
 * The reason of each result of a superseded restatement (`later`: the occurred_at of the restatement already recorded
 * that supersedes it, the one the conversion stands at). No caller id in it: the results outlive an erasure's renaming
 * of adjustment ids.
 */
export function supersededReason(later: Date): string {
  return (
    `Not sent: superseded. A restatement of this conversion dated later (${later.toISOString()}) was recorded before this ` +
    'one arrived, and the conversion stands at its value; a restatement dated earlier than the one its conversion stands at ' +
    "is never sent to any platform and does not count in the event's current value."
  );
}

/**
 * Records an adjustment and its results, in the caller's transaction; a repeat answers with the first one's count. A
 * restatement dated before the restatement its conversion stands at (the last to arrive of those not superseded) is
 * recorded superseded.
 */
export async function insertAdjustment(tx: Queryable, adjustment: NewAdjustment): Promise<AdjustmentRecorded> {
  const existing = await storedAdjustment(tx, adjustment);
  if (existing) return repeatOf(existing, adjustment);
  // Locked: a writer building its events (deferred-fanout.ts, another process on one PostgreSQL) commits them first.
  // Erased: it keeps the keyed hash of its customer_event_id (migration 25), or (erased before that) its events say so.
  const erasedTest = `(r.erased_id_hash is not null or exists (select 1 from events e where e.report_id = r.id and e.erased_at is not null))`;
  let [report] = await tx.query<{ id: string; erased: boolean }>(
    `select r.id, ${erasedTest} as erased from reports r where r.site_id = $1 and r.customer_event_id = $2 for update`,
    [adjustment.siteId, adjustment.customerEventId],
  );
  if (!report && adjustment.erasedIdHashes) {
    // Not found by its id: an erased report whose id was replaced, looked for only then.
    [report] = await tx.query<{ id: string; erased: boolean }>(
      'select r.id, true as erased from reports r where r.site_id = $1 and r.erased_id_hash = $2 limit 1',
      [adjustment.siteId, adjustment.erasedIdHashes.customerEventId],
    );
  }
  if (!report) return { ok: false, reason: 'unknown_report' };
  if (report.erased) return { ok: false, reason: 'erased_report' };
  if (adjustment.type === 'restate') {
    // A retraction is final: Google keeps a retracted conversion retracted (a restatement of it is refused,
    // CONVERSION_ALREADY_RETRACTED), and a restatement that arrives after a refund is most often an older change
    // delivered late (a billing system's webhooks come in any order). Recorded, it would revive the conversion: sent
    // at that value if it had not gone out yet, and shown at it as the event's current value.
    const [retracted] = await tx.query<{ id: string }>(`select id from adjustments where report_id = $1 and type = 'retract' limit 1`, [report.id]);
    if (retracted) return { ok: false, reason: 'retracted_report' };
  }
  // Superseded: a restatement dated before the one the conversion stands at (payment systems deliver their events out
  // of order). That is the last to arrive (seq) of the restatements not superseded, as every reader takes it
  // (standingAdjustment of api/events): the latest-dated one recorded, since each was dated at or after the one standing
  // when it came, except in a store that recorded restatements before migration 32 (all sent, in the order they
  // arrived), where it is the one the platforms kept. The report's row is locked above and seq is drawn by the insert
  // below, so of two concurrent restatements the second to take the lock sees the first and numbers itself after it.
  const [standing] =
    adjustment.type === 'restate'
      ? await tx.query<{ occurred_at: Date; later: boolean }>(
          `select occurred_at, occurred_at > $2 as later from adjustments where report_id = $1 and type = 'restate' and not superseded
           order by seq desc limit 1`,
          [report.id, adjustment.occurredAt],
        )
      : [];
  const later = standing?.later ? standing : undefined;
  const actions = await tx.query<{ id: string; destination: string; event_id: string }>(
    `select a.id, a.destination, a.event_id from events e join event_actions a on a.event_id = e.id
     where e.report_id = $1 order by e.sort_at, a.position`,
    [report.id],
  );
  const events = new Set(actions.map((a) => a.event_id)).size;
  const id = newId('adj');
  const inserted = await tx.query<{ id: string }>(
    `insert into adjustments (id, site_id, adjustment_id, report_id, type, value, currency, occurred_at, events, superseded)
     values ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)
     on conflict (site_id, adjustment_id) do nothing returning id`,
    [id, adjustment.siteId, adjustment.adjustmentId, report.id, adjustment.type, adjustment.value, adjustment.currency, adjustment.occurredAt, events, later !== undefined],
  );
  if (inserted.length === 0) {
    // A concurrent copy committed first (it held the unique index until then): answer as a repeat of it.
    return repeatOf((await storedAdjustment(tx, adjustment))!, adjustment);
  }
  if (actions.length > 0) {
    // A superseded restatement's results are settled at once (`adjusted`: nothing is left to do, the conversion already
    // stands at the later-dated value everywhere), with the reason; the others wait for delivery (`queued`).
    const status = later ? 'adjusted' : 'queued';
    const reason = later ? supersededReason(later.occurred_at) : null;
    await tx.query(
      `insert into adjustment_results (id, adjustment_id, event_action_id, destination, status, reason)
       select t.*, $5::text, $6::text from unnest($1::text[], $2::text[], $3::text[], $4::text[]) as t`,
      [actions.map(() => newId('adr')), actions.map(() => id), actions.map((a) => a.id), actions.map((a) => a.destination), status, reason],
    );
  }
  return { ok: true, events, inserted: true };
}
