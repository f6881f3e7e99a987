// Builds the loader (the core IIFE and its optional scripts, with a size report and gzip budgets) and the Node parts
// (service, CLI, client).
// Usage: node build.mjs [--if-missing] [--loader-only]
import { build } from 'esbuild';
import { execFileSync } from 'node:child_process';
import { chmodSync, existsSync, readFileSync, readdirSync, statSync, writeFileSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { brotliCompressSync, constants, gzipSync } from 'node:zlib';

/** The core loader's gzip budget in bytes (dist/loader.js, what every page pays): the build fails above it. */
export const LOADER_GZIP_BUDGET = 3584;
/** The core loader's target size in bytes gzip, reported beside the budget. */
export const LOADER_GZIP_TARGET = 3072;

/**
 * The loader's bundles, each a minified IIFE in dist/ with its own gzip budget: the core, and the optional scripts
 * (OPTIONAL_SCRIPTS of src/protocol/install.ts, served as /loader-<name>.js) that the core fetches only on pages that
 * use them: the linker and URL passthrough for a tag with data-linker or data-url-passthrough, the form detectors for
 * a config whose `forms` is not empty. Only the core is on every page; the optional budgets keep those scripts honest.
 */
export const LOADER_BUNDLES = {
  'loader.js': { entry: 'src/loader/index.ts', budget: LOADER_GZIP_BUDGET, target: LOADER_GZIP_TARGET },
  'loader-links.js': { entry: 'src/loader/links-script.ts', budget: 1536 },
  'loader-forms.js': { entry: 'src/loader-forms/script.ts', budget: 5120 },
};

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
  const outputs = [...Object.keys(LOADER_BUNDLES), ...Object.keys(NODE_ENTRIES).map((name) => `${name}.js`)].map((f) => join(dist, f));
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

/** Builds one loader bundle to dist/<file> and returns its size without the source map comment. */
async function buildLoaderBundle(file, { entry }) {
  await build({
    entryPoints: [join(root, entry)],
    outfile: join(dist, file),
    bundle: true,
    // The core is a classic script (an IIFE: pasted tags and tag managers load it so); the optional scripts are ES
    // modules, which the core imports.
    format: file === 'loader.js' ? 'iife' : 'esm',
    platform: 'browser',
    // Evergreen browsers and Safari 14+ run this without polyfills.
    target: ['chrome80', 'firefox78', 'safari14', 'edge88'],
    // esbuild lists destructuring as unsupported before Safari 14.1 for one engine bug: an array rest pattern
    // (`[a, ...rest] =`) can yield a non-array (babel/babel#17773). esbuild cannot lower destructuring, so it is allowed
    // here and the loader's code uses no array rest pattern.
    supported: { destructuring: true },
    // An IIFE of our own code needs no "use strict" prologue (tsconfig's strict would add one to every bundle).
    tsconfigRaw: { compilerOptions: { alwaysStrict: false } },
    minify: true,
    sourcemap: 'linked',
    legalComments: 'none',
    // V8's compile hint (Chrome 136+): compile every function of the file eagerly, off the main thread, instead of
    // lazily on it when each is first called. The core's functions run at load; the optional scripts' mostly on events.
    banner: file === 'loader.js' ? { js: '//# allFunctionsCalledOnLoad' } : {},
    write: true,
    logLevel: 'warning',
  });
  return measure(withoutSourceMapComment(readFileSync(join(dist, file), 'utf8')));
}

/**
 * Builds every loader bundle and prints the size report (raw, gzip -9, brotli -11, each with its change since the last
 * build, and the bundle's gzip budget); fails the build when a bundle is over its budget.
 */
async function buildLoader() {
  const sizes = {};
  for (const [file, bundle] of Object.entries(LOADER_BUNDLES)) sizes[file] = await buildLoaderBundle(file, bundle);
  const reportPath = join(dist, 'loader-size.json');
  let previous = existsSync(reportPath) ? JSON.parse(readFileSync(reportPath, 'utf8')) : {};
  // A report from before the optional scripts held the core's sizes alone.
  if (typeof previous.gzip === 'number') previous = { 'loader.js': previous };
  writeFileSync(reportPath, JSON.stringify(sizes, null, 2) + '\n');
  const over = [];
  for (const [file, { budget, target }] of Object.entries(LOADER_BUNDLES)) {
    const size = sizes[file];
    const before = previous[file];
    const cell = (key) => {
      const change = before ? size[key] - before[key] : null;
      return `${key} ${size[key]} B${change === null ? '' : ` (${change >= 0 ? '+' : ''}${change})`}`.padEnd(22);
    };
    const goal = target ? `, target ${target} B: ${size.gzip <= target ? 'met' : `${size.gzip - target} B over`}` : '';
    const verdict = size.gzip <= budget ? `${budget - size.gzip} B under` : `${size.gzip - budget} B OVER`;
    console.log(`${file.padEnd(16)}${cell('raw')}${cell('gzip')}${cell('brotli')}budget ${budget} B gzip: ${verdict}${goal}`);
    if (size.gzip > budget) over.push(`${file} is ${size.gzip} B gzip, over its ${budget} B budget`);
  }
  if (over.length) {
    for (const line of over) console.error(line);
    process.exit(1);
  }
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
