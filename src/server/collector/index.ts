/** The public face of this folder: what other parts of the service may import. */
export * from './config';
export * from './retention';
export * from './site-cache';
export * from './sql';
