import { describe, expect, it } from 'vitest';
import { parseJsonText } from '../../src/server/http/json-text';
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

  it('accepts what it can keep, unchanged', () => {
    const text = '{"a":[1,{"b":"ü","c":null,"d":[true,"\\ud83d\\ude00"]}]}';
    expect(parseJsonText(text)).toEqual(JSON.parse(text));
  });
});
