/**
 * How the OpenAPI document is shaped after @fastify/swagger made it (src/server/openapi/components.ts and
 * conditionals.ts), on small documents: shared schemas become components without changing what is described, and an
 * if/then/else becomes a choice of shapes (oneOf only when they cannot overlap, a discriminator only between named
 * shapes, an allOf kept when its other members say more than the choice).
 */
import { describe, expect, it } from 'vitest';
import { dereferenced, shareSchemas } from '../../src/server/openapi/components';
import { describeConditionals } from '../../src/server/openapi/conditionals';
import type { OpenApiDocument, Schema } from '../../src/server/openapi/schema-walk';

/** A document of one operation per schema given, each the 200 answer of `op<N>`. */
function documentOf(...schemas: Schema[]): OpenApiDocument & { paths: Record<string, any> } {
  return {
    paths: Object.fromEntries(
      schemas.map((schema, i) => [`/op${i}`, { get: { operationId: `op${i}`, responses: { 200: { description: 'ok', content: { 'application/json': { schema } } } } } }]),
    ),
    components: { schemas: {} },
  };
}

const answer = (document: { paths: Record<string, any> }, i: number): any => document.paths[`/op${i}`].get.responses[200].content['application/json'].schema;

const Thing = { title: 'Thing', type: 'object', description: 'A thing.', properties: { id: { type: 'string' } }, required: ['id'], additionalProperties: false };

describe('shared schemas', () => {
  it('names titled and listed shapes once; copies refer to them and keep a description of their own beside the $ref', () => {
    const untitled = { type: 'object', properties: { n: { type: 'integer' } } };
    const doc = documentOf(
      Thing,
      { type: 'array', items: Thing },
      { ...Thing, description: 'The thing removed.' },
      untitled,
      { type: 'object', properties: { inner: untitled } },
    );
    const inline = structuredClone(doc);
    shareSchemas(doc, { 'op3 200': 'Counter' });
    expect(Object.keys(doc.components!.schemas!)).toEqual(['Counter', 'Thing']);
    expect(answer(doc, 0)).toEqual({ $ref: '#/components/schemas/Thing' });
    expect(answer(doc, 1).items).toEqual({ $ref: '#/components/schemas/Thing' });
    expect(answer(doc, 2)).toEqual({ $ref: '#/components/schemas/Thing', description: 'The thing removed.' });
    expect(answer(doc, 4).properties.inner).toEqual({ $ref: '#/components/schemas/Counter' });
    expect(dereferenced(doc).paths).toEqual(inline.paths);
  });

  it('leaves inline a second shape under a title taken, and a copy that would gain a description', () => {
    const other = { ...Thing, properties: { id: { type: 'integer' } } };
    const bare = { ...Thing };
    delete (bare as Partial<typeof Thing>).description;
    const doc = documentOf(Thing, other, bare);
    shareSchemas(doc, {});
    expect(answer(doc, 0)).toEqual({ $ref: '#/components/schemas/Thing' });
    expect(answer(doc, 1)).toEqual(other);
    expect(answer(doc, 2)).toEqual(bare);
  });

  it('refuses to write out a $ref that does not resolve', () => {
    expect(() => dereferenced(documentOf({ $ref: '#/components/schemas/Nothing' }))).toThrow(/does not resolve/);
  });
});

describe('if/then/else', () => {
  const Cat = { type: 'object', required: ['kind', 'meows'], properties: { kind: { type: 'string', enum: ['cat'] }, meows: { type: 'boolean' } }, additionalProperties: false };
  const Dog = { type: 'object', required: ['kind'], properties: { kind: { type: 'string', enum: ['dog'] }, barks: { type: 'boolean' } }, additionalProperties: false };
  const isCat = { type: 'object', required: ['kind'], properties: { kind: { enum: ['cat'] } } };

  it('becomes a oneOf with a discriminator between named shapes, and the rule in words', () => {
    const doc = documentOf({ description: 'A pet.', if: isCat, then: { $ref: '#/components/schemas/Cat' }, else: { $ref: '#/components/schemas/Dog' } });
    doc.components!.schemas = { Cat, Dog };
    describeConditionals(doc);
    expect(answer(doc, 0)).toEqual({
      description: 'A pet. Checked as Cat when its kind is "cat"; otherwise as Dog.',
      oneOf: [{ $ref: '#/components/schemas/Cat' }, { $ref: '#/components/schemas/Dog' }],
      discriminator: { propertyName: 'kind', mapping: { cat: '#/components/schemas/Cat', dog: '#/components/schemas/Dog' } },
    });
  });

  it('becomes an anyOf when the shapes may overlap, without a discriminator for inline shapes', () => {
    const loose = { type: 'object', properties: { name: { type: 'string' } } };
    const doc = documentOf({ if: { type: 'object', required: ['name'] }, then: loose, else: Dog }, { if: isCat, then: Cat, else: Dog });
    describeConditionals(doc);
    expect(answer(doc, 0)).toEqual({ anyOf: [loose, Dog], description: 'Checked as the first choice when it has name; otherwise as the second.' });
    expect(answer(doc, 1).oneOf).toEqual([Cat, Dog]);
    expect(answer(doc, 1).discriminator).toBeUndefined();
  });

  it('keeps an allOf whose other members ask more than the choice, and a choice the schema already makes', () => {
    const stricter = { required: ['kind', 'name'] };
    const doc = documentOf({ type: 'object', allOf: [stricter, { if: isCat, then: Cat, else: Dog }] }, { oneOf: [Cat, Dog], if: isCat, then: Cat, else: Dog });
    describeConditionals(doc);
    expect(answer(doc, 0).allOf[0]).toEqual(stricter);
    expect(answer(doc, 0).allOf[1]).toMatchObject({ oneOf: [Cat, Dog] });
    expect(answer(doc, 1)).toMatchObject({ oneOf: [Cat, Dog], allOf: [{ oneOf: [Cat, Dog] }] });
    expect(JSON.stringify(doc)).not.toMatch(/"(if|then|else)":/);
  });
});
