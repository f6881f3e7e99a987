/** Signing in to the dashboard in process as a person does: open the link (a page with a button), then press "Sign in". */
import type { FastifyInstance, LightMyRequestResponse } from 'fastify';

/** The token of a sign-in page's form (its hidden field), or undefined when the page has no such form. */
export function formToken(body: string): string | undefined {
  return /<input type="hidden" name="token" value="([^"]+)">/.exec(body)?.[1];
}

/**
 * Opens a sign-in link (GET: must show its page, 200) and sends its form as the browser does (same-origin POST of the
 * token, and the session's CSRF token when signed in): the POST's answer, a 303 with the session cookie when the link worked.
 */
export async function pressSignIn(app: FastifyInstance, link: string | URL, cookie?: string): Promise<LightMyRequestResponse> {
  const url = new URL(link);
  const page = await app.inject({ method: 'GET', url: url.pathname + url.search, ...(cookie ? { headers: { cookie } } : {}) });
  if (page.statusCode !== 200) throw new Error(`the sign-in page answered ${page.statusCode}`);
  const token = formToken(page.body);
  if (!token) throw new Error('the sign-in page has no form');
  const csrf = /name="_csrf" value="([^"]+)"/.exec(page.body)?.[1];
  return app.inject({
    method: 'POST',
    url: '/dashboard/sign-in',
    headers: { 'content-type': 'application/x-www-form-urlencoded', 'sec-fetch-site': 'same-origin', ...(cookie ? { cookie } : {}) },
    payload: new URLSearchParams({ token, ...(csrf ? { _csrf: csrf } : {}) }).toString(),
  });
}
