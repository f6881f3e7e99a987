/**
 * The "copy one file" install of docs/backend.md: the built client bundle, copied under the name the docs give into a
 * default (CommonJS) Node project, loads from an ES module and, through import(), from CommonJS.
 */
import { execFile } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
// @ts-expect-error build.mjs is plain JavaScript without declarations.
import { buildNodeLibraries } from '../../build.mjs';

const root = resolve(import.meta.dirname, '../..');
const docs = readFileSync(join(root, 'docs/backend.md'), 'utf8');

let dir: string;
let bundle: string;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'cnv-copied-'));
  await buildNodeLibraries(join(dir, 'dist'));
  bundle = readFileSync(join(dir, 'dist/client/index.js'), 'utf8');
}, 60_000);

afterAll(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
});

async function node(file: string): Promise<string> {
  const { stdout } = await promisify(execFile)(process.execPath, [file], { cwd: join(dir, 'app') });
  return stdout.trim();
}

describe('the client bundle, copied as docs/backend.md says', () => {
  it('is one ES module that needs nothing but Node, without a #! line', () => {
    expect(bundle.startsWith('#!')).toBe(false);
    const imports = [...bundle.matchAll(/^\s*(?:import|export)\b[^;]*?\bfrom\s*"([^"]+)"/gm)].map((m) => m[1]);
    expect(imports.length).toBeGreaterThan(0);
    expect(imports.filter((specifier) => !specifier!.startsWith('node:'))).toEqual([]);
  });

  it('loads under the documented name in a default CommonJS project, by import and by import() from CommonJS', async () => {
    const copy = /cp dist\/client\/index\.js \S*?([\w.-]+)$/m.exec(docs);
    expect(copy, 'docs/backend.md shows the copy command').not.toBeNull();
    const name = copy![1]!;
    expect(name).toMatch(/\.mjs$/);
    expect(docs).toContain(`import { createCnvClient } from './${name}'`);
    expect(docs).toContain(`await import('./${name}')`);

    const app = join(dir, 'app');
    rmSync(app, { recursive: true, force: true });
    mkdirSync(app);
    writeFileSync(join(app, 'package.json'), JSON.stringify({ name: 'backend', private: true })); // no "type": CommonJS
    copyFileSync(join(dir, 'dist/client/index.js'), join(app, name));
    writeFileSync(join(app, 'esm.mjs'), `import { createCnvClient } from './${name}';\nconsole.log(typeof createCnvClient);\n`);
    writeFileSync(join(app, 'cjs.js'), `(async () => {\n  const { createCnvClient } = await import('./${name}');\n  console.log(typeof createCnvClient);\n})();\n`);
    expect(await node('esm.mjs')).toBe('function');
    expect(await node('cjs.js')).toBe('function');
  });
});
