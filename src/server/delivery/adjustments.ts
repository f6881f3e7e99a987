/**
 * Applying adjustments (restate, retract) of delivered conversions: claims due adjustment results (each queued behind
 * its original delivery), and per connection hands them to the platform's `adjustBatch`. A platform without one, an
 * original that failed or was never delivered: the result says so, nothing is sent.
 */
import {
  CredentialsUnreadable,
  OAuthClientRefused,
  ReauthorizationRequired,
  TokenUnavailable,
  adjustmentsUnsupported,
  CONSENT_DENIED_CODE,
  findConnectionsById,
  platformFor,
  sendContextFor,
  toConnection,
  type AdjustmentInput,
  type AdjustmentOutcome,
  type Connection,
  type DeliveryError,
  type DestinationPlatform,
} from '../destinations';
import { adjustmentClaimsStillHeld, claimAdjustments, loadAdjustmentRecords, recordAdjustmentResults, type AdjustmentRecord, type AdjustmentResultUpdate, type ClaimedAdjustment } from './adjustment-sql';
import { loadDeliveryRecords, type DeliveryRecord } from './sql';
import { REAUTHORIZATION_RECHECK_MS, RETRACTED_CODE, deliveryInput, markCredentialsUnreadable, retractedBeforeSendReason, type RoundDeps, type RoundResult } from './round';
import { decide } from './decision';
import { sendWithHealing, type Healed } from './token-healing';

interface Row {
  claim: ClaimedAdjustment;
  adjustment: AdjustmentRecord;
  record: DeliveryRecord;
}

function numeric(value: string | number | null): number | null {
  if (value === null) return null;
  const n = Number(value);
  return Number.isFinite(n) ? n : null;
}

function settled(row: Pick<Row, 'claim'>, status: 'adjusted' | 'unsupported' | 'failed', reason: string | null, request: Record<string, unknown> | null = null, attempts = row.claim.attempts): AdjustmentResultUpdate {
  return { claim: row.claim, status, reason, attempts, request, error: null };
}

/**
 * What the original delivery's state means for its adjustment, when it was not delivered. A conversion the visitor's
 * consent held back (`skipped`, consent_denied) holds back its adjustments too: `unsupported` with the same reason and
 * hint, as revenue.md says, never `failed` (the skip itself never makes anything failed). One retracted before it was
 * sent (`skipped`, retracted) is taken back already: `adjusted`.
 */
function notDelivered(row: Row, label: string): AdjustmentResultUpdate {
  const { action_status: status, action_error: error } = row.adjustment;
  if (status === 'skipped' && error?.code === CONSENT_DENIED_CODE && error.message) {
    return settled(row, 'unsupported', error.hint ? `${error.message} ${error.hint}` : error.message);
  }
  // Retracted before its first send (round.ts): a later retraction (a chargeback after the refund) asks for what
  // already holds, said as the retraction the send carried says it; nothing failed.
  if (status === 'skipped' && error?.code === RETRACTED_CODE) return settled(row, 'adjusted', retractedBeforeSendReason(label));
  const why = error?.message ? `: ${error.message}` : '';
  const reason =
    status === 'failed'
      ? `The conversion itself never reached ${label} (its delivery failed${why}), so there is nothing there to adjust.`
      : `The conversion was never delivered to ${label} (${status}${why}), so there is nothing there to adjust.`;
  return settled(row, 'failed', reason);
}

const SECOND_MS = 1000;

/**
 * The time an adjustment is sent with, to the whole second (Google formats adjustment times to the second): the
 * latest of its own occurred_at, one second after the conversion, and one second after the time the previous
 * adjustment of the same event action is sent with (`earlier`: those adjustments' occurred_at, in the order they apply,
 * this one's last; a superseded restatement, never sent, is no part of it). So an adjustment is never dated at or
 * before its conversion (Google: "Must be after the conversion_date_time", ADJUSTMENT_PRECEDES_CONVERSION; Microsoft:
 * "cannot be earlier than the original offline conversion date and time"), and each one is dated after the one sent
 * before it, in the order they arrived (a restatement dated before the one its conversion stands at is superseded and
 * never sent, so restatements go out in the order of their occurred_at, and a retraction, final, whatever its date):
 * Google ignores a second restatement that has no "new, more recent, adjustment occurrence time" (RestatementValue),
 * and refuses one older than the latest (MORE_RECENT_RESTATEMENT_FOUND). Computed from stored times alone, so a resend
 * carries the same time.
 */
export function adjustmentSendTime(conversionAt: Date, occurredAts: readonly Date[]): Date {
  let previous = Math.floor(conversionAt.getTime() / SECOND_MS) * SECOND_MS;
  for (const at of occurredAts) previous = Math.max(Math.floor(at.getTime() / SECOND_MS) * SECOND_MS, previous + SECOND_MS);
  return new Date(previous);
}

/** The adjustment as the platform gets it, at its send time (adjustmentSendTime). */
function adjustmentInput(row: Row): AdjustmentInput {
  const original = deliveryInput(row.record, row.record.click_ids);
  const earlier = row.adjustment.earlier_occurred_at.map((ms) => new Date(Number(ms)));
  const at = adjustmentSendTime(original.occurredAt, [...earlier, row.adjustment.occurred_at]);
  const value = numeric(row.adjustment.value);
  return {
    adjustmentResultId: row.claim.id,
    adjustmentId: row.adjustment.adjustment_id,
    type: row.adjustment.type,
    value,
    currency: value === null ? null : row.adjustment.currency,
    occurredAt: at,
    original,
    originalRequest: row.adjustment.action_request,
  };
}

/** The result after the platform's answer (`token_refused` never arrives here: healing turned it into a fate). */
function afterOutcome(row: Row, outcome: AdjustmentOutcome, deps: RoundDeps, at: Date): AdjustmentResultUpdate {
  const attempts = row.claim.attempts + 1;
  if (outcome.kind === 'adjusted') return settled(row, 'adjusted', null, outcome.request, attempts);
  if (outcome.kind === 'unsupported') return settled(row, 'unsupported', outcome.reason, outcome.request ?? null, row.claim.attempts);
  const decision = decide(outcome, attempts, deps.backoff, at, deps.random);
  if (decision.kind === 'retry') {
    return { claim: row.claim, status: 'queued', reason: decision.error.message, attempts, request: outcome.request ?? null, error: { ...decision.error, retrying: true }, dueAt: decision.dueAt };
  }
  if (decision.kind === 'failed') {
    const reason = decision.error.hint ? `${decision.error.message} ${decision.error.hint}` : decision.error.message;
    return { claim: row.claim, status: 'failed', reason, attempts, request: decision.request, error: { ...decision.error } };
  }
  return settled(row, 'adjusted', null, decision.request, attempts);
}

/**
 * A result that waits, queued and without counting an attempt, for its connection to be authorized again; `error`
 * says why when it is not a refused grant (credentials that do not open with the current key).
 */
function waitForReauthorization(row: Pick<Row, 'claim'>, label: string, at: Date, error?: DeliveryError): AdjustmentResultUpdate {
  return {
    claim: row.claim, status: 'queued', attempts: row.claim.attempts, request: null,
    error: error ? { ...error, retrying: true } : { code: 'reauthorization_required', message: `${label} refused cnv's authorization (it was revoked or expired).`, retrying: true },
    reason: error
      ? `Waiting for ${label} to be authorized again: ${error.message}${error.hint ? ` ${error.hint}` : ''} The adjustment is sent then.`
      : `Waiting for ${label} to be authorized again: open a new connect_destination handoff; the adjustment is sent then.`,
    dueAt: new Date(at.getTime() + REAUTHORIZATION_RECHECK_MS),
    waiting: 'waiting_for_reauthorization',
  };
}

/**
 * A result that waits, queued and without counting an attempt, for the service's own OAuth client of its platform to be
 * accepted again (an operator's setting): looked at again as a reauthorization wait is, and due when a worker starts.
 */
function waitForOAuthClient(row: Pick<Row, 'claim'>, at: Date, error: DeliveryError): AdjustmentResultUpdate {
  return {
    claim: row.claim, status: 'queued', attempts: row.claim.attempts, request: null,
    error: { ...error, retrying: true },
    reason: `Waiting for the service's OAuth client to work again: ${error.message}${error.hint ? ` ${error.hint}` : ''} The adjustment is sent then.`,
    dueAt: new Date(at.getTime() + REAUTHORIZATION_RECHECK_MS),
    waiting: 'waiting_for_oauth_client',
  };
}

/**
 * The fate of a result whose send threw: a refused refresh waits, and so does a refused OAuth client of the service; a
 * shutdown puts it back, anything else is retried.
 */
function afterThrow(row: Row, error: unknown, platform: DestinationPlatform, deps: RoundDeps, at: Date): AdjustmentResultUpdate {
  if (error instanceof ReauthorizationRequired) {
    return error.credentialsReplaced ? { ...interrupted(row, at), waiting: 'credentials_replaced' } : waitForReauthorization(row, platform.label, at);
  }
  if (error instanceof OAuthClientRefused) return waitForOAuthClient(row, at, error.error);
  if (deps.signal.aborted) return interrupted(row, at);
  const fault = error instanceof TokenUnavailable ? error.error : { code: 'adapter_error', message: `The ${platform.label} adapter failed: ${(error as Error).message}` };
  return afterOutcome(row, { kind: 'retry', error: fault }, deps, at);
}

/** Stopping: sent again by the next worker (the platforms name the same conversion and adjustment again). */
function interrupted(row: Row, at: Date): AdjustmentResultUpdate {
  return { claim: row.claim, status: 'queued', reason: null, attempts: row.claim.attempts, request: null, error: null, dueAt: at, waiting: 'interrupted' };
}

/** Sends one connection's adjustments with tokens that heal (token-healing.ts, as for conversions). */
async function sendGroup(platform: DestinationPlatform, rows: readonly Row[], deps: RoundDeps, connectionId: string): Promise<AdjustmentResultUpdate[]> {
  const connections = await findConnectionsById(deps.db, [connectionId]);
  const found = connections.get(connectionId);
  if (!found) return rows.map((row) => settled(row, 'failed', `${platform.label} is no longer connected, so the adjustment could not be sent.`));
  let connection: Connection;
  try {
    connection = toConnection(found, deps.box);
  } catch (error) {
    if (!(error instanceof CredentialsUnreadable)) throw error;
    // Sealed under another key: marked as for a refused grant; these wait, every other connection's go out.
    const { marked, reason } = await markCredentialsUnreadable(deps, found, platform);
    const at = deps.now();
    return rows.map((row) => (marked === 'replaced' ? { ...interrupted(row, at), waiting: 'credentials_replaced' as const } : waitForReauthorization(row, platform.label, at, reason)));
  }
  // Only results still held go out: an erasure that committed since the round read them took their leases (and marked
  // them failed). Theirs is written nowhere (the lease is gone): recorded as interrupted, fenced out.
  const stillHeld = await adjustmentClaimsStillHeld(deps.db, rows.map((r) => r.claim));
  const sending = rows.filter((r) => stillHeld.has(r.claim.id));
  const sent = new Map<string, AdjustmentResultUpdate>();
  if (sending.length > 0) {
    const ctx = sendContextFor(platform, connection, { ...deps, timeoutMs: deps.sendTimeoutMs });
    const stillHeldOf = async (refused: readonly Row[]) => {
      const held = await adjustmentClaimsStillHeld(deps.db, refused.map((r) => r.claim));
      return new Set(refused.filter((r) => held.has(r.claim.id)));
    };
    const healed = await sendWithHealing(platform, connection, sending, (batch) => platform.adjustBatch!(batch.map(adjustmentInput), ctx), deps, `${platform.type} adjustBatch`, stillHeldOf);
    sendingFates(platform, sending, healed, deps).forEach((update, i) => sent.set(sending[i]!.claim.id, update));
  }
  const at = deps.now();
  return rows.map((row) => sent.get(row.claim.id) ?? interrupted(row, at));
}

/** The fate of each result sent, from what its send came to. */
function sendingFates(
  platform: DestinationPlatform,
  rows: readonly Row[],
  healed: readonly Healed<AdjustmentOutcome>[],
  deps: RoundDeps,
): AdjustmentResultUpdate[] {
  return rows.map((row, i) => {
    const fate = healed[i]!;
    if (fate.kind === 'outcome') return afterOutcome(row, fate.outcome, deps, fate.at);
    if (fate.kind === 'thrown') return afterThrow(row, fate.error, platform, deps, fate.at);
    if (fate.kind === 'interrupted') return interrupted(row, fate.at);
    // Refused with credentials a reconnect replaced meanwhile: due at once, sent with the new ones.
    if (fate.kind === 'credentials_replaced') return { ...interrupted(row, fate.at), waiting: 'credentials_replaced' };
    return waitForReauthorization(row, platform.label, fate.at, fate.reason);
  });
}

/** Claims due adjustment results, applies them, records the outcomes; returns one result per claimed row. */
export async function runAdjustmentRound(deps: RoundDeps, options: { leaseMs: number; limit: number }): Promise<RoundResult[]> {
  const claims = await claimAdjustments(deps.db, { now: deps.now(), leaseMs: options.leaseMs, limit: options.limit });
  if (claims.length === 0) return [];
  const adjustments = await loadAdjustmentRecords(deps.db, claims.map((c) => c.id));
  const records = await loadDeliveryRecords(deps.db, [...adjustments.values()].map((a) => a.event_action_id));
  const updates: AdjustmentResultUpdate[] = [];
  const groups = new Map<string, { platform: DestinationPlatform; rows: Row[] }>();
  for (const claim of claims) {
    const adjustment = adjustments.get(claim.id);
    const record = adjustment ? records.get(adjustment.event_action_id) : undefined;
    if (!adjustment || !record) continue; // deleted meanwhile: the lease expires on a row that no longer exists
    const row: Row = { claim, adjustment, record };
    const platform = platformFor(record.destination);
    const label = platform?.label ?? record.destination;
    if (adjustment.action_status !== 'delivered') updates.push(notDelivered(row, label));
    else if (!platform?.adjustBatch) updates.push(settled(row, 'unsupported', platform ? adjustmentsUnsupported(platform) : `cnv does not deliver to '${record.destination}'.`));
    else if (!record.destination_id) updates.push(settled(row, 'failed', `${platform.label} is no longer connected, so the adjustment could not be sent.`));
    else if (record.destination_status === 'reauthorization_required') updates.push(waitForReauthorization(row, platform.label, deps.now()));
    else {
      const group = groups.get(record.destination_id) ?? { platform, rows: [] };
      group.rows.push(row);
      groups.set(record.destination_id, group);
    }
  }
  for (const [connectionId, { platform, rows }] of groups) {
    for (let i = 0; i < rows.length; i += platform.maxBatchSize) {
      updates.push(...(await sendGroup(platform, rows.slice(i, i + platform.maxBatchSize), deps, connectionId)));
    }
  }
  const at = deps.now();
  const written = await deps.db.transaction((tx) => recordAdjustmentResults(tx, updates, at));
  for (const u of updates) {
    if (written.has(u.claim.id) && u.status === 'failed') deps.log.warn({ adjustmentResultId: u.claim.id }, 'adjustment failed');
  }
  return updates.map((u) => ({
    eventActionId: adjustments.get(u.claim.id)!.event_action_id,
    result: !written.has(u.claim.id) ? 'lease_lost' : u.status === 'queued' ? (u.waiting ?? 'retrying') : u.status === 'adjusted' ? 'adjusted' : u.status === 'unsupported' ? 'unsupported' : 'failed',
  }));
}
