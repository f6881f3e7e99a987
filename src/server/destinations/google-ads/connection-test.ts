/** What both of Google's APIs' connection tests answer when they have no conversion action to validate against. */
import type { ConnectionTestResult, DeliveryError } from '../destination';

const CONVERSION_ACTION_MISSING: DeliveryError = {
  code: 'conversion_action_missing',
  message: 'A test of a Google Ads connection needs the id of one of its conversion actions.',
  hint: "Give the id of a conversion action of type 'Import from clicks': its number, or its resource name customers/{customer id}/conversionActions/{id}.",
};

/** Google validates a whole upload, which names one conversion action: without one, the test cannot ask. */
export const conversionActionMissing = (): ConnectionTestResult => ({ ok: false, message: CONVERSION_ACTION_MISSING.message, error: CONVERSION_ACTION_MISSING });
