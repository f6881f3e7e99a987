/**
 * The scripts the loader benchmark compares: ours as the install snippet loads it (`/loader.js?site_key=KEY`: the
 * lean core dist/site-loader.js with the site's config inside), Plausible's tracker as a script tag, Segment's
 * standalone.
 */
import { build } from 'esbuild';
import { existsSync, readFileSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';

import { loaderScriptProtocol, measure as measureBytes } from '../build.mjs';

const root = new URL('..', import.meta.url).pathname;

/** Where Segment's standalone bundle and its lazily loaded chunks live. */
export const SEGMENT_UMD_DIR = join(root, 'node_modules/@segment/analytics-next/dist/umd');

// The same syntax target as build.mjs gives our loader, so that no script gains bytes from a different down-levelling.
const BROWSER_TARGET = ['es2019', 'chrome80', 'firefox78', 'safari14', 'edge88'];

/**
 * Our loader as the service serves it for `/loader.js?site_key=KEY` to a site without form triggers: the built lean
 * core with `config` inside (the service's own loaderWithConfig); fails clearly when the build is missing.
 */
export async function cnvLoaderCode(config) {
  const file = join(root, 'dist/site-loader.js');
  if (!existsSync(file)) throw new Error('dist/site-loader.js is missing: run `node build.mjs --loader-only` (npm run bench builds it)');
  const { loaderWithConfig, servedScript } = await loaderScriptProtocol();
  return loaderWithConfig(servedScript(readFileSync(file, 'utf8')), config);
}

/**
 * Plausible's npm tracker made the script-tag equivalent: bundled with its init({domain, endpoint}) call into one
 * minified IIFE, as its README says to initialise it.
 */
export async function plausibleTrackerCode({ domain, endpoint }) {
  const result = await build({
    stdin: {
      contents: `import { init } from '@plausible-analytics/tracker';\ninit(${JSON.stringify({ domain, endpoint })});\n`,
      resolveDir: root,
      loader: 'js',
    },
    bundle: true,
    format: 'iife',
    platform: 'browser',
    target: BROWSER_TARGET,
    minify: true,
    legalComments: 'none',
    write: false,
    logLevel: 'silent',
  });
  return result.outputFiles[0].text;
}

/** Segment's standalone bundle (what its snippet loads first). */
export function segmentStandaloneCode() {
  return readFileSync(join(SEGMENT_UMD_DIR, 'standalone.js'), 'utf8');
}

/** A Segment chunk file by name, or null when there is no such chunk (only plain .js files are served). */
export function segmentChunk(name) {
  if (!/^[\w.-]+\.js$/.test(name)) return null;
  const file = join(SEGMENT_UMD_DIR, name);
  return existsSync(file) && statSync(file).isFile() ? readFileSync(file) : null;
}

/** Sizes of every Segment chunk, by file name. */
export function segmentChunkSizes() {
  const sizes = {};
  for (const name of readdirSync(SEGMENT_UMD_DIR)) {
    if (name.endsWith('.js') && name !== 'standalone.js' && name !== 'index.js') {
      sizes[name] = measureBytes(readFileSync(join(SEGMENT_UMD_DIR, name)));
    }
  }
  return sizes;
}

/** Package versions, printed beside the figures. */
export function packageVersion(name) {
  return JSON.parse(readFileSync(join(root, 'node_modules', name, 'package.json'), 'utf8')).version;
}
