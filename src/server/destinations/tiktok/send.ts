/**
 * Sending to TikTok's Events API: a batch of cnv event actions in one request per 1,000 events (a refused request is
 * halved until the refused event stands alone), and the connection test through the test event code.
 */
import type { ConnectionTestResult, DeliveryInput, DeliveryOutcome, SendContext } from '../destination';
import { sha256Hex } from '../hashing';
import { requestJson } from '../http';
import { sendBuiltBatch, type BatchVerdict } from '../split-batch';
import { limitedDataUseOn } from '../limited-data-use';
import { DEFAULT_TEST_EVENT_CODE } from './connect';
import { buildTikTokEvent, buildTrackBody, MAX_EVENTS_PER_REQUEST, TRACK_PATH, trackHeaders, type TikTokEvent } from './request';
import { classifyTikTokAnswer } from './response';

const LABEL = 'TikTok';

/** The pixel code and token of a connection, or null when it lacks one. */
function connectionOf(ctx: SendContext): { pixelCode: string; token: string } | null {
  const pixelCode = ctx.connection.settings.pixel_code;
  const token = ctx.connection.credentials.access_token;
  return typeof pixelCode === 'string' && pixelCode !== '' && token ? { pixelCode, token } : null;
}

const NOT_CONNECTED = {
  code: 'not_connected',
  message: 'This TikTok connection has no pixel code or access token.',
  hint: 'Connect TikTok again with the pixel code and an Events API access token.',
};

async function post(ctx: SendContext, pixelCode: string, token: string, events: TikTokEvent[], testEventCode?: string): Promise<BatchVerdict> {
  const url = `${ctx.settings.tiktok.apiBase}${TRACK_PATH}`;
  const answer = await requestJson(LABEL, url, { headers: trackHeaders(token), body: buildTrackBody(pixelCode, events, testEventCode) }, ctx);
  return classifyTikTokAnswer(answer, ctx.now().getTime());
}

/** Sends a batch to one TikTok pixel; one outcome per input, in order. Never throws for an answer of TikTok's. */
export async function sendTikTokBatch(inputs: readonly DeliveryInput[], ctx: SendContext): Promise<DeliveryOutcome[]> {
  const connection = connectionOf(ctx);
  if (!connection) return inputs.map(() => ({ kind: 'failed', error: NOT_CONNECTED }));
  const limitedDataUse = limitedDataUseOn(ctx.connection.settings);
  return sendBuiltBatch(
    inputs,
    (input) => buildTikTokEvent(input, connection.pixelCode, limitedDataUse),
    (events) => post(ctx, connection.pixelCode, connection.token, events),
    MAX_EVENTS_PER_REQUEST,
  );
}

/** Name of the synthetic test event: a custom event, so a test never counts as one of the site's conversions. */
export const TEST_EVENT_NAME = 'CnvConnectionTest';

/**
 * Sends one synthetic event with `test_event_code` (the connection's own code, else TEST_CNV) and says what TikTok
 * answered. Its only identifier is a hashed constant external_id: no one's data.
 */
export async function testTikTokConnection(ctx: SendContext): Promise<ConnectionTestResult> {
  const connection = connectionOf(ctx);
  if (!connection) return { ok: false, message: NOT_CONNECTED.message, error: NOT_CONNECTED };
  const configured = ctx.connection.settings.test_event_code;
  const code = typeof configured === 'string' && configured !== '' ? configured : DEFAULT_TEST_EVENT_CODE;
  const now = ctx.now();
  const event: TikTokEvent = {
    event: TEST_EVENT_NAME,
    event_time: Math.floor(now.getTime() / 1000),
    event_id: `cnv-connection-test-${now.getTime()}`,
    user: { external_id: sha256Hex('cnv-connection-test') },
    // Sent as deliveries are, so TikTok checks the connection's Limited Data Use flag too.
    ...(limitedDataUseOn(ctx.connection.settings) ? { limited_data_use: true as const } : {}),
  };
  const verdict = await post(ctx, connection.pixelCode, connection.token, [event], code);
  if (verdict.kind === 'delivered') {
    return {
      ok: true,
      message:
        `TikTok accepted a test event for pixel ${connection.pixelCode} (test event code ${code}` +
        `${verdict.platformRequestId ? `, request_id ${verdict.platformRequestId}` : ''}); with your own code it shows in Events Manager → Test events.`,
    };
  }
  // TikTok's Events API token is pasted (nothing to refresh): a refused one stays refused.
  return { ok: false, message: verdict.error.message, error: verdict.error, ...(verdict.kind === 'token_refused' ? { credentialRefused: true } : {}) };
}
