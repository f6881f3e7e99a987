/** The REST API under /v1: Bearer authentication for every route here, then one plugin per resource. */
import type { FastifyInstance } from 'fastify';
import { OptionalKind } from '@sinclair/typebox';
import { parseJsonText, utf8JsonBodyText } from '../http/json-text';
import type { AppContext } from '../http/app';
import { bearerAuthHook } from '../http/auth';
import siteRoutes from './sites/routes';
import handoffRoutes from './handoffs/routes';
import flowRoutes from './flows/routes';
import eventRoutes from './events/routes';
import destinationRoutes from './destinations/routes';
import erasureRoutes from './erasures/routes';
import notificationEndpointRoutes from './notification-endpoints/routes';
import dashboardApiRoutes from '../dashboard/api-routes';

/** Registers /v1 (encapsulated: the auth hook and the body parser apply to /v1 only). */
export default async function restRoutes(app: FastifyInstance, ctx: AppContext): Promise<void> {
  await app.register(
    async (v1) => {
      v1.addHook('onRequest', bearerAuthHook(ctx.db));
      // A bodiless POST (publish) from a client that always sends Content-Type: application/json is not an error.
      v1.removeContentTypeParser('application/json');
      // The REST API takes JSON only: a text/plain body is a 415 that says which Content-Type to send.
      v1.removeContentTypeParser('text/plain');
      v1.addContentTypeParser('application/json', { parseAs: 'buffer' }, (request, body, done) => {
        if ((body as Buffer).length === 0) return done(null, undefined);
        try {
          // UTF-8 only; every unknown key of a REST body is refused, `__proto__` too; so is text PostgreSQL cannot store.
          const text = utf8JsonBodyText(body as Buffer, request.headers['content-type']);
          done(null, parseJsonText(text, { protoKeys: 'refuse', unpairedSurrogates: 'refuse' }));
        } catch (error) {
          done(error as Error);
        }
      });
      // A body the route's schema marks optional (Type.Optional) may be left out: no body, or an empty one, is `{}`.
      v1.addHook('preValidation', async (request) => {
        const schema = request.routeOptions.schema?.body as Record<symbol, unknown> | undefined;
        if (request.body === undefined && schema?.[OptionalKind] === 'Optional') request.body = {};
      });
      await v1.register(siteRoutes, ctx);
      await v1.register(handoffRoutes, ctx);
      await v1.register(flowRoutes, ctx);
      await v1.register(eventRoutes, ctx);
      await v1.register(destinationRoutes, ctx);
      await v1.register(erasureRoutes, ctx);
      await v1.register(notificationEndpointRoutes, ctx);
      await v1.register(dashboardApiRoutes, ctx);
    },
    { prefix: '/v1' },
  );
}
