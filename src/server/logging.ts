/**
 * What the service's log lines may carry, whatever fails: no raw identity field (email, phone, names), webhook secret,
 * token, API key or credential. Applied to every logger the service builds (http/app.ts; service.ts passes its level):
 * - `err` (and `error`, when it holds an Error): a whitelist. A database error keeps its SQLSTATE `code`, severity and
 *   the names of the table, column and constraint, never what PGlite and pg carry from the statement (`query`,
 *   `params`, `parameters`, `detail`, `where`, `internalQuery`, `hint`, …). Double-quoted spans of an error's message
 *   are replaced, unless they are one of those names: PostgreSQL quotes the offending value there
 *   (`invalid input syntax for type uuid: "ada@example.com"`), and so does JSON.parse.
 * - `req`: method and url, without its credentials (hosted handoff tokens, OAuth codes and states, sign-in tokens, an
 *   API key or webhook secret sent where an id goes), without an email address, phone number or IP address typed into
 *   a path segment or a parameter's name, and with only the query values known harmless (an `email` filter is not). Headers (Authorization, X-Service-Signature,
 *   Cookie) and the client's address are never logged.
 * - anything else: the `redact` paths below, at the top level of a log object and one level down.
 */
import type { FastifyServerOptions } from 'fastify';
import { SECRET_IN_TEXT } from './db/ids';
import { decodeUrlComponent } from './http/url-component';

export const REDACTED = '[redacted]';

/** Keys whose values never reach a log line. */
const SENSITIVE_KEYS = [
  'email', 'phone', 'first_name', 'last_name', 'firstName', 'lastName', 'identity', 'fields',
  'secret', 'webhook_secret', 'webhookSecret', 'previous_secret', 'client_secret', 'clientSecret',
  'token', 'access_token', 'accessToken', 'refresh_token', 'refreshToken', 'correlation_token', 'correlationToken',
  'developer_token', 'developerToken', 'api_key', 'apiKey', 'password', 'credentials', 'authorization', 'cookie',
  'params', 'parameters',
];

/** pino `redact` paths: each sensitive key at the top level of a log object and one level down. */
export const REDACT_PATHS: readonly string[] = SENSITIVE_KEYS.flatMap((key) => [key, `*.${key}`]);

/** Error fields that describe what failed without quoting the data: kept. */
const ERROR_FIELDS = ['code', 'severity', 'statusCode', 'errno', 'syscall', 'routine'] as const;
/** Database error fields naming schema objects: kept, and not redacted when the message quotes them. */
const IDENTIFIER_FIELDS = ['schema', 'table', 'column', 'dataType', 'constraint'] as const;

const QUOTED = /"(?:[^"\\]|\\.)*"/g;

/** The message with every double-quoted span replaced, except the schema names in `keep`. */
function scrubMessage(message: string, keep: ReadonlySet<string>): string {
  return message.replace(QUOTED, (quoted) => (keep.has(quoted.slice(1, -1)) ? quoted : `"${REDACTED}"`));
}

/**
 * An error as a log line may show it (pino's `err` serializer): type, scrubbed message and stack, SQLSTATE and the
 * whitelisted fields, its cause and aggregated errors the same way. Nothing else the error carries is copied.
 */
export function serializeError(value: unknown, depth = 0): unknown {
  if (value === null || value === undefined) return value;
  if (typeof value !== 'object') return { type: typeof value, message: scrubMessage(String(value), new Set()) };
  const error = value as Record<string, unknown>;
  const keep = new Set<string>();
  const out: Record<string, unknown> = {
    type: typeof error.name === 'string' ? error.name : (error.constructor as { name?: string } | undefined)?.name ?? 'Object',
  };
  for (const field of IDENTIFIER_FIELDS) {
    const named = error[field];
    if (typeof named === 'string' && named.length > 0) {
      keep.add(named);
      out[field] = named;
    }
  }
  const message = typeof error.message === 'string' ? error.message : '';
  const scrubbed = scrubMessage(message, keep);
  out.message = scrubbed;
  if (typeof error.stack === 'string') {
    out.stack = message ? error.stack.split(message).join(scrubbed) : error.stack;
    // A stack whose first line differs from the message (a rewritten message) is scrubbed on its own.
    out.stack = scrubMessage(out.stack as string, keep);
  }
  for (const field of ERROR_FIELDS) {
    const kept = error[field];
    if (typeof kept === 'string' || typeof kept === 'number') out[field] = kept;
  }
  if (depth < 3) {
    if (error.cause !== undefined) out.cause = serializeError(error.cause, depth + 1);
    if (Array.isArray(error.errors)) out.errors = error.errors.slice(0, 10).map((inner) => serializeError(inner, depth + 1));
  }
  return out;
}

/** A hosted handoff path: its token (a credential until it completes), and the OAuth callback's code and state. */
const HOSTED_PATH = /^\/handoffs\/.*/s;

/**
 * Query parameters whose values a logged url keeps, when they have the shape of one (hasHarmlessShape): ids, cursors,
 * public site keys and options, none of them personal data or a credential. Every other value (an `email` filter, a sign-in `token`, OAuth's `code` and `state`, a name
 * added later) is logged as [redacted], its name kept.
 */
const LOGGED_QUERY_VALUES = new Set([
  'limit', 'starting_after', 'ending_before', 'site_id', 'flow_id', 'report_id', 'event_id', 'status', 'occurred_after',
  'occurred_before', 'chart', 'site_key', 'done', 'error', 'view', 'page', 'from', 'to', 'platform', 'integration',
]);

/**
 * Whether a value of a harmless parameter has the shape such values have (an id, a cursor, a key, an option word, a
 * small number, a date or timestamp), so that personal data typed into one (an email as a cursor, a phone number as a
 * limit) is not logged: it is refused with a 400 and would otherwise reach the log as sent.
 */
function hasHarmlessShape(raw: string): boolean {
  const value = decodeUrlComponent(raw, true);
  if (value === null) return false;
  return (
    /^\d{1,4}$/.test(value) ||
    /^(?=[^]*[A-Za-z])[A-Za-z0-9_-]{1,64}$/.test(value) ||
    /^\d{4}-\d{2}-\d{2}(?:T\d{2}:\d{2}(?::\d{2}(?:\.\d{1,9})?)?(?:Z|[+-]\d{2}:?\d{2})?)?$/.test(value)
  );
}

/**
 * The scheme and authority of an absolute-form request target (`GET http://host/handoffs/… HTTP/1.1`, what a client
 * sends to a proxy): Node hands it over as the url, and the router serves its path as it serves the path alone.
 */
const ABSOLUTE_FORM = /^[a-z][a-z0-9+.-]*:\/\/[^/?#]*/i;

/**
 * Hides credentials and personal data in a logged url: hosted handoff tokens, every query value not known harmless,
 * and an API key or signing secret wherever it stands (a swapped setting puts one where a site key, an id or a cursor
 * goes, whose values are otherwise logged). An absolute-form url is logged by its path and query, checked the same way.
 */
export function redactUrl(absoluteOrPath: string): string {
  const url = absoluteOrPath.replace(ABSOLUTE_FORM, '').replace(SECRET_IN_TEXT, REDACTED);
  if (HOSTED_PATH.test(url)) return '/handoffs/[redacted]';
  const mark = url.indexOf('?');
  const path = (mark < 0 ? url : url.slice(0, mark))
    .split('/')
    .map((segment) => (looksPersonal(segment) ? REDACTED : segment))
    .join('/');
  if (mark < 0) return path;
  const query = url
    .slice(mark + 1)
    .split('&')
    .map((pair) => {
      const equals = pair.indexOf('=');
      // A name is logged only when it has the shape of one: `?ada@example.com` or `?ada%40example.com=1` is not.
      const name = equals < 0 ? pair : pair.slice(0, equals);
      const shownName = name === '' || hasHarmlessShape(name) ? name : REDACTED;
      if (equals < 0) return shownName;
      return LOGGED_QUERY_VALUES.has(name) && hasHarmlessShape(pair.slice(equals + 1)) ? pair : `${shownName}=${REDACTED}`;
    })
    .join('&');
  return `${path}?${query}`;
}

/**
 * Whether a path segment holds what an id never does but personal data typed where an id goes would (a client asking
 * for `/v1/events/ada@example.com`): an email address, a phone number (7 digits or more), an IPv4 address.
 */
function looksPersonal(segment: string): boolean {
  const value = decodeUrlComponent(segment) ?? segment;
  // An IPv4 address is digits and dots: the phone number's test takes it too.
  return value.includes('@') || (/^\+?[\d\s().-]+$/.test(value) && value.replace(/\D/g, '').length >= 7);
}

/** The `req` serializer: no headers, no client address (personal data), no credentials or personal data in the url. */
function serializeRequest(req: { method: string; url: string }) {
  return { method: req.method, url: redactUrl(req.url) };
}

/**
 * The service's logger options over the caller's (level, stream, …): the serializers and redaction above. `false` stays
 * false (tests); `true` means pino's defaults plus these.
 */
export function serviceLoggerOptions(logger: FastifyServerOptions['logger']): FastifyServerOptions['logger'] {
  if (!logger) return false;
  const base = (typeof logger === 'object' ? logger : {}) as {
    serializers?: Record<string, unknown>;
    redact?: string[] | { paths: string[]; censor?: unknown; remove?: boolean };
  };
  const callerPaths = Array.isArray(base.redact) ? base.redact : (base.redact?.paths ?? []);
  return {
    ...base,
    serializers: {
      ...base.serializers,
      req: serializeRequest,
      err: serializeError,
      error: (value: unknown) => (value instanceof Error ? serializeError(value) : value),
    },
    redact: { ...(Array.isArray(base.redact) ? {} : base.redact), paths: [...new Set([...REDACT_PATHS, ...callerPaths])], censor: REDACTED },
  } as FastifyServerOptions['logger'];
}

/** A logger as a request sees it (pino's and Fastify's shape, with only what the service calls). */
interface RequestLogger {
  level: string;
  isLevelEnabled(level: string): boolean;
  child(bindings: Record<string, unknown>, options?: Record<string, unknown>): RequestLogger;
  [method: string]: unknown;
}

/**
 * A request's logger that makes the real child (pino's, with the request's bindings) only when something is logged at
 * an enabled level. Its methods live on the prototype, so making one per request allocates one small object.
 */
class LazyRequestLogger {
  #parent: RequestLogger;
  #bindings: Record<string, unknown>;
  #made: RequestLogger | null = null;

  constructor(parent: RequestLogger, bindings: Record<string, unknown>) {
    this.#parent = parent;
    this.#bindings = bindings;
  }

  #real(): RequestLogger {
    return (this.#made ??= this.#parent.child(this.#bindings));
  }

  #log(level: string, args: unknown[]): void {
    if (!(this.#made ?? this.#parent).isLevelEnabled(level)) return;
    (this.#real()[level] as (...a: unknown[]) => void)(...args);
  }

  get level(): string {
    return (this.#made ?? this.#parent).level;
  }
  set level(level: string) {
    this.#real().level = level;
  }
  isLevelEnabled(level: string): boolean {
    return (this.#made ?? this.#parent).isLevelEnabled(level);
  }
  child(bindings: Record<string, unknown>, options?: Record<string, unknown>): RequestLogger {
    return this.#real().child(bindings, options);
  }
  bindings(): Record<string, unknown> {
    return (this.#real().bindings as () => Record<string, unknown>)();
  }
  fatal(...args: unknown[]): void {
    this.#log('fatal', args);
  }
  error(...args: unknown[]): void {
    this.#log('error', args);
  }
  warn(...args: unknown[]): void {
    this.#log('warn', args);
  }
  info(...args: unknown[]): void {
    this.#log('info', args);
  }
  debug(...args: unknown[]): void {
    this.#log('debug', args);
  }
  trace(...args: unknown[]): void {
    this.#log('trace', args);
  }
}

/**
 * Fastify's childLoggerFactory: each request's logger (with its reqId) is made only when the request logs something
 * at an enabled level (LazyRequestLogger). Fastify makes one per request, and with the service's redaction each cost
 * about 3 % of the HTTP thread under the webhook benchmark's load (docs/benchmarks.md), though at the default level a
 * request that goes well logs nothing. A child with its own level or serializers (a route's logLevel) is made at once.
 */
export function lazyChildLogger(
  this: unknown,
  logger: RequestLogger,
  bindings: Record<string, unknown>,
  options: Record<string, unknown>,
): RequestLogger {
  if (Object.keys(options).length > 0) return logger.child(bindings, options);
  return new LazyRequestLogger(logger, bindings) as unknown as RequestLogger;
}
