/** The REST executor of `cnv mcp` (stdio): fetch against the running service, with the caller's Bearer key. */
import type { ErrorBody } from '../../protocol/errors';
import { queryString, type CallRest } from './tools';

/** How long one REST call may take before the tool answers with an error. */
const REST_TIMEOUT_MS = 30_000;

function unreachable(base: string, why: string): ErrorBody {
  return {
    error: {
      type: 'api_error',
      code: 'service_unreachable',
      message: `The cnv service at ${base} did not answer (${why}): start it (npm start), or set CNV_API_URL to its address.`,
    },
  };
}

/** A CallRest that sends each request to `apiUrl` (the service's base URL) with `Authorization: Bearer <apiKey>`. */
export function restOverFetch(apiUrl: string, apiKey: string, fetchImpl: typeof fetch = fetch): CallRest {
  const base = apiUrl.replace(/\/+$/, '');
  return async (method, path, { query, body }) => {
    let response: Response;
    let text: string;
    try {
      response = await fetchImpl(`${base}${path}${queryString(query)}`, {
        method,
        headers: {
          authorization: `Bearer ${apiKey}`,
          accept: 'application/json',
          ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
        },
        ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
        signal: AbortSignal.timeout(REST_TIMEOUT_MS),
      });
      text = await response.text();
    } catch (error) {
      const why = error instanceof Error && error.name === 'TimeoutError' ? `no answer within ${REST_TIMEOUT_MS / 1000} s` : 'connection failed';
      return { status: 503, body: unreachable(base, why) };
    }
    try {
      return { status: response.status, body: text === '' ? null : (JSON.parse(text) as unknown) };
    } catch {
      return { status: response.status, body: null };
    }
  };
}
