/** The Fastify instance every surface is served by: logging without secrets, the error envelope, the 404 envelope. */
import Fastify, { LogController, type FastifyError, type FastifyInstance, type FastifyServerOptions } from 'fastify';
import type { Database } from '../db/db';
import type { Settings } from '../settings';
import { ApiError } from './errors';

/** What every route plugin gets: the database and the settings. */
export interface AppContext {
  db: Database;
  settings: Settings;
}

/** Builds a Fastify instance with the service's logging and error handling, and no routes. */
export function createHttpApp(loggerOption: FastifyServerOptions['logger']): FastifyInstance {
  const app = Fastify({
    logger: withRedactedRequests(loggerOption ?? false),
    trustProxy: true,
    // One line per request, at debug level: at the default info level the log tells what the service did
    // (listening, deliveries, warnings), not every request a busy collector answers.
    logController: new LogController({ disableRequestLogging: true }),
  });
  app.addHook('onResponse', async (request, reply) => {
    request.log.debug({ req: request, res: { statusCode: reply.statusCode }, responseTime: reply.elapsedTime }, 'request completed');
  });

  app.setErrorHandler((error: FastifyError | ApiError, request, reply) => {
    if (error instanceof ApiError) return reply.status(error.status).send(error.toBody());
    if (error.validation) {
      const issue = error.validation[0];
      const param =
        (issue?.params as { missingProperty?: string } | undefined)?.missingProperty ??
        issue?.instancePath?.replace(/^\//, '').replace(/\//g, '.') ??
        undefined;
      const where = error.validationContext === 'querystring' ? 'query parameter' : 'parameter';
      const message = `Invalid ${where}${param ? ` '${param}'` : ''}: ${issue?.message ?? error.message}.`;
      const code = issue?.keyword === 'required' ? 'parameter_missing' : 'parameter_invalid';
      return reply.status(400).send(new ApiError(400, 'invalid_request_error', code, message, param || undefined).toBody());
    }
    const status = error.statusCode ?? 500;
    if (status === 413) {
      return reply.status(413).send(new ApiError(413, 'invalid_request_error', 'payload_too_large', 'Request body too large.').toBody());
    }
    if (error.code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE') {
      return reply.status(415).send(new ApiError(415, 'invalid_request_error', 'unsupported_media_type', error.message).toBody());
    }
    if (status >= 400 && status < 500) {
      const code =
        error.code === 'FST_ERR_CTP_EMPTY_JSON_BODY' || error.code === 'FST_ERR_CTP_INVALID_JSON_BODY' || error.name === 'SyntaxError'
          ? 'invalid_json'
          : 'invalid_request';
      return reply.status(status).send(new ApiError(status, 'invalid_request_error', code, error.message).toBody());
    }
    request.log.error({ err: error }, 'unhandled error');
    return reply.status(500).send(new ApiError(500, 'api_error', 'internal_error', 'Internal error.').toBody());
  });

  app.setNotFoundHandler((request, reply) =>
    reply
      .status(404)
      .send(new ApiError(404, 'not_found_error', 'route_not_found', `No route: ${request.method} ${request.url.split('?')[0]}.`).toBody()),
  );

  return app;
}

/** The unguessable token of a hosted handoff page, as it appears in a request path. */
const HOSTED_TOKEN = /^(\/handoffs\/)[^/?#]+/;

/** Hides hosted page tokens in a logged url: a pending handoff link is a credential until it completes. */
export function redactUrl(url: string): string {
  return url.replace(HOSTED_TOKEN, '$1[redacted]');
}

/**
 * Request logging without secrets: pino's default request serializer logs the url (hosted page tokens) and the
 * headers are never logged (Authorization, X-Service-Signature, Cookie).
 */
function withRedactedRequests(logger: FastifyServerOptions['logger']): FastifyServerOptions['logger'] {
  if (!logger) return false;
  const base = typeof logger === 'object' ? logger : {};
  return {
    ...base,
    serializers: {
      ...(base as { serializers?: Record<string, unknown> }).serializers,
      req: (req: { method: string; url: string; ip?: string }) => ({ method: req.method, url: redactUrl(req.url), remoteAddress: req.ip }),
    },
  } as FastifyServerOptions['logger'];
}
