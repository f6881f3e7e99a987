/**
 * Sending to Reddit's Conversions API v3: a batch of cnv event actions in one request per 1,000 events (a refused
 * request is halved until the refused event stands alone), and the connection test.
 */
import type { ConnectionTestResult, DeliveryInput, DeliveryOutcome, SendContext } from '../destination';
import { sha256Hex } from '../hashing';
import { requestJson } from '../http';
import { sendBuiltBatch, type BatchVerdict } from '../split-batch';
import { buildRedditBody, buildRedditEvent, conversionEventsUrl, MAX_EVENTS_PER_REQUEST, redditHeaders, type RedditEvent } from './request';
import { classifyRedditAnswer } from './response';

const LABEL = 'Reddit';

/**
 * The pixel ID of a connection and how it gets its token: the conversion access token entered on the hosted page, or
 * (signed in with Reddit) an OAuth access token delivery refreshes from the stored refresh token. Null when it lacks one.
 */
function connectionOf(ctx: SendContext): { pixelId: string; token: () => Promise<string> } | null {
  const pixelId = ctx.connection.settings.pixel_id;
  const { access_token: conversionToken, refresh_token: refreshToken } = ctx.connection.credentials;
  if (typeof pixelId !== 'string' || pixelId === '') return null;
  if (conversionToken) return { pixelId, token: () => Promise.resolve(conversionToken) };
  // A refused refresh throws ReauthorizationRequired, which delivery turns into reauthorization_required.
  return refreshToken ? { pixelId, token: () => ctx.accessToken() } : null;
}

const NOT_CONNECTED = {
  code: 'not_connected',
  message: 'This Reddit connection has no pixel ID, and no conversion access token or Reddit sign-in.',
  hint: 'Connect Reddit again with the pixel ID and a conversion access token (or sign in with Reddit).',
};

async function post(ctx: SendContext, pixelId: string, token: string, events: RedditEvent[], testId?: string): Promise<BatchVerdict> {
  const url = conversionEventsUrl(ctx.settings.reddit.apiBase, pixelId);
  const answer = await requestJson(LABEL, url, { headers: redditHeaders(token), body: buildRedditBody(events, testId) }, ctx);
  return classifyRedditAnswer(answer, ctx.now().getTime());
}

/** Sends a batch to one Reddit pixel; one outcome per input, in order. Never throws for an answer of Reddit's. */
export async function sendRedditBatch(inputs: readonly DeliveryInput[], ctx: SendContext): Promise<DeliveryOutcome[]> {
  const connection = connectionOf(ctx);
  if (!connection) return inputs.map(() => ({ kind: 'failed', error: NOT_CONNECTED }));
  const now = ctx.now();
  return sendBuiltBatch(
    inputs,
    (input) => buildRedditEvent(input, connection.pixelId, now),
    async (events) => post(ctx, connection.pixelId, await connection.token(), events),
    MAX_EVENTS_PER_REQUEST,
  );
}

/** Name of the synthetic test event: a custom event, so a test never counts as one of the site's signups or leads. */
export const TEST_EVENT_NAME = 'CnvConnectionTest';

/**
 * Sends one synthetic custom event, with the connection's Event Testing id when it has one, and says what Reddit
 * answered. Its only match key is a hashed constant external_id: no one's data.
 */
export async function testRedditConnection(ctx: SendContext): Promise<ConnectionTestResult> {
  const connection = connectionOf(ctx);
  if (!connection) return { ok: false, message: NOT_CONNECTED.message, error: NOT_CONNECTED };
  const configured = ctx.connection.settings.test_id;
  const testId = typeof configured === 'string' && configured !== '' ? configured : undefined;
  const now = ctx.now();
  const event: RedditEvent = {
    event_at: now.getTime(),
    action_source: 'OTHER',
    type: { tracking_type: 'CUSTOM', custom_event_name: TEST_EVENT_NAME },
    user: { external_id: sha256Hex('cnv-connection-test') },
    metadata: { conversion_id: `cnv-connection-test-${now.getTime()}` },
  };
  const verdict = await post(ctx, connection.pixelId, await connection.token(), [event], testId);
  if (verdict.kind === 'delivered') {
    return {
      ok: true,
      message: testId
        ? `Reddit accepted a test event for pixel ${connection.pixelId}; it shows in Events Manager → Event Testing (${testId}).`
        : `Reddit accepted a test event for pixel ${connection.pixelId}: the custom event ${TEST_EVENT_NAME}, which no campaign optimises on.`,
    };
  }
  return { ok: false, message: verdict.error.message, error: verdict.error };
}
