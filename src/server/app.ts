/** The service's HTTP surfaces composed on one app: the REST API, hosted pages, collector, loader and webhook bridge. */
import type { FastifyInstance, FastifyServerOptions } from 'fastify';
import { createHttpApp, type AppContext } from './http/app';
import restRoutes from './api/routes';
import hostedRoutes from './api/handoffs/hosted-routes';
import collectorRoutes from './collector/routes';
import loaderScriptRoute from './collector/loader-routes';
import webhookRoutes from './webhook/routes';
import dashboardRoutes from './dashboard/routes';
import mcpRoutes from './mcp/routes';
import referenceRoutes from './openapi/reference-routes';
import healthRoutes, { isHealthCheck } from './health/routes';
import { markRequest } from './http/request-activity';
import { registerOpenApi } from './openapi/document';
import { createRateLimits, type RateLimits } from './rate-limits';
import { StoreTrouble } from './db/store-trouble';

export type { AppContext } from './http/app';

export interface BuildAppOptions extends Omit<AppContext, 'rateLimits'> {
  /**
   * The process's rate limits, shared by its listeners (startService makes one and starts its sharing); when absent,
   * the app makes its own, shared on PostgreSQL while the app is open.
   */
  rateLimits?: RateLimits;
  /** Fastify's logger option: false in tests, pino options (level, stream, …) in the service. */
  logger?: FastifyServerOptions['logger'];
  /** Which surfaces to serve; all by default. The webhook-only listener serves just `webhook`. The health check is on every app. */
  surfaces?: ReadonlyArray<'rest' | 'hosted' | 'collector' | 'loader' | 'webhook' | 'dashboard'>;
  /** How long GET /healthz lets the store take to answer (health/routes.ts); tests shorten it. */
  healthStoreTimeoutMs?: number;
  /**
   * Where the store's refusals are counted (db/store-trouble.ts): the service gives its listeners one, so the health
   * check of each says what requests met on any; an app of its own when absent.
   */
  storeTrouble?: StoreTrouble;
}

/** Builds (does not start) the app. */
export async function buildApp(options: BuildAppOptions): Promise<FastifyInstance> {
  const surfaces = new Set(options.surfaces ?? ['rest', 'hosted', 'collector', 'loader', 'webhook', 'dashboard']);
  const now = options.now;
  const storeTrouble = options.storeTrouble ?? new StoreTrouble(now ? () => now().getTime() : Date.now);
  const app = createHttpApp(options.logger, options.settings.trustProxy, storeTrouble);
  let rateLimits = options.rateLimits;
  if (!rateLimits && (surfaces.has('collector') || surfaces.has('webhook'))) {
    const own = createRateLimits({ settings: options.settings, db: options.db });
    own.start(app.log);
    app.addHook('onClose', () => own.stop());
    rateLimits = own;
  }
  const ctx: AppContext = {
    db: options.db,
    settings: options.settings,
    ...(options.now ? { now: options.now } : {}),
    ...(rateLimits ? { rateLimits } : {}),
  };
  // Every request but a health check says the store has somebody waiting (the embedded store's maintenance waits for a
  // quiet moment before a long vacuum: db/maintenance.ts).
  const db = options.db;
  // A proxy CNV_TRUST_PROXY does not name (one on another machine, the default trusting only this machine's) makes
  // every visitor's address its own: said once per process, without any address (the client's is personal data).
  // `ips` is the connection's address and the forwarded ones its trusted proxies vouch for: one, the peer is not trusted.
  let untrustedForwardSaid = !Array.isArray(options.settings.trustProxy);
  app.addHook('onRequest', (request, _reply, done) => {
    if (!isHealthCheck(request.url)) markRequest(db);
    if (!untrustedForwardSaid && request.headers['x-forwarded-for'] !== undefined && request.ips?.length === 1) {
      untrustedForwardSaid = true;
      app.log.warn(
        "a request came with X-Forwarded-For from an address CNV_TRUST_PROXY does not trust: its client address (rate limits, the visitor IP sent to Meta, TikTok and Reddit) is the connection's. If your proxy runs on another machine, set CNV_TRUST_PROXY to its address or range; a client that reached the service directly is counted by its own address, as it should be",
      );
    }
    done();
  });
  // The API description collects every route added after it: register it first.
  if (surfaces.has('rest')) await registerOpenApi(app, options.settings);
  if (surfaces.has('rest')) await app.register(restRoutes, ctx);
  if (surfaces.has('rest')) await app.register(referenceRoutes);
  if (surfaces.has('rest')) await app.register(mcpRoutes, ctx); // the agent tools: POST /mcp over the REST routes
  if (surfaces.has('hosted')) await app.register(hostedRoutes, ctx);
  if (surfaces.has('collector')) await app.register(collectorRoutes, ctx);
  if (surfaces.has('loader')) await app.register(loaderScriptRoute, ctx);
  if (surfaces.has('webhook')) await app.register(webhookRoutes, ctx);
  if (surfaces.has('dashboard')) await app.register(dashboardRoutes, ctx);
  await app.register(healthRoutes, { db: options.db, ...(options.healthStoreTimeoutMs ? { storeTimeoutMs: options.healthStoreTimeoutMs } : {}) });
  return app;
}
