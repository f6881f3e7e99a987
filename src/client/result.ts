/** What `reportSignup` resolves to: one shape per expected outcome, told apart by `ok` and `reason`. */
import type { AdjustmentResponse, ConversionResponse, SaasSignupResponse } from '../protocol/webhook';
import type { TransientFailure } from './attempt';
import type { ServiceError } from './service-error';

/** The service accepted the report (also when it had seen this customerEventId before). */
export interface ReportDelivered<R = SaasSignupResponse> {
  ok: true;
  sent: true;
  /**
   * The parsed webhook response: status, promoted_count, customer_event_id (and `match` for a later stage); for an
   * adjustment, {status: 'accepted', adjustment_id, events}.
   */
  response: R;
  attempts: number;
  /** The token that was sent; null when sent uncorrelated. */
  correlationToken: string | null;
  /** Why no token was sent, when none was: no cookie, or a cookie value that is not a token. */
  tokenProblem: 'missing' | 'malformed' | null;
}

/** Nothing was sent: there was no correlation token and `allowUncorrelated` was not true. */
export interface ReportNoToken {
  ok: false;
  sent: false;
  reason: 'no_correlation_token';
  /** `missing`: no such cookie; `malformed`: a cookie whose value is not a token, ignored. */
  tokenProblem: 'missing' | 'malformed';
  message: string;
}

/** Nothing was sent: an input field is invalid. */
export interface ReportInvalidInput {
  ok: false;
  sent: false;
  reason: 'invalid_input';
  param: string;
  message: string;
}

/** The service answered a 4xx other than 408/429 (or a redirect): retrying the same request cannot help. */
export interface ReportRejected {
  ok: false;
  sent: true;
  reason: 'rejected';
  httpStatus: number;
  /** The service's error envelope, when the body was one. */
  error: ServiceError | null;
  message: string;
  attempts: number;
}

/** Every attempt failed transiently (5xx, 408, 429, timeout, network); the report may or may not have arrived. */
export interface ReportGaveUp {
  ok: false;
  sent: true;
  reason: 'gave_up';
  lastFailure: TransientFailure;
  message: string;
  attempts: number;
}

/** A 2xx whose body is not a webhook response: a proxy or a wrong base URL answered, not the service. */
export interface ReportUnexpectedResponse {
  ok: false;
  sent: true;
  reason: 'unexpected_response';
  httpStatus: number;
  message: string;
  attempts: number;
}

/** The outcomes every call shares: sent and accepted, refused before sending, refused by the service, given up, not the service. */
export type ReportOutcome<R> =
  | ReportDelivered<R>
  | ReportInvalidInput
  | ReportRejected
  | ReportGaveUp
  | ReportUnexpectedResponse;

export type ReportSignupResult<R = SaasSignupResponse> = ReportOutcome<R> | ReportNoToken;

/**
 * What `reportConversion` resolves to: as reportSignup, the response saying how the click was found (`match`); never
 * `no_correlation_token`: a later stage finds its click through its signup's customer id when it has no token.
 */
export type ReportConversionResult = ReportOutcome<ConversionResponse>;

/** What `adjustConversion` resolves to: as reportSignup, the response `{status: 'accepted', adjustment_id, events}`; an adjustment takes no token. */
export type AdjustConversionResult = ReportOutcome<AdjustmentResponse>;
