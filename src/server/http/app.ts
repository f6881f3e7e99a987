/** The Fastify instance every surface is served by: logging without secrets, the error envelope, the 404 envelope. */
import { STATUS_CODES, type IncomingHttpHeaders } from 'node:http';
import type { Socket } from 'node:net';
import Fastify, {
  LogController,
  type FastifyError,
  type FastifyInstance,
  type FastifyReply,
  type FastifyRequest,
  type FastifyServerOptions,
  type onRequestAsyncHookHandler,
} from 'fastify';
import type { Database } from '../db/db';
import { STORE_TROUBLE_MESSAGES, StoreTrouble } from '../db/store-trouble';
import { DEFAULT_TRUST_PROXY, type Settings } from '../settings';
import { ApiError, printable } from './errors';
import { AJV_OPTIONS, coerceQueryIntegers, refuseMalformedQuery, schemaError } from './validation';
import { parseJsonText, utf8JsonBodyText } from './json-text';
import { lazyChildLogger, serviceLoggerOptions } from '../logging';
import { trackAllowedMethods, type AllowedMethods } from './allowed-methods';

/** Kept here for its importers: the url redaction of request logs lives with the other log rules in ../logging. */
export { redactUrl } from '../logging';

/** What every route plugin gets: the database and the settings. */
export interface AppContext {
  db: Database;
  settings: Settings;
  /** The clock of date checks (a later stage's occurred_at window); the system clock when absent. Tests inject one. */
  now?: () => Date;
  /** The rate limits of the public endpoints (src/server/rate-limits), one set per process; none when absent. */
  rateLimits?: PublicLimits;
}

/** What a public surface asks of the rate limits: the onRequest hook that limits its routes (null when they are off). */
export interface PublicLimits {
  hook(app: FastifyInstance, surface: 'collector' | 'webhook'): Promise<onRequestAsyncHookHandler | null>;
}

declare module 'fastify' {
  interface FastifyInstance {
    /** The store's refusals for lack of resources or reach, seen by the process's requests (the health check reads them). */
    storeTrouble: StoreTrouble;
    /** The other methods a request's path is served under (http/allowed-methods.ts): a 405's `Allow`; empty for a 404. */
    allowedMethods: AllowedMethods;
  }
}

/** How long a client is asked to wait before it sends again what the store could not take, in seconds. */
export const STORE_RETRY_AFTER_S = 30;

/**
 * When `error` is the store's condition (its disk full, the server unreachable; db/store-trouble.ts), not a fault of
 * the request or of the code: records it for the health check, logs it once a minute at most (a full disk under load
 * refuses thousands of requests a second), sets `Retry-After`, and returns the sentence to answer with. Null for any
 * other error. Every error handler of the service asks it first (the API's, the dashboard's pages).
 */
export function answerStoreTrouble(app: FastifyInstance, request: FastifyRequest, reply: FastifyReply, error: unknown): string | null {
  const trouble = app.storeTrouble.report(error, request.log, {}, 'store unavailable: requests answered 503 until it works again');
  if (!trouble) return null;
  reply.header('retry-after', String(STORE_RETRY_AFTER_S));
  return `${STORE_TROUBLE_MESSAGES[trouble]}: nothing was done. Send it again later.`;
}

/**
 * How long a request may take to arrive whole (its headers and body): past it the answer is a 408 and the connection is
 * closed, so a client that stops sending mid-body (or sends a byte now and then) cannot hold a connection for ever.
 * Fastify's default is no limit. The longest body the service takes is 1 MB; at 30 s that is a 35 KB/s link.
 */
export const REQUEST_TIMEOUT_MS = 30_000;
/** How often Node looks for requests past that time (its default is 30 s, which would double the wait). */
export const REQUEST_TIMEOUT_CHECK_MS = 5_000;

/** Whether a request's headers say a body follows (a length above 0, or chunks). */
function announcesBody(headers: IncomingHttpHeaders): boolean {
  const length = headers['content-length'];
  return headers['transfer-encoding'] !== undefined || (length !== undefined && length !== '0');
}

/** What createHttpApp's timeouts are (tests use shorter ones). */
export interface RequestTimeouts {
  requestTimeoutMs: number;
  checkEveryMs: number;
}

/**
 * Builds a Fastify instance with the service's logging and error handling, and no routes. `storeTrouble`: where the
 * store's refusals are counted (one per process, shared by its listeners; a new one when absent).
 */
export function createHttpApp(
  loggerOption: FastifyServerOptions['logger'],
  trustProxy: Settings['trustProxy'] = [...DEFAULT_TRUST_PROXY],
  storeTrouble: StoreTrouble = new StoreTrouble(),
  timeouts: RequestTimeouts = { requestTimeoutMs: REQUEST_TIMEOUT_MS, checkEveryMs: REQUEST_TIMEOUT_CHECK_MS },
): FastifyInstance {
  const app = Fastify({
    requestTimeout: timeouts.requestTimeoutMs,
    // While the listener closes (a rolling restart), a request that still arrives over an open keep-alive connection is
    // served (the store closes only after the listeners), answered with `Connection: close` so the proxy's next request
    // goes elsewhere: Fastify's default answers it a bare 503 that a proxy does not retry for a POST (a snapshot lost).
    return503OnClosing: false,
    // Node enforces the request's time only while the headers' time (60 s by default) is not longer (measured).
    http: { connectionsCheckingInterval: timeouts.checkEveryMs, headersTimeout: timeouts.requestTimeoutMs },
    logger: serviceLoggerOptions(loggerOption ?? false),
    // Which X-Forwarded-For hops make request.ip, the client address of the collector and the rate limits (CNV_TRUST_PROXY).
    trustProxy: typeof trustProxy === 'number' ? (_address: string, hop: number) => hop < trustProxy : trustProxy,
    // One line per request, at debug level: at the default info level the log tells what the service did
    // (listening, deliveries, warnings), not every request a busy collector answers.
    logController: new LogController({ disableRequestLogging: true }),
    // A request's own logger is made when it first logs (see lazyChildLogger): most requests never do.
    ...(loggerOption ? { childLoggerFactory: lazyChildLogger as unknown as FastifyServerOptions['childLoggerFactory'] } : {}),
    ajv: AJV_OPTIONS,
    // Errors the router raises before any route runs (malformed percent-encoding, an over-long path segment).
    frameworkErrors: (error, _request, reply) => {
      const refused = routerError(error);
      // The reply's generic type knows no status codes here; the envelope is plain JSON.
      (reply as unknown as FastifyReply).status(refused.status).send(refused.toBody());
    },
    // Requests Node's HTTP parser refuses (oversized or invalid headers) never reach Fastify: answer them on the socket.
    clientErrorHandler: answerClientError,
  });
  // CONNECT (a proxy's tunnel) is nothing this service serves; unheard, Node closes the connection without an answer.
  app.server.on('connect', (_request: unknown, socket: Socket) =>
    answerOnSocket(socket, 405, 'method_not_allowed', 'CONNECT is not served here: this is an HTTP API, not a proxy.'),
  );
  // JSON bodies on a route with no parser of its own (/v1, /mcp, the webhook, the collector and the form pages each set
  // theirs) are read as /v1's are (api/routes.ts): UTF-8 only, nested 32 levels at most, `__proto__` refused.
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'buffer' }, (request, body, done) => {
    try {
      const text = utf8JsonBodyText(body as Buffer, request.headers['content-type']);
      if (text === '') throw new ApiError(400, 'invalid_request_error', 'invalid_json', 'The request body is empty: send JSON.');
      done(null, parseJsonText(text, { protoKeys: 'refuse', unpairedSurrogates: 'keep' }));
    } catch (error) {
      done(error as Error);
    }
  });
  // The service's hooks run on every request: callback-style, as no hook here awaits anything (an async hook costs a
  // promise and a turn of the microtask queue each, three times per snapshot).
  app.addHook('preValidation', (request, _reply, done) => {
    try {
      refuseMalformedQuery(request.url);
    } catch (error) {
      return done(error as Error);
    }
    coerceQueryIntegers(request);
    done();
  });
  // Response schemas describe the API (the OpenAPI document, test/server/openapi*); they never filter an answer: a body
  // is sent as the handler built it, so a field a schema lacks is never silently dropped.
  app.setSerializerCompiler(() => (data) => JSON.stringify(data));
  // An answer sent before the request's body arrived whole (a refusal from a hook: no key, a rate limit) closes the
  // connection: kept open, Node would wait for the rest of the body and then send a second, unasked-for answer (408)
  // on the same connection when the client never sends it. (A request without a body is not `complete` yet while a
  // hook answers it in the same turn: only one that announces a body counts.)
  // And once the listener closes (SIGTERM), every answer closes its connection, the answers to requests under way
  // included: a keep-alive connection left open would hold the shutdown for Node's keep-alive timeout (measured: 73 s
  // with one request in flight at the SIGTERM), and the proxy would keep sending to a process that is going.
  let closing = false;
  app.addHook('preClose', (done) => {
    closing = true;
    done();
  });
  app.addHook('onSend', (request, reply, payload, done) => {
    if (closing || (!request.raw.complete && announcesBody(request.headers))) reply.header('connection', 'close');
    done(null, payload);
  });
  app.addHook('onResponse', (request, reply, done) => {
    request.log.debug({ req: request, res: { statusCode: reply.statusCode }, responseTime: reply.elapsedTime }, 'request completed');
    done();
  });

  app.decorate('storeTrouble', storeTrouble);
  // Every route added from here on is recorded: which methods a path is served under, for the 405s below.
  app.decorate('allowedMethods', trackAllowedMethods(app));

  // A path served under other methods than the request's is a 405 naming them (RFC 9110: with an Allow header); a path
  // served under none is a 404.
  const answerUnrouted = (request: FastifyRequest, reply: FastifyReply) => {
    const allowed = app.allowedMethods(request.method, request.url);
    if (allowed.length > 0) {
      return reply.status(405).header('allow', allowed.join(', ')).send(methodNotAllowed(request.method, request.url, allowed).toBody());
    }
    return reply
      .status(404)
      .send(new ApiError(404, 'not_found_error', 'route_not_found', `No route: ${request.method} ${request.url.split('?')[0]}.`).toBody());
  };
  app.setErrorHandler((error: FastifyError | ApiError, request, reply) => {
    // A request no route serves is answered by its path and method (404 or 405) whatever its body: the body is read
    // (and refused: empty, not JSON, too large, of another type) before the not-found handler would run.
    if (request.is404) return answerUnrouted(request, reply);
    if (error instanceof ApiError) return reply.status(error.status).headers(error.headers).send(error.toBody());
    if (error.validation) return reply.status(400).send(schemaError(error).toBody());
    const status = error.statusCode ?? 500;
    if (status === 413) {
      return reply.status(413).send(new ApiError(413, 'invalid_request_error', 'payload_too_large', 'Request body too large.').toBody());
    }
    if (error.code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE') {
      const sent = request.headers['content-type'];
      const message = `${sent ? `Content-Type '${printable(sent, 100)}' is not accepted here` : 'The request has a body but no Content-Type'}: send the body as JSON with the header Content-Type: application/json.`;
      return reply.status(415).send(new ApiError(415, 'invalid_request_error', 'unsupported_media_type', message).toBody());
    }
    if (status >= 400 && status < 500) {
      const code =
        error.code === 'FST_ERR_CTP_EMPTY_JSON_BODY' || error.code === 'FST_ERR_CTP_INVALID_JSON_BODY' || error.name === 'SyntaxError'
          ? 'invalid_json'
          : 'invalid_request';
      return reply.status(status).send(new ApiError(status, 'invalid_request_error', code, printable(error.message, 200)).toBody());
    }
    // The store cannot work now (its disk full, the server unreachable): nothing was done, and a retry later is welcome.
    const unavailable = answerStoreTrouble(app, request, reply, error);
    if (unavailable) return reply.status(503).send(new ApiError(503, 'api_error', 'store_unavailable', unavailable).toBody());
    request.log.error({ err: error }, 'unhandled error');
    return reply.status(500).send(new ApiError(500, 'api_error', 'internal_error', 'Internal error.').toBody());
  });

  app.setNotFoundHandler(answerUnrouted);

  return app;
}

/** 405 `method_not_allowed` for a request whose path is served, but not under its method (`allowed`, not empty). */
function methodNotAllowed(method: string, url: string, allowed: readonly string[]): ApiError {
  const path = printable(url.split('?')[0] ?? '', 200);
  return new ApiError(405, 'invalid_request_error', 'method_not_allowed', `${method} is not allowed on ${path}: it is served with ${allowed.join(', ')}.`);
}

/** The envelope for a request the router refused; the path itself is never echoed. */
function routerError(error: FastifyError): ApiError {
  if (error.code === 'FST_ERR_MAX_PARAM_LENGTH') {
    return new ApiError(414, 'invalid_request_error', 'path_too_long', 'A segment of the request path is too long: no id or key is longer than 100 characters.');
  }
  if (error.code === 'FST_ERR_BAD_URL') {
    return new ApiError(
      400, 'invalid_request_error', 'invalid_path',
      'The request path is not valid: a % must start an escape of two hex digits, and escaped bytes must be UTF-8.',
    );
  }
  return new ApiError(400, 'invalid_request_error', 'invalid_request', 'The request could not be routed.');
}

/** Answers a request Node's HTTP parser refused with the error envelope, on the raw socket (as Fastify's default does). */
function answerClientError(error: Error & { code?: string }, socket: Socket): void {
  if (error.code === 'ECONNRESET' || socket.destroyed) return;
  const [status, code, message] =
    error.code === 'HPE_HEADER_OVERFLOW'
      ? [431, 'headers_too_large', 'The request headers are too large.']
      : error.code === 'ERR_HTTP_REQUEST_TIMEOUT'
        ? [408, 'request_timeout', 'The request took too long to arrive.']
        : [400, 'invalid_request', 'The request is not valid HTTP (a malformed request line or header).'];
  answerOnSocket(socket, status, code, message, error);
}

/** Writes an error envelope straight on a socket (no request reached Fastify) and closes it. */
function answerOnSocket(socket: Socket, status: number, code: string, message: string, error?: Error): void {
  const body = JSON.stringify(new ApiError(status, 'invalid_request_error', code, message).toBody());
  if (socket.writable) {
    socket.write(
      `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nContent-Type: application/json; charset=utf-8\r\n` +
        `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
    );
  }
  socket.destroy(error);
}
