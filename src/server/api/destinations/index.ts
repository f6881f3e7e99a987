/** The public face of this folder: what other parts of the service may import. */
export { allDestinationRecords, getDestination, listDestinationRecords, testDestination, type DestinationRecord } from './destinations';
export { DestinationIdParams, ListDestinationsQuery } from './schemas';
