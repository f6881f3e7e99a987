/**
 * The document's shared schemas. The routes inline their TypeBox schemas (a record, the error envelope), so the
 * generated operations carry the same schema many times; here each named one goes to components.schemas once and
 * every copy becomes a `$ref` to it. The routes keep validating with their own schemas: only the document changes, and
 * each component is exactly the schema the routes' copies were (a test dereferences the document and compares).
 */
import { isSchema, locationOf, walkComponents, walkOperations, type OpenApiDocument, type Schema } from './schema-walk';

/** Where a component's $ref points. */
export const COMPONENT_REF_PREFIX = '#/components/schemas/';

/** The JSON of a value with its keys sorted: two schemas with the same text describe the same thing. */
function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (isSchema(value)) {
    const keys = Object.keys(value).filter((key) => value[key] !== undefined).sort();
    return `{${keys.map((key) => `${JSON.stringify(key)}:${canonical(value[key])}`).join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

/** What a schema accepts and says, but for its own description (a copy may describe its use, as a 409 does). */
function shapeOf(schema: Schema): string {
  const { description: _description, ...rest } = schema;
  return canonical(rest);
}

/** The description most of `schemas` carry (the first one's among equals). */
function commonDescription(schemas: Schema[]): string | undefined {
  const counts = new Map<string | undefined, number>();
  for (const schema of schemas) {
    const description = typeof schema.description === 'string' ? schema.description : undefined;
    counts.set(description, (counts.get(description) ?? 0) + 1);
  }
  let best: string | undefined;
  let most = 0;
  for (const [description, count] of counts) {
    if (count > most) [best, most] = [description, count];
  }
  return best;
}

/**
 * Moves the named schemas of the operations to components.schemas and puts a `$ref` in place of every copy.
 * Named: a schema with a `title` (the TypeBox records: Site, Flow, Event, Error…), by its title; and the untitled
 * shapes several operations share, by `names` (a place as {@link locationOf} writes it → the component's name). Every
 * other schema with the same shape is a copy, wherever it is. A copy whose description differs from the component's
 * keeps it beside the `$ref` (OpenAPI 3.1 allows it), so nothing the document said is lost. A title given to two
 * different shapes names only the first (the other stays inline, which test/server/openapi.test.ts refuses).
 */
export function shareSchemas(document: OpenApiDocument, names: Record<string, string>): void {
  const found = new Map<string, { shape: string; copies: Schema[] }>();
  walkOperations(document, (schema, place) => {
    const name = typeof schema.title === 'string' ? schema.title : names[locationOf(place)];
    if (!name) return undefined;
    const shape = shapeOf(schema);
    const entry = found.get(name);
    if (!entry) found.set(name, { shape, copies: [schema] });
    else if (entry.shape === shape) entry.copies.push(schema);
    return undefined;
  });
  document.components ??= {};
  const schemas = (document.components.schemas ??= {});
  const byShape = new Map<string, string>();
  for (const [name, { shape, copies }] of [...found].sort(([a], [b]) => a.localeCompare(b))) {
    // A schema registered under that name by other means (app.addSchema) is left as it is.
    if (schemas[name] || byShape.has(shape)) continue;
    const component = JSON.parse(JSON.stringify(copies[0])) as Schema;
    const description = commonDescription(copies);
    if (description === undefined) delete component.description;
    else component.description = description;
    schemas[name] = component;
    byShape.set(shape, name);
  }
  const refer = (schema: Schema, place: { base: string; path: string[] }): Schema | undefined => {
    const name = byShape.get(shapeOf(schema));
    // A component is not a copy of itself; what it holds may be.
    if (!name || (place.base === `components ${name}` && place.path.length === 0)) return undefined;
    const own = schema.description;
    const shared = schemas[name]!.description;
    if (own === shared) return { $ref: `${COMPONENT_REF_PREFIX}${name}` };
    // Without a description of its own, a copy would gain the component's: keep such a copy inline.
    if (own === undefined) return undefined;
    return { $ref: `${COMPONENT_REF_PREFIX}${name}`, description: own };
  };
  walkOperations(document, refer);
  // Components hold each other (an Event its EventActions): the copies inside them refer too.
  walkComponents(document, refer, true);
}

/**
 * The document with every `$ref` to components.schemas replaced by a copy of its target (siblings of the `$ref`, such
 * as a description, kept over the target's): what the document describes, written out in full.
 */
export function dereferenced<T>(document: T): T {
  const schemas = ((document as OpenApiDocument).components?.schemas ?? {}) as Record<string, Schema>;
  const resolve = (value: unknown, seen: string[]): unknown => {
    if (Array.isArray(value)) return value.map((item) => resolve(item, seen));
    if (!isSchema(value)) return value;
    const ref = value.$ref;
    if (typeof ref === 'string' && ref.startsWith(COMPONENT_REF_PREFIX)) {
      const name = ref.slice(COMPONENT_REF_PREFIX.length);
      const target = schemas[name];
      if (!target) throw new Error(`${ref} does not resolve`);
      if (seen.includes(name)) throw new Error(`${ref} refers to itself`);
      const { $ref: _ref, ...siblings } = value;
      return resolve({ ...target, ...siblings }, [...seen, name]);
    }
    return Object.fromEntries(Object.entries(value).map(([key, inner]) => [key, resolve(inner, seen)]));
  };
  return resolve(document, []) as T;
}
