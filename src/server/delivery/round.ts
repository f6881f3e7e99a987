/**
 * One worker round over a batch of claimed outbox rows. Preparing it loads what the rows need in one read, settles late
 * pairings and sorts the rows: those that cannot be sent now are recorded at once, the others are cut into batches per
 * connection (one destination account). Each batch is a separate send whose outcomes are recorded in their own
 * transaction as soon as it ends, so one slow or hanging account never holds back another's conversions.
 */
import type { Database } from '../db/db';
import type { SecretBox } from '../db/secret-box';
import type { Settings } from '../settings';
import { OAUTH_CLIENT_WAIT, REAUTHORIZATION_WAIT, claimsStillHeld, recordOutcomes, type ClaimedDelivery, type Reschedule } from './outbox-sql';
import { SETTLED_ACTION_STATUSES, loadDeliveryRecords, lockEvents, type ActionResult, type DeliveryRecord } from './sql';
import { settleFoldedAdjustments } from './adjustment-sql';
import { settlePairing, type Settlement } from '../pairing';
import {
  AccessTokens,
  CredentialsUnreadable,
  OAuthClientRefused,
  ReauthorizationRequired,
  TokenUnavailable,
  findConnectionsById,
  platformFor,
  sendContextFor,
  toConnection,
  type Connection,
  type DeliveryError,
  type DeliveryInput,
  type DeliveryOutcome,
  type DestinationPlatform,
  type EventTrigger,
  type SendContext,
} from '../destinations';
import { decide } from './decision';
import { sendWithHealing } from './token-healing';
import { enqueueNotification, type NotificationData } from '../notifications';
import type { BackoffPolicy } from './backoff';

/** While a report waits for its snapshot, look again at least this often (a stored snapshot also makes the row due). */
export const PAIRING_RECHECK_MS = 1000;
/** While a connection waits for a new authorization, look again this often (a new handoff makes its rows due at once). */
export const REAUTHORIZATION_RECHECK_MS = 10 * 60_000;

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
  /** Decrypts connection credentials. */
  box: SecretBox;
  /** OAuth access tokens per connection. */
  tokens: AccessTokens;
  /**
   * Most rows whose outcomes one transaction writes (default: all of a batch in one). On the embedded store, whose one
   * connection a transaction holds from BEGIN to COMMIT, a round's 100 outcomes in one transaction held it for 60 to
   * 100 ms under the webhook load, and every report waiting for it took that much longer; in transactions of 20 rows, the
   * reports that queued meanwhile are written between them (see WORKER_DEFAULTS).
   */
  outcomesPerTransaction?: number;
}

/** What became of a claimed row. */
export type JobResult =
  /** An adjustment reached the platform, or the platform has no such operation (said in its result). */
  | 'adjusted' | 'unsupported'
  | 'delivered' | 'failed' | 'skipped' | 'retrying' | 'waiting_for_snapshot' | 'waiting_for_reauthorization' | 'interrupted' | 'lease_lost' | 'gone'
  /** Refused with credentials a reconnect replaced meanwhile: due again at once, sent with the new ones (no attempt counted). */
  | 'credentials_replaced'
  /**
   * The platform's token endpoint refused the service's own OAuth client (an operator's setting): waits, no attempt
   * counted, looked at again every REAUTHORIZATION_RECHECK_MS and at the next start.
   */
  | 'waiting_for_oauth_client'
  /** The round hit a database fault: the row's lease expires and it is claimed again. */
  | 'error';

export interface RoundResult {
  eventActionId: string;
  result: JobResult;
}

interface Row {
  claim: ClaimedDelivery;
  record: DeliveryRecord;
}

/** A row going out: with the input its platform gets. */
interface SendRow extends Row {
  input: DeliveryInput;
}

/** A row's fate, to be written: finish it (with an action result) or reschedule it. */
interface Settled {
  claim: ClaimedDelivery;
  eventId: string | null;
  result: JobResult;
  finish: boolean;
  reschedule?: Omit<Reschedule, 'claim'>;
  action?: ActionResult;
  /** A failure for good, told to the account's endpoints (`event.failed`) in the transaction that records it. */
  failure?: { accountId: string; data: NotificationData };
  /** The report's adjustments this send carried (see foldedAdjustments): settled with it once it is delivered. */
  folded?: Folded;
  /** A row that waits for a new authorization: its destination type (the round's log names it once, see logOutcomes). */
  waitingFor?: string;
}

/** Adjustments a first send folded in, and what their results say once it is delivered (or skipped as retracted). */
interface Folded {
  ids: readonly string[];
  reason: string;
  /** Settled only with this action status: `delivered` (a restated value sent), `skipped` (retracted, nothing sent). */
  when: 'delivered' | 'skipped';
}

/** A batch for one connection, ready to send. */
export interface ConnectionBatch {
  /** The connection id: batches of one connection run one after another. */
  lane: string;
  run(): Promise<RoundResult[]>;
}

export interface PreparedRound {
  /** Rows settled without a send (gone, waiting, not connected), already recorded. */
  settled: RoundResult[];
  batches: ConnectionBatch[];
}

function triggerOf(record: DeliveryRecord): EventTrigger {
  if (record.trigger === 'form_submission') return 'form_submission';
  return record.data.trigger_type === 'conversion' ? 'conversion' : 'saas_signup';
}

/** A numeric column as a number (the drivers return numeric as text); null when absent. */
function numericOf(value: string | number | null): number | null {
  if (value === null) return null;
  const number = typeof value === 'number' ? value : Number(value);
  return Number.isFinite(number) ? number : null;
}

/** The input a platform gets for one event action (also the `original` of its adjustments). */
export function deliveryInput(record: DeliveryRecord, clickIds: Record<string, string> | null): DeliveryInput {
  const capturedAt = record.snapshot_touch?.captured_at ? new Date(record.snapshot_touch.captured_at) : null;
  const consent = record.snapshot_consent;
  const signal = (value: unknown) => (value === 'granted' || value === 'denied' ? value : null);
  return {
    eventId: record.event_id,
    eventActionId: record.action_id,
    destination: record.destination,
    actionConfig: record.action_config ?? {},
    trigger: triggerOf(record),
    occurredAt: record.occurred_at,
    siteKey: record.site_key,
    siteTimezone: record.site_timezone,
    customerEventId: record.customer_event_id,
    clickIds: clickIds ?? {},
    touchCapturedAt: capturedAt && !Number.isNaN(capturedAt.getTime()) ? capturedAt : null,
    cookies: record.snapshot_cookies ?? {},
    pageUrl: record.snapshot_page_url,
    userAgent: record.snapshot_user_agent,
    ipAddress: record.snapshot_ip_address,
    consent: { ad_user_data: signal(consent?.ad_user_data), ad_personalization: signal(consent?.ad_personalization) },
    // Browser-only events have no report; the event's (already lower-cased) email is all the identity they have.
    identity: record.identity ?? { email: record.event_email },
    ...valueOf(record),
  };
}

/** The event's value with its currency (both or neither) and its customer id. */
export function valueOf(record: Pick<DeliveryRecord, 'value' | 'currency' | 'customer_id'>): Pick<DeliveryInput, 'value' | 'currency' | 'customerId'> {
  const value = numericOf(record.value);
  return { value: value !== null && record.currency ? value : null, currency: value !== null && record.currency ? record.currency : null, customerId: record.customer_id };
}

/**
 * The input of a send, with the report's latest restatement folded in: a conversion adjusted before it first went out
 * (still waiting for its snapshot, a connection to reauthorize, a failure sent again) goes out at its current value,
 * so a platform without an adjustment operation gets the right number too. (A retracted one is never sent.)
 */
export function sendInput(record: DeliveryRecord, clickIds: Record<string, string> | null): DeliveryInput {
  const input = deliveryInput(record, clickIds);
  const latest = record.latest_adjustment;
  if (latest?.type !== 'restate') return input;
  const value = numericOf(latest.value);
  return value !== null && latest.currency ? { ...input, value, currency: latest.currency } : input;
}

/** The error code of an action skipped because its conversion was retracted before its first send. */
export const RETRACTED_CODE = 'retracted';

/** The reason of an adjustment of a conversion retracted before its first send. */
export function retractedBeforeSendReason(label: string): string {
  return `The conversion was retracted before it was sent, so ${label} never received it.`;
}

/** What a send of `record` folds in of its report's adjustments, or undefined when it has none. */
function foldedAdjustments(record: DeliveryRecord, label: string): Folded | undefined {
  if (record.adjustment_ids.length === 0) return undefined;
  return record.latest_adjustment?.type === 'retract'
    ? { ids: record.adjustment_ids, when: 'skipped', reason: retractedBeforeSendReason(label) }
    : {
        ids: record.adjustment_ids,
        when: 'delivered',
        reason: `Applied before the conversion was first sent: ${label} received it as adjusted, so nothing more was sent.`,
      };
}

/** A row whose report was retracted before its first send: skipped, nothing sent (no attempt counted). */
function retractedBeforeSend(row: Row, platform: DestinationPlatform): Settled {
  return {
    claim: row.claim,
    eventId: row.record.event_id,
    result: 'skipped',
    finish: true,
    action: {
      actionId: row.record.action_id,
      status: 'skipped',
      attempts: row.claim.attempts,
      error: { code: RETRACTED_CODE, message: `Not sent: the conversion was retracted (an adjustment) before it went out to ${platform.label}.` },
      request: null,
    },
    folded: foldedAdjustments(row.record, platform.label),
  };
}

/**
 * Writes rows' fates, each fenced by its claim's lease, with their events' statuses; returns the claim ids still held.
 * A transaction of two statements (the events locked, then the outcomes) per `outcomesPerTransaction` rows. Each
 * event's status is computed from all its actions in the transaction that writes one of them, so an event whose
 * actions fall in two transactions ends with the status of all of them.
 */
async function write(deps: Pick<RoundDeps, 'db' | 'outcomesPerTransaction'>, rows: readonly Settled[], at: Date): Promise<Set<number>> {
  const size = Math.max(1, deps.outcomesPerTransaction ?? rows.length);
  const held = new Set<number>();
  for (let i = 0; i < rows.length; i += size) {
    for (const id of await writeTogether(deps.db, rows.slice(i, i + size), at)) held.add(id);
  }
  return held;
}

/** Writes rows' fates in one transaction (see write); `rows` is never empty. */
async function writeTogether(db: Database, rows: readonly Settled[], at: Date): Promise<Set<number>> {
  return db.transaction(async (tx) => {
    // Every event whose status this round may change (a row whose lease was lost is locked too, which is harmless).
    await lockEvents(tx, rows.flatMap((r) => (r.action && r.eventId ? [r.eventId] : [])));
    const kept = await recordOutcomes(
      tx,
      rows.map((r) => ({
        claim: r.claim,
        finish: r.finish,
        reschedule: r.reschedule ?? null,
        action: r.action ?? null,
        // A send counts an attempt; a wait (for a snapshot, for a new authorization) records none.
        countsAttempt: r.action ? r.action.attempts > r.claim.attempts : false,
      })),
      at,
    );
    for (const row of rows) {
      if (row.action && row.failure && kept.has(row.claim.id)) await enqueueNotification(tx, row.failure.accountId, 'event.failed', row.failure.data, at);
    }
    const folded = rows.flatMap((r) =>
      r.folded && r.action && r.action.status === r.folded.when && kept.has(r.claim.id)
        ? r.folded.ids.map((adjustmentId) => ({ eventActionId: r.action!.actionId, adjustmentId, reason: r.folded!.reason }))
        : [],
    );
    await settleFoldedAdjustments(tx, folded, at);
    return kept;
  });
}

function results(rows: readonly Settled[], held: Set<number>): RoundResult[] {
  return rows.map((r) => ({ eventActionId: r.claim.eventActionId, result: held.has(r.claim.id) ? r.result : 'lease_lost' }));
}

/** The fate of a row after a send's outcome. */
function afterSend(row: Row, outcome: DeliveryOutcome, deps: RoundDeps, at: Date): Settled {
  const attempts = row.claim.attempts + 1;
  const base = { claim: row.claim, eventId: row.record.event_id };
  const decision = decide(outcome, attempts, deps.backoff, at, deps.random);
  if (decision.kind === 'retry') {
    return {
      ...base,
      result: 'retrying',
      finish: false,
      reschedule: { dueAt: decision.dueAt, countAttempt: true, lastError: `${decision.error.code}: ${decision.error.message}` },
      action: { actionId: row.record.action_id, status: 'queued', attempts, error: { ...decision.error, retrying: true }, request: outcome.request ?? null },
    };
  }
  if (decision.kind === 'skipped') {
    // Nothing was sent: no attempt counted; the reason is kept as the action's error.
    return {
      ...base,
      result: 'skipped',
      finish: true,
      action: { actionId: row.record.action_id, status: 'skipped', attempts: row.claim.attempts, error: decision.reason, request: decision.request },
    };
  }
  const record = row.record;
  return {
    ...base,
    result: decision.kind,
    finish: true,
    ...(decision.kind === 'failed'
      ? {
          failure: {
            accountId: record.account_id,
            data: {
              site_id: record.site_id,
              event_id: record.event_id,
              destination: { id: record.destination_id, type: record.destination },
              reason: decision.error.hint ? `${decision.error.message} ${decision.error.hint}` : decision.error.message,
            },
          },
        }
      : {}),
    action:
      decision.kind === 'delivered'
        ? { actionId: row.record.action_id, status: 'delivered', attempts, error: null, request: decision.request }
        : { actionId: row.record.action_id, status: 'failed', attempts, error: decision.error, request: decision.request },
  };
}

/**
 * A row that waits (not counted as an attempt) for its connection to be authorized again; `error` says why when it is
 * not a refused grant (credentials that do not open with the current key).
 */
function waitForReauthorization(row: Row, platform: DestinationPlatform, at: Date, error?: DeliveryError): Settled {
  return {
    claim: row.claim,
    eventId: row.record.event_id,
    result: 'waiting_for_reauthorization',
    finish: false,
    waitingFor: row.record.destination,
    reschedule: { dueAt: new Date(at.getTime() + REAUTHORIZATION_RECHECK_MS), countAttempt: false, lastError: REAUTHORIZATION_WAIT },
    action: {
      actionId: row.record.action_id,
      status: 'queued',
      attempts: row.claim.attempts,
      error: error
        ? { ...error, message: `${error.message} This conversion waits; it is sent once the connection is authorized again.`, retrying: true }
        : {
            code: 'reauthorization_required',
            message: `${platform.label} refused cnv's authorization (it was revoked or expired). This conversion waits; it is sent once the connection is authorized again.`,
            hint: `Connect ${platform.label} again: Reconnect on the dashboard's Destinations page (or a connect_destination handoff for ${platform.type} through the API).`,
            retrying: true,
          },
      request: null,
    },
  };
}

/**
 * A row that waits (not counted as an attempt) for the service's own OAuth client of its platform to be accepted again:
 * looked at again as often as a reauthorization wait, and due at once when a worker starts (resumeOAuthClientWaits).
 * The connection is not marked: reconnecting cannot fix the operator's client. `error` names the settings to fix.
 */
function waitForOAuthClient(row: Row, at: Date, error: DeliveryError): Settled {
  return {
    claim: row.claim,
    eventId: row.record.event_id,
    result: 'waiting_for_oauth_client',
    finish: false,
    reschedule: { dueAt: new Date(at.getTime() + REAUTHORIZATION_RECHECK_MS), countAttempt: false, lastError: OAUTH_CLIENT_WAIT },
    action: {
      actionId: row.record.action_id,
      status: 'queued',
      attempts: row.claim.attempts,
      error: { ...error, message: `${error.message} This conversion waits; it is sent once the service's OAuth client works again.`, retrying: true },
      request: null,
    },
  };
}

/**
 * Sends one connection's batch and records its outcomes. Only rows still held go out: the round read them (their
 * identity, their click) when it started, and an erasure that committed since (or another worker, after the lease ran
 * out) took them; those are results `lease_lost`, nothing sent, nothing written.
 */
async function sendBatch(platform: DestinationPlatform, connection: Connection, rows: readonly SendRow[], deps: RoundDeps): Promise<RoundResult[]> {
  const stillHeld = await claimsStillHeld(deps.db, rows.map((r) => r.claim));
  const taken = rows.filter((r) => !stillHeld.has(r.claim.id));
  for (const row of taken) {
    deps.log.warn({ eventActionId: row.claim.eventActionId, eventId: row.record.event_id, destination: platform.type }, 'delivery lease lost before the send (another worker took the row, or an erasure removed it): not sent');
  }
  const sending = rows.filter((r) => stillHeld.has(r.claim.id));
  const sent = new Map<number, RoundResult>();
  if (sending.length > 0) {
    const ctx = sendContextFor(platform, connection, { ...deps, timeoutMs: deps.sendTimeoutMs });
    const settled = await sendHealing(platform, connection, sending, ctx, deps);
    const at = deps.now();
    const held = await write(deps, settled, at);
    logOutcomes(deps.log, platform.type, settled, held);
    results(settled, held).forEach((result, i) => sent.set(sending[i]!.claim.id, result));
  }
  return rows.map((r) => sent.get(r.claim.id) ?? { eventActionId: r.claim.eventActionId, result: 'lease_lost' });
}

/**
 * The fate of rows whose send threw: a refused refresh waits (unless a reconnect replaced the refused credentials: due
 * at once), and so does a refused OAuth client of the service; a shutdown puts them back, anything else is retried.
 */
function afterThrow(error: unknown, platform: DestinationPlatform, rows: readonly Row[], deps: RoundDeps, at: Date): Settled[] {
  if (error instanceof ReauthorizationRequired) {
    return rows.map((r) => (error.credentialsReplaced ? sendAgainWithNewCredentials(r, at) : waitForReauthorization(r, platform, at)));
  }
  if (error instanceof OAuthClientRefused) return rows.map((r) => waitForOAuthClient(r, at, error.error));
  if (deps.signal.aborted) return rows.map((r) => interrupted(r, at));
  const fault =
    error instanceof TokenUnavailable ? error.error : { code: 'adapter_error', message: `The ${platform.label} adapter failed: ${(error as Error).message}` };
  // Transient: retried with backoff, and finally failed with the message.
  return rows.map((r) => afterSend(r, { kind: 'retry', error: fault }, deps, at));
}

/** Sends the rows with tokens that heal (token-healing.ts), and decides each row's fate. */
async function sendHealing(platform: DestinationPlatform, connection: Connection, rows: readonly SendRow[], ctx: SendContext, deps: RoundDeps): Promise<Settled[]> {
  const stillHeld = async (sent: readonly SendRow[]) => {
    const held = await claimsStillHeld(deps.db, sent.map((r) => r.claim));
    return new Set(sent.filter((r) => held.has(r.claim.id)));
  };
  const healed = await sendWithHealing(platform, connection, rows, (batch) => platform.sendBatch(batch.map((r) => r.input), ctx), deps, `${platform.type} sendBatch`, stillHeld);
  return rows.map((row, i) => {
    const fate = healed[i]!;
    if (fate.kind === 'outcome') return { ...afterSend(row, fate.outcome, deps, fate.at), folded: foldedAdjustments(row.record, platform.label) };
    if (fate.kind === 'thrown') return afterThrow(fate.error, platform, [row], deps, fate.at)[0]!;
    if (fate.kind === 'interrupted') return interrupted(row, fate.at);
    if (fate.kind === 'credentials_replaced') return sendAgainWithNewCredentials(row, fate.at);
    return waitForReauthorization(row, platform, fate.at, fate.reason);
  });
}

/** A reconnect replaced the credentials the platform refused: due at once, loaded afresh with the new ones. */
function sendAgainWithNewCredentials(row: Row, at: Date): Settled {
  return { claim: row.claim, eventId: null, result: 'credentials_replaced', finish: false, reschedule: { dueAt: at, countAttempt: false } };
}

/** Stopping: we cannot know whether the platform got them; the next worker resends with the same dedup ids. */
function interrupted(row: Row, at: Date): Settled {
  return { claim: row.claim, eventId: null, result: 'interrupted', finish: false, reschedule: { dueAt: at, countAttempt: false } };
}

/**
 * Logs what became of rows (destination null for rows settled before any send, of any destination). Rows that wait
 * for a new authorization are looked at again every 10 minutes for as long as their destination waits (days, when
 * nobody reconnects it): they are said in one line per call, with how many and for which destinations, never one line
 * per conversion and round.
 */
function logOutcomes(log: DeliveryLogger, destination: string | null, rows: readonly Settled[], held: Set<number>): void {
  let delivered = 0;
  let waiting = 0;
  const waitingFor = new Set<string>();
  for (const row of rows) {
    const context = { eventActionId: row.claim.eventActionId, eventId: row.eventId, ...(destination ? { destination } : {}), attempts: row.claim.attempts + 1 };
    if (!held.has(row.claim.id)) log.warn(context, 'delivery lease lost (another worker took the row, or an erasure removed it): this outcome is not recorded');
    else if (row.result === 'delivered') delivered++;
    else if (row.result === 'failed' || row.result === 'retrying') {
      const error = row.action?.error ? { code: row.action.error.code, message: row.action.error.message } : undefined;
      log.warn({ ...context, error }, row.result === 'failed' ? 'delivery failed' : 'delivery will be retried');
    } else if (row.result === 'waiting_for_reauthorization') {
      waiting++;
      waitingFor.add(row.waitingFor ?? destination ?? 'unknown');
    }
  }
  if (delivered > 0) log.info({ delivered, ...(destination ? { destination } : {}) }, 'conversions delivered');
  if (waiting > 0) {
    log.warn({ waiting, destinations: [...waitingFor].sort() }, 'conversions wait for their destination to be authorized again: connect it again (a new connect_destination handoff)');
  }
}

/** Prepares a round: settles what cannot be sent now, and returns one batch per connection for the rest. */
export async function prepareDeliveryRound(claims: readonly ClaimedDelivery[], deps: RoundDeps): Promise<PreparedRound> {
  if (claims.length === 0) return { settled: [], batches: [] };
  const { db, log } = deps;
  const records = await loadDeliveryRecords(db, claims.map((c) => c.eventActionId));
  const now = deps.now();
  const settlements = new Map<string, Promise<Settlement>>();
  const early: Settled[] = [];
  const byConnection = new Map<string, { platform: DestinationPlatform; rows: SendRow[] }>();

  for (const claim of claims) {
    const record = records.get(claim.eventActionId);
    if (!record || SETTLED_ACTION_STATUSES.includes(record.action_status)) {
      if (!record) log.warn({ outboxId: claim.id, eventActionId: claim.eventActionId }, 'outbox row without an event action: dropped');
      early.push({ claim, eventId: null, result: 'gone', finish: true });
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
      early.push({ claim, eventId: null, result: 'waiting_for_snapshot', finish: false, reschedule: { dueAt, countAttempt: false } });
      continue;
    }
    const row: Row = { claim, record };
    const platform = platformFor(record.destination);
    if (!platform) {
      early.push(afterSend(row, { kind: 'failed', error: { code: 'destination_unsupported', message: `cnv does not deliver to '${record.destination}'.` } }, deps, now));
      continue;
    }
    if (record.latest_adjustment?.type === 'retract') {
      early.push(retractedBeforeSend(row, platform));
      continue;
    }
    if (!record.destination_id) {
      early.push(
        afterSend(
          row,
          {
            kind: 'failed',
            error: {
              code: 'destination_not_connected',
              message: `No ${platform.label} account is connected for this account.`,
              hint: `Connect ${platform.label} (the dashboard's Destinations page, or a connect_destination handoff for ${platform.type} through the API); the flow's next conversions are then delivered.`,
            },
          },
          deps,
          now,
        ),
      );
      continue;
    }
    if (record.destination_status === 'reauthorization_required') {
      early.push(waitForReauthorization(row, platform, now));
      continue;
    }
    const group = byConnection.get(record.destination_id) ?? { platform, rows: [] };
    group.rows.push({ ...row, input: sendInput(record, settled.match ? settled.match.clickIds : record.click_ids) });
    byConnection.set(record.destination_id, group);
  }

  const connections = await findConnectionsById(db, [...byConnection.keys()]);
  const batches: ConnectionBatch[] = [];
  for (const [id, { platform, rows }] of byConnection) {
    const row = connections.get(id);
    if (!row) continue; // disconnected in between: the leases expire and the rows are looked at again
    let connection: Connection;
    try {
      connection = toConnection(row, deps.box);
    } catch (error) {
      if (!(error instanceof CredentialsUnreadable)) throw error;
      // Sealed under another key: this connection waits for a reconnect (or the old key); the others go out.
      early.push(...(await unreadableConnection(row.id, row.credentials, platform, rows, deps, now)));
      continue;
    }
    for (let i = 0; i < rows.length; i += platform.maxBatchSize) {
      const chunk = rows.slice(i, i + platform.maxBatchSize);
      batches.push({ lane: id, run: () => sendBatch(platform, connection, chunk, deps) });
    }
  }
  const held = await write(deps, early, deps.now());
  logOutcomes(log, null, early, held);
  return { settled: results(early, held), batches };
}

/**
 * Marks a connection whose stored credentials do not open with the current key `reauthorization_required` (only while
 * those are still its credentials), and says so once in the log (ids only). For conversions and adjustments alike.
 */
export async function markCredentialsUnreadable(
  deps: Pick<RoundDeps, 'tokens' | 'log'>,
  row: { id: string; credentials: string | null },
  platform: DestinationPlatform,
): ReturnType<AccessTokens['requireReauthorizationForUnreadable']> {
  const result = await deps.tokens.requireReauthorizationForUnreadable(row, platform);
  if (result.marked === 'written') {
    deps.log.warn({ destinationId: row.id, destination: platform.type }, 'destination credentials do not open with the current CNV_SECRET_KEY: marked reauthorization_required');
  }
  return result;
}

/**
 * The rows of a connection whose stored credentials do not open with the current key: the connection is marked
 * `reauthorization_required` (with its notification, as for a refused grant) and its rows wait, no attempt counted;
 * a reconnect that replaced those credentials meanwhile makes them due at once instead.
 */
async function unreadableConnection(
  id: string,
  sealed: string | null,
  platform: DestinationPlatform,
  rows: readonly Row[],
  deps: RoundDeps,
  at: Date,
): Promise<Settled[]> {
  const { marked, reason } = await markCredentialsUnreadable(deps, { id, credentials: sealed }, platform);
  return rows.map((r) => (marked === 'replaced' ? sendAgainWithNewCredentials(r, at) : waitForReauthorization(r, platform, at, reason)));
}

/** Runs one round to the end (every batch sent and recorded). Delivery faults become outcomes; a database fault throws. */
export async function runDeliveryRound(claims: readonly ClaimedDelivery[], deps: RoundDeps): Promise<RoundResult[]> {
  const prepared = await prepareDeliveryRound(claims, deps);
  const sent = await Promise.all(prepared.batches.map((b) => b.run()));
  return [...prepared.settled, ...sent.flat()];
}
