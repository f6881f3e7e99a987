/** Destinations: the ad platforms (one folder each), their connections and credentials, as delivery and the API see them. */
export * from './destination';
export * from './registry';
export * from './sql';
export * from './connections';
export { authorizeUrl, exchangeCode, oauthClientRefusedError, oauthClientSetting, pkcePair, scopesToAsk } from './oauth';
export * from './client-refusals';
export { platformLogo, monogramOf } from './logos';
export { LIMITED_DATA_USE } from './limited-data-use';
