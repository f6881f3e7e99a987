/**
 * The legacy path: the Google Ads API's uploadClickConversions, kept as an explicit choice of a connection
 * (`api: google_ads_api`) for those Google still allows. Since 15 June 2026 Google refuses it to new adopters
 * (CUSTOMER_NOT_ALLOWLISTED_FOR_THIS_FEATURE; allowlisted then by developer token, whose access Google moved to the
 * Google Cloud projects when it sunset the tokens on 9 September 2026); new connections use the Data Manager API.
 *
 * Prepares each event action's click conversion, groups them into as few uploadClickConversions requests as Google
 * allows (per customer and credentials, up to 2000 each), sends them to the configured API base, and maps Google's
 * per-row answer back to each action.
 */
import type { ConnectionTestResult, DeliveryError, DeliveryInput, DeliveryOutcome, RequestSummary, SendContext } from '../destination';
import {
  conversionActionResourceName, legacyUploadRequest, planUploadRequests, prepareClickConversion, readGoogleAdsAccount, uploadBody, type ClickConversion, type PreparedConversion,
} from './legacy-request';
import { formatConversionDateTime } from './conversion-time';
import { interpretUploadResponse } from './legacy-response';
import { conversionActionMissing, testRefused } from './connection-test';
import { deadline } from '../../http/deadline';

/**
 * Posts one Google Ads API request whose repeated field `rowField` holds the rows `summaries` describe (conversions of
 * uploadClickConversions, conversion_adjustments of uploadConversionAdjustments) and returns one outcome per row.
 */
export async function postGoogleAdsRows(
  url: string,
  headers: Record<string, string>,
  body: unknown,
  summaries: readonly RequestSummary[],
  ctx: SendContext,
  rowField: string,
): Promise<DeliveryOutcome[]> {
  const request = deadline(ctx.signal, ctx.timeoutMs);
  try {
    const response = await fetch(url, { method: 'POST', headers, body: JSON.stringify(body), signal: request.signal });
    const text = await response.text();
    return interpretUploadResponse(response.status, response.headers.get('retry-after'), text, summaries, ctx.now(), rowField);
  } catch (error) {
    let fault: DeliveryError;
    if (ctx.signal.aborted) fault = { code: 'interrupted', message: 'The send was interrupted by a shutdown.' };
    else if (request.timedOut) fault = { code: 'timeout', message: `Google Ads did not answer within ${ctx.timeoutMs} ms.` };
    else {
      const cause = (error as { cause?: { code?: string; message?: string } }).cause;
      const detail = cause?.code ?? cause?.message ?? (error as Error).message;
      fault = { code: 'network_error', message: `Could not reach Google Ads at ${new URL(url).origin}: ${detail}.` };
    }
    return summaries.map((summary) => ({ kind: 'retry', error: fault, request: summary }));
  } finally {
    request.end();
  }
}

/** Sends one upload request and returns one outcome per conversion in it. */
function upload(prepared: readonly PreparedConversion[], ctx: SendContext): Promise<DeliveryOutcome[]> {
  const { url, headers } = prepared[0]!;
  return postGoogleAdsRows(url, headers, uploadBody(prepared.map((p) => p.conversion)), prepared.map((p) => p.summary), ctx, 'conversions');
}

/**
 * Uploads a batch through uploadClickConversions with the connection's access and developer tokens, batched per
 * customer; one outcome per input, in order. Throws only what `ctx.accessToken()` throws (ReauthorizationRequired).
 */
export async function sendLegacyBatch(inputs: readonly DeliveryInput[], ctx: SendContext): Promise<DeliveryOutcome[]> {
  const account = readGoogleAdsAccount(ctx, await ctx.accessToken());
  if (!account.ok) return inputs.map(() => ({ kind: 'failed', error: account.error }));
  const outcomes: DeliveryOutcome[] = new Array(inputs.length);
  const ready: Array<{ index: number; prepared: PreparedConversion }> = [];
  inputs.forEach((input, index) => {
    const built = prepareClickConversion(input, account.value, ctx.settings);
    if (built.ok) ready.push({ index, prepared: built.prepared });
    else outcomes[index] = built.skipped ? { kind: 'skipped', reason: built.error } : { kind: 'failed', error: built.error };
  });
  const requests = planUploadRequests(ready);
  // Requests to different customers go out together; repeats of one order id (later requests of a key) go after.
  const byKey = new Map<string, Array<typeof ready>>();
  for (const request of requests) {
    const key = request[0]!.prepared.requestKey;
    byKey.set(key, [...(byKey.get(key) ?? []), request]);
  }
  await Promise.all(
    [...byKey.values()].map(async (sequence) => {
      for (const request of sequence) {
        const results = await upload(request.map((r) => r.prepared), ctx);
        request.forEach((r, i) => (outcomes[r.index] = results[i]!));
      }
    }),
  );
  return outcomes;
}

/** Row refusals that concern only the test's made-up click id: the customer and the conversion action passed. */
const TEST_CLICK_REFUSALS = new Set(['UNPARSEABLE_GCLID', 'CLICK_NOT_FOUND']);

/**
 * Checks a connection that sends through the Google Ads API with a validate-only uploadClickConversions ("If true, the
 * request is validated but not executed": UploadClickConversionsRequest.validate_only): the same API, scope and
 * account the uploads use, so a grant without the Google Ads API's scope fails here rather than at the first
 * conversion. One synthetic conversion for the connection's `test_conversion_action_id`.
 */
export async function testLegacyConnection(ctx: SendContext): Promise<ConnectionTestResult> {
  const account = readGoogleAdsAccount(ctx, await ctx.accessToken());
  if (!account.ok) return { ok: false, message: account.error.message, error: account.error };
  const { customerId } = account.value;
  const setting = ctx.connection.settings.test_conversion_action_id;
  const conversionAction = conversionActionResourceName(customerId, typeof setting === 'string' ? setting : null);
  if (conversionAction === null) return conversionActionMissing();
  const conversion: ClickConversion = {
    conversionAction,
    conversionDateTime: formatConversionDateTime(ctx.now(), 'UTC'),
    orderId: 'cnv-connection-test',
    gclid: 'cnv-connection-test',
  };
  const { url, headers } = legacyUploadRequest(account.value, ctx.settings);
  const summary: RequestSummary = { url, customer_id: customerId, conversion_action: conversionAction, validate_only: true };
  // One row sent, one outcome back.
  const outcome = (await postGoogleAdsRows(url, headers, { ...uploadBody([conversion]), validateOnly: true }, [summary], ctx, 'conversions'))[0]!;
  if (outcome.kind === 'delivered') {
    return { ok: true, message: `Google accepted a validate-only upload to customer ${customerId}, ${conversionAction} (Google Ads API).` };
  }
  const error = outcome.kind === 'skipped' ? outcome.reason : outcome.error;
  if (outcome.kind === 'failed' && TEST_CLICK_REFUSALS.has(error.code)) {
    return { ok: true, message: `Google accepted customer ${customerId} and ${conversionAction} (Google Ads API, validate-only).` };
  }
  return testRefused(error, outcome.kind === 'token_refused');
}
