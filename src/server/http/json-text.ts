/** Parsing a JSON request body into values PostgreSQL can store. */
import { ApiError } from './errors';

/**
 * Parses JSON text; a syntax error or a string holding a NUL character (which PostgreSQL text and jsonb cannot store)
 * is a 400 that says so, instead of a failed write. `__proto__` keys are dropped, as Fastify's own parser does.
 */
export function parseJsonText(text: string, what = 'The request body'): unknown {
  let nul = false;
  let value: unknown;
  try {
    value = JSON.parse(text, (key, item: unknown) => {
      if (key === '__proto__') return undefined;
      if (typeof item === 'string' && item.includes('\u0000')) nul = true;
      return item;
    });
  } catch {
    throw new ApiError(400, 'invalid_request_error', 'invalid_json', `${what} is not valid JSON.`);
  }
  if (nul) throw new ApiError(400, 'invalid_request_error', 'invalid_json', `${what} holds a NUL character (\\u0000), which cannot be stored.`);
  return value;
}
