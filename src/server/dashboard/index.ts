/** The public face of this folder: what other parts of the service may import. */
export { issueSignInLink, SIGN_IN_TTL_MS, SIGN_IN_PATH } from './sessions';
