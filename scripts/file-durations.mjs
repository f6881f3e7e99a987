#!/usr/bin/env node
/**
 * Writes test/support/file-durations.json from vitest's own record of the last run on this machine (its results cache
 * under node_modules/.vite): each unit test file's duration in milliseconds. The unit tests run their files longest
 * first by that file (test/support/sequencer.ts), also in a fresh clone, which has no such record. Run it after
 * `npm run test:unit` when test files were added or changed much, and commit the file.
 *
 *   node scripts/file-durations.mjs
 */
import { existsSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const root = join(import.meta.dirname, '..');
const cacheRoot = join(root, 'node_modules', '.vite', 'vitest');
const caches = readdirSync(cacheRoot, { withFileTypes: true }).filter((entry) => entry.isDirectory());
if (caches.length !== 1) throw new Error(`expected one vitest results cache under ${cacheRoot}, found ${caches.length}`);
const { results } = JSON.parse(readFileSync(join(cacheRoot, caches[0].name, 'results.json'), 'utf8'));
const durations = Object.fromEntries(
  results
    .map(([key, { duration }]) => [key.slice(key.indexOf(':') + 1), Math.round(duration)])
    // Files of this working copy only (the cache keeps files since deleted or renamed).
    .filter(([file, duration]) => file.startsWith('test/') && Number.isFinite(duration) && existsSync(join(root, file)))
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)),
);
const target = join(root, 'test', 'support', 'file-durations.json');
writeFileSync(target, `${JSON.stringify(durations, null, 1)}\n`);
console.log(`${Object.keys(durations).length} files' durations written to ${target}`);
