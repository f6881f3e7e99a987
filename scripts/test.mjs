#!/usr/bin/env node
/**
 * `npm test`: every check, each run whatever the others did, then one summary. The exit code is non-zero when any
 * step failed, so a unit test failure no longer hides the browser tests (nor the reverse).
 *
 *   node scripts/test.mjs            all steps
 *   node scripts/test.mjs unit e2e   only the steps named
 */
import { spawn } from 'node:child_process';

/** The steps, in order: each is an npm script of package.json. */
const STEPS = [
  { name: 'build', script: 'build' },
  { name: 'typecheck', script: 'typecheck' },
  { name: 'import rules', script: 'lint:deps', alias: 'deps' },
  { name: 'unit tests (vitest)', script: 'test:unit', alias: 'unit' },
  { name: 'browser tests (playwright)', script: 'test:e2e', alias: 'e2e' },
];

const wanted = process.argv.slice(2);
const unknown = wanted.filter((w) => !STEPS.some((s) => s.script === w || s.alias === w));
if (unknown.length > 0) {
  console.error(`unknown step(s): ${unknown.join(', ')}; steps: ${STEPS.map((s) => s.alias ?? s.script).join(', ')}`);
  process.exit(2);
}
const steps = wanted.length === 0 ? STEPS : STEPS.filter((s) => wanted.includes(s.script) || wanted.includes(s.alias));

/** Runs `npm run <script>` with the terminal attached; resolves with its exit code (or 1 when it could not start). */
function run(script) {
  return new Promise((resolve) => {
    const child = spawn('npm', ['run', '--silent', script], { stdio: 'inherit', shell: process.platform === 'win32' });
    child.on('error', (error) => {
      console.error(`could not start npm run ${script}: ${error.message}`);
      resolve(1);
    });
    child.on('exit', (code, signal) => resolve(code ?? (signal ? 128 : 1)));
  });
}

let interrupted = false;
process.on('SIGINT', () => {
  interrupted = true; // the child got the same signal; stop after it, with the summary so far
});

const results = [];
for (const step of steps) {
  if (interrupted) break;
  console.log(`\n━━ ${step.name}: npm run ${step.script}`);
  const started = Date.now();
  const code = await run(step.script);
  results.push({ step, code, seconds: (Date.now() - started) / 1000 });
}

console.log('\n━━ summary');
for (const { step, code, seconds } of results) {
  console.log(`${code === 0 ? 'pass' : 'FAIL'}  ${step.name.padEnd(28)} ${seconds.toFixed(1).padStart(6)} s${code === 0 ? '' : `  (exit ${code})`}`);
}
for (const step of steps.slice(results.length)) console.log(`skip  ${step.name} (interrupted)`);
const failed = results.filter((r) => r.code !== 0);
if (failed.length > 0 || interrupted) {
  console.log(`\n${failed.length} of ${steps.length} steps failed${interrupted ? ', interrupted' : ''}.`);
  process.exit(1);
}
console.log(`\nall ${steps.length} steps passed.`);
