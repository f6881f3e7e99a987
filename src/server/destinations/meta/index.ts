/** The `meta` destination: Meta's Conversions API, connected by a dataset ID and a system-user access token (no OAuth). */
import type { DestinationPlatform } from '../destination';
import { checkMetaAction } from './action-config';
import { META_CONNECT_FIELDS, parseMetaConnectForm } from './connect';
import { MAX_EVENTS_PER_REQUEST } from './request';
import { sendMetaBatch, testMetaConnection } from './send';

/** Meta Conversions API as a destination platform. */
export const metaPlatform: DestinationPlatform = {
  type: 'meta',
  label: 'Meta',
  consent:
    'cnv will send your site’s signups and leads to your Meta dataset through the Conversions API: hashed email, phone and name, the Meta click and browser ids, and the visitor’s browser and IP address.',
  oauth: null,
  fields: META_CONNECT_FIELDS,
  parseConnectForm: parseMetaConnectForm,
  checkAction: checkMetaAction,
  maxBatchSize: MAX_EVENTS_PER_REQUEST,
  sendBatch: sendMetaBatch,
  testConnection: testMetaConnection,
  // Meta's Conversions API documents sending server events (POST /{pixel_id}/events) and deduplicating them by
  // event_id; none of its pages (Using the API, Parameters, Value Optimization) defines changing the value of, or taking
  // back, an event already received. Searched for an update, refund or delete operation: none found.
  adjustmentsUnsupportedReason:
    "Meta's Conversions API has no operation that changes the value of, or takes back, an event it has received.",
};
