/**
 * Walking the schemas of an OpenAPI 3.1 document: every Schema Object of every operation (parameters, request bodies,
 * responses, response headers) and of components.schemas, down through the JSON Schema 2020-12 keywords that hold
 * schemas. A visitor may replace the schema it is shown; the walk then does not descend into the replacement.
 */

/** A Schema Object (JSON Schema 2020-12). */
export type Schema = Record<string, unknown>;

/** The parts of an OpenAPI document the walk reads. */
export interface OpenApiDocument {
  paths?: Record<string, Record<string, unknown>>;
  components?: { schemas?: Record<string, Schema> } & Record<string, unknown>;
}

/** An operation as the walk reads it. */
export interface Operation {
  operationId?: string;
  description?: string;
  parameters?: Array<{ name: string; in: string; schema?: Schema }>;
  requestBody?: { content?: Record<string, { schema?: Schema }> };
  responses?: Record<string, Response>;
}

/** A response as the walk reads it. */
export interface Response {
  description?: string;
  headers?: Record<string, { schema?: Schema; description?: string }>;
  content?: Record<string, { schema?: Schema }>;
}

/**
 * Where a schema sits: `base` names its root (`createFlow body`, `getSite 200`, `listEvents parameter limit`,
 * `components Error`), `path` the keywords and names from that root down (`properties`, `trigger_config`, `then`).
 */
export interface Place {
  base: string;
  path: string[];
}

/** `createFlow body properties.trigger_config.then`: a place as one string. */
export function locationOf(place: Place): string {
  return place.path.length === 0 ? place.base : `${place.base} ${place.path.join('.')}`;
}

/** Returns a schema to put in place of the one shown (not walked further), or undefined to walk into it. */
export type Visit = (schema: Schema, place: Place) => Schema | undefined;

/** The HTTP methods of a Path Item Object. */
const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'];

/** Keywords whose value is one schema. */
const ONE = ['items', 'additionalProperties', 'not', 'if', 'then', 'else', 'contains', 'propertyNames', 'unevaluatedItems', 'unevaluatedProperties', 'contentSchema'];
/** Keywords whose value is a list of schemas. */
const LIST = ['allOf', 'anyOf', 'oneOf', 'prefixItems'];
/** Keywords whose value is a map of schemas. */
const MAP = ['properties', 'patternProperties', 'dependentSchemas', '$defs'];

export function isSchema(value: unknown): value is Schema {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

/** Walks one schema and what it holds; returns the visitor's replacement of the schema itself, if any. */
export function walkSchema(schema: Schema, place: Place, visit: Visit, skipRoot = false): Schema | undefined {
  if (!skipRoot) {
    const replacement = visit(schema, place);
    if (replacement) return replacement;
  }
  const inner = (value: unknown, path: string[], put: (next: Schema) => void) => {
    if (!isSchema(value)) return;
    const next = walkSchema(value, { base: place.base, path: [...place.path, ...path] }, visit);
    if (next) put(next);
  };
  for (const keyword of ONE) inner(schema[keyword], [keyword], (next) => (schema[keyword] = next));
  for (const keyword of LIST) {
    const list = schema[keyword];
    if (Array.isArray(list)) list.forEach((item, i) => inner(item, [keyword, String(i)], (next) => (list[i] = next)));
  }
  for (const keyword of MAP) {
    const map = schema[keyword];
    if (isSchema(map)) for (const [name, value] of Object.entries(map)) inner(value, [keyword, name], (next) => (map[name] = next));
  }
  return undefined;
}

/** The operations of a document, with the name their places use (the operationId, else `METHOD path`). */
export function operationsOf(document: OpenApiDocument): Array<{ name: string; operation: Operation }> {
  const out: Array<{ name: string; operation: Operation }> = [];
  for (const [url, item] of Object.entries(document.paths ?? {})) {
    for (const method of METHODS) {
      const operation = item[method] as Operation | undefined;
      if (operation) out.push({ name: operation.operationId ?? `${method.toUpperCase()} ${url}`, operation });
    }
  }
  return out;
}

/** Walks every schema of every operation, in document order. */
export function walkOperations(document: OpenApiDocument, visit: Visit): void {
  const root = (holder: { schema?: Schema }, base: string) => {
    if (!holder.schema) return;
    const next = walkSchema(holder.schema, { base, path: [] }, visit);
    if (next) holder.schema = next;
  };
  for (const { name, operation } of operationsOf(document)) {
    for (const parameter of operation.parameters ?? []) root(parameter, `${name} parameter ${parameter.name}`);
    for (const media of Object.values(operation.requestBody?.content ?? {})) root(media, `${name} body`);
    for (const [status, response] of Object.entries(operation.responses ?? {})) {
      for (const [header, value] of Object.entries(response.headers ?? {})) root(value, `${name} ${status} header ${header}`);
      for (const media of Object.values(response.content ?? {})) root(media, `${name} ${status}`);
    }
  }
}

/** Walks every schema of components.schemas; `skipRoots`: shows the visitor what each holds, not the schema itself. */
export function walkComponents(document: OpenApiDocument, visit: Visit, skipRoots = false): void {
  const schemas = document.components?.schemas ?? {};
  for (const [name, schema] of Object.entries(schemas)) {
    const next = walkSchema(schema, { base: `components ${name}`, path: [] }, visit, skipRoots);
    if (next) schemas[name] = next;
  }
}
