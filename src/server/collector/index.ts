/** The public face of this folder: what other parts of the service may import. */
export * from './config';
export * from './retention';
export * from './site-cache';
export * from './sql';
export { listOriginTraffic, refusalReasonOf, ORIGIN_TRAFFIC_ROWS_PER_SITE } from './origin-traffic';
export type { OriginRefusalReason, OriginTrafficKind, OriginTrafficRow } from './origin-traffic';
