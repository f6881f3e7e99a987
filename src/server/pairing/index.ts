/** The public face of this folder: what other parts of the service may import. */
export * from './late-pairing';
export * from './pairing';
export * from './sql';
