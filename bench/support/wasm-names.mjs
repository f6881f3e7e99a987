/**
 * Names for PGlite's WebAssembly functions in a CPU profile. V8 shows a WASM function without a name section as
 * `wasm-function[N]`, N its index in the module's function space (imports first). PGlite's build has no name section,
 * but it exports about 2,000 of PostgreSQL's functions by name (for extensions to link against): `heap_insert`,
 * `ExecInsertIndexTuples`, `XLogFlush`, `jsonb_in` and the like. Read from the module's export section, they name the
 * frames that matter; the others keep V8's label.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';

/** Reads an unsigned LEB128 at `at.offset`, moving it past. */
function readU32(bytes, at) {
  let result = 0;
  let shift = 0;
  let byte;
  do {
    byte = bytes[at.offset++];
    result += (byte & 0x7f) * 2 ** shift;
    shift += 7;
  } while (byte & 0x80);
  return result;
}

/** Skips an import's description (after its module and field names) by its kind. */
function skipImportDescription(bytes, at, kind) {
  if (kind === 0) readU32(bytes, at); // function: type index
  else if (kind === 1) { at.offset++; skipLimits(bytes, at); } // table: element type, limits
  else if (kind === 2) skipLimits(bytes, at); // memory: limits
  else if (kind === 3) at.offset += 2; // global: value type, mutability
  else if (kind === 4) { at.offset++; readU32(bytes, at); } // tag: attribute, type index
  else throw new Error(`unknown import kind ${kind}`);
}

function skipLimits(bytes, at) {
  const flags = bytes[at.offset++];
  readU32(bytes, at);
  if (flags & 1) readU32(bytes, at);
}

function readName(bytes, at) {
  const length = readU32(bytes, at);
  const name = Buffer.from(bytes.buffer, bytes.byteOffset + at.offset, length).toString('utf8');
  at.offset += length;
  return name;
}

/** Function index (in V8's numbering: imported functions first) to export name, from a module's bytes. */
export function exportedFunctionNames(bytes) {
  if (bytes.length < 8 || bytes.readUInt32LE(0) !== 0x6d736100) throw new Error('not a WebAssembly module');
  const names = new Map();
  const at = { offset: 8 };
  while (at.offset < bytes.length) {
    const section = bytes[at.offset++];
    const size = readU32(bytes, at);
    const end = at.offset + size;
    if (section === 2) {
      const count = readU32(bytes, at);
      for (let i = 0; i < count; i++) {
        readName(bytes, at);
        readName(bytes, at);
        skipImportDescription(bytes, at, bytes[at.offset++]);
      }
    } else if (section === 7) {
      const count = readU32(bytes, at);
      for (let i = 0; i < count; i++) {
        const name = readName(bytes, at);
        const kind = bytes[at.offset++];
        const index = readU32(bytes, at);
        if (kind === 0 && !names.has(index)) names.set(index, name);
      }
    }
    at.offset = end;
  }
  return names;
}

let pgliteNames;

/** PGlite's exported function names, read once from the installed package's pglite.wasm; empty when it is not found. */
export function pgliteFunctionNames() {
  if (pgliteNames) return pgliteNames;
  try {
    const require = createRequire(import.meta.url);
    const wasm = join(dirname(require.resolve('@electric-sql/pglite')), 'pglite.wasm');
    pgliteNames = exportedFunctionNames(readFileSync(wasm));
  } catch {
    pgliteNames = new Map();
  }
  return pgliteNames;
}

/** A profile frame's function name, a PGlite `wasm-function[N]` named after its export when it has one. */
export function frameName(functionName, names = pgliteFunctionNames()) {
  const match = /^wasm-function\[(\d+)\]$/.exec(functionName);
  return (match && names.get(Number(match[1]))) || functionName;
}
