/** Bearer-key authentication of the REST API: which account a request acts for. */
import type { FastifyRequest } from 'fastify';
import type { Queryable } from '../db/db';
import { findApiKeyAccount, type Account } from '../accounts';
import { ApiError } from './errors';

const accounts = new WeakMap<FastifyRequest, { account: Account; keyId: string }>();

/**
 * The challenge of every 401 (RFC 9110 §11.6.1 requires one; RFC 6750 §3 gives its form): `Bearer` when no usable key
 * was sent (no header, or not of the form `Bearer <key>`), `Bearer error="invalid_token"` when a key was sent and is
 * unknown or revoked.
 */
const BEARER_CHALLENGE = 'Bearer';
const INVALID_TOKEN_CHALLENGE = 'Bearer error="invalid_token"';

function unauthorized(code: 'missing_api_key' | 'invalid_api_key', message: string, challenge: string): ApiError {
  return new ApiError(401, 'authentication_error', code, message).withHeaders({ 'www-authenticate': challenge });
}

/** Reads `Authorization: Bearer <key>` and returns the key's account and id, or throws a 401 saying what is wrong. */
export async function authenticate(db: Queryable, header: string | undefined): Promise<{ account: Account; keyId: string }> {
  if (!header) throw unauthorized('missing_api_key', 'No API key: send the header Authorization: Bearer <API_KEY>.', BEARER_CHALLENGE);
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
  if (!match) throw unauthorized('invalid_api_key', 'The Authorization header must have the form: Bearer <API_KEY>.', BEARER_CHALLENGE);
  const found = await findApiKeyAccount(db, match[1]!);
  if (!found) throw unauthorized('invalid_api_key', 'Invalid API key: it is unknown or was revoked.', INVALID_TOKEN_CHALLENGE);
  return found;
}

/** An onRequest hook that authenticates every request of the plugin scope it is added to. */
export function bearerAuthHook(db: Queryable) {
  return async (request: FastifyRequest): Promise<void> => {
    accounts.set(request, await authenticate(db, request.headers.authorization));
  };
}

/** The account the current request was authenticated as (only inside a scope with the bearer hook). */
export function accountOf(request: FastifyRequest): Account {
  const found = accounts.get(request);
  if (!found) throw new Error('accountOf() called outside the authenticated REST scope');
  return found.account;
}

/** The id of the API key the current request was authenticated with (only inside a scope with the bearer hook). */
export function apiKeyIdOf(request: FastifyRequest): string {
  const found = accounts.get(request);
  if (!found) throw new Error('apiKeyIdOf() called outside the authenticated REST scope');
  return found.keyId;
}
