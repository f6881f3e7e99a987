/**
 * if/then/else in the document. The routes write a choice of two shapes as if/then/else (flows' trigger_config, the
 * handoff body) so that a fault is reported inside the shape the caller meant; many OpenAPI tools and code generators
 * ignore those keywords and would see no shape at all. The document writes each as the choice it is: a oneOf of the two
 * shapes (anyOf when they may overlap), a discriminator when one property's value picks the shape, and the rule in
 * words in the description. Validation is unchanged: the routes keep their own schemas.
 */
import { COMPONENT_REF_PREFIX } from './components';
import { isSchema, walkComponents, walkOperations, type OpenApiDocument, type Schema } from './schema-walk';

/** Keywords that describe without constraining. */
const ANNOTATIONS = new Set(['title', 'description', 'default', 'examples', 'deprecated', 'readOnly', 'writeOnly', '$comment']);

/** The one value a schema allows (`const`, or an `enum` of one), if it allows one only. */
function onlyValue(schema: unknown): { value: unknown } | undefined {
  if (!isSchema(schema)) return undefined;
  if ('const' in schema) return { value: schema.const };
  return Array.isArray(schema.enum) && schema.enum.length === 1 ? { value: schema.enum[0] } : undefined;
}

function requiredOf(schema: Schema): string[] {
  return Array.isArray(schema.required) ? (schema.required as string[]) : [];
}

function propertiesOf(schema: Schema): Record<string, unknown> {
  return isSchema(schema.properties) ? schema.properties : {};
}

/** Whether `schema` refuses an object that has `property` (no additional properties, and not one of its own). */
function forbids(schema: Schema, property: string): boolean {
  return schema.additionalProperties === false && !(property in propertiesOf(schema)) && schema.patternProperties === undefined;
}

/**
 * Whether no value matches both: an object schema requires a property the other forbids, or that both require with
 * different values. (`required` holds only for objects, hence the object type.)
 */
function disjoint(a: Schema, b: Schema): boolean {
  const apart = (x: Schema, y: Schema) =>
    x.type === 'object' &&
    requiredOf(x).some((property) => {
      if (forbids(y, property)) return true;
      const [vx, vy] = [onlyValue(propertiesOf(x)[property]), onlyValue(propertiesOf(y)[property])];
      return requiredOf(y).includes(property) && vx !== undefined && vy !== undefined && vx.value !== vy.value;
    });
  return apart(a, b) || apart(b, a);
}

/**
 * The property every alternative requires with one string value each, all different: the discriminator, if there is
 * one. Its mapping names schemas, so only alternatives that are `$ref`s can have one.
 */
function discriminatorOf(alternatives: Schema[], resolved: Schema[]): { propertyName: string; mapping: Record<string, string> } | undefined {
  if (!alternatives.every((alternative) => typeof alternative.$ref === 'string')) return undefined;
  for (const property of requiredOf(resolved[0]!)) {
    const values = resolved.map((schema) => (requiredOf(schema).includes(property) ? onlyValue(propertiesOf(schema)[property]) : undefined));
    if (values.some((v) => v === undefined || typeof v.value !== 'string')) continue;
    const strings = values.map((v) => v!.value as string);
    if (new Set(strings).size !== strings.length) continue;
    return { propertyName: property, mapping: Object.fromEntries(strings.map((value, i) => [value, alternatives[i]!.$ref as string])) };
  }
  return undefined;
}

/** The condition of an `if`, in words ("it has key", "its purpose is \"connect_destination\""), or null. */
function conditionText(condition: Schema): string | null {
  const keys = Object.keys(condition).filter((key) => !ANNOTATIONS.has(key));
  if (Array.isArray(condition.anyOf) && keys.every((key) => key === 'anyOf' || key === 'type')) {
    const parts = (condition.anyOf as unknown[]).map((part) => (isSchema(part) ? conditionText(part) : null));
    return parts.some((part) => part === null) ? null : parts.join(', or ');
  }
  if (!keys.every((key) => key === 'type' || key === 'required' || key === 'properties')) return null;
  if (condition.type !== undefined && condition.type !== 'object') return null;
  const properties = propertiesOf(condition);
  const parts: string[] = [];
  for (const property of requiredOf(condition)) {
    const only = onlyValue(properties[property]);
    parts.push(only ? `its ${property} is ${JSON.stringify(only.value)}` : `it has ${property}`);
  }
  for (const [property, schema] of Object.entries(properties)) {
    if (requiredOf(condition).includes(property)) continue;
    const only = onlyValue(schema);
    if (!only) return null;
    parts.push(`its ${property}, when present, is ${JSON.stringify(only.value)}`);
  }
  return parts.length > 0 ? parts.join(' and ') : null;
}

/**
 * Whether every alternative implies `member` (an allOf member beside the choice): it asks only for properties each
 * alternative requires, of a type and values each alternative's own schema keeps to. Such a member says nothing the
 * choice does not, and can go.
 */
function impliedByAll(member: Schema, alternatives: Schema[]): boolean {
  const keys = Object.keys(member).filter((key) => !ANNOTATIONS.has(key));
  if (!keys.every((key) => key === 'type' || key === 'required' || key === 'properties')) return false;
  return alternatives.every((alternative) => {
    if (member.type !== undefined && member.type !== alternative.type) return false;
    if (!requiredOf(member).every((property) => requiredOf(alternative).includes(property))) return false;
    return Object.entries(propertiesOf(member)).every(([property, schema]) => {
      const own = propertiesOf(alternative)[property];
      if (!isSchema(schema) || !isSchema(own)) return false;
      const checks = Object.keys(schema).filter((key) => !ANNOTATIONS.has(key));
      return checks.every((key) => {
        if (key === 'type') return own.type === schema.type;
        if (key === 'enum') {
          const only = onlyValue(own);
          return only !== undefined && (schema.enum as unknown[]).includes(only.value);
        }
        return false;
      });
    });
  });
}

/**
 * Writes every if/then/else of the document (operations and components) as a oneOf or anyOf of its two shapes, with a
 * discriminator where there is one and the rule in the description; an allOf whose other members the shapes imply
 * becomes the choice itself. A `$ref` to components.schemas is read through to the shape it names.
 */
export function describeConditionals(document: OpenApiDocument): void {
  const schemas = document.components?.schemas ?? {};
  const resolve = (schema: Schema): Schema => {
    const ref = schema.$ref;
    return typeof ref === 'string' && ref.startsWith(COMPONENT_REF_PREFIX) ? (schemas[ref.slice(COMPONENT_REF_PREFIX.length)] ?? schema) : schema;
  };
  const nameOf = (schema: Schema, fallback: string): string =>
    typeof schema.$ref === 'string' ? schema.$ref.slice(schema.$ref.lastIndexOf('/') + 1) : fallback;

  /** The choice an if/then/else makes: the keywords to put in its place, and its rule in words. */
  const choiceOf = (conditional: Schema): { keywords: Schema; alternatives: Schema[]; rule: string } | undefined => {
    const [condition, then, otherwise] = [conditional.if, conditional.then, conditional.else];
    if (!isSchema(condition) || !isSchema(then) || !isSchema(otherwise)) return undefined;
    const alternatives = [then, otherwise];
    const resolved = alternatives.map(resolve);
    const discriminator = discriminatorOf(alternatives, resolved);
    const when = conditionText(condition) ?? `it matches ${JSON.stringify(condition)}`;
    return {
      keywords: { [disjoint(resolved[0]!, resolved[1]!) ? 'oneOf' : 'anyOf']: alternatives, ...(discriminator ? { discriminator } : {}) },
      alternatives: resolved,
      rule: `Checked as ${nameOf(then, 'the first choice')} when ${when}; otherwise as ${nameOf(otherwise, 'the second')}.`,
    };
  };

  /** Puts the choice of `conditional` into `schema` (the conditional itself, or the allOf that holds it). */
  const apply = (schema: Schema, conditional: Schema, choice: { keywords: Schema; rule: string }) => {
    const description = [schema.description, conditional === schema ? undefined : conditional.description, choice.rule]
      .filter((text): text is string => typeof text === 'string' && text.length > 0)
      .join(' ');
    for (const keyword of ['if', 'then', 'else']) delete schema[keyword];
    // A schema that already makes a choice of its own keeps it: the new one joins it as an allOf member.
    if (Object.keys(choice.keywords).some((keyword) => keyword in schema)) {
      schema.allOf = [...(Array.isArray(schema.allOf) ? schema.allOf : []), choice.keywords];
    } else {
      Object.assign(schema, choice.keywords);
    }
    schema.description = description;
  };

  // A schema is shown before what it holds, so an allOf meets its conditional member before that member is rewritten.
  const rewrite = (schema: Schema): undefined => {
    const choice = 'if' in schema ? choiceOf(schema) : undefined;
    if (choice) {
      apply(schema, schema, choice);
      return undefined;
    }
    // An allOf of the choice and members the choice implies (the handoff body's purpose, checked first so that an
    // unknown purpose is named as such) is the choice alone: the shape generators and readers know best.
    const members = schema.allOf;
    if (!Array.isArray(members) || schema.oneOf !== undefined || schema.anyOf !== undefined) return undefined;
    const conditionals = members.filter((member): member is Schema => isSchema(member) && 'if' in member);
    const conditional = conditionals.length === 1 ? conditionals[0]! : undefined;
    // Only a member that is the if/then/else alone: anything else it asks would be lost with the allOf.
    const alone = conditional && Object.keys(conditional).every((key) => ['if', 'then', 'else'].includes(key) || ANNOTATIONS.has(key));
    const inner = conditional && alone ? choiceOf(conditional) : undefined;
    if (!conditional || !inner) return undefined;
    const others = members.filter((member) => member !== conditional);
    if (!others.every((member) => isSchema(member) && impliedByAll(member, inner.alternatives))) return undefined;
    delete schema.allOf;
    apply(schema, conditional, inner);
    return undefined;
  };
  walkOperations(document, rewrite);
  walkComponents(document, rewrite);
}
