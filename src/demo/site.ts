/**
 * The demo customer site and its backend, on its own origin: the ad landing, the pricing page with the signup form,
 * the signup endpoint that reports through the Node client, and the pages that show what cnv did with it.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import Fastify, { type FastifyInstance, type FastifyReply } from 'fastify';
import { STYLESHEET } from './assets/style';
import { browserScript } from './assets/browser-script';
import { ICON_SVG } from './assets/icon';
import { recentEvents, signupEvents } from './events-reader';
import { buildJourney, type Journey } from './journey';
import type { ServiceApi } from './service-api';
import { PlanChangeRefused, checkSignupForm, type Signup, type SignupDesk } from './signups';
import type { RequestFinder } from './platform-requests';
import { eventsPage, eventsTable, EVENTS_TABLE_PATH } from './pages/events';
import type { Html } from '../server/http/html';
import { journeyFragment } from './pages/journey-view';
import { DEMO_CLICK_ID_KEYS, landingPage, type DemoClickIds } from './pages/landing';
import type { PageContext } from './pages/layout';
import { pricingPage } from './pages/pricing';
import { unknownSignupPage, welcomePage } from './pages/welcome';
import { notFoundPage } from './pages/not-found';

/** What the site serves with, known once the demo setup is done. */
export interface DemoSiteContext {
  page: PageContext;
  siteId: string;
  api: ServiceApi;
  desk: SignupDesk;
}

export interface DemoSiteOptions {
  /** The context, or null while the demo setup is still running (pages then answer 503). */
  context(): DemoSiteContext | null;
  /** The requests the fake ad platforms received, per destination and event. */
  requestsOf: RequestFinder;
  log: { error(obj: unknown, message: string): void };
}

/** Largest signup form accepted, in bytes. */
const FORM_MAX_BYTES = 8 * 1024;

/**
 * The click ids of a fresh pretend ad click, each shaped as its platform issues them and recognisably a test value
 * where the shape allows: a Microsoft click id is 32 hex characters, a LinkedIn li_fat_id a UUID, a Reddit rdt_cid
 * digits (as in Reddit's examples), a TikTok ttclid starts with E.C.P. (as TikTok's request sample says).
 */
export function newDemoClickIds(): DemoClickIds {
  return {
    gclid: `TeSt-${randomBytes(12).toString('base64url')}`,
    fbclid: `TeSt-fb-${randomBytes(12).toString('base64url')}`,
    msclkid: randomBytes(16).toString('hex'),
    li_fat_id: randomUUID(),
    rdt_cid: BigInt(`0x${randomBytes(8).toString('hex')}`).toString(),
    ttclid: `E.C.P.TeSt-tt-${randomBytes(12).toString('base64url')}`,
  };
}

/** The page's Content Security Policy: the loader works under a strict one, so the demo uses one. */
function contentSecurityPolicy(serviceUrl: string): string {
  const service = new URL(serviceUrl).origin;
  return [
    "default-src 'self'",
    `script-src 'self' ${service}`,
    `connect-src 'self' ${service}`,
    "style-src 'self'",
    "img-src 'self' data:",
    "form-action 'self'",
    "base-uri 'none'",
    "frame-ancestors 'none'",
  ].join('; ');
}

function sendHtml(reply: FastifyReply, markup: Html, status = 200, serviceUrl?: string): FastifyReply {
  reply.status(status).header('content-type', 'text/html; charset=utf-8').header('cache-control', 'no-store');
  if (serviceUrl) reply.header('content-security-policy', contentSecurityPolicy(serviceUrl));
  return reply.send(markup.value);
}

/** Builds (does not start) the demo site's HTTP server. */
export async function buildDemoSite(options: DemoSiteOptions): Promise<FastifyInstance> {
  const app = Fastify({ logger: false });
  // The setup sets the context once and never changes it, so the handlers may keep the one the hook last saw.
  let ctx!: DemoSiteContext;
  // The site must listen before the setup can run (its port is its domain), so it answers 503 until then.
  app.addHook('onRequest', async (_request, reply) => {
    const current = options.context();
    if (!current) return reply.status(503).header('retry-after', '1').type('text/plain').send('The demo is starting: reload in a moment.');
    ctx = current;
  });
  const sendPage = (reply: FastifyReply, markup: Html, status = 200) => sendHtml(reply, markup, status, ctx.page.serviceUrl);
  // An address the store does not have: a page of the store that says so, not the framework's JSON.
  app.setNotFoundHandler((_request, reply) => sendPage(reply, notFoundPage(ctx.page), 404));

  app.addContentTypeParser(
    'application/x-www-form-urlencoded',
    { parseAs: 'string', bodyLimit: FORM_MAX_BYTES },
    (_request, body, done) => done(null, Object.fromEntries(new URLSearchParams(body as string))),
  );

  const journeyOf = async (signup: Signup): Promise<Journey> => {
    const read = await signupEvents(ctx.api, ctx.siteId, signup);
    return buildJourney({ signup, events: read.events, eventsError: read.error, requestsOf: options.requestsOf });
  };

  app.get('/assets/demo.css', (_request, reply) =>
    reply.header('content-type', 'text/css; charset=utf-8').header('cache-control', 'no-cache').send(STYLESHEET),
  );
  app.get('/assets/demo.js', (_request, reply) =>
    reply.header('content-type', 'text/javascript; charset=utf-8').header('cache-control', 'no-cache').send(browserScript()),
  );
  app.get('/assets/icon.svg', (_request, reply) => reply.header('content-type', 'image/svg+xml').send(ICON_SVG));
  app.get('/favicon.ico', (_request, reply) => reply.redirect('/assets/icon.svg', 301));

  app.get<{ Querystring: Record<string, string> }>('/', (request, reply) => {
    const query = Object.entries(request.query).map(([key, value]) => [key.toLowerCase(), String(value).trim()] as const);
    const clickIds = DEMO_CLICK_ID_KEYS.flatMap((key): Array<[string, string]> => {
      const value = query.find(([k]) => k === key)?.[1];
      return value ? [[key, value]] : [];
    });
    return sendPage(reply, landingPage(ctx.page, { clickIds, freshClickIds: newDemoClickIds() }));
  });

  app.get('/pricing', (_request, reply) => sendPage(reply, pricingPage(ctx.page)));

  app.post('/signup', async (request, reply) => {
    const fields = (request.body ?? {}) as Record<string, unknown>;
    const checked = checkSignupForm(fields);
    if ('errors' in checked) {
      const email = typeof fields.email === 'string' ? fields.email : '';
      const name = typeof fields.name === 'string' ? fields.name : '';
      return sendPage(reply, pricingPage(ctx.page, { errors: checked.errors, email, name }), 400);
    }
    // The customer's backend: create the user, answer, and report the signup with the request (its cookie holds the token).
    const { signup, reported } = ctx.desk.signUp({ email: checked.email, name: checked.name, request: request.raw });
    void reported.then((done) => {
      if (done.reportError || !done.report?.ok) {
        options.log.error({ report: done.report, error: done.reportError }, 'demo: the signup report did not go through');
      }
    });
    return reply.redirect(`/welcome?${new URLSearchParams({ user: signup.id })}`, 303);
  });

  app.get<{ Querystring: { user?: string } }>('/welcome', async (request, reply) => {
    const signup = ctx.desk.find(request.query.user ?? '');
    if (!signup) return sendPage(reply, unknownSignupPage(ctx.page), 404);
    return sendPage(reply, welcomePage(ctx.page, signup, await journeyOf(signup), { plan: ctx.desk.paidStage }));
  });

  // The store's billing: the user upgrades to the paid plan, or asks for a refund. The backend answers at once and
  // reports to cnv behind the answer (the welcome page's live timeline shows the report and what the platforms did).
  const planChange = (change: 'upgrade' | 'refund') => async (request: { body: unknown }, reply: FastifyReply) => {
    const user = (request.body as Record<string, unknown> | null)?.user;
    const signup = typeof user === 'string' ? ctx.desk.find(user) : null;
    if (!signup) return sendPage(reply, unknownSignupPage(ctx.page), 404);
    try {
      const { reported } = change === 'upgrade' ? ctx.desk.upgrade(signup) : ctx.desk.refund(signup);
      void reported.then((done) => {
        const report = change === 'upgrade' ? done.upgrade : done.refund;
        if (report?.error || (report?.result && !report.result.ok)) options.log.error({ change, result: report.result, error: report.error }, `demo: the ${change} report did not go through`);
      });
    } catch (error) {
      if (!(error instanceof PlanChangeRefused)) throw error;
      return sendPage(reply, welcomePage(ctx.page, signup, await journeyOf(signup), { plan: ctx.desk.paidStage, notice: error.message }), 409);
    }
    return reply.redirect(`/welcome?${new URLSearchParams({ user: signup.id })}#plan`, 303);
  };
  app.post('/welcome/upgrade', planChange('upgrade'));
  app.post('/welcome/refund', planChange('refund'));

  app.get<{ Querystring: { user?: string } }>('/welcome/journey', async (request, reply) => {
    const signup = ctx.desk.find(request.query.user ?? '');
    if (!signup) return sendHtml(reply, unknownSignupPage(ctx.page), 404);
    return sendHtml(reply, journeyFragment(await journeyOf(signup)));
  });

  app.get('/events', async (_request, reply) => {
    const read = await recentEvents(ctx.api, ctx.siteId);
    return sendPage(reply, eventsPage(ctx.page, read.events, read.error));
  });

  app.get(EVENTS_TABLE_PATH, async (_request, reply) => {
    const read = await recentEvents(ctx.api, ctx.siteId);
    return sendHtml(reply, eventsTable(read.events, read.error));
  });

  return app;
}
