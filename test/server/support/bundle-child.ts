/** A test's child process script, bundled from TypeScript by esbuild (packages external) into a directory of its own. */
import { mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { build } from 'esbuild';

export interface BundledChild {
  /** The bundled script, to run with `node`. */
  file: string;
  /** Removes the bundle's directory. */
  remove(): void;
}

/** Bundles `entry`; the directory is inside the project, so the bundle's packages (pg, PGlite) resolve from node_modules. */
export async function bundleChild(entry: string, name: string): Promise<BundledChild> {
  const dir = join(process.cwd(), 'node_modules', '.cache', `cnv-${name}-${randomBytes(4).toString('hex')}`);
  mkdirSync(dir, { recursive: true });
  const file = join(dir, 'child.mjs');
  await build({ entryPoints: [entry], bundle: true, platform: 'node', format: 'esm', target: 'node20', outfile: file, packages: 'external', logLevel: 'silent' });
  return { file, remove: () => rmSync(dir, { recursive: true, force: true }) };
}
