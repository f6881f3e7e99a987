/** cnv/client: report signups from your Node backend through the signed webhook. */
export { createCnvClient, type CnvClient } from './client';
export { CnvConfigError, DEFAULTS, type CnvClientOptions, type RetryEvent } from './options';
export type { AdjustConversionInput, ReportConversionInput, ReportSignupInput } from './report-input';
export type {
  ReportSignupResult,
  ReportDelivered,
  ReportNoToken,
  ReportInvalidInput,
  ReportRejected,
  ReportGaveUp,
  ReportUnexpectedResponse,
  ReportConversionResult,
  AdjustConversionResult,
  ReportOutcome,
} from './result';
export type { TransientFailure } from './attempt';
export type { ServiceError } from './service-error';
export { readCorrelationToken, type RequestLike } from './correlation';
export { computeSignature, generateTestSignatureHeader, type TestSignatureHeaderInput } from '../protocol/hmac-node';
export { CORRELATION_COOKIE } from '../protocol/cookies';
export {
  SIGNATURE_HEADER,
  adjustmentPath,
  conversionPath,
  saasSignupPath,
  type AdjustmentReport,
  type AdjustmentResponse,
  type ConversionReport,
  type ConversionResponse,
  type SaasSignupReport,
  type SaasSignupResponse,
} from '../protocol/webhook';
