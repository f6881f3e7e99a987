/** Outbound notifications: endpoints, the outbox, Standard Webhooks signing, and the worker that sends them. */
export * from './kinds';
export { newEndpointSecret, signedHeaders } from './signing';
export { newEndpointUrlProblem } from './url';
export { deleteEndpoint, enqueueDestinationNotification, enqueueNotification, findEndpoint, insertEndpoint, listEndpointsPage, recentNotifications, type EndpointRow, type NotificationRecord } from './sql';
export { notifyReauthorizationRequired } from './hooks';
export { startNotificationWorker, type NotificationWorker, type NotificationWorkerOptions } from './worker';
