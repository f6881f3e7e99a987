import { describe, expect, it } from 'vitest';
import { nonFiniteNumberPath, parseJsonText } from '../../src/server/http/json-text';
import type { ApiError } from '../../src/server/http/errors';

function refusal(text: string, options: Parameters<typeof parseJsonText>[1] = {}): ApiError {
  try {
    parseJsonText(text, options);
  } catch (error) {
    return error as ApiError;
  }
  throw new Error('accepted');
}

describe('parseJsonText names the first value it cannot keep', () => {
  it('a NUL in a string deep in arrays and objects, by its path', () => {
    const error = refusal('{"a":{"list":[{"ok":"fine"},{"b":"x\\u0000y"}]},"c":"\\u0000"}');
    expect(error).toMatchObject({ status: 400, code: 'invalid_json', param: 'a.list[1].b' });
    expect(error.message).toBe('The request body holds a NUL character (\\u0000) in a.list[1].b, which cannot be stored.');
  });

  it('a NUL in a key, by the key’s path; a NUL at the top level without a param', () => {
    expect(refusal('{"a":[{"k\\u0000":1}]}')).toMatchObject({ code: 'invalid_json', param: 'a[0].k\\u0000' });
    const top = refusal('"\\u0000"', { what: 'The body' });
    expect(top.param).toBeUndefined();
    expect(top.message).toBe('The body holds a NUL character (\\u0000) in body, which cannot be stored.');
  });

  it('an unpaired surrogate as parameter_invalid, and a nested __proto__ key as parameter_unknown when refused', () => {
    expect(refusal('{"x":[1,"\\ud800"]}')).toMatchObject({ code: 'parameter_invalid', param: 'x[1]' });
    expect(refusal('{"x":{"__proto__":{}}}', { protoKeys: 'refuse' })).toMatchObject({ code: 'parameter_unknown', param: 'x.__proto__' });
    expect(parseJsonText('{"x":{"__proto__":{"admin":true},"y":1}}')).toEqual({ x: { y: 1 } });
  });

  it('a number beyond a double (1e999, read as Infinity, stored as null) as parameter_invalid, by its path', () => {
    expect(refusal('{"a":{"b":[1,1e999]}}')).toMatchObject({ code: 'parameter_invalid', param: 'a.b[1]' });
    expect(refusal('{"v":-2.5E+400}')).toMatchObject({ code: 'parameter_invalid', param: 'v' });
    expect(refusal(`{"v":${'9'.repeat(400)}}`).message).toBe('v is a number too large to store (at most about 1.8e308).');
    // Beyond a double with a two-digit exponent or a fraction: 1e210 × 1e99, 1e250 × 1e60.
    expect(refusal(`{"v":1${'0'.repeat(210)}e99}`)).toMatchObject({ code: 'parameter_invalid', param: 'v' });
    expect(refusal(`[1${'0'.repeat(250)}.5E+60]`)).toMatchObject({ code: 'parameter_invalid', param: '[0]' });
    // The largest doubles, tiny numbers (which read as 0) and exponent-like text in strings are kept.
    expect(parseJsonText('{"a":1.7e308,"b":1e-400,"c":"e999 E1000"}')).toEqual({ a: 1.7e308, b: 0, c: 'e999 E1000' });
  });

  it('finds a kept non-finite number by its path, and stops at the depth no body is read to (no stack overflow)', () => {
    expect(nonFiniteNumberPath({ a: [1, { b: Infinity }] })).toBe('a[1].b');
    expect(nonFiniteNumberPath({ a: [1, 2] })).toBeNull();
    let deep: unknown = Infinity;
    for (let i = 0; i < 100_000; i++) deep = [deep];
    expect(nonFiniteNumberPath(deep)).toBeNull();
  });

  it('accepts what it can keep, unchanged', () => {
    const text = '{"a":[1,{"b":"ü","c":null,"d":[true,"\\ud83d\\ude00"]}]}';
    expect(parseJsonText(text)).toEqual(JSON.parse(text));
  });

  // Most bodies hold no escape, no __proto__ and few brackets, and are read without walking them (needsWalk): what
  // the walk would refuse or drop must still be found in the text itself.
  it('finds a raw unpaired surrogate without any escape, and keeps it when asked to', () => {
    const text = '{"x":["ok","a\ud800b"]}'; // the surrogate itself in the text, not an escape
    expect(text.includes('\\u')).toBe(false);
    expect(refusal(text)).toMatchObject({ code: 'parameter_invalid', param: 'x[1]' });
    expect(parseJsonText(text, { unpairedSurrogates: 'keep' })).toEqual({ x: ['ok', 'a\ud800b'] });
  });

  it('finds a __proto__ key spelled with an escape, and leaves the word alone as a value', () => {
    expect(parseJsonText('{"\\u005f_proto__":{"admin":true},"y":1}')).toEqual({ y: 1 });
    expect(refusal('{"\\u005f_proto__":1}', { protoKeys: 'refuse' })).toMatchObject({ code: 'parameter_unknown', param: '__proto__' });
    expect(parseJsonText('{"a":"__proto__"}')).toEqual({ a: '__proto__' });
  });

  it('accepts 32 levels of nesting and refuses 33, and many shallow brackets are no depth', () => {
    const nested = (levels: number) => '['.repeat(levels) + ']'.repeat(levels);
    expect(parseJsonText(nested(32))).toEqual(JSON.parse(nested(32)));
    expect(refusal(nested(33))).toMatchObject({ code: 'invalid_json', message: 'The request body is nested more than 32 levels deep.' });
    expect(refusal(`{"a":${nested(33)}}`)).toMatchObject({ code: 'invalid_json' });
    const wide = JSON.stringify({ list: Array.from({ length: 40 }, (_, i) => ({ i, tags: [i] })) });
    expect(parseJsonText(wide)).toEqual(JSON.parse(wide));
  });
});
