/**
 * One worker round over a batch of claimed outbox rows: load what they need in one read, settle late pairings, send
 * each destination's rows through its adapter in one call, then record every outcome and release (or reschedule) every
 * row in one transaction, each write fenced by its claim's lease.
 */
import type { Database } from '../db/db';
import type { Settings } from '../settings';
import { completeDeliveries, rescheduleDeliveries, type ClaimedDelivery, type Reschedule } from './outbox-sql';
import { loadDeliveryRecords, recordActionResults, refreshEventStatuses, type ActionResult, type DeliveryRecord } from './sql';
import { settlePairing, type Settlement } from '../pairing';
import type { DeliveryInput, DeliveryOutcome } from '../destinations/adapter';
import { adapterFor } from '../destinations/adapters';
import { decide } from './decision';
import type { BackoffPolicy } from './backoff';

/** While a report waits for its snapshot, look again at least this often (a stored snapshot also makes the row due). */
export const PAIRING_RECHECK_MS = 1000;

/** A pino-like logger (console works too). */
export interface DeliveryLogger {
  info(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
  error(obj: object, msg?: string): void;
}

export interface RoundDeps {
  db: Database;
  settings: Settings;
  log: DeliveryLogger;
  now(): Date;
  backoff: BackoffPolicy;
  random(): number;
  sendTimeoutMs: number;
  /** Aborted when the worker stops: interrupted sends put their rows back without counting an attempt. */
  signal: AbortSignal;
}

/** What became of a claimed row. */
export type JobResult =
  | 'delivered' | 'failed' | 'retrying' | 'waiting_for_snapshot' | 'interrupted' | 'lease_lost' | 'gone'
  /** The round hit a database fault: the row's lease expires and it is claimed again. */
  | 'error';

export interface RoundResult {
  eventActionId: string;
  result: JobResult;
}

interface Sending {
  claim: ClaimedDelivery;
  record: DeliveryRecord;
  input: DeliveryInput;
  outcome?: DeliveryOutcome;
}

function deliveryInput(record: DeliveryRecord, clickIds: Record<string, string> | null): DeliveryInput {
  return {
    eventId: record.event_id,
    eventActionId: record.action_id,
    destination: record.destination,
    conversionId: record.conversion_id,
    occurredAt: record.occurred_at,
    siteKey: record.site_key,
    siteTimezone: record.site_timezone,
    customerEventId: record.customer_event_id,
    clickIds: clickIds ?? {},
    // Browser-only events have no report; the event's (already lower-cased) email is all the identity they have.
    identity: record.identity ?? { email: record.event_email },
    destinationSettings: record.destination_settings,
  };
}

/** Sends every row of one destination type through its adapter, one call for all of them. */
async function sendThrough(type: string, rows: Sending[], deps: RoundDeps): Promise<void> {
  const adapter = adapterFor(type);
  if (!adapter) {
    for (const row of rows) row.outcome = { kind: 'failed', error: { code: 'destination_unsupported', message: `No adapter delivers to '${type}'.` } };
    return;
  }
  try {
    const outcomes = await adapter.send(
      rows.map((r) => r.input),
      { settings: deps.settings, signal: deps.signal, timeoutMs: deps.sendTimeoutMs, now: deps.now },
    );
    if (outcomes.length !== rows.length) throw new Error(`adapter ${type} returned ${outcomes.length} outcomes for ${rows.length} inputs`);
    rows.forEach((row, i) => (row.outcome = outcomes[i]));
  } catch (error) {
    // An adapter bug must not wedge rows: transient, so they are retried and finally failed with the message.
    for (const row of rows) row.outcome = { kind: 'retry', error: { code: 'adapter_error', message: (error as Error).message } };
  }
}

/** Runs one round over claimed rows. Delivery faults become recorded outcomes; a database fault throws (leases expire). */
export async function runDeliveryRound(claims: readonly ClaimedDelivery[], deps: RoundDeps): Promise<RoundResult[]> {
  if (claims.length === 0) return [];
  const { db, log } = deps;
  const records = await loadDeliveryRecords(db, claims.map((c) => c.eventActionId));
  const results = new Map<number, JobResult>();
  const finished: ClaimedDelivery[] = [];
  const reschedules: Reschedule[] = [];
  const sending: Sending[] = [];
  const now = deps.now();
  const settlements = new Map<string, Promise<Settlement>>();

  for (const claim of claims) {
    const record = records.get(claim.eventActionId);
    if (!record || record.action_status === 'delivered' || record.action_status === 'failed') {
      if (!record) log.warn({ outboxId: claim.id, eventActionId: claim.eventActionId }, 'outbox row without an event action: dropped');
      finished.push(claim);
      results.set(claim.id, 'gone');
      continue;
    }
    // Once per event, however many of its actions are in this round.
    let settlement = settlements.get(record.event_id);
    if (!settlement) {
      settlement = settlePairing(
        db,
        { id: record.event_id, site_id: record.site_id, match_quality: record.match_quality, data: record.data, created_at: record.event_created_at },
        now,
      );
      settlements.set(record.event_id, settlement);
    }
    const settled = await settlement;
    if (!settled.ready) {
      const dueAt = new Date(Math.min(now.getTime() + PAIRING_RECHECK_MS, settled.retryAt.getTime()));
      reschedules.push({ claim, dueAt, countAttempt: false });
      results.set(claim.id, 'waiting_for_snapshot');
      continue;
    }
    const clickIds = settled.match ? settled.match.clickIds : record.click_ids;
    sending.push({ claim, record, input: deliveryInput(record, clickIds) });
  }

  const byType = new Map<string, Sending[]>();
  for (const row of sending) byType.set(row.record.destination, [...(byType.get(row.record.destination) ?? []), row]);
  await Promise.all([...byType].map(([type, rows]) => sendThrough(type, rows, deps)));

  const actionResults: ActionResult[] = [];
  const at = deps.now();
  if (deps.signal.aborted) {
    // Stopping: we cannot know whether the destination got them; the next worker resends with the same order ids.
    for (const row of sending) {
      reschedules.push({ claim: row.claim, dueAt: at, countAttempt: false });
      results.set(row.claim.id, 'interrupted');
    }
  } else {
    for (const row of sending) {
      const attempts = row.claim.attempts + 1;
      const decision = decide(row.outcome!, attempts, deps.backoff, at, deps.random);
      if (decision.kind === 'retry') {
        reschedules.push({ claim: row.claim, dueAt: decision.dueAt, countAttempt: true, lastError: `${decision.error.code}: ${decision.error.message}` });
        actionResults.push({ actionId: row.record.action_id, status: 'queued', attempts, error: { ...decision.error, retrying: true }, request: null });
        results.set(row.claim.id, 'retrying');
      } else {
        finished.push(row.claim);
        actionResults.push(
          decision.kind === 'delivered'
            ? { actionId: row.record.action_id, status: 'delivered', attempts, error: null, request: decision.request }
            : { actionId: row.record.action_id, status: 'failed', attempts, error: decision.error, request: decision.request },
        );
        results.set(row.claim.id, decision.kind);
      }
    }
  }

  const held = await db.transaction(async (tx) => {
    const kept = new Set([...(await completeDeliveries(tx, finished)), ...(await rescheduleDeliveries(tx, reschedules))]);
    // Only rows this worker still held get their outcome written: a lost lease means another worker owns the row now.
    const byAction = new Map(sending.map((row) => [row.record.action_id, row]));
    const mine = actionResults.filter((r) => kept.has(byAction.get(r.actionId)!.claim.id));
    await recordActionResults(tx, mine, at);
    await refreshEventStatuses(tx, mine.map((r) => byAction.get(r.actionId)!.record.event_id));
    return kept;
  });

  const out: RoundResult[] = [];
  let deliveredCount = 0;
  for (const claim of claims) {
    let result = results.get(claim.id)!;
    if (!held.has(claim.id)) result = 'lease_lost';
    out.push({ eventActionId: claim.eventActionId, result });
    const row = sending.find((r) => r.claim.id === claim.id);
    const context = { eventActionId: claim.eventActionId, eventId: row?.record.event_id, destination: row?.record.destination, attempts: claim.attempts + 1 };
    if (result === 'delivered') deliveredCount++;
    else if (result === 'lease_lost') log.warn(context, 'delivery lease lost to another worker: its outcome is theirs to record');
    else if (result === 'failed' || result === 'retrying') {
      const error = row?.outcome && row.outcome.kind !== 'delivered' ? row.outcome.error : undefined;
      log.warn({ ...context, error }, result === 'failed' ? 'delivery failed' : 'delivery will be retried');
    }
  }
  if (deliveredCount > 0) log.info({ delivered: deliveredCount }, 'conversions delivered');
  return out;
}
