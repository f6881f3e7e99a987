/** What both of Google's APIs' connection tests answer when they cannot pass: no conversion action, or a refusal. */
import type { ConnectionTestResult, DeliveryError } from '../destination';

const CONVERSION_ACTION_MISSING: DeliveryError = {
  code: 'conversion_action_missing',
  message: 'A test of a Google Ads connection needs the id of one of its conversion actions.',
  hint: "Give the id of a conversion action of type 'Import from clicks': its number, or its resource name customers/{customer id}/conversionActions/{id}.",
};

/** Google validates a whole upload, which names one conversion action: without one, the test cannot ask. */
export const conversionActionMissing = (): ConnectionTestResult => ({ ok: false, message: CONVERSION_ACTION_MISSING.message, error: CONVERSION_ACTION_MISSING });

/**
 * A test Google refused. A token refused for its scope (oauth.ts scopeRefused, code `reauthorization_required`) is
 * refused the same way for every upload, and no refresh adds a scope: the connection needs a new sign-in now.
 */
export const testRefused = (error: DeliveryError, tokenRefused: boolean): ConnectionTestResult => ({
  ok: false, message: error.message, error, ...(tokenRefused && error.code === 'reauthorization_required' ? { credentialRefused: true } : {}),
});
