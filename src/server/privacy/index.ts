/** The public face of this folder: what other parts of the service may import. */
export { clearExpiredIdentity, identityWindowStart, startIdentityRetention, type IdentityPurge } from './identity-retention';
export { withoutHashes } from './sql';
