/** Connecting Google Ads the way a person does, against the fake Google: open the handoff, sign in, fill the form. */
import type { FakeGoogle } from '../../../src/demo/fakes/google';
import { cookieHeaderFrom } from './browser-cookies';

/** The settings that point the service's Google OAuth and Data Manager API at the fake. */
export function googleSettings(google: FakeGoogle): Record<string, string> {
  return {
    CNV_GOOGLE_OAUTH_AUTHORIZE_URL: google.urls.authorize,
    CNV_GOOGLE_OAUTH_TOKEN_URL: google.urls.token,
    CNV_GOOGLE_OAUTH_CLIENT_ID: google.client.id,
    CNV_GOOGLE_OAUTH_CLIENT_SECRET: google.client.secret,
    CNV_GOOGLE_DATA_MANAGER_API_BASE: google.urls.apiBase,
  };
}

/**
 * Follows a google-ads handoff's hosted url through the OAuth step (the fake consents at once) and submits the account
 * form. `fetchService` fetches a path (with query) from the service as a browser would. Returns the final page.
 */
export async function connectGoogleAds(
  fetchService: (pathAndQuery: string, init?: RequestInit) => Promise<Response>,
  hostedUrl: string,
  form: Record<string, string>,
): Promise<{ status: number; html: string }> {
  const path = new URL(hostedUrl).pathname;
  const start = await fetchService(`${path}/authorize`, { redirect: 'manual' });
  if (start.status !== 302) throw new Error(`sign-in did not redirect: ${start.status}`);
  const consent = await fetch(start.headers.get('location')!, { redirect: 'manual' });
  const callback = new URL(consent.headers.get('location')!);
  // The browser that started the sign-in comes back with the cookie /authorize set.
  const cookie = cookieHeaderFrom(start.headers.getSetCookie());
  const back = await fetchService(callback.pathname + callback.search, { redirect: 'manual', headers: { cookie } });
  if (back.status !== 303) throw new Error(`the OAuth callback failed: ${back.status} ${await back.text()}`);
  const done = await fetchService(path, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams(form).toString(),
  });
  return { status: done.status, html: await done.text() };
}
