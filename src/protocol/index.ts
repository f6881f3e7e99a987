/** The one definition of every fact the loader, the service and the client agree on. */
export * from './cookies';
export * from './signals';
export * from './collector';
export * from './forms';
export * from './page-filter';
export * from './origin';
export * from './webhook';
export * from './currencies';
export * from './install';
export * from './errors';
export * from './identity';
export * from './retry-after';
