// Builds the loader (one minified IIFE with a size report and a gzip budget) and the Node parts (service, CLI, client).
// Usage: node build.mjs [--if-missing] [--loader-only]
import { build } from 'esbuild';
import { execFileSync } from 'node:child_process';
import { chmodSync, existsSync, readFileSync, readdirSync, statSync, writeFileSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { brotliCompressSync, constants, gzipSync } from 'node:zlib';

/** The loader's gzip budget in bytes: the build fails above it. */
export const LOADER_GZIP_BUDGET = 3072;
/** The loader's target size in bytes gzip, reported beside the budget. */
export const LOADER_GZIP_TARGET = 2048;

const root = new URL('.', import.meta.url).pathname;
const dist = join(root, 'dist');
const args = new Set(process.argv.slice(2));

const NODE_ENTRIES = {
  'server/main': 'src/server/main.ts',
  'demo/main': 'src/demo/main.ts',
  'cli/cnv': 'src/cli/cnv.ts',
  'client/index': 'src/client/index.ts',
  'protocol/index': 'src/protocol/index.ts',
};

function newestMtime(dir) {
  let newest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    newest = Math.max(newest, entry.isDirectory() ? newestMtime(path) : statSync(path).mtimeMs);
  }
  return newest;
}

function upToDate() {
  const outputs = ['loader.js', ...Object.keys(NODE_ENTRIES).map((name) => `${name}.js`)].map((f) => join(dist, f));
  if (!outputs.every((f) => existsSync(f))) return false;
  const oldestOutput = Math.min(...outputs.map((f) => statSync(f).mtimeMs));
  return oldestOutput >= newestMtime(join(root, 'src'));
}

/** The code without a trailing `//# sourceMappingURL=` comment, which a browser never executes (not counted in sizes). */
export function withoutSourceMapComment(code) {
  return code.replace(/\n?\/\/# sourceMappingURL=\S*\s*$/, '');
}

/** Measures bytes raw, gzip -9 and brotli -11 of a file's contents. */
export function measure(code) {
  const buf = Buffer.from(code);
  return {
    raw: buf.length,
    gzip: gzipSync(buf, { level: 9 }).length,
    brotli: brotliCompressSync(buf, {
      params: { [constants.BROTLI_PARAM_QUALITY]: 11, [constants.BROTLI_PARAM_SIZE_HINT]: buf.length },
    }).length,
  };
}

async function buildLoader() {
  const result = await build({
    entryPoints: [join(root, 'src/loader/index.ts')],
    outfile: join(dist, 'loader.js'),
    bundle: true,
    format: 'iife',
    platform: 'browser',
    // Evergreen browsers and Safari 14+ run this without polyfills.
    target: ['es2019', 'chrome80', 'firefox78', 'safari14', 'edge88'],
    minify: true,
    sourcemap: 'linked',
    legalComments: 'none',
    write: true,
    metafile: true,
    logLevel: 'warning',
  });
  const code = readFileSync(join(dist, 'loader.js'), 'utf8');
  const size = measure(withoutSourceMapComment(code));
  const reportPath = join(dist, 'loader-size.json');
  const previous = existsSync(reportPath) ? JSON.parse(readFileSync(reportPath, 'utf8')) : null;
  writeFileSync(reportPath, JSON.stringify(size, null, 2) + '\n');
  const delta = (key) => (previous ? ` (${size[key] - previous[key] >= 0 ? '+' : ''}${size[key] - previous[key]})` : '');
  console.log(
    `loader.js  raw ${size.raw} B${delta('raw')}  gzip ${size.gzip} B${delta('gzip')}  brotli ${size.brotli} B${delta('brotli')}` +
      `  (budget ${LOADER_GZIP_BUDGET} B gzip, target ${LOADER_GZIP_TARGET} B)`,
  );
  if (size.gzip > LOADER_GZIP_BUDGET) {
    console.error(`loader.js is ${size.gzip} B gzip, over the ${LOADER_GZIP_BUDGET} B budget`);
    process.exit(1);
  }
  return result;
}

async function buildNode() {
  await build({
    entryPoints: Object.fromEntries(Object.entries(NODE_ENTRIES).map(([out, src]) => [out, join(root, src)])),
    outdir: dist,
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    packages: 'external',
    sourcemap: 'linked',
    logLevel: 'warning',
    banner: { js: '#!/usr/bin/env node' },
  });
  // The `cnv` bin runs straight from a checkout too, not only after npm links it.
  chmodSync(join(dist, 'cli/cnv.js'), 0o755);
}

function buildTypes() {
  execFileSync(process.execPath, [join(root, 'node_modules/typescript/bin/tsc'), '-p', join(root, 'tsconfig.types.json')], {
    stdio: 'inherit',
  });
}

// Run as a script, build; imported (the benchmark uses `measure`), do nothing.
if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  if (args.has('--if-missing') && upToDate()) process.exit(0);
  mkdirSync(dist, { recursive: true });
  await buildLoader();
  if (!args.has('--loader-only')) {
    await buildNode();
    buildTypes();
  }
}
