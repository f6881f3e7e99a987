/** The request bodies the server benchmarks send: loader-shaped snapshots and webhook reports, each one distinct. */
import { createHash, randomBytes } from 'node:crypto';

/** A fresh correlation token: 16 random bytes as 22 base64url characters, as the loader makes them. */
export function newCorrelationToken() {
  return randomBytes(16).toString('base64url');
}

/** The gclid the benchmark puts in the snapshot of `token`, so a delivered upload can be traced back to its report. */
export function gclidFor(token) {
  return `bench.${token}`;
}

/** A snapshot body as the loader sends it after an ad landing (touch with gclid and UTM, two platform cookies). */
export function snapshotBody(token, pageOrigin, now = new Date()) {
  const at = now.toISOString();
  return JSON.stringify({
    correlation_token: token,
    occurred_at: at,
    trigger: 'form_submit',
    page_url: `${pageOrigin}/signup`,
    referrer: `${pageOrigin}/pricing`,
    touch: {
      click_ids: { gclid: gclidFor(token) },
      utm: { utm_source: 'google', utm_medium: 'cpc', utm_campaign: 'spring_launch' },
      landing_page_url: `${pageOrigin}/pricing?gclid=${gclidFor(token)}&utm_source=google&utm_medium=cpc&utm_campaign=spring_launch`,
      referrer: 'https://www.google.com/',
      captured_at: at,
    },
    cookies: { _gcl_au: '1.1.1234567890.1700000000', _fbp: 'fb.1.1700000000000.1234567890' },
  });
}

/** The email of a benchmark report (not a gmail address, so Google's normalisation is trim and lower case only). */
export function emailFor(customerEventId) {
  return `${customerEventId.toLowerCase()}@bench.example.com`;
}

/** SHA-256 hex of the normalised email: the `hashedEmail` the Google Ads upload carries for it. */
export function hashedEmailFor(customerEventId) {
  return createHash('sha256').update(emailFor(customerEventId)).digest('hex');
}

/** A webhook report body; with a token it is correlated, without one it is sent as the client does with allowUncorrelated. */
export function reportBody(customerEventId, token) {
  return JSON.stringify({
    correlation_token: token,
    customer_event_id: customerEventId,
    email: emailFor(customerEventId),
    first_name: 'Ada',
    last_name: 'Lovelace',
    ...(token ? {} : { allow_uncorrelated: true }),
  });
}
