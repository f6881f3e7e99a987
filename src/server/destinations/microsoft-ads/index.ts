/**
 * The `microsoft-ads` destination: Microsoft Advertising offline conversions through the Campaign Management API v13
 * (REST), one ApplyOfflineConversions call per batch of up to 1,000 conversions.
 *
 * Deduplication against a UET tag goal, checked 2026-11-29: Microsoft Advertising help "Conversion goals - Conversions
 * versus all conversions" (MicrosoftDocs/Advertising, msa-help/hlp_BA_CONC_ConvsVsAllConvs.md): "If you use an
 * automated bidding bid strategy, clearing the Include in "Conversions" checkbox will result in these conversions no
 * longer factoring into automated bidding calculations." An offline goal and a UET goal are two goals; the docs tell the
 * advertiser to clear that box on one of them. NOT verified: any dedup between an offline conversion and a UET one.
 *
 * Counting repeat conversions of one click (a second payment, a renewal), checked 2026-11-29 (OfflineConversion,
 * bingads-13): "If you set the CountType of the OfflineConversionGoal to All, then all offline conversions for the same
 * MicrosoftClickId with different conversion times will be added cumulatively. If you set the CountType … to Unique,
 * then only the first conversion that happens after an ad click will be counted. Duplicate offline conversions with
 * the same MicrosoftClickId and ConversionTime will be ignored." Each stage is sent at its own occurred_at, so it is
 * never such a duplicate; whether it counts is the goal's CountType (revenue.md says so). NOT verified: the longest
 * ConversionWindowInMinutes a goal takes (cnv's 90-day click-age rule, request.ts, stands on ConversionTime's 90 days).
 */
import { OAuthClientRefused, ReauthorizationRequired, type ConnectionTestResult, type DeliveryError, type DeliveryInput, type DeliveryOutcome, type DestinationPlatform, type SendContext } from '../destination';
import { parseJson, requestJson } from '../http';
import { checkAction, microsoftAdsFields, parseConnectForm } from './connect';
import { microsoftOAuth } from './oauth';
import {
  MAX_OFFLINE_CONVERSIONS_PER_CALL,
  accountIds,
  apiHeaders,
  applyUrl,
  developerToken,
  prepareConversion,
  queryGoalsUrl,
  type MicrosoftAccountIds,
  type OfflineConversion,
} from './request';
import { NOT_AUTHORIZED, callFault, interpretApplyAnswer } from './response';
import { adjustUrl, prepareAdjustment, type OfflineConversionAdjustment } from './adjustments';
import { adjustmentOutcomeOf, type AdjustmentInput, type AdjustmentOutcome } from '../destination';

const LABEL = 'Microsoft Advertising';

/** Everything a call needs besides its body, or the error that keeps every row from being sent. */
type CallSetup = { ok: true; headers: Record<string, string>; ids: MicrosoftAccountIds } | { ok: false; outcome: 'failed' | 'retry'; error: DeliveryError };

async function callSetup(ctx: SendContext): Promise<CallSetup> {
  const ids = accountIds(ctx.connection.settings);
  if (ids === null) {
    return {
      ok: false,
      outcome: 'failed',
      error: { code: 'connection_incomplete', message: 'The connection has no customer ID or account ID.', hint: 'Connect Microsoft Advertising again and enter both ids.' },
    };
  }
  const devToken = developerToken(ctx);
  if (devToken === '') {
    return {
      ok: false,
      outcome: 'failed',
      error: {
        code: 'developer_token_missing',
        message: 'No Microsoft Advertising developer token is set.',
        hint: 'Set CNV_MICROSOFT_ADS_DEVELOPER_TOKEN on the service, or enter a developer token when connecting.',
      },
    };
  }
  try {
    return { ok: true, ids, headers: apiHeaders(await ctx.accessToken(), devToken, ids) };
  } catch (error) {
    // A refused refresh token: delivery makes the conversions wait for a new handoff (destination.ts, tokens that heal).
    // The service's own OAuth client refused: delivery makes them wait for the operator's fix (never retried to a failure).
    if (error instanceof ReauthorizationRequired || error instanceof OAuthClientRefused) throw error;
    return { ok: false, outcome: 'retry', error: { code: 'token_refresh_failed', message: 'Could not obtain a Microsoft access token; will try again.' } };
  }
}

/** Sends one batch: builds each conversion, one ApplyOfflineConversions call for those that can go, reads the answer per row. */
async function sendBatch(inputs: readonly DeliveryInput[], ctx: SendContext): Promise<DeliveryOutcome[]> {
  const now = ctx.now();
  const outcomes: (DeliveryOutcome | undefined)[] = new Array(inputs.length);
  const sent: { at: number; conversion: OfflineConversion; summary: Record<string, unknown> }[] = [];
  inputs.forEach((input, at) => {
    const prepared = prepareConversion(input, now);
    if (prepared.ok) sent.push({ at, conversion: prepared.conversion, summary: prepared.summary });
    else outcomes[at] = prepared.outcome;
  });

  if (sent.length > 0) {
    const setup = await callSetup(ctx);
    if (!setup.ok) {
      for (const row of sent) {
        outcomes[row.at] = setup.outcome === 'failed' ? { kind: 'failed', error: setup.error, request: row.summary } : { kind: 'retry', error: setup.error, request: row.summary };
      }
    } else {
      const answer = await requestJson(LABEL, applyUrl(ctx.settings.microsoft.adsApiBase), { headers: setup.headers, body: { OfflineConversions: sent.map((r) => r.conversion) } }, ctx);
      const rows = answer.answered
        ? interpretApplyAnswer({ status: answer.status, retryAfter: answer.headers.get('retry-after'), trackingId: answer.headers.get('trackingid'), text: answer.text }, sent.map((r) => r.summary), now.getTime())
        : sent.map((r): DeliveryOutcome => ({ kind: 'retry', error: answer.error, request: r.summary }));
      rows.forEach((outcome, i) => (outcomes[sent[i]!.at] = outcome));
    }
  }
  return outcomes.map((o) => o ?? { kind: 'retry', error: { code: 'internal', message: 'No outcome was decided for this conversion.' } });
}

/** Sends adjustments in one ApplyOfflineConversionAdjustments call; the answer is read per row as for conversions. */
async function adjustBatch(inputs: readonly AdjustmentInput[], ctx: SendContext): Promise<AdjustmentOutcome[]> {
  const outcomes: (AdjustmentOutcome | undefined)[] = new Array(inputs.length);
  const sent: { at: number; adjustment: OfflineConversionAdjustment; summary: Record<string, unknown> }[] = [];
  const preparedAt = ctx.now();
  inputs.forEach((input, at) => {
    const prepared = prepareAdjustment(input, preparedAt);
    if (prepared.ok) sent.push({ at, adjustment: prepared.adjustment, summary: prepared.summary });
    else outcomes[at] = prepared.outcome;
  });
  if (sent.length > 0) {
    const setup = await callSetup(ctx);
    if (!setup.ok) {
      for (const row of sent) outcomes[row.at] = { kind: setup.outcome === 'failed' ? 'failed' : 'retry', error: setup.error, request: row.summary };
    } else {
      const now = ctx.now();
      const answer = await requestJson(LABEL, adjustUrl(ctx.settings.microsoft.adsApiBase), { headers: setup.headers, body: { OfflineConversionAdjustments: sent.map((r) => r.adjustment) } }, ctx);
      const rows = answer.answered
        ? interpretApplyAnswer({ status: answer.status, retryAfter: answer.headers.get('retry-after'), trackingId: answer.headers.get('trackingid'), text: answer.text }, sent.map((r) => r.summary), now.getTime())
        : sent.map((r): DeliveryOutcome => ({ kind: 'retry', error: answer.error, request: r.summary }));
      rows.forEach((outcome, i) => (outcomes[sent[i]!.at] = adjustmentOutcomeOf(outcome)));
    }
  }
  return outcomes.map((o) => o ?? { kind: 'retry', error: { code: 'internal', message: 'No outcome was decided for this adjustment.' } });
}

/**
 * Checks the connection without recording anything: GetConversionGoalsByIds with no ids returns every offline
 * conversion goal of the account ("If ConversionGoalIds is null or empty, then you are effectively requesting all
 * conversion goals of the specified types", getconversiongoalsbyids REST reference). It proves the token, the developer
 * token and both ids together, and lists the goal names a flow's conversion_name must match.
 */
async function testConnection(ctx: SendContext): Promise<ConnectionTestResult> {
  const setup = await callSetup(ctx);
  if (!setup.ok) return { ok: false, message: setup.error.message, error: setup.error };
  const answer = await requestJson(LABEL, queryGoalsUrl(ctx.settings.microsoft.adsApiBase), { headers: setup.headers, body: { ConversionGoalIds: null, ConversionGoalTypes: 'OfflineConversion' } }, ctx);
  if (!answer.answered) return { ok: false, message: answer.error.message, error: answer.error };
  const fault = callFault(answer.status, answer.text);
  // UserIsNotAuthorized: "the user does not have access to one of the entities specified in the request"
  // (operation-error-codes, code 106), here the customer and account of the CustomerId and CustomerAccountId headers.
  if (fault) return { ok: false, message: fault.message, error: fault, ...(fault.code === NOT_AUTHORIZED ? { refusedFields: ['customer_id', 'account_id'] } : {}) };
  const goals = (parseJson(answer.text) as { ConversionGoals?: unknown } | null)?.ConversionGoals;
  const named = (Array.isArray(goals) ? goals : [])
    .filter((g): g is { Name: string; Status?: unknown } => typeof g === 'object' && g !== null && typeof (g as { Name?: unknown }).Name === 'string');
  const names = named.map((g) => `'${g.Name}'${typeof g.Status === 'string' && g.Status !== 'Active' ? ` (${g.Status})` : ''}`);
  const actionNames = { field: 'conversion_name', names: named.map((g) => g.Name), what: 'offline conversion goal' };
  const where = `Microsoft Advertising account ${setup.ids.accountId} (customer ${setup.ids.customerId})`;
  if (names.length === 0) {
    return {
      ok: true,
      message: `Connected to ${where}, which has no offline conversion goal yet: create one, and use its exact name as the flow's conversion_name (conversions for it are accepted two hours after it is created).`,
      actionNames,
    };
  }
  return { ok: true, message: `Connected to ${where}. Offline conversion goals: ${names.join(', ')}.`, actionNames };
}

/** Microsoft Advertising offline conversions as a destination platform. */
export const microsoftAdsPlatform: DestinationPlatform = {
  type: 'microsoft-ads',
  label: LABEL,
  consent:
    'Conversions captured by your flows will be sent to this Microsoft Advertising account as offline conversions (the Microsoft click id of the ad click, and a SHA-256 hash of the email and phone when given), so Microsoft Advertising can attribute signups to your campaigns.',
  oauth: microsoftOAuth,
  fields: microsoftAdsFields,
  parseConnectForm,
  checkAction,
  maxBatchSize: MAX_OFFLINE_CONVERSIONS_PER_CALL,
  sendBatch,
  testConnection,
  adjustBatch,
};

export { microsoftOAuth } from './oauth';
