/** The one error envelope of the service: `{"error": {"type", "code", "message", "param"?}}`. */

export type ErrorType =
  | 'invalid_request_error'
  | 'authentication_error'
  | 'permission_error'
  | 'not_found_error'
  | 'conflict_error'
  | 'rate_limit_error'
  | 'api_error';

export interface ErrorBody {
  error: { type: ErrorType; code: string; message: string; param?: string };
}

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
  return new ApiError(404, 'not_found_error', 'resource_missing', `No such ${what}: '${id}'.`, param);
}
