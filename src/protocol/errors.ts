/** The service's one error envelope, `{"error": {"type", "code", "message", "param"?}}`: the service writes it, the client reads it. */

/** The kinds of error the service answers with (the envelope's `error.type`). */
export const ERROR_TYPES = [
  'invalid_request_error',
  'authentication_error',
  'permission_error',
  'not_found_error',
  'conflict_error',
  'rate_limit_error',
  'api_error',
] as const;

/** One of {@link ERROR_TYPES}. */
export type ErrorType = (typeof ERROR_TYPES)[number];

/** The `error` object of the envelope. */
export interface ErrorDetail {
  type: ErrorType;
  /** Machine-readable reason, e.g. `parameter_invalid`, `resource_missing`. */
  code: string;
  /** A sentence for a person. */
  message: string;
  /** The request parameter at fault, when there is one. */
  param?: string;
}

/** The JSON body of every error response. */
export interface ErrorBody {
  error: ErrorDetail;
}

/** Whether a value is one of the error types this protocol defines. */
export function isErrorType(value: unknown): value is ErrorType {
  return (ERROR_TYPES as readonly unknown[]).includes(value);
}
