/**
 * Sends a batch of conversions to Google Ads through the Data Manager API, and tests a connection with a validate-only
 * request. Authorization is the connection's OAuth access token with the `datamanager` scope; no developer token
 * (https://developers.google.com/data-manager/api/devguides/events/google-ads/offline/upgrade/field-mappings).
 */
import type { ConnectionTestResult, DeliveryError, DeliveryInput, DeliveryOutcome, SendContext } from '../destination';
import { requestJson } from '../http';
import {
  buildIngestBody,
  conversionActionId as conversionActionIdOf,
  groupForIngest,
  ingestDestination,
  ingestUrl,
  prepareEvent,
  readDataManagerAccount,
  type IngestDestination,
  type IngestEvent,
  type PreparedEvent,
} from './data-manager-request';
import { classifyIngestAnswer, type GroupOutcome } from './data-manager-response';
import { conversionActionMissing, testRefused } from './connection-test';

const PLATFORM = 'Google Ads (Data Manager API)';

type Item = { position: number; prepared: PreparedEvent };

const MISCONFIGURED: DeliveryError = {
  code: 'destination_misconfigured',
  message: 'The Google Ads connection has no valid customer ID.',
  hint: 'Connect the Google Ads destination again and enter the 10-digit customer ID.',
};

function withSummary(outcome: GroupOutcome, prepared: PreparedEvent): DeliveryOutcome {
  return { ...outcome, request: prepared.summary };
}

async function post(destination: IngestDestination, events: IngestEvent[], ctx: SendContext, validateOnly: boolean) {
  const token = await ctx.accessToken();
  return requestJson(
    PLATFORM,
    ingestUrl(ctx.settings),
    { method: 'POST', headers: { authorization: `Bearer ${token}` }, body: buildIngestBody(destination, events, { validateOnly }) },
    ctx,
  );
}

/**
 * Sends one group (one destination, at most the request limit) and fills `outcomes`. When Google refuses the request
 * because of named events, those fail and the rest is sent again; when it names none, the group is halved and each
 * half sent, so one bad event never holds back the others.
 */
async function sendGroup(destination: IngestDestination, items: Item[], ctx: SendContext, outcomes: DeliveryOutcome[]): Promise<void> {
  if (items.length === 0) return;
  const answer = await post(destination, items.map((i) => i.prepared.event), ctx, false);
  const verdict = classifyIngestAnswer(answer, ctx.now().getTime());
  switch (verdict.kind) {
    case 'accepted':
      for (const item of items) {
        outcomes[item.position] = {
          kind: 'delivered',
          request: { ...item.prepared.summary, ...(verdict.requestId ? { requestId: verdict.requestId } : {}) },
          ...(verdict.requestId ? { platformRequestId: verdict.requestId } : {}),
        };
      }
      return;
    case 'all':
      for (const item of items) outcomes[item.position] = withSummary(verdict.outcome, item.prepared);
      return;
    case 'events': {
      const rest: Item[] = [];
      items.forEach((item, index) => {
        const error = verdict.failed.get(index);
        if (error) outcomes[item.position] = { kind: 'failed', error, request: item.prepared.summary };
        else rest.push(item);
      });
      // Indexes that name no event of this request would loop for ever: treat the answer as naming none.
      if (rest.length === items.length) return splitAndSend(destination, items, verdict.failed.values().next().value!, ctx, outcomes);
      return sendGroup(destination, rest, ctx, outcomes);
    }
    case 'unattributed':
      return splitAndSend(destination, items, verdict.error, ctx, outcomes);
  }
}

async function splitAndSend(destination: IngestDestination, items: Item[], error: DeliveryError, ctx: SendContext, outcomes: DeliveryOutcome[]): Promise<void> {
  if (items.length === 1) {
    outcomes[items[0]!.position] = { kind: 'failed', error, request: items[0]!.prepared.summary };
    return;
  }
  const half = Math.ceil(items.length / 2);
  await sendGroup(destination, items.slice(0, half), ctx, outcomes);
  await sendGroup(destination, items.slice(half), ctx, outcomes);
}

/**
 * Sends a batch to the connection's Google Ads account; one outcome per input, in order. Events of different
 * conversion actions go in separate requests. Throws only what `ctx.accessToken()` throws (ReauthorizationRequired).
 */
export async function sendDataManagerBatch(inputs: readonly DeliveryInput[], ctx: SendContext): Promise<DeliveryOutcome[]> {
  const outcomes: DeliveryOutcome[] = new Array(inputs.length);
  const account = readDataManagerAccount(ctx.connection.settings);
  if (!account) return inputs.map(() => ({ kind: 'failed', error: MISCONFIGURED }));
  const ready: Item[] = [];
  inputs.forEach((input, position) => {
    const preparation = prepareEvent(input, account);
    if (preparation.ok) ready.push({ position, prepared: preparation.prepared });
    else outcomes[position] = preparation.outcome;
  });
  for (const group of groupForIngest(ready)) await sendGroup(group.destination, group.items, ctx, outcomes);
  return outcomes;
}

/**
 * Checks a connection with a validate-only request (Google checks it, records nothing): one synthetic event for the
 * given conversion action, or for the connection's `test_conversion_action_id` setting when none is given.
 */
export async function testDataManagerConnection(ctx: SendContext, conversionActionId?: string): Promise<ConnectionTestResult> {
  const account = readDataManagerAccount(ctx.connection.settings);
  if (!account) return { ok: false, message: MISCONFIGURED.message, error: MISCONFIGURED };
  const setting = ctx.connection.settings.test_conversion_action_id;
  // The same forms a flow's action takes: the numeric id, or its resource name customers/{id}/conversionActions/{id}.
  const actionId = conversionActionIdOf({ conversion: { id: conversionActionId ?? setting } });
  if (actionId === null) return conversionActionMissing();
  const event: IngestEvent = {
    transactionId: 'cnv-connection-test',
    eventTimestamp: ctx.now().toISOString(),
    eventSource: 'WEB',
    adIdentifiers: { gclid: 'cnv-connection-test' },
  };
  const answer = await post(ingestDestination(account, actionId), [event], ctx, true);
  const verdict = classifyIngestAnswer(answer, ctx.now().getTime());
  if (verdict.kind === 'accepted') {
    return { ok: true, message: `Google accepted a validate-only upload to customer ${account.customerId}, conversion action ${actionId}.` };
  }
  if (verdict.kind === 'events') {
    // Only the synthetic event was refused (its made-up click id): the account and the conversion action passed.
    return { ok: true, message: `Google accepted customer ${account.customerId} and conversion action ${actionId} (validate-only).` };
  }
  if (verdict.kind === 'all') return testRefused(verdict.outcome.error, verdict.outcome.kind === 'token_refused');
  return testRefused(verdict.error, false);
}
