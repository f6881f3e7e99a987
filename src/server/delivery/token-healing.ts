/**
 * Tokens that heal (destinations/destination.ts), one mechanism for every send to a platform: conversions
 * (`sendBatch`, round.ts) and adjustments (`adjustBatch`, adjustments.ts). The items are sent; those the platform
 * answered `token_refused` are sent once more after the cached access token is dropped and refreshed. Refused again,
 * or refused with no refresh token to try, the connection becomes `reauthorization_required` and those items wait
 * (queued, no attempt counted) for a new handoff, which makes them due again (`resumeDeliveries`). When a new handoff
 * already replaced the credentials those sends used (the reconnect came while they were in flight, so its
 * `resumeDeliveries` could not take their rows, held by this worker), nothing is marked and the items are due again at
 * once, to be sent with the new credentials: not at the next look for a reauthorization, minutes later. Given
 * `stillHeld`, only the refused items the caller still holds are sent again: an erasure may have taken some while the
 * refused send was under way.
 */
import type { AccessTokens, Connection, DeliveryError, DestinationPlatform } from '../destinations';

/** What became of one item sent with healing, for the caller to record its own way. */
export type Healed<O> =
  /** The platform's answer (never `token_refused`: those were healed or turned into `reauthorization_required`). */
  | { kind: 'outcome'; outcome: O; at: Date }
  /** The send threw: `ReauthorizationRequired` (a refused refresh), `TokenUnavailable`, or an adapter fault. */
  | { kind: 'thrown'; error: unknown; at: Date }
  /** The worker is stopping: nobody knows whether the platform got it; send again later with the same ids. */
  | { kind: 'interrupted'; at: Date }
  /**
   * The connection must be authorized again: the item waits, queued, for a new handoff. `reason`: the platform's refusal
   * when it says itself why (its code `reauthorization_required`: a token without the API's scope), to show on the item.
   */
  | { kind: 'reauthorization_required'; at: Date; reason?: DeliveryError }
  /** Refused with credentials a new handoff has replaced since: due again at once, sent with the new ones. */
  | { kind: 'credentials_replaced'; at: Date };

/** An outcome a platform may answer with: `token_refused` is the one healing acts on. */
export interface HealableOutcome {
  kind: string;
  error?: DeliveryError;
}

export interface HealingDeps {
  tokens: AccessTokens;
  log: { info(obj: object, msg?: string): void };
  signal: AbortSignal;
  now(): Date;
}

type SendResult<O> = { outcomes: O[] } | { thrown: unknown };

async function sendOnce<T, O>(items: readonly T[], send: (items: readonly T[]) => Promise<O[]>, what: string): Promise<SendResult<O>> {
  try {
    const outcomes = await send(items);
    if (outcomes.length !== items.length) throw new Error(`${what} returned ${outcomes.length} outcomes for ${items.length} inputs`);
    return { outcomes };
  } catch (error) {
    return { thrown: error };
  }
}

function isRefused(outcome: HealableOutcome): boolean {
  return outcome.kind === 'token_refused';
}

/**
 * Sends `items` to one connection through `send` (one outcome per item, in order), healing a refused access token
 * once; returns one `Healed` per item, in order. `what` names the call in an error (e.g. `google-ads adjustBatch`).
 */
export async function sendWithHealing<T, O extends HealableOutcome>(
  platform: DestinationPlatform,
  connection: Connection,
  items: readonly T[],
  send: (items: readonly T[]) => Promise<O[]>,
  deps: HealingDeps,
  what: string,
  stillHeld?: (items: readonly T[]) => Promise<ReadonlySet<T>>,
): Promise<Healed<O>[]> {
  const fates = new Map<number, Healed<O>>();
  const first = await sendOnce(items, send, what);
  if ('thrown' in first) return items.map(() => ({ kind: 'thrown', error: first.thrown, at: deps.now() }));
  if (deps.signal.aborted) return items.map(() => ({ kind: 'interrupted', at: deps.now() }));
  let at = deps.now();
  let refused: number[] = [];
  first.outcomes.forEach((outcome, i) => {
    if (isRefused(outcome)) refused.push(i);
    else fates.set(i, { kind: 'outcome', outcome, at });
  });
  let lastRefusal = refused.length > 0 ? first.outcomes[refused[0]!]! : null;
  if (refused.length > 0 && stillHeld) {
    // The refused send was under way: an erasure may have taken items meanwhile, which are not sent again (their
    // fate is never written: the claim is gone).
    const held = await stillHeld(refused.map((i) => items[i]!));
    const taken = refused.filter((i) => !held.has(items[i]!));
    for (const i of taken) fates.set(i, { kind: 'interrupted', at });
    refused = refused.filter((i) => held.has(items[i]!));
  }
  if (refused.length > 0 && deps.tokens.canRefresh(platform, connection)) {
    deps.tokens.forget(connection.id);
    deps.log.info({ destination: platform.type, items: refused.length }, 'access token refused: refreshing once and sending again');
    const again = await sendOnce(refused.map((i) => items[i]!), send, what);
    at = deps.now();
    if ('thrown' in again) {
      for (const i of refused) fates.set(i, { kind: 'thrown', error: again.thrown, at });
      refused = [];
    } else if (deps.signal.aborted) {
      for (const i of refused) fates.set(i, { kind: 'interrupted', at });
      refused = [];
    } else {
      const still: number[] = [];
      again.outcomes.forEach((outcome, j) => {
        const i = refused[j]!;
        if (isRefused(outcome)) {
          still.push(i);
          lastRefusal = outcome;
        } else fates.set(i, { kind: 'outcome', outcome, at });
      });
      refused = still;
    }
  }
  if (refused.length > 0) {
    const error = lastRefusal?.error ?? { code: 'token_refused', message: `${platform.label} refused the access token.` };
    // `replaced`: the stored credentials are no longer those the refused sends used (sameCredentials, destinations/sql.ts).
    const marked = await deps.tokens.requireReauthorization(connection, error);
    at = deps.now();
    const kind = marked === 'replaced' ? 'credentials_replaced' : 'reauthorization_required';
    if (kind === 'credentials_replaced') {
      deps.log.info({ destination: platform.type, items: refused.length }, 'access token refused, but a reconnect replaced the credentials meanwhile: sending again at once with the new ones');
    }
    const reason = error.code === 'reauthorization_required' ? error : undefined;
    for (const i of refused) fates.set(i, kind === 'reauthorization_required' && reason ? { kind, at, reason } : { kind, at });
  }
  return items.map((_, i) => fates.get(i)!);
}
