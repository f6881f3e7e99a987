/** The LinkedIn Conversions API destination (`linkedin`): OAuth, connect form, action check, batch send, connection test. */
import type { DestinationPlatform } from '../destination';
import { checkLinkedInAction } from './action-config';
import { linkedinFields, parseLinkedInConnectForm } from './connect';
import { linkedinOAuth } from './oauth';
import { MAX_EVENTS_PER_BATCH } from './request';
import { sendLinkedInBatch } from './send';
import { testLinkedInConnection } from './test-connection';

export { linkedinOAuth } from './oauth';

export const linkedinPlatform: DestinationPlatform = {
  type: 'linkedin',
  label: 'LinkedIn',
  consent:
    'cnv will send your conversions to LinkedIn Ads through the Conversions API (hashed email, LinkedIn click id, and first and last name when given) and read your ad accounts and conversion rules.',
  oauth: linkedinOAuth,
  fields: linkedinFields,
  parseConnectForm: parseLinkedInConnectForm,
  checkAction: (config, param) => checkLinkedInAction(config, param),
  maxBatchSize: MAX_EVENTS_PER_BATCH,
  sendBatch: sendLinkedInBatch,
  testConnection: testLinkedInConnection,
  // LinkedIn's Conversions API (POST /rest/conversionEvents, BATCH_CREATE) only creates conversion events; its pages
  // define no update or delete of a conversion event already streamed.
  adjustmentsUnsupportedReason:
    "LinkedIn's Conversions API only creates conversion events: it has no operation that changes the value of, or takes back, one it has received.",
};
