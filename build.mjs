// Builds the loader (the core script and its optional scripts, with a size report of what the service serves and gzip
// budgets) and the Node parts (service, CLI, client).
// Usage: node build.mjs [--if-missing] [--loader-only]
import { build } from 'esbuild';
import { execFileSync } from 'node:child_process';
import { chmodSync, existsSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync, mkdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { brotliCompressSync, constants, gzipSync } from 'node:zlib';

/**
 * The core loader's gzip budget in bytes, measured on what every page is served: the per-site loader
 * (`/loader.js?site_key=KEY`) with a typical config inside. The build fails above it.
 */
export const LOADER_GZIP_BUDGET = 3584;
/** The core loader's target size in bytes gzip, reported beside the budget. */
export const LOADER_GZIP_TARGET = 3072;

/**
 * The config measured inside the per-site loader: a site without form triggers, as the config endpoint answers it (a
 * site key as the service mints them, 12 base36 characters).
 */
export const TYPICAL_SITE_CONFIG = {
  site_key: 'k3x9q2m7v1pz',
  domain: 'https://www.example.com',
  cookie_domain: 'example.com',
  correlation_ttl_seconds: 1800,
  honor_gpc: true,
  forms: [],
};

/**
 * The loader's bundles, each a minified script in dist/ with its own gzip budget. Two cores, classic scripts that are
 * each one function of the site's config (`withConfig`: src/protocol/loader-script.ts), which the service calls with
 * the site's config for `/loader.js?site_key=KEY` (the install snippet):
 * - `site-loader.js`, the lean core for a site without form triggers: what nearly every page is served, measured
 *   with TYPICAL_SITE_CONFIG inside against the gate and the target; built without the form triggers' code
 *   (`forms: false`, LOADER_FORMS of src/loader/start.ts);
 * - `loader.js`, the full core: served with the config of a site with form triggers, and with null as the plain
 *   `/loader.js` (the older snippet, unknown keys), which discovers its site key and fetches the config.
 * And the optional scripts (OPTIONAL_SCRIPTS of src/protocol/install.ts, ES modules served as /loader-<name>.js) that
 * a core fetches only on pages that use them: the linker and URL passthrough for a tag with data-linker or
 * data-url-passthrough, the form detectors for a config whose `forms` is not empty.
 */
export const LOADER_BUNDLES = {
  'site-loader.js': { entry: 'src/loader/site-loader.ts', withConfig: true, forms: false, budget: LOADER_GZIP_BUDGET, target: LOADER_GZIP_TARGET },
  'loader.js': { entry: 'src/loader/index.ts', withConfig: true, budget: 3840 },
  'loader-links.js': { entry: 'src/loader/links-script.ts', budget: 1536 },
  'loader-forms.js': { entry: 'src/loader-forms/script.ts', budget: 5120 },
};

const root = new URL('.', import.meta.url).pathname;
const dist = join(root, 'dist');
const args = new Set(process.argv.slice(2));

/** The Node programs: each starts with a `#!/usr/bin/env node` line (the `cnv` bin runs as a command). */
const NODE_PROGRAMS = {
  'server/main': 'src/server/main.ts',
  'demo/main': 'src/demo/main.ts',
  'launch/main': 'src/launch/main.ts',
  'cli/cnv': 'src/cli/cnv.ts',
};

/**
 * The published libraries (package.json's exports): ES modules without a `#!` line, since cnv/client's bundle is also
 * copied into customers' backends as one file (docs/backend.md).
 */
const NODE_LIBRARIES = {
  'client/index': 'src/client/index.ts',
  'protocol/index': 'src/protocol/index.ts',
};

const NODE_ENTRIES = { ...NODE_PROGRAMS, ...NODE_LIBRARIES };

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


/**
 * The definitions of src/protocol/loader-script.ts (how the site's config goes inside the core loader), bundled on the
 * fly: the build wraps the core with them, the service fills it in with them, one definition for both.
 */
export async function loaderScriptProtocol() {
  const { outputFiles } = await build({
    entryPoints: [join(root, 'src/protocol/loader-script.ts')],
    bundle: true,
    format: 'esm',
    platform: 'neutral',
    write: false,
    logLevel: 'warning',
  });
  return import(`data:text/javascript;base64,${Buffer.from(outputFiles[0].text).toString('base64')}`);
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

/** What both passes of a loader bundle target. */
const LOADER_TARGET = {
  // Evergreen browsers and Safari 14+ run this without polyfills.
  target: ['chrome80', 'firefox78', 'safari14', 'edge88'],
  // esbuild lists destructuring as unsupported before Safari 14.1 for one engine bug: an array rest pattern
  // (`[a, ...rest] =`) can yield a non-array (babel/babel#17773). esbuild cannot lower destructuring, so it is allowed
  // here and the loader's code uses no array rest pattern.
  supported: { destructuring: true },
  minify: true,
  legalComments: 'none',
  logLevel: 'warning',
};

/**
 * Builds one loader bundle to dist/<file> and returns its served text (servedScript). A core is one function of the
 * site's config, called with null (LOADER_HEAD … LOADER_TAIL of
 * src/protocol/loader-script.ts), which the service calls with the site's config instead.
 *
 * Two passes: esbuild bundles and minifies each module, then minifies the bundle again as one file, which merges what
 * it cannot merge across modules (each module's top-level `var` statements become one) and names the whole bundle's
 * identifiers at once. The source map of the first pass (inline) is carried through the second, so dist/<file>.map
 * still maps to the TypeScript sources.
 */
async function buildLoaderBundle(file, { entry, withConfig, forms = true }, { LOADER_CONFIG_PARAMETER, LOADER_HEAD, LOADER_TAIL, servedScript }) {
  const outfile = join(dist, file);
  const { outputFiles } = await build({
    ...LOADER_TARGET,
    entryPoints: [join(root, entry)],
    outfile,
    bundle: true,
    // A core is a classic script (pasted tags and tag managers load it so): the bundle's statements inside the function
    // of the config (banner and footer, added by the second pass). The optional scripts are ES modules, which the core
    // imports.
    format: 'esm',
    platform: 'browser',
    // An IIFE of our own code needs no "use strict" prologue (tsconfig's strict would add one to every bundle).
    tsconfigRaw: { compilerOptions: { alwaysStrict: false } },
    // A core's entry reads the config as `siteConfig` (a declared global): the function's parameter, whose name is short
    // on the wire (LOADER_CONFIG_PARAMETER).
    // LOADER_FORMS (src/loader/start.ts): false leaves the form triggers out of the lean core (`forms: false`).
    define: { LOADER_FORMS: String(forms), ...(withConfig ? { siteConfig: LOADER_CONFIG_PARAMETER } : {}) },
    sourcemap: 'inline',
    write: false,
  });
  await build({
    ...LOADER_TARGET,
    // The bundle, as one module: its top-level names are the bundle's own (a core's end up inside the function of the
    // config), so they are renamed too.
    stdin: { contents: outputFiles[0].text, sourcefile: outfile, loader: 'js' },
    outfile,
    format: 'esm',
    sourcemap: 'linked',
    // V8's compile hint (Chrome 136+): compile every function of the file eagerly, off the main thread, instead of
    // lazily on it when each is first called. The core's functions run at load; the optional scripts' mostly on events.
    banner: withConfig ? { js: `//# allFunctionsCalledOnLoad\n${LOADER_HEAD}` } : {},
    footer: withConfig ? { js: LOADER_TAIL } : {},
    write: true,
  });
  let code = readFileSync(outfile, 'utf8');
  if (withConfig) {
    // The footer goes on a line of its own after the bundle's last statement and its `;`: before the `}` that closes the
    // function of the config neither is needed (on every page: 2 B gzip, 6 B brotli). Nothing after the bundle is mapped.
    code = code.replace(`;\n${LOADER_TAIL}`, LOADER_TAIL);
    writeFileSync(outfile, code);
  }
  // The lean core serves sites without form triggers: none of their code (nor the config's `forms` it reads) may be in
  // it. Nothing else checks it: the unit tests run the sources with the form triggers on.
  if (!forms && /\bforms\b/.test(code)) throw new Error(`${file}: the lean core carries the form triggers' code (LOADER_FORMS)`);
  return servedScript(code);
}

/**
 * Builds every loader bundle and prints the size report of what the service serves (raw, gzip -9, brotli -11, each
 * with its change since the last build, and the gzip budget): for the core, the per-site loader with
 * TYPICAL_SITE_CONFIG inside (what the install snippet loads), and the plain loader beside it; fails the build when a
 * bundle is over its budget.
 */
async function buildLoader() {
  const protocol = await loaderScriptProtocol();
  const sizes = {};
  for (const [file, bundle] of Object.entries(LOADER_BUNDLES)) {
    const code = await buildLoaderBundle(file, bundle, protocol);
    // What the service serves: the lean core with its config inside, less what that config says by default.
    sizes[file] = measure(file === 'site-loader.js' ? protocol.loaderWithConfig(code, protocol.leanCoreConfig(TYPICAL_SITE_CONFIG)) : code);
  }
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
    const label = file === 'site-loader.js' ? `${file} + config` : file;
    console.log(`${label.padEnd(24)}${cell('raw')}${cell('gzip')}${cell('brotli')}budget ${budget} B gzip: ${verdict}${goal}`);
    if (size.gzip > budget) over.push(`${label} is ${size.gzip} B gzip, over its ${budget} B budget`);
  }
  if (over.length) {
    for (const line of over) console.error(line);
    process.exit(1);
  }
}

/** What every Node bundle is built with: ESM for Node 20, the dependencies left to node_modules. */
const NODE_BUILD = {
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node20',
  packages: 'external',
  sourcemap: 'linked',
  logLevel: 'warning',
};

/** Builds the published libraries (NODE_LIBRARIES) into `outdir` (default dist). */
export async function buildNodeLibraries(outdir = dist) {
  await build({ ...NODE_BUILD, entryPoints: entryPoints(NODE_LIBRARIES), outdir });
}

async function buildNode() {
  await build({ ...NODE_BUILD, entryPoints: entryPoints(NODE_PROGRAMS), outdir: dist, banner: { js: '#!/usr/bin/env node' } });
  await buildNodeLibraries();
  // The `cnv` bin runs straight from a checkout too, not only after npm links it.
  chmodSync(join(dist, 'cli/cnv.js'), 0o755);
}

function entryPoints(entries) {
  return Object.fromEntries(Object.entries(entries).map(([out, src]) => [out, join(root, src)]));
}

/**
 * The declarations of the published entry points (cnv/client, cnv/protocol) in `outDir` (default dist/types): tsc's,
 * with every relative import given the `.js` of the file it names (addJsExtensions). The sources import without an
 * extension (moduleResolution Bundler), which a consumer under node16/nodenext cannot resolve: every export became
 * `any` (or TS2834 without skipLibCheck). With the extension they resolve under node16, nodenext and bundler alike.
 */
export function buildTypes(outDir = join(dist, 'types')) {
  rmSync(outDir, { recursive: true, force: true });
  execFileSync(process.execPath, [join(root, 'node_modules/typescript/bin/tsc'), '-p', join(root, 'tsconfig.types.json'), '--outDir', outDir], {
    stdio: 'inherit',
  });
  addJsExtensions(outDir);
}

/** Rewrites each relative specifier of the .d.ts files under `dir` (`./x`, `../x/y`) to `./x.js`, or `./x/index.js` for a folder. */
function addJsExtensions(dir) {
  for (const entry of readdirSync(dir, { withFileTypes: true, recursive: true })) {
    if (!entry.isFile() || !entry.name.endsWith('.d.ts')) continue;
    const file = join(entry.parentPath ?? entry.path, entry.name);
    const text = readFileSync(file, 'utf8');
    const rewritten = text.replace(/(\bfrom\s*|\bimport\s*\(\s*|\bimport\s+)(['"])(\.{1,2}\/[^'"]*)\2/g, (whole, lead, quote, specifier) => {
      if (/\.(?:m|c)?js$/.test(specifier)) return whole;
      const target = join(dirname(file), specifier);
      if (existsSync(`${target}.d.ts`)) return `${lead}${quote}${specifier}.js${quote}`;
      if (existsSync(join(target, 'index.d.ts'))) return `${lead}${quote}${specifier}/index.js${quote}`;
      throw new Error(`${file}: cannot resolve the declaration import ${specifier}`);
    });
    if (rewritten !== text) writeFileSync(file, rewritten);
  }
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
