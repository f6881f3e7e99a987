/**
 * The top costs of a CPU profile of the service (`npm run bench -- --profile` writes, in bench/results/profiles/, one
 * of the HTTP thread per service process and load window, and a folder `…-threads/` per process with a whole-run
 * profile of each thread, PGlite's worker included): self time by function, and time by part of the code (inclusive:
 * a function's callees count for the part it belongs to only when they are outside the project and not already
 * counted). PostgreSQL's own code inside PGlite shows as one part, and its functions by the names PGlite exports
 * (`heap_insert`, `XLogFlush`, `jsonb_in`, …; bench/support/wasm-names.mjs); the rest stay `wasm-function[N]`.
 *
 *   node bench/profile-summary.mjs bench/results/profiles/*.cpuprofile bench/results/profiles/*-threads/*.cpuprofile [--top=25]
 */
import { readFileSync } from 'node:fs';
import { frameName } from './support/wasm-names.mjs';

const args = process.argv.slice(2);
const top = Number(args.find((a) => a.startsWith('--top='))?.slice(6) ?? 25);
const files = args.filter((a) => !a.startsWith('--'));
if (files.length === 0) {
  console.error('usage: node bench/profile-summary.mjs <file.cpuprofile>... [--top=25]');
  process.exit(2);
}

/** Where a frame's code lives, as a short label: a package, a project folder, or Node's internals. */
export function partOf(url) {
  if (!url) return '(native / VM)';
  if (url.startsWith('wasm://')) return '(PGlite: PostgreSQL in WASM)';
  const pkg = url.match(/node_modules\/((?:@[^/]+\/)?[^/]+)/);
  if (pkg) return pkg[1];
  if (url.startsWith('node:')) return `node:${url.slice(5).split('/')[0]}`;
  const server = url.match(/src\/server\/([^/]+)\//);
  if (server) return `server/${server[1]}`;
  if (/cnv-bench|bench-entry/.test(url)) return '(bundled service code)';
  return url.replace(/^.*\//, '');
}

for (const file of files) {
  const profile = JSON.parse(readFileSync(file, 'utf8'));
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const dt = new Map();
  profile.samples.forEach((id, i) => dt.set(id, (dt.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0)));
  const total = [...dt.values()].reduce((a, b) => a + b, 0);
  const idle = [...dt.entries()].filter(([id]) => byId.get(id).callFrame.functionName === '(idle)').reduce((a, [, v]) => a + v, 0);
  const self = new Map();
  const inclusive = new Map();
  for (const [id, micros] of dt) {
    const frame = byId.get(id).callFrame;
    const key = `${frameName(frame.functionName) || '(anonymous)'} ${partOf(frame.url)}:${frame.lineNumber + 1}`;
    self.set(key, (self.get(key) ?? 0) + micros);
    // Inclusive time by function name along the stack (each name counted once per sample).
    const seen = new Set();
    for (let at = id; at !== undefined; at = parent.get(at)) {
      const f = byId.get(at).callFrame;
      const name = `${frameName(f.functionName) || '(anonymous)'} ${partOf(f.url)}:${f.lineNumber + 1}`;
      if (seen.has(name)) continue;
      seen.add(name);
      inclusive.set(name, (inclusive.get(name) ?? 0) + micros);
    }
  }
  const busy = total - idle;
  const pct = (v) => `${((100 * v) / busy).toFixed(1).padStart(5)}%`;
  console.log(`${file}: ${(total / 1e6).toFixed(1)} s sampled, ${(busy / 1e6).toFixed(1)} s busy (percentages of busy time)`);
  console.log('\nself time, top functions:');
  for (const [k, v] of [...self].filter(([k]) => !k.startsWith('(idle)')).sort((a, b) => b[1] - a[1]).slice(0, top)) console.log(`  ${pct(v)}  ${k}`);
  console.log('\ninclusive time, top functions:');
  for (const [k, v] of [...inclusive].filter(([k]) => !k.startsWith('(idle)') && !k.startsWith('(root)')).sort((a, b) => b[1] - a[1]).slice(0, top)) console.log(`  ${pct(v)}  ${k}`);
  const parts = new Map();
  for (const [id, micros] of dt) {
    const frame = byId.get(id).callFrame;
    if (frame.functionName === '(idle)') continue;
    const part = partOf(frame.url);
    parts.set(part, (parts.get(part) ?? 0) + micros);
  }
  console.log('\nself time by part:');
  for (const [k, v] of [...parts].sort((a, b) => b[1] - a[1]).slice(0, top)) console.log(`  ${pct(v)}  ${k}`);
  console.log('');
}
