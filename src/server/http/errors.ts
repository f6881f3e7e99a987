/** The one error envelope of the service: `{"error": {"type", "code", "message", "param"?}}`, shaped in src/protocol/errors.ts. */
import type { ErrorBody, ErrorType } from '../../protocol/errors';

export type { ErrorBody, ErrorType } from '../../protocol/errors';

/** An error with an HTTP status that the error handler turns into the envelope. Domain code throws these. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly type: ErrorType,
    readonly code: string,
    message: string,
    readonly param?: string,
  ) {
    super(message);
    this.name = 'ApiError';
  }

  /** Headers the answer carries besides the envelope (a 401's `WWW-Authenticate`); the error handler sends them. */
  headers: Readonly<Record<string, string>> = {};

  /** This error, answered with these headers too. */
  withHeaders(headers: Record<string, string>): this {
    this.headers = { ...this.headers, ...headers };
    return this;
  }

  /** The JSON body of this error. */
  toBody(): ErrorBody {
    return { error: { type: this.type, code: this.code, message: this.message, ...(this.param ? { param: this.param } : {}) } };
  }
}

/** 400 for an invalid parameter. */
export function invalidParam(param: string, message: string, code = 'parameter_invalid'): ApiError {
  return new ApiError(400, 'invalid_request_error', code, message, param);
}

/** 400 for a missing required parameter. */
export function missingParam(param: string): ApiError {
  return new ApiError(400, 'invalid_request_error', 'parameter_missing', `Missing required parameter: ${param}.`, param);
}

/** 404 for an object that does not exist (or belongs to another account: the same answer, never a hint). */
export function notFound(what: string, id: string, param = 'id'): ApiError {
  return new ApiError(404, 'not_found_error', 'resource_missing', `No such ${what}: '${printable(id)}'.`, param);
}

/** Characters never echoed raw in a message: C0 and C1 controls, DEL, line and paragraph separators, unpaired surrogates. */
const UNPRINTABLE = /[\u0000-\u001f\u007f-\u009f\u2028\u2029]|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g;

/**
 * A piece of request input made safe to quote in an error message: control characters and unpaired surrogates shown as
 * `\uXXXX` escapes (a message never carries a raw newline or NUL into a log line or a terminal), cut to `max` characters.
 */
export function printable(text: string, max = 100): string {
  const cut = text.length > max ? `${text.slice(0, max)}…` : text;
  return cut.replace(UNPRINTABLE, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}
