/** The one definition of every fact the loader, the service and the client agree on. */
export * from './cookies';
export * from './signals';
export * from './collector';
export * from './origin';
export * from './webhook';
export * from './install';
