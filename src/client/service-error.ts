/** The service's error envelope `{"error": {type, code, message, param}}` and what a rejection means for the caller. */

/** The `error` object of the service's error envelope. */
export interface ServiceError {
  type: string;
  code: string;
  message: string;
  param?: string;
}

/** The error of an error response body, or null when the body is not the service's envelope. */
export function parseServiceError(text: string): ServiceError | null {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return null;
  }
  const error = (parsed as { error?: unknown } | null)?.error as Record<string, unknown> | undefined;
  if (!error || typeof error !== 'object' || typeof error.message !== 'string') return null;
  return {
    type: typeof error.type === 'string' ? error.type : 'unknown',
    code: typeof error.code === 'string' ? error.code : 'unknown',
    message: error.message,
    ...(typeof error.param === 'string' ? { param: error.param } : {}),
  };
}

/** A sentence for a log line: what the service said and, where the status tells, the likely cause. */
export function describeRejection(httpStatus: number, error: ServiceError | null): string {
  const said = error ? ` ${error.code}: ${error.message}` : '';
  if (httpStatus === 401) {
    return (
      `The service rejected the signature (HTTP 401${said ? `,${said}` : ''}). Check that \`secret\` is this trigger's ` +
      `current webhook secret (it may have been rotated) and that this machine's clock is correct.`
    );
  }
  if (httpStatus === 404) {
    return `The service found no such webhook (HTTP 404${said ? `,${said}` : ''}). Check siteKey, triggerKey and webhookBaseUrl.`;
  }
  return `The service rejected the report (HTTP ${httpStatus}${said ? `,${said}` : ''}).`;
}
