/**
 * The legacy path: the Google Ads API's uploadClickConversions, kept as an explicit choice of a connection
 * (`api: google_ads_api`) for developer tokens Google still allows. Since 15 June 2026 Google refuses it for tokens
 * that had not used it (CUSTOMER_NOT_ALLOWLISTED_FOR_THIS_FEATURE); new connections use the Data Manager API.
 */
import type { DeliveryInput, DeliveryOutcome, SendContext } from '../destination';
import { googleAdsAdapter } from './legacy-send';
import type { DeliveryInput as LegacyInput } from './legacy-adapter';

/** Uploads a batch through uploadClickConversions with the connection's access and developer tokens. */
export async function sendLegacyBatch(inputs: readonly DeliveryInput[], ctx: SendContext): Promise<DeliveryOutcome[]> {
  const accessToken = await ctx.accessToken();
  const { settings } = ctx.connection;
  const destinationSettings = {
    customer_id: settings.customer_id,
    login_customer_id: settings.login_customer_id,
    access_token: accessToken,
    developer_token: ctx.connection.credentials.developer_token,
  };
  const legacy: LegacyInput[] = inputs.map((input) => {
    const id = (input.actionConfig.conversion as { id?: unknown } | undefined)?.id;
    return {
      eventId: input.eventId,
      eventActionId: input.eventActionId,
      destination: input.destination,
      conversionId: typeof id === 'string' ? id : null,
      occurredAt: input.occurredAt,
      siteKey: input.siteKey,
      siteTimezone: input.siteTimezone,
      customerEventId: input.customerEventId,
      clickIds: input.clickIds,
      identity: input.identity,
      destinationSettings,
    };
  });
  return googleAdsAdapter.send(legacy, { settings: ctx.settings, signal: ctx.signal, timeoutMs: ctx.timeoutMs, now: ctx.now });
}
