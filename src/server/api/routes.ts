/** The REST API under /v1: Bearer authentication for every route here, then one plugin per resource. */
import type { FastifyInstance } from 'fastify';
import { OptionalKind } from '@sinclair/typebox';
import { parseJsonText, utf8JsonBodyText } from '../http/json-text';
import type { AppContext } from '../http/app';
import { bearerAuthHook } from '../http/auth';
import { ApiError, printable } from '../http/errors';
import siteRoutes from './sites/routes';
import handoffRoutes from './handoffs/routes';
import flowRoutes from './flows/routes';
import eventRoutes from './events/routes';
import destinationRoutes from './destinations/routes';
import erasureRoutes from './erasures/routes';
import notificationEndpointRoutes from './notification-endpoints/routes';
import dashboardApiRoutes from '../dashboard/api-routes';

/** 400 parameter_unknown naming the first parameter of `values`, when it has any. */
function refuseAnyParameter(values: unknown, where: string, why: string): void {
  const [name] = Object.keys((values ?? {}) as object);
  if (name === undefined) return;
  throw new ApiError(400, 'invalid_request_error', 'parameter_unknown', `Unknown ${where}: ${printable(name, 100)}. This endpoint ${why}.`, printable(name, 100));
}

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
      v1.addHook('preValidation', async (request) => {
        const schemas = request.routeOptions.schema;
        const body = schemas?.body as Record<symbol, unknown> | undefined;
        // A body the route's schema marks optional (Type.Optional) may be left out: no body, or an empty one, is `{}`.
        if (request.body === undefined && body?.[OptionalKind] === 'Optional') request.body = {};
        // A route without query parameters or without a body (a read, publish, redeliver) refuses any sent, as every
        // other route refuses the ones it does not take: a typo never passes silently.
        if (!schemas?.querystring) refuseAnyParameter(request.query, 'query parameter', 'takes no query parameters');
        if (!body && request.body !== undefined) {
          if (request.body === null || typeof request.body !== 'object' || Array.isArray(request.body)) {
            throw new ApiError(400, 'invalid_request_error', 'invalid_body', 'The request body must be a JSON object, or left out: this endpoint takes no parameters.');
          }
          refuseAnyParameter(request.body, 'parameter', 'takes no body (send none, or {})');
        }
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
