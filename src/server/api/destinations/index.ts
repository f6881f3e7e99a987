/** The public face of this folder: what other parts of the service may import. */
export { allDestinationRecords, getDestination, listDestinationRecords, redeliverDestination, testDestination, type DestinationRecord } from './destinations';
export { DestinationIdParams, ListDestinationsQuery, REDELIVER_LIMIT_MAX, RedeliverDestinationBody } from './schemas';
