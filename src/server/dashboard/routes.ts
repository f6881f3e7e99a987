/**
 * The dashboard's HTTP side: `GET /` and `/dashboard/*`, server-rendered HTML that works without JavaScript. Sign-in by a
 * one-time link, a session cookie (HttpOnly, SameSite=Lax, Secure on https) of one account, and the session's CSRF token
 * checked on every form post. Handlers translate forms to the logic in views.ts and render pages/*.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { TSchema } from '@sinclair/typebox';
import { answerStoreTrouble, type AppContext } from '../http/app';
import { ApiError } from '../http/errors';
import { cookieValue, isHttps } from '../http/cookies';
import { schemaError } from '../http/validation';
import { SCRIPT, SCRIPT_PATH, type FormRefusal, type Notice } from './layout';
import { csrfTokenValid, sessionOf, signIn, signInLinkState, signOut, sessionCookieName, SESSION_TTL_MS, SIGN_IN_PATH, type DashboardSession } from './sessions';
import * as views from './views';
import { REDELIVER_LIMIT_MAX } from '../api/destinations';
import { ChartData } from './chart-data';
import { sendHtml } from '../http/page';
import { acceptForms } from '../http/form';
import { installCheckSection, sitesPage, type NewSiteError, type SiteView } from './pages/sites';
import { destinationsPage, destinationsSection, DESTINATIONS_FRAGMENT_PATH } from './pages/destinations';
import { flowsPage, revokeSecretPage } from './pages/flows';
import { checklistSection, overviewPage, SETUP_FRAGMENT_PATH } from './pages/overview';
import { setupSteps } from './setup';
import { findTriggerSource } from '../webhook';
import { eventsPage } from './pages/events';
import { eventPage } from './pages/event';
import { keysPage } from './pages/keys';
import { privacyPage, type PrivacyPageData } from './pages/privacy';
import { errorPage, signInNeededPage, signInRefusedPage, signInConfirmPage } from './pages/sign-in';
import { getEvent, redeliverEvent } from '../api/events';
import { erasureHash } from '../api/erasures';
import { createEndpoint, listEndpoints, removeEndpoint } from '../api/notification-endpoints';
import { NOTIFICATION_KINDS, recentNotifications } from '../notifications';
import { notificationsPage, type NotificationsData } from './pages/notifications';
import { TestOutcomes } from './test-outcomes';

/** Largest form accepted, in bytes. */
const FORM_MAX_BYTES = 32 * 1024;

/** Messages of the `?done=` codes a post redirects with (never text from the request). */
const DONE: Record<string, Notice> = {
  site_saved: { kind: 'good', text: 'Site saved.' },
  site_added: { kind: 'good', text: 'Site added.' },
  flow_created: { kind: 'good', text: 'Flow created as a draft: publish it to start delivering.' },
  flow_published: { kind: 'good', text: 'Flow published: it delivers conversions from now on.' },
  flow_unpublished: { kind: 'good', text: 'Flow unpublished: it delivers nothing until published again.' },
  key_revoked: { kind: 'good', text: 'API key revoked: requests with it are refused from now on.' },
  endpoint_removed: { kind: 'good', text: 'Endpoint removed: it is told nothing more.' },
  destination_redelivered: { kind: 'good', text: 'The failed deliveries are queued again: the Events page shows each outcome once they are sent.' },
  destination_redelivered_more: {
    kind: 'info',
    text: `The failed deliveries of ${(views.DASHBOARD_REDELIVER_ROUNDS * REDELIVER_LIMIT_MAX).toLocaleString('en')} events are queued again, and more are left: press Send them again once more for the next ones.`,
  },
  destination_nothing_failed: { kind: 'info', text: 'Nothing of that destination had failed (any more): nothing was sent again.' },
  event_redelivered: { kind: 'good', text: 'The failed deliveries are queued again: this page shows their outcome once they are sent.' },
  erased: { kind: 'good', text: 'Erased: what was stored of that person is gone (see the first row below).' },
  old_secret_revoked: { kind: 'good', text: 'The old webhook secret is revoked: only the current secret verifies from now on.' },
  old_secret_gone: { kind: 'info', text: 'There was no old webhook secret still verifying: nothing changed.' },
};

const sessions = new WeakMap<FastifyRequest, DashboardSession>();

function sessionFor(request: FastifyRequest): DashboardSession {
  const session = sessions.get(request);
  if (!session) throw new Error('no dashboard session on this request');
  return session;
}

function sessionCookie(value: string, maxAgeSeconds: number, secure: boolean): string {
  return `${sessionCookieName(secure)}=${value}; Path=/; HttpOnly; SameSite=Lax; Max-Age=${maxAgeSeconds}${secure ? '; Secure' : ''}`;
}

/** The dashboard's pages may run its own script (copy buttons, live sections that fetch from the dashboard) and show inline SVG. */
const DASHBOARD_CSP =
  "default-src 'none'; script-src 'self'; connect-src 'self'; style-src 'unsafe-inline'; img-src 'self' data:; form-action 'self' https: http:; base-uri 'none'; frame-ancestors 'none'";

function sendPage(reply: FastifyReply, status: number, body: string): FastifyReply {
  return sendHtml(reply, status, body, DASHBOARD_CSP);
}

/**
 * Whether a sign-in post came from a page of this service, as far as the browser says. Fetch metadata
 * (`Sec-Fetch-Site`) when sent; else the `Origin` a browser without it (Safari before 16.4, older Firefox) still puts on
 * a form post: it must be this service's, under its public URL or the address the request names (`null`, what a page
 * of another site sends under its own no-referrer policy, is refused too). A request with neither is no browser's post
 * from another site (a script, the CLI's tests): the token it carries is the credential.
 */
function signInPostFromHere(request: FastifyRequest, publicUrl: string): boolean {
  const site = request.headers['sec-fetch-site'];
  if (site !== undefined) return site === 'same-origin';
  const origin = request.headers.origin;
  if (origin === undefined) return true;
  const own = [new URL(publicUrl).origin, `${request.protocol}://${request.host}`.toLowerCase()];
  return own.includes(origin.toLowerCase());
}

/** A live section's fresh copy (an HTML fragment the dashboard's script swaps in). */
function sendFragment(reply: FastifyReply, fragment: { toString(): string }): FastifyReply {
  return sendHtml(reply, 200, String(fragment), DASHBOARD_CSP);
}

function formOf(request: FastifyRequest): views.Form {
  return (request.body && typeof request.body === 'object' ? request.body : {}) as views.Form;
}

function noticesOf(request: FastifyRequest): Notice[] {
  const done = (request.query as Record<string, unknown> | undefined)?.done;
  const notice = typeof done === 'string' ? DONE[done] : undefined;
  return notice ? [notice] : [];
}

/** A path parameter as an id: printable, bounded (an id that names nothing is a 404 from the logic). */
function idParam(request: FastifyRequest): string {
  const id = (request.params as { id?: unknown }).id;
  if (typeof id !== 'string' || id.length > 100 || /[^\x21-\x7e]/.test(id)) {
    throw new ApiError(404, 'not_found_error', 'resource_missing', 'No such object.');
  }
  return id;
}

/** A query parameter as sent (a repeated one is an array), for the REST schema to check; undefined when absent. */
function queryValue(request: FastifyRequest, name: string): unknown {
  return (request.query as Record<string, unknown> | undefined)?.[name];
}

/** A form's 400 refusal as its page shows it again (the message, and the field when known); anything else is thrown on. */
function formRefusal(error: unknown): FormRefusal {
  if (!(error instanceof ApiError) || error.status !== 400) throw error;
  return {
    message: error.message,
    ...(error.param ? { param: error.param } : {}),
    ...(error instanceof views.FormProblems ? { problems: error.problems } : {}),
  };
}

/** Registers the dashboard. */
export default async function dashboardRoutes(app: FastifyInstance, { db, settings }: AppContext): Promise<void> {
  acceptForms(app, FORM_MAX_BYTES);
  const chartData = new ChartData(db);
  /** The session token the request's cookie holds: the `__Host-` cookie's when reached over HTTPS (sessions.ts). */
  const sessionToken = (request: FastifyRequest): string | undefined =>
    cookieValue(request.headers.cookie, sessionCookieName(isHttps(request, settings.publicUrl)));

  /** Runs a REST route's schema with the app's own validator (same options, same messages). */
  const validatorOf = (request: FastifyRequest): views.Validate => (schema: TSchema, value: unknown, context) => {
    const validate = request.compileValidationSchema(schema as unknown as Record<string, unknown>);
    if (!validate(value)) {
      const error = Object.assign(new Error('invalid'), { validation: validate.errors ?? [], validationContext: context });
      throw schemaError(error as never);
    }
  };

  app.setErrorHandler((error: Error & { statusCode?: number; validation?: unknown }, request, reply) => {
    const session = sessions.get(request) ?? null;
    if (error instanceof ApiError) {
      const title = error.status === 404 ? 'Not found' : error.status === 403 ? 'Not allowed' : 'Could not do that';
      return sendPage(reply, error.status, errorPage(error.status, title, error.message, session));
    }
    if (error.validation) {
      const refused = schemaError(error as never);
      return sendPage(reply, 400, errorPage(400, 'Could not do that', refused.message, session));
    }
    const status = error.statusCode ?? 500;
    if (status >= 400 && status < 500) return sendPage(reply, status, errorPage(status, 'Could not do that', 'The request was not valid.', session));
    const unavailable = answerStoreTrouble(app, request, reply, error);
    if (unavailable) return sendPage(reply, 503, errorPage(503, 'The service cannot work now', unavailable, session));
    request.log.error({ err: error }, 'dashboard error');
    return sendPage(reply, 500, errorPage(500, 'Something went wrong', 'The dashboard hit an internal error; the service log has the details.', session));
  });

  // An address under /dashboard that is no page (mistyped, or a form's address opened again after reloading the page
  // it answered) is a dashboard page that says so, with the menu when signed in: never the API's JSON.
  await app.register(
    async (scope) => {
      scope.setNotFoundHandler(async (request, reply) => {
        const session = await sessionOf(db, sessionToken(request));
        const message =
          request.method === 'GET' || request.method === 'HEAD'
            ? 'There is no dashboard page at this address. If you opened again the address a form had answered (a reload, a bookmark), pick the page from the menu.'
            : 'This form no longer exists at this address: reload the page it is on and send it again.';
        // An address served under other methods (a form's address opened as a page, a page's address posted to) is a
        // 405 naming them, as on every path of the service; the same page says what to do.
        const allowed = app.allowedMethods(request.method, request.url);
        if (allowed.length > 0) reply.header('allow', allowed.join(', '));
        const status = allowed.length > 0 ? 405 : 404;
        return sendPage(reply, status, errorPage(status, 'Not found', message, session));
      });
    },
    { prefix: '/dashboard' },
  );

  // Every page but sign-in and the script needs a session; every post needs the session's CSRF token.
  const needsSession = async (request: FastifyRequest, reply: FastifyReply) => {
    const session = await sessionOf(db, sessionToken(request));
    if (!session) return sendPage(reply, 401, signInNeededPage());
    sessions.set(request, session);
  };
  const checksCsrf = async (request: FastifyRequest, reply: FastifyReply) => {
    const session = sessionFor(request);
    if (!csrfTokenValid(session, formOf(request)._csrf)) {
      return sendPage(
        reply,
        403,
        errorPage(403, 'Not allowed', 'This form was not sent from a dashboard page of this session (its CSRF token is missing or wrong). Reload the page and try again.', session),
      );
    }
  };
  const page = { onRequest: needsSession };
  /** Where signing out lands: the sign-in help, said as signed out. */
  const SIGNED_OUT_PATH = '/dashboard/signed-out';
  const post = { onRequest: needsSession, preHandler: checksCsrf };

  app.get(SCRIPT_PATH, async (_request, reply) =>
    reply.header('content-type', 'text/javascript; charset=utf-8').header('cache-control', 'public, max-age=300').send(SCRIPT),
  );

  // Opening a sign-in link (GET, and the HEAD Fastify answers with it) only looks: it shows whose dashboard the link
  // opens and a button, and spends nothing, sets no cookie. Link previewers and mail scanners open links; they must not
  // use the link up or be the ones signed in, and a link sent from elsewhere must not sign a browser in unasked (the
  // visitor would connect their own ad platforms into the sender's account). The address carries the token: no referrer.
  app.get(SIGN_IN_PATH, async (request, reply) => {
    const token = (request.query as Record<string, unknown>).token;
    const current = await sessionOf(db, sessionToken(request));
    if (typeof token !== 'string' || token === '') {
      if (current) return reply.redirect('/', 303);
      return sendPage(reply, 401, signInNeededPage());
    }
    const link = await signInLinkState(db, token);
    if (!link.ok) return sendPage(reply, link.reason === 'unknown' ? 404 : 410, signInRefusedPage(link.reason));
    // Its address holds the token: no Referer to another site; `same-origin` (not `no-referrer`) so that its form's post
    // carries the page's real Origin, which a browser without fetch metadata is checked by (signInPostFromHere).
    return sendHtml(reply, 200, signInConfirmPage(link, token, current), DASHBOARD_CSP, 'same-origin');
  });

  // The button: spends the link (its token in the form's body) and opens the session. The token is the credential; a
  // post another site makes (fetch metadata, or the Origin of a browser without it, says so) is refused, so no site can
  // sign a visitor in to the site's own account with a link of its own; a browser already signed in must also send its
  // session's CSRF token.
  app.post(SIGN_IN_PATH, async (request, reply) => {
    if (!signInPostFromHere(request, settings.publicUrl)) {
      return sendPage(reply, 403, errorPage(403, 'Not allowed', 'This sign-in was not sent from the sign-in page of this dashboard. Open the sign-in link again.', null));
    }
    const current = await sessionOf(db, sessionToken(request));
    if (current && !csrfTokenValid(current, formOf(request)._csrf)) {
      return sendPage(
        reply,
        403,
        errorPage(403, 'Not allowed', 'This form was not sent from a dashboard page of this session (its CSRF token is missing or wrong). Open the sign-in link again.', current),
      );
    }
    const token = formOf(request).token;
    if (typeof token !== 'string' || token === '') return sendPage(reply, 404, signInRefusedPage('unknown'));
    const result = await signIn(db, token);
    if (!result.ok) return sendPage(reply, result.reason === 'unknown' ? 404 : 410, signInRefusedPage(result.reason));
    // The session this browser switches away from ends here too, not only in the browser (its cookie is replaced): a
    // copy of that cookie elsewhere must not keep the other account open for the rest of its week.
    if (current) await signOut(db, current);
    reply.header('set-cookie', sessionCookie(result.sessionToken, Math.floor(SESSION_TTL_MS / 1000), isHttps(request, settings.publicUrl)));
    return reply.header('cache-control', 'no-store').redirect('/', 303);
  });

  app.post('/dashboard/sign-out', post, async (request, reply) => {
    await signOut(db, sessionFor(request));
    reply.header('set-cookie', sessionCookie('', 0, isHttps(request, settings.publicUrl)));
    // To a page of its own (post, then redirect): a reload of it sends nothing again.
    return reply.redirect(SIGNED_OUT_PATH, 303);
  });
  app.get(SIGNED_OUT_PATH, async (request, reply) => {
    if (await sessionOf(db, sessionToken(request))) return reply.redirect('/', 303);
    return sendPage(reply, 200, signInNeededPage(true));
  });

  app.get('/dashboard', page, async (_request, reply) => reply.redirect('/', 303));

  // Overview: the setup checklist (and its live fragment)
  app.get('/', page, async (request, reply) => {
    const session = sessionFor(request);
    const [setup, attention] = await Promise.all([views.setupView(db, session.accountId), views.attentionView(db, session.accountId)]);
    return sendPage(reply, 200, overviewPage(session, setupSteps(setup), noticesOf(request), attention));
  });
  app.get('/dashboard/setup', page, async (_request, reply) => reply.redirect('/#setup', 303));
  app.get(SETUP_FRAGMENT_PATH, page, async (request, reply) =>
    sendFragment(reply, checklistSection(setupSteps(await views.setupView(db, sessionFor(request).accountId)))),
  );

  // Sites
  const renderSites = async (request: FastifyRequest, reply: FastifyReply, status = 200, override?: SiteView, newSiteError?: NewSiteError, startingAfter?: string) => {
    const session = sessionFor(request);
    const cursor = startingAfter ?? queryValue(request, 'starting_after');
    const { views: list, nextCursor } = await views.sitesPageView(db, validatorOf(request), session.accountId, cursor);
    const shown = override ? list.map((v) => (v.site.id === override.site.id ? { ...v, error: override.error } : v)) : list;
    return sendPage(reply, status, sitesPage(session, settings.publicUrl, shown, noticesOf(request), newSiteError, { after: cursor, next: nextCursor }));
  };
  /** Where a site just added or saved is shown: its page of the Sites page (past the first page too), at its card. */
  const sitePage = async (accountId: string, siteId: string, done: string) => {
    const cursor = await views.sitesPageCursorOf(db, accountId, siteId);
    return `/dashboard/sites?done=${done}${cursor ? `&starting_after=${encodeURIComponent(cursor)}` : ''}#${siteId}`;
  };
  app.get('/dashboard/sites', page, async (request, reply) => renderSites(request, reply));
  app.get('/dashboard/sites/:id/install-check', page, async (request, reply) =>
    sendFragment(reply, installCheckSection(await views.siteView(db, sessionFor(request).accountId, idParam(request)))),
  );
  app.post('/dashboard/sites', post, async (request, reply) => {
    const form = formOf(request);
    const accountId = sessionFor(request).accountId;
    try {
      const site = await views.addSite(db, validatorOf(request), accountId, form);
      return reply.redirect(await sitePage(accountId, site.id, 'site_added'), 303);
    } catch (error) {
      const values = { name: form.name ?? '', domain: form.domain ?? '' };
      return renderSites(request, reply, 400, undefined, { ...formRefusal(error), values });
    }
  });
  app.post('/dashboard/sites/:id', post, async (request, reply) => {
    const id = idParam(request);
    const form = formOf(request);
    const accountId = sessionFor(request).accountId;
    try {
      await views.saveSite(db, validatorOf(request), accountId, id, form);
    } catch (error) {
      const refused = formRefusal(error);
      // The site's own page of the Sites page, with the refusal on its card (another account's site is not found).
      const current = await views.siteView(db, accountId, id);
      const values = { name: form.name ?? '', domain: form.domain ?? '', timezone: form.timezone ?? '' };
      return renderSites(request, reply, 400, { ...current, error: { ...refused, values } }, undefined, await views.sitesPageCursorOf(db, accountId, id));
    }
    return reply.redirect(await sitePage(accountId, id, 'site_saved'), 303);
  });

  // Destinations
  const elsewhere = views.platformsElsewhere(settings);
  // A connection test's post keeps its result and redirects to the page that shows it: a reload tests nothing again.
  const testOutcomes = new TestOutcomes();
  app.get('/dashboard/destinations', page, async (request, reply) => {
    const session = sessionFor(request);
    const { records, googleConversionIds, failed } = await views.destinationsData(db, session.accountId);
    const tested = (request.query as Record<string, unknown> | undefined)?.tested;
    const outcome = typeof tested === 'string' ? testOutcomes.find(session.csrfToken, tested) : undefined;
    const gone: Notice[] =
      typeof tested === 'string' && !outcome
        ? [{ kind: 'info', text: 'That connection test’s result is no longer kept (it is shown for 10 minutes). Press Test connection again to run a new test.' }]
        : [];
    const notices = [...noticesOf(request), ...gone, ...(elsewhere ? [elsewhere] : [])];
    if (outcome) reply.header('cache-control', 'no-store');
    return sendPage(reply, 200, destinationsPage(session, records, views.platformChoices(), outcome, notices, googleConversionIds, failed));
  });
  app.get(DESTINATIONS_FRAGMENT_PATH, page, async (request, reply) => {
    const session = sessionFor(request);
    const { records, googleConversionIds, failed } = await views.destinationsData(db, session.accountId);
    return sendFragment(reply, destinationsSection(session, records, views.platformChoices(), googleConversionIds, undefined, failed));
  });
  app.post('/dashboard/destinations/connect', post, async (request, reply) => {
    const url = await views.connectDestination(db, settings, validatorOf(request), sessionFor(request).accountId, formOf(request));
    return reply.redirect(url, 303);
  });
  app.post('/dashboard/destinations/:id/redeliver', post, async (request, reply) => {
    const id = idParam(request);
    const { actions, more } = await views.redeliverDestinationFailures(db, sessionFor(request).accountId, id);
    const done = more ? 'destination_redelivered_more' : actions > 0 ? 'destination_redelivered' : 'destination_nothing_failed';
    return reply.redirect(`/dashboard/destinations?done=${done}#${encodeURIComponent(id)}`, 303);
  });
  app.post('/dashboard/destinations/:id/test', post, async (request, reply) => {
    const session = sessionFor(request);
    const outcome = await views.testConnection(db, settings, session.accountId, idParam(request), formOf(request));
    const key = testOutcomes.keep(session.csrfToken, outcome);
    return reply.redirect(`/dashboard/destinations?tested=${key}#${outcome.destinationId}`, 303);
  });

  // Flows
  const renderFlows = async (request: FastifyRequest, reply: FastifyReply, status = 200, extra: Parameters<typeof views.flowsView>[3] = {}) => {
    const session = sessionFor(request);
    const data = await views.flowsView(db, settings, session.accountId, extra);
    return sendPage(reply, status, flowsPage(session, data, noticesOf(request)));
  };
  app.get('/dashboard/flows', page, async (request, reply) => renderFlows(request, reply));
  app.post('/dashboard/flows', post, async (request, reply) => {
    const form = formOf(request);
    try {
      const flow = await views.addFlow(db, validatorOf(request), sessionFor(request).accountId, form);
      return reply.redirect(`/dashboard/flows?done=flow_created#${flow.id}`, 303);
    } catch (error) {
      const refusal = formRefusal(error);
      const { _csrf, ...values } = form;
      return renderFlows(request, reply, 400, { error: { ...refusal, values } });
    }
  });
  for (const [action, live] of [['publish', true], ['unpublish', false]] as const) {
    app.post(`/dashboard/flows/:id/${action}`, post, async (request, reply) => {
      const id = idParam(request);
      try {
        await views.setFlowLive(db, sessionFor(request).accountId, id, live);
      } catch (error) {
        if (!(error instanceof ApiError) || error.status !== 400) throw error;
        // The page lists what is missing, in its own words, from a fresh check.
        return renderFlows(request, reply, 400, { error: { flowId: id, message: error.message } });
      }
      return reply.redirect(`/dashboard/flows?done=flow_${action}ed#${id}`, 303);
    });
  }
  app.post('/dashboard/sites/:id/webhook-secret', post, async (request, reply) => {
    const shown = await views.newWebhookSecret(db, settings, sessionFor(request).accountId, idParam(request));
    return renderFlows(request, reply, 200, { shownSecret: shown });
  });

  app.get('/dashboard/sites/:id/webhook-secret/revoke-previous', page, async (request, reply) => {
    const session = sessionFor(request);
    const site = (await views.accountSites(db, session.accountId)).find((s) => s.id === idParam(request));
    if (!site) throw new ApiError(404, 'not_found_error', 'resource_missing', 'No such site.');
    return sendPage(reply, 200, revokeSecretPage(session, site, await findTriggerSource(db, session.accountId, site.id, 'api')));
  });
  app.post('/dashboard/sites/:id/webhook-secret/revoke-previous', post, async (request, reply) => {
    const id = idParam(request);
    const revoked = await views.revokeOldWebhookSecret(db, sessionFor(request).accountId, id);
    return reply.redirect(`/dashboard/flows?done=${revoked ? 'old_secret_revoked' : 'old_secret_gone'}#backend-${id}`, 303);
  });

  // Events
  app.get('/dashboard/events', page, async (request, reply) => {
    const session = sessionFor(request);
    const { filters, cursor, chartView } = views.eventFiltersOf((request.query ?? {}) as Record<string, unknown>);
    const data = await views.eventsView(db, validatorOf(request), session.accountId, filters, cursor, settings.identityRetentionDays, new Date(), chartView, chartData);
    return sendPage(reply, data.error ? 400 : 200, eventsPage(session, data));
  });
  app.get('/dashboard/events/:id', page, async (request, reply) => {
    const session = sessionFor(request);
    return sendPage(reply, 200, eventPage(session, await getEvent(db, session.accountId, idParam(request)), noticesOf(request)));
  });
  app.post('/dashboard/events/:id/redeliver', post, async (request, reply) => {
    const id = idParam(request);
    try {
      await redeliverEvent(db, sessionFor(request).accountId, id);
    } catch (error) {
      // Nothing failed (any more): the page shows the event as it is.
      if (!(error instanceof ApiError) || error.status !== 409) throw error;
      return reply.redirect(`/dashboard/events/${id}`, 303);
    }
    return reply.redirect(`/dashboard/events/${id}?done=event_redelivered`, 303);
  });

  // Notifications
  const renderNotifications = async (request: FastifyRequest, reply: FastifyReply, status = 200, extra: Partial<NotificationsData> = {}) => {
    const session = sessionFor(request);
    const endpoints = (await listEndpoints(db, session.accountId, { limit: 100 })).data;
    const recent = await recentNotifications(db, session.accountId);
    return sendPage(reply, status, notificationsPage(session, { endpoints, recent, ...extra }, noticesOf(request)));
  };
  app.get('/dashboard/notifications', page, async (request, reply) => renderNotifications(request, reply));
  app.post('/dashboard/notifications', post, async (request, reply) => {
    const form = formOf(request);
    const kinds = NOTIFICATION_KINDS.filter((k) => form[`kind:${k}`]);
    try {
      const created = await createEndpoint(db, settings, sessionFor(request).accountId, { url: (form.url ?? '').trim(), kinds });
      return renderNotifications(request, reply, 200, { created });
    } catch (error) {
      if (!(error instanceof ApiError) || error.status !== 400) throw error;
      return renderNotifications(request, reply, 400, { error: { message: error.message, ...(error.param ? { param: error.param } : {}), url: form.url ?? '', kinds } });
    }
  });
  app.post('/dashboard/notifications/:id/delete', post, async (request, reply) => {
    await removeEndpoint(db, sessionFor(request).accountId, idParam(request));
    return reply.redirect('/dashboard/notifications?done=endpoint_removed', 303);
  });

  // Personal data: erase a person (a confirmation first, saying what will go), the erasures made
  const hash = erasureHash(settings);
  const renderPrivacy = async (request: FastifyRequest, reply: FastifyReply, status = 200, extra: Partial<PrivacyPageData> = {}) => {
    const session = sessionFor(request);
    const data = { erasures: await views.erasuresView(db, session.accountId), retentionDays: settings.identityRetentionDays, ...extra };
    return sendPage(reply.header('cache-control', 'no-store'), status, privacyPage(session, data, noticesOf(request)));
  };
  app.get('/dashboard/privacy', page, async (request, reply) => renderPrivacy(request, reply));
  for (const step of ['preview', 'erase'] as const) {
    app.post(`/dashboard/privacy/${step}`, post, async (request, reply) => {
      const values = views.erasureFormOf(formOf(request));
      const accountId = sessionFor(request).accountId;
      try {
        if (step === 'erase') {
          await views.erasePersonOfForm(db, validatorOf(request), hash, accountId, values);
          return reply.redirect('/dashboard/privacy?done=erased', 303);
        }
        const counts = await views.previewPersonErasure(db, validatorOf(request), hash, accountId, values);
        return renderPrivacy(request, reply, 200, { confirm: { values, counts } });
      } catch (error) {
        return renderPrivacy(request, reply, 400, { error: { ...formRefusal(error), values } });
      }
    });
  }

  // API keys
  app.get('/dashboard/keys', page, async (request, reply) => {
    const session = sessionFor(request);
    return sendPage(reply, 200, keysPage(session, await views.keysView(db, session.accountId), settings.publicUrl, undefined, noticesOf(request)));
  });
  app.post('/dashboard/keys', post, async (request, reply) => {
    const session = sessionFor(request);
    const created = await views.addApiKey(db, session.accountId, formOf(request));
    return sendPage(reply, 200, keysPage(session, await views.keysView(db, session.accountId), settings.publicUrl, created));
  });
  app.post('/dashboard/keys/:id/revoke', post, async (request, reply) => {
    await views.revokeAccountKey(db, sessionFor(request).accountId, idParam(request));
    return reply.redirect('/dashboard/keys?done=key_revoked', 303);
  });
}
