/** The uploads the local fake Google Ads API received, found per conversion so a page can show exactly what was sent. */
import type { FakeGoogleAdsRequest } from './fake-google-ads';

/** One click conversion as the fake received it, with the request it came in. */
export interface ReceivedUpload {
  receivedAt: Date;
  path: string;
  answeredStatus: number | null;
  /** What the fake found wrong with the request (empty for a well-formed upload). */
  problems: string[];
  /** The ClickConversion of the body (conversionAction, conversionDateTime, gclid, orderId, userIdentifiers...). */
  conversion: Record<string, unknown>;
}

/** Something that holds the requests the fake received (the fake itself, in the demo process). */
export interface UploadLog {
  requests: readonly FakeGoogleAdsRequest[];
}

/** Every received conversion whose orderId is the given one, oldest first (a retried send shows up more than once). */
export function uploadsWithOrderId(log: UploadLog, orderId: string): ReceivedUpload[] {
  const found: ReceivedUpload[] = [];
  for (const request of log.requests) {
    const conversions: unknown = request.body?.conversions;
    if (!Array.isArray(conversions)) continue;
    for (const conversion of conversions) {
      if (conversion && typeof conversion === 'object' && conversion.orderId === orderId) {
        found.push({
          receivedAt: request.receivedAt,
          path: request.path,
          answeredStatus: request.answeredStatus,
          problems: request.problems,
          conversion: conversion as Record<string, unknown>,
        });
      }
    }
  }
  return found;
}
