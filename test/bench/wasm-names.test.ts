import { describe, expect, it } from 'vitest';
// bench/support/wasm-names.mjs is plain JavaScript: imported by URL, typed here by what the test reads.
const { exportedFunctionNames, frameName, pgliteFunctionNames } = (await import(new URL('../../bench/support/wasm-names.mjs', import.meta.url).href)) as {
  exportedFunctionNames: (bytes: Buffer) => Map<number, string>;
  frameName: (functionName: string, names?: Map<number, string>) => string;
  pgliteFunctionNames: () => Map<number, string>;
};

/** A module importing `m.f` (function 0) and defining `a` (function 1, calls the import) and `b` (function 2, calls a). */
const MODULE = Buffer.from([
  0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00,
  0x01, 0x04, 0x01, 0x60, 0x00, 0x00, // type section: () -> ()
  0x02, 0x07, 0x01, 0x01, 0x6d, 0x01, 0x66, 0x00, 0x00, // import section: m.f, a function of type 0
  0x03, 0x03, 0x02, 0x00, 0x00, // function section: two functions of type 0
  0x07, 0x09, 0x02, 0x01, 0x61, 0x00, 0x01, 0x01, 0x62, 0x00, 0x02, // export section: a = function 1, b = function 2
  0x0a, 0x0b, 0x02, 0x04, 0x00, 0x10, 0x00, 0x0b, 0x04, 0x00, 0x10, 0x01, 0x0b, // code: call 0; call 1
]);

describe('names of WASM functions in a profile', () => {
  it('numbers functions as V8 labels them, imports first', () => {
    const names = exportedFunctionNames(MODULE);
    expect([...names]).toEqual([[1, 'a'], [2, 'b']]);
    // V8's own label for the frames, read from a stack trace taken inside the import.
    let stack = '';
    const instance = new WebAssembly.Instance(new WebAssembly.Module(MODULE), { m: { f: () => { stack = new Error().stack ?? ''; } } });
    (instance.exports.b as () => void)();
    const labels = [...stack.matchAll(/wasm-function\[(\d+)\]/g)].map((m) => `wasm-function[${m[1]}]`);
    expect(labels).toEqual(['wasm-function[1]', 'wasm-function[2]']);
    expect(labels.map((label) => frameName(label, names))).toEqual(['a', 'b']);
  });

  it('names PostgreSQL functions of the installed PGlite and leaves other frames as they are', () => {
    const names = pgliteFunctionNames();
    const named = new Set(names.values());
    for (const fn of ['heap_insert', 'ExecInsertIndexTuples', 'XLogFlush', 'jsonb_in', 'PostgresMainLoopOnce']) expect(named.has(fn)).toBe(true);
    const heapInsert = [...names].find(([, name]) => name === 'heap_insert')![0];
    expect(frameName(`wasm-function[${heapInsert}]`)).toBe('heap_insert');
    expect(frameName('upsertSnapshots')).toBe('upsertSnapshots');
    expect(frameName('wasm-function[999999]')).toBe('wasm-function[999999]');
  });

  it('refuses bytes that are not a module', () => {
    expect(() => exportedFunctionNames(Buffer.from('not wasm'))).toThrow(/not a WebAssembly module/);
  });
});
