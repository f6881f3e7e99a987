/**
 * The hosted handoff pages at `{publicUrl}/handoffs/{token}`: HTML for a person, not JSON. GET shows the step; POST
 * (a form) completes it. Never cached, never leaked through a Referer, never framed.
 */
import type { FastifyInstance, FastifyReply } from 'fastify';
import { answerStoreTrouble, type AppContext } from '../../http/app';
import { ApiError } from '../../http/errors';
import { HOSTED_PAGE_CSP, sendHtml } from '../../http/page';
import { acceptForms } from '../../http/form';
import {
  beginHandoffOAuth,
  completeDestinationHandoff,
  completeTriggerSourceHandoff,
  finishHandoffOAuth,
  missingOAuthSetting,
  OAUTH_STATE_PATTERN,
  openHostedHandoff,
  signInChoicesOf,
  type HostedHandoff,
} from './completion';
import { HANDOFF_TTL_MS, handoffExpired, newerHandoffCompleted } from './sql';
import { clearedOAuthBrowserCookie, oauthBrowserCookie, oauthBrowserCookieName, oauthBrowserCookieValid } from './browser-binding';
import { cookieValue, isHttps } from '../../http/cookies';
import {
  completedPage,
  expiredPage,
  destinationConnectedPage,
  destinationFormPage,
  destinationSignInPage,
  notFoundPage,
  oauthClientRefusedPage,
  oauthNotConfiguredPage,
  otherBrowserPage,
  supersededPage,
  triggerSourceConnectedPage,
  triggerSourceIntroPage,
  unavailablePage,
} from './hosted-pages';

type ByToken = { Params: { token: string } };
type DestinationHandoff = Extract<HostedHandoff, { kind: 'destination' }>;

function sendPage(reply: FastifyReply, status: number, body: string): FastifyReply {
  return sendHtml(reply, status, body);
}

/**
 * The sign-in page, whose form (the choices asked before the sign-in) is answered with a redirect to the platform's
 * consent screen: a browser applies `form-action` to that redirect too, so the page allows the authorize URL's origin.
 */
function sendSignInPage(reply: FastifyReply, status: number, settings: AppContext['settings'], hosted: DestinationHandoff, problem?: string): FastifyReply {
  let csp = HOSTED_PAGE_CSP;
  try {
    const origin = hosted.destination.oauth ? new URL(hosted.destination.oauth.authorizeUrl(settings)).origin : null;
    if (origin && origin !== 'null') csp = HOSTED_PAGE_CSP.replace("form-action 'self'", `form-action 'self' ${origin}`);
  } catch {
    // An authorize URL that does not parse: the sign-in cannot start anyway (its redirect fails); keep the strict policy.
  }
  return sendHtml(reply, status, destinationSignInPage(hosted, problem), csp);
}


/** The string fields of a submitted form (a JSON body is read the same way; other values are ignored). */
function formFields(body: unknown): Record<string, string> {
  const fields: Record<string, string> = Object.create(null);
  if (typeof body !== 'object' || body === null) return fields;
  for (const [key, value] of Object.entries(body)) if (typeof value === 'string') fields[key] = value;
  return fields;
}

export default async function hostedRoutes(app: FastifyInstance, { db, settings }: AppContext): Promise<void> {
  acceptForms(app);

  // A person is on these pages: a step that fails gets a page, not the API's JSON envelope. Client errors (a form body
  // too large, a bad encoding) keep the service's own handling.
  app.setErrorHandler((error: Error & { statusCode?: number }, request, reply) => {
    const unavailable = answerStoreTrouble(app, request, reply, error);
    if (unavailable) return sendPage(reply, 503, unavailablePage(503, unavailable));
    const status = error instanceof ApiError ? error.status : (error.statusCode ?? 500);
    if (status < 500) throw error;
    request.log.error({ err: error }, 'hosted page error');
    return sendPage(reply, 500, unavailablePage(500, 'The service hit an internal error; its log has the details.'));
  });

  app.get<ByToken & { Querystring: Record<string, unknown> }>('/handoffs/:token', async (request, reply) => {
    const hosted = await openHostedHandoff(db, settings, request.params.token);
    if (!hosted) return sendPage(reply, 404, notFoundPage());
    if (hosted.handoff.status === 'completed') return sendPage(reply, 200, completedPage(hosted));
    if (handoffExpired(hosted.handoff)) return sendPage(reply, 410, expiredPage(hosted));
    if (hosted.kind === 'trigger_source') return sendPage(reply, 200, triggerSourceIntroPage(hosted));
    // Said before the sign-in, not after it: a newer link's completion already stands, this one could change nothing.
    if (await newerHandoffCompleted(db, hosted.handoff.id)) return sendPage(reply, 409, supersededPage(hosted));
    // ?sign_in=again: the sign-in page once more (to change a choice made before it), also after a sign-in.
    const again = request.query?.sign_in === 'again' && hosted.destination.oauth !== null && !hosted.destination.oauth.optional;
    if (hosted.authorized && !again) return sendPage(reply, 200, destinationFormPage(hosted));
    // Say at once when the service cannot run the platform's sign-in, rather than behind the button.
    const missing = missingOAuthSetting(settings, hosted.destination);
    return missing ? sendPage(reply, 503, oauthNotConfiguredPage(hosted, missing)) : sendSignInPage(reply, 200, settings, hosted);
  });

  // The OAuth step: redirect to the platform's consent screen with a state bound to this handoff and a PKCE challenge,
  // and bind the state to this browser with a cookie (browser-binding.ts) that the callback asks for.
  // The choices of the sign-in page (ConnectField.beforeSignIn: Google's API) come as query parameters: they decide
  // the scopes asked for.
  app.get<ByToken & { Querystring: Record<string, unknown> }>('/handoffs/:token/authorize', async (request, reply) => {
    const hosted = await openHostedHandoff(db, settings, request.params.token);
    if (!hosted || hosted.kind !== 'destination') return sendPage(reply, 404, notFoundPage());
    if (hosted.handoff.status === 'completed') return sendPage(reply, 200, completedPage(hosted));
    if (handoffExpired(hosted.handoff)) return sendPage(reply, 410, expiredPage(hosted));
    if (await newerHandoffCompleted(db, hosted.handoff.id)) return sendPage(reply, 409, supersededPage(hosted));
    const chosen = signInChoicesOf(hosted, request.query ?? {});
    if ('problem' in chosen) return sendSignInPage(reply, 400, settings, hosted, chosen.problem);
    const begun = await beginHandoffOAuth(db, settings, hosted, chosen.choices);
    if (begun.kind === 'not_configured') return sendPage(reply, 503, oauthNotConfiguredPage(hosted, begun.setting));
    if (begun.kind === 'not_needed') return reply.redirect(`/handoffs/${hosted.handoff.token}`, 303);
    const linkLeftMs = hosted.handoff.created_at.getTime() + HANDOFF_TTL_MS - Date.now();
    const cookie = oauthBrowserCookie(settings, begun.state, { secure: isHttps(request, settings.publicUrl), maxAgeMs: linkLeftMs });
    return reply.header('set-cookie', cookie).header('cache-control', 'no-store').header('referrer-policy', 'no-referrer').redirect(begun.url, 302);
  });

  // Where the platform sends the user back: exchange the code, keep the refresh token sealed, continue to the form.
  // Only in the browser that started the sign-in (its cookie for this state): a consent URL opened anywhere else stores
  // nothing and leaves the state alone, so the person who started the sign-in can still finish it.
  app.get<{ Querystring: Record<string, string | undefined> }>('/handoffs/oauth/callback', async (request, reply) => {
    const query = request.query ?? {};
    const state = typeof query.state === 'string' && OAUTH_STATE_PATTERN.test(query.state) ? query.state : null;
    if (state) {
      const presented = cookieValue(request.headers.cookie, oauthBrowserCookieName(state));
      if (!oauthBrowserCookieValid(settings, state, presented)) return sendPage(reply, 403, otherBrowserPage());
      reply.header('set-cookie', clearedOAuthBrowserCookie(state, isHttps(request, settings.publicUrl)));
    }
    const finished = await finishHandoffOAuth(db, settings, {
      ...(typeof query.state === 'string' ? { state: query.state } : {}),
      ...(typeof query.code === 'string' ? { code: query.code } : {}),
      ...(typeof query.error === 'string' ? { error: query.error } : {}),
    });
    if (finished.kind === 'unknown_state') return sendPage(reply, 400, notFoundPage());
    if (finished.kind === 'continue') return reply.header('referrer-policy', 'no-referrer').redirect(`/handoffs/${finished.token}`, 303);
    const hosted = await openHostedHandoff(db, settings, finished.token);
    if (!hosted || hosted.kind !== 'destination') return sendPage(reply, 404, notFoundPage());
    if (finished.kind === 'superseded') return sendPage(reply, 409, supersededPage(hosted));
    if (finished.kind === 'client_refused') {
      // The operator's settings: said in the log (their names, never a value) and on a page that does not ask to retry.
      request.log.error(
        { destination: hosted.destination.type, code: finished.error.code, status: finished.error.status, hint: finished.error.hint },
        `${hosted.destination.label}'s token endpoint refused this service's OAuth client at a sign-in: nothing was connected`,
      );
      return sendPage(reply, 503, oauthClientRefusedPage(hosted, finished.oauthError));
    }
    return sendSignInPage(reply, 400, settings, hosted, finished.message);
  });

  app.post<ByToken>('/handoffs/:token', async (request, reply) => {
    const hosted = await openHostedHandoff(db, settings, request.params.token);
    if (!hosted) return sendPage(reply, 404, notFoundPage());
    if (handoffExpired(hosted.handoff)) return sendPage(reply, 410, expiredPage(hosted));
    if (hosted.kind === 'trigger_source') {
      const outcome = await completeTriggerSourceHandoff(db, settings, hosted);
      if (outcome.kind === 'already_completed') return sendPage(reply, 409, completedPage(hosted));
      return sendPage(reply, 200, triggerSourceConnectedPage(hosted, outcome.secret, outcome.rotated));
    }
    const form = formFields(request.body);
    const outcome = await completeDestinationHandoff(db, settings, hosted, form);
    if (outcome.kind === 'already_completed') return sendPage(reply, 409, completedPage(hosted));
    if (outcome.kind === 'superseded') return sendPage(reply, 409, supersededPage(hosted));
    if (outcome.kind === 'invalid') {
      // A choice made before the sign-in that the sign-in does not cover is fixed by signing in again: that page.
      const beforeSignIn = outcome.errors.find((e) => hosted.destination.fields.some((f) => f.beforeSignIn && f.name === e.param));
      if (!hosted.authorized || beforeSignIn) return sendSignInPage(reply, 400, settings, hosted, (beforeSignIn ?? outcome.errors[0])?.message);
      return sendPage(reply, 400, destinationFormPage(hosted, form, outcome.errors));
    }
    return sendPage(reply, 200, destinationConnectedPage(hosted.destination, outcome.summary));
  });
}
