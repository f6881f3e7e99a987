/** The public face of this folder: what other parts of the service may import. */
export * from './backoff';
export * from './outbox-sql';
export { SETTLED_ACTION_STATUSES, eventStatusAggregate, type EventStatus } from './sql';
export * from './wakeup';
export { redeliverFailedActions, redeliverFailedOfDestination, type RedeliveryResult, type DestinationRedelivery, type DestinationRedeliveryFilter } from './redeliver';
export * from './worker';
