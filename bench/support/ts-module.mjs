/** Imports TypeScript modules of the project from plain Node: esbuild bundles them (dependencies external) to a temp file. */
import { build } from 'esbuild';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

const root = new URL('../..', import.meta.url).pathname;
// Under node_modules so that the bundle's bare imports (fastify, pg, ...) resolve to the project's packages.
const cacheDir = join(root, 'node_modules/.cache/cnv-bench');

let counter = 0;

/**
 * Bundles one module, or several re-exported together (so they share one instance of what they import), given as
 * paths from the project root, and imports the result. Each call gets fresh module instances.
 */
export async function importTs(paths) {
  const list = Array.isArray(paths) ? paths : [paths];
  const result = await build({
    stdin: {
      contents: list.map((p) => `export * from ${JSON.stringify(`./${p}`)};`).join('\n'),
      resolveDir: root,
      loader: 'ts',
      sourcefile: 'bench-entry.ts',
    },
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    packages: 'external',
    write: false,
    logLevel: 'silent',
  });
  mkdirSync(cacheDir, { recursive: true });
  const name = list.map((p) => p.replace(/^.*\//, '').replace(/\W/g, '_')).join('+');
  const file = join(cacheDir, `${name}-${process.pid}-${counter++}.mjs`);
  writeFileSync(file, result.outputFiles[0].text);
  try {
    return await import(pathToFileURL(file).href);
  } finally {
    // Once loaded the module lives in memory; the file is not needed again.
    rmSync(file, { force: true });
  }
}
