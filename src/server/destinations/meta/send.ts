/**
 * Sending to the Conversions API: a batch of cnv event actions in one request per 1,000 events, and the connection
 * test. Meta refuses a whole request for one invalid event, so a refused batch is halved and each half sent again until
 * the bad event stands alone: it fails, and the others are delivered (split-batch.ts, with its budget of calls).
 */
import type { ConnectionTestResult, DeliveryInput, DeliveryOutcome, SendContext } from '../destination';
import { sha256Hex } from '../hashing';
import { requestJson } from '../http';
import { sendBuiltBatch, type BatchVerdict } from '../split-batch';
import { limitedDataUseOn } from '../limited-data-use';
import { DEFAULT_TEST_EVENT_CODE } from './connect';
import { buildEventsBody, buildServerEvent, eventsUrl, MAX_EVENTS_PER_REQUEST, META_LIMITED_DATA_USE, type MetaServerEvent } from './request';
import { classifyMetaAnswer, type MetaVerdict } from './response';

const LABEL = 'Meta';

/** The dataset ID and token of a connection, or null when the connection lacks one (connected by an older form). */
function connectionOf(ctx: SendContext): { pixelId: string; token: string } | null {
  const pixelId = ctx.connection.settings.pixel_id;
  const token = ctx.connection.credentials.access_token;
  return typeof pixelId === 'string' && pixelId !== '' && token ? { pixelId, token } : null;
}

async function post(
  ctx: SendContext,
  pixelId: string,
  token: string,
  events: MetaServerEvent[],
  testEventCode?: string,
): Promise<MetaVerdict> {
  const url = eventsUrl(ctx.settings.meta.graphApiBase, ctx.settings.meta.apiVersion, pixelId);
  const answer = await requestJson(LABEL, url, { headers: {}, body: buildEventsBody(events, token, testEventCode) }, ctx);
  return classifyMetaAnswer(answer, events.length, ctx.now().getTime());
}

/** Meta's verdict on a request as the shared splitter reads it (the fbtrace_id is the request's id at Meta). */
function asBatchVerdict(verdict: MetaVerdict): BatchVerdict {
  if (verdict.kind === 'delivered') return { kind: 'delivered', ...(verdict.fbtraceId ? { platformRequestId: verdict.fbtraceId } : {}) };
  return verdict;
}

/**
 * Sends a batch to one Meta dataset; one outcome per input, in order. Never throws for an answer of Meta's. A refused
 * request is halved until the refused event stands alone, within split-batch.ts's budget of calls: a batch Meta
 * refuses whole for a reason every event shares does not become some 2,000 requests against the account's limit.
 */
export async function sendMetaBatch(inputs: readonly DeliveryInput[], ctx: SendContext): Promise<DeliveryOutcome[]> {
  const connection = connectionOf(ctx);
  if (!connection) {
    return inputs.map(() => ({
      kind: 'failed',
      error: {
        code: 'not_connected',
        message: 'This Meta connection has no dataset ID or access token.',
        hint: 'Connect Meta again with a dataset (pixel) ID and a Conversions API access token.',
      },
    }));
  }
  const now = ctx.now();
  const limitedDataUse = limitedDataUseOn(ctx.connection.settings);
  return sendBuiltBatch(
    inputs,
    (input) => buildServerEvent(input, connection.pixelId, now, limitedDataUse),
    async (events) => asBatchVerdict(await post(ctx, connection.pixelId, connection.token, events)),
    MAX_EVENTS_PER_REQUEST,
  );
}

/** Name of the synthetic event: a custom event, so a test never counts as one of the site's real conversions. */
export const TEST_EVENT_NAME = 'CnvConnectionTest';

/**
 * Sends one synthetic event with `test_event_code` (the connection's own code, else TEST_CNV) and says what Meta
 * answered. Meta notes test events are not dropped, hence a custom event name and a hashed constant as the only
 * identifier: no one's data. https://developers.facebook.com/documentation/ads-commerce/conversions-api/using-the-api#testEvents
 */
export async function testMetaConnection(ctx: SendContext): Promise<ConnectionTestResult> {
  const connection = connectionOf(ctx);
  if (!connection) {
    const error = { code: 'not_connected', message: 'This Meta connection has no dataset ID or access token.' };
    return { ok: false, message: error.message, error };
  }
  const configured = ctx.connection.settings.test_event_code;
  const code = typeof configured === 'string' && configured !== '' ? configured : DEFAULT_TEST_EVENT_CODE;
  const now = ctx.now();
  const event: MetaServerEvent = {
    event_name: TEST_EVENT_NAME,
    event_time: Math.floor(now.getTime() / 1000),
    event_id: `cnv-connection-test-${now.getTime()}`,
    action_source: 'other',
    user_data: { external_id: [sha256Hex('cnv-connection-test')] },
    // Sent as deliveries are, so Meta checks the connection's Limited Data Use fields too.
    ...(limitedDataUseOn(ctx.connection.settings) ? META_LIMITED_DATA_USE : {}),
  };
  const verdict = await post(ctx, connection.pixelId, connection.token, [event], code);
  if (verdict.kind === 'delivered') {
    return {
      ok: true,
      message:
        `Meta accepted a test event for dataset ${connection.pixelId} (events_received: ${verdict.eventsReceived}, test event code ${code}` +
        `${verdict.fbtraceId ? `, fbtrace_id ${verdict.fbtraceId}` : ''}); with your own code it shows in Events Manager → Test events.`,
    };
  }
  // Meta's token is pasted (no sign-in, nothing to refresh): a refused one stays refused.
  return { ok: false, message: verdict.error.message, error: verdict.error, ...(verdict.kind === 'token_refused' ? { credentialRefused: true } : {}) };
}
