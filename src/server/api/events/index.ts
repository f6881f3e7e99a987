/** The public face of this folder: what other parts of the service may import. */
export { EventIdParams, ListEventsQuery, URL_ENCODE_OFFSET } from './schemas';
export { redeliverEvent } from './redeliver';
export { getEvent, listEvents, standingAdjustment, EVENTS_LIMIT_DEFAULT, EVENTS_LIMIT_MAX, EVENT_STATUSES, type EventActionRecord, type EventRecord, type ListOnly } from './events';
