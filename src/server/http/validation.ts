/**
 * Schema validation at the edge: how Ajv is set up (it refuses, it never repairs), how query strings become typed
 * values, and how a schema failure becomes the one error envelope naming the parameter.
 */
import type { FastifyError, FastifyRequest, FastifySchemaValidationError, FastifyServerOptions } from 'fastify';
import { ApiError, invalidParam, printable } from './errors';
import { isStorableTimestamp } from './timestamps';
import { decodeUrlComponent } from './url-component';

/** The one pattern that keeps control characters (NUL first of all: PostgreSQL cannot store it) out of path and query values. */
export const NO_CONTROL_CHARACTERS = '^[^\\u0000-\\u001f\\u007f]*$';

/**
 * Ajv as the service uses it. Fastify's defaults would repair bad input silently: `removeAdditional` drops an unknown
 * field (a typo would do nothing, answered 200) and `coerceTypes` turns `{"name": 7}` into "7". Here nothing is removed
 * or coerced: an unknown field is `parameter_unknown`, a wrong type `parameter_invalid`. Query strings, where every
 * value is text, are handled by {@link coerceQueryIntegers}. `verbose` gives the error handler each failing schema, so
 * messages can use its `description`.
 */
export const AJV_OPTIONS: NonNullable<FastifyServerOptions['ajv']> = {
  customOptions: { removeAdditional: false, coerceTypes: false, useDefaults: false, allErrors: false, verbose: true },
  onCreate(ajv) {
    // `date-time` is checked strictly: what PostgreSQL will store (see isStorableTimestamp), not merely RFC 3339 shape.
    ajv.addFormat('date-time', { type: 'string', validate: isStorableTimestamp });
    // An annotation a schema may carry: the error code its failure answers with (`invalid_cursor` for a cursor).
    ajv.addKeyword({ keyword: 'errorCode', schemaType: 'string' });
  },
};

/** The pattern of text that must hold something besides spaces. */
export const NOT_BLANK = '\\S';
/** The control characters no name or label holds (C0, DEL, C1), as a character class's ranges: the one definition. */
export const CONTROL_CHARACTER_RANGES = '\\u0000-\\u001f\\u007f-\\u009f';
/**
 * The pattern of a name or label: one line of text, not blank, without control characters (C0, DEL and C1: a line
 * break, a tab, an ESC sequence that would clear or retitle the terminal of whoever lists it).
 */
export const SINGLE_LINE_TEXT = `^(?=[\\s\\S]*\\S)[^${CONTROL_CHARACTER_RANGES}]*$`;
const SINGLE_LINE = new RegExp(SINGLE_LINE_TEXT, 'u');

/**
 * Whether a text passes SINGLE_LINE_TEXT as the schemas check it: on the text as sent, before any trimming, so a
 * trailing line break or tab is refused on every surface (REST, MCP, dashboard, CLI), never silently trimmed away.
 */
export function isSingleLineText(text: string): boolean {
  return SINGLE_LINE.test(text);
}

/** What a failure of SINGLE_LINE_TEXT says. */
export const SINGLE_LINE_RULE = 'must be one line of text, not blank, without control characters (line breaks, tabs, escape sequences)';

/** A query value that is an integer written in decimal digits, and nothing else (no `1e2`, `0x10`, `1.0`, ` 5`). */
const DECIMAL_INTEGER = /^\d{1,15}$/;

/**
 * 400 `parameter_invalid` for a query parameter whose name or value is not well percent-encoded UTF-8 (`%zz`, a lone
 * `%`, `%C0%AF`, `%FF`): the query parser would keep a bad escape as text and make U+FFFD of bytes that are not UTF-8,
 * so a filter would quietly match something else than what was sent. (The same bytes in the path are a 400 from the
 * router.) Only a query holding `%` is looked at.
 */
export function refuseMalformedQuery(url: string): void {
  const mark = url.indexOf('?');
  if (mark < 0 || !url.includes('%', mark)) return;
  for (const pair of url.slice(mark + 1).split('&')) {
    const equals = pair.indexOf('=');
    const name = equals < 0 ? pair : pair.slice(0, equals);
    for (const part of equals < 0 ? [pair] : [name, pair.slice(equals + 1)]) {
      if (decodeUrlComponent(part, true) === null) {
        const shown = printable(name, 100);
        throw invalidParam(shown, `The query parameter '${shown}' is not well percent-encoded UTF-8 (escape each byte as %XX).`);
      }
    }
  }
}

/**
 * A preValidation hook: a query parameter the route's schema declares as an integer becomes a number when it is
 * written in decimal digits (`limit=10`); anything else stays text and fails the schema with `parameter_invalid`.
 */
export function coerceQueryIntegers(request: FastifyRequest): void {
  const schema = request.routeOptions.schema?.querystring as { properties?: Record<string, { type?: unknown }> } | undefined;
  const query = request.query as Record<string, unknown> | undefined;
  if (!schema?.properties || !query) return;
  for (const [name, property] of Object.entries(schema.properties)) {
    const value = Object.hasOwn(query, name) ? query[name] : undefined;
    if (property.type === 'integer' && typeof value === 'string' && DECIMAL_INTEGER.test(value)) query[name] = Number(value);
  }
}

/** An Ajv error with `verbose` on: the failing value and the schema holding the failing keyword. */
type VerboseError = FastifySchemaValidationError & {
  data?: unknown;
  parentSchema?: { description?: string; errorCode?: string; properties?: object };
};

/** `/actions_config/0/extra` as the envelope names it: `actions_config[0].extra`. */
function paramOf(instancePath: string, child?: string): string {
  const segments = instancePath.split('/').slice(1).map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'));
  if (child !== undefined) segments.push(child);
  return printable(
    segments.reduce((path, segment) => (/^\d+$/.test(segment) && path ? `${path}[${segment}]` : path ? `${path}.${segment}` : segment), ''),
  );
}

const WHERE: Record<string, string> = { querystring: 'query parameter', params: 'path parameter', body: 'parameter' };

const TYPE_NAMES: Record<string, string> = {
  string: 'a string', integer: 'an integer', number: 'a number', boolean: 'true or false', object: 'an object', array: 'an array', null: 'null',
};

/** Why a value failed a keyword, in words (never quoting the value). */
function reason(issue: VerboseError): string {
  const p = issue.params as Record<string, unknown>;
  switch (issue.keyword) {
    case 'type':
      return `must be ${String(p.type).split(',').map((type) => TYPE_NAMES[type] ?? type).join(' or ')}`;
    case 'minLength':
      return p.limit === 1 ? 'must not be empty' : `must be at least ${String(p.limit)} characters`;
    case 'maxLength':
      return `must be at most ${String(p.limit)} characters`;
    case 'minimum':
    case 'maximum':
      return `must be ${issue.keyword === 'minimum' ? 'at least' : 'at most'} ${String(p.limit)}`;
    case 'minItems':
      return p.limit === 1 ? 'must hold at least one item' : `must hold at least ${String(p.limit)} items`;
    case 'maxItems':
      return `may hold at most ${String(p.limit)} items`;
    case 'const':
      return `must be ${JSON.stringify(p.allowedValue)}`;
    case 'enum':
      return `must be one of ${(p.allowedValues as unknown[]).map(String).join(', ')}`;
    case 'not':
      return 'is not accepted here';
    case 'format':
      return 'is not in the expected format';
    case 'pattern':
      if (p.pattern === NO_CONTROL_CHARACTERS) return 'must not contain control characters';
      if (p.pattern === SINGLE_LINE_TEXT) return SINGLE_LINE_RULE;
      return p.pattern === NOT_BLANK ? 'must not be blank' : 'has the wrong form';
    default:
      return 'is not valid';
  }
}

/** A schema nothing satisfies (TypeBox's Never, `not: {}`): a parameter named only to be refused with its own code. */
function refusesEverything(schema: unknown): boolean {
  const not = (schema as { not?: unknown } | null)?.not;
  return typeof not === 'object' && not !== null && Object.keys(not).length === 0;
}

/** The names of the properties a value may carry: those a schema lists, but not the ones it lists only to refuse. */
function acceptedNames(properties: object): string[] {
  return Object.entries(properties).filter(([, schema]) => !refusesEverything(schema)).map(([name]) => name);
}

/**
 * The envelope for a schema failure (Fastify's validation error): `parameter_missing` for a required field,
 * `parameter_unknown` for an additional one, the schema's `errorCode` when it has one, else `parameter_invalid`.
 * The parameter is named in `param` and in the message; the value itself is never quoted.
 */
export function schemaError(error: FastifyError): ApiError {
  const issues = (error.validation ?? []) as VerboseError[];
  const issue = issues[0];
  const where = WHERE[error.validationContext ?? 'body'] ?? 'parameter';
  if (!issue) return new ApiError(400, 'invalid_request_error', 'parameter_invalid', `Invalid ${where}.`);
  if (issue.keyword === 'required') {
    const param = paramOf(issue.instancePath, String((issue.params as { missingProperty: string }).missingProperty));
    return new ApiError(400, 'invalid_request_error', 'parameter_missing', `Missing required ${where}: ${param}.`, param);
  }
  if (issue.keyword === 'additionalProperties') {
    const param = paramOf(issue.instancePath, String((issue.params as { additionalProperty: string }).additionalProperty));
    const allowed = acceptedNames(issue.parentSchema?.properties ?? {});
    const hint = allowed.length > 0 ? ` Allowed here: ${allowed.join(', ')}.` : ' No parameters are allowed here.';
    return new ApiError(400, 'invalid_request_error', 'parameter_unknown', `Unknown ${where}: ${param}.${hint}`, param);
  }
  const param = paramOf(issue.instancePath);
  if (!param && error.validationContext === 'body') {
    return new ApiError(400, 'invalid_request_error', 'invalid_body', 'The request body must be a JSON object.');
  }
  // A union's branches carry no description of their own: the last error at the same place is the union's.
  const described = [issue, ...issues.slice(1).reverse()].find((i) => i.instancePath === issue.instancePath && i.parentSchema?.description);
  const description = described?.parentSchema?.description;
  const code = issues.find((i) => i.instancePath === issue.instancePath && i.parentSchema?.errorCode)?.parentSchema?.errorCode ?? 'parameter_invalid';
  const repeated = error.validationContext === 'querystring' && issue.keyword === 'type' && Array.isArray(issue.data);
  const why = repeated ? 'was given more than once' : reason(issue);
  const message = `Invalid ${where} '${param}': it ${why}.${description ? ` Expected: ${description}` : ''}`;
  return new ApiError(400, 'invalid_request_error', code, message, param || undefined);
}
