/**
 * The end of a click journey: the customer's backend reports the signup through the signed webhook (the real client,
 * src/client) with the token it received, and the service uploads it to the fake Google's Data Manager API.
 */
import { randomUUID } from 'node:crypto';
import { createCnvClient } from '../../src/client';
import type { E2EEnv, SiteName } from './env';
import { apiCall } from './service-api';

/** The PII-free summary of the request the service sent to Google (an action's `request` on GET /v1/events). */
export interface GoogleUploadRequest extends Record<string, unknown> {
  clickIdKind: string | null;
  clickId: string | null;
}

interface EventAction {
  destination: string;
  status: string;
  error?: unknown;
  request: Record<string, unknown> | null;
}

interface EventRecord {
  id: string;
  status: string;
  customer_event_id: string;
  actions: EventAction[];
}

/** An event as GET /v1/events lists it, with what the form trigger stores in it. */
export interface FormEventRecord extends EventRecord {
  flow_id: string | null;
  trigger: string | null;
  email: string | null;
  submission_id?: string;
  integration?: string;
  form_id?: string;
}

/** How long to wait for the delivery worker to upload (a bound on a condition, not a timing assertion). */
const UPLOAD_WAIT_MS = 15_000;
const POLL_INTERVAL_MS = 100;

/**
 * Reports a signup for `siteName` (a unique customer_event_id and email) with the correlation token, given as the
 * token itself or as the Cookie header the backend received (the client reads the token from it), waits until the
 * event is `completed` and returns the request the service sent to Google Ads.
 */
export async function reportAndAwaitUpload(
  env: E2EEnv,
  siteName: SiteName,
  correlation: string | { cookieHeader: string },
): Promise<GoogleUploadRequest> {
  const webhook = env.webhooks[siteName];
  if (!webhook) throw new Error(`site ${siteName} has no API trigger source in the browser tests' setup (see global-setup.ts)`);
  const unique = randomUUID();
  const customerEventId = `e2e_${siteName}_${unique}`;
  const email = `signup-${unique}@example.com`;

  const client = createCnvClient({
    webhookBaseUrl: env.serviceBase,
    siteKey: env.sites[siteName].key,
    triggerKey: webhook.triggerKey,
    secret: webhook.secret,
    maxAttempts: 1,
  });
  const token = typeof correlation === 'string' ? { correlationToken: correlation } : { cookieHeader: correlation.cookieHeader };
  const result = await client.reportSignup({ ...token, customerEventId, email });
  if (!result.ok) throw new Error(`reportSignup for ${siteName} failed: ${JSON.stringify(result)}`);

  const deadline = Date.now() + UPLOAD_WAIT_MS;
  let last: EventRecord | undefined;
  for (;;) {
    const { data } = await apiCall<{ data: EventRecord[] }>(env.serviceBase, env.apiKey, 'GET', `/v1/events?email=${encodeURIComponent(email)}`);
    last = data.find((e) => e.customer_event_id === customerEventId);
    if (last?.status === 'completed') {
      const google = last.actions.find((a) => a.destination === 'google-ads');
      if (!google?.request) throw new Error(`event ${last.id} completed without a google-ads request: ${JSON.stringify(last)}`);
      return google.request as GoogleUploadRequest;
    }
    if (last?.status === 'failed') throw new Error(`event ${last.id} failed: ${JSON.stringify(last)}`);
    if (Date.now() > deadline) throw new Error(`event ${customerEventId} not completed within ${UPLOAD_WAIT_MS} ms; last seen: ${JSON.stringify(last ?? null)}`);
    await new Promise((resolve) => setTimeout(resolve, POLL_INTERVAL_MS));
  }
}

/** The events GET /v1/events lists for a query (`email=…` or `flow_id=…`), newest first. */
export async function listEvents(env: E2EEnv, query: { email: string } | { flow_id: string }): Promise<FormEventRecord[]> {
  const { data } = await apiCall<{ data: FormEventRecord[] }>(env.serviceBase, env.apiKey, 'GET', `/v1/events?${new URLSearchParams(query)}`);
  return data;
}

/**
 * Waits until the form-submission event of `submissionId` that `query` lists is `completed` (a delivery failure throws)
 * and returns it.
 */
export async function awaitFormEventCompleted(env: E2EEnv, query: { email: string } | { flow_id: string }, submissionId: string): Promise<FormEventRecord> {
  const deadline = Date.now() + UPLOAD_WAIT_MS;
  let last: FormEventRecord | undefined;
  for (;;) {
    last = (await listEvents(env, query)).find((e) => e.submission_id === submissionId);
    if (last?.status === 'completed') return last;
    if (last?.status === 'failed') throw new Error(`event ${last.id} failed: ${JSON.stringify(last)}`);
    if (Date.now() > deadline) throw new Error(`no completed event of submission ${submissionId} within ${UPLOAD_WAIT_MS} ms; last seen: ${JSON.stringify(last ?? null)}`);
    await new Promise((resolve) => setTimeout(resolve, POLL_INTERVAL_MS));
  }
}
