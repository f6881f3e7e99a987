#!/usr/bin/env node
/**
 * `npm test`: every check, each run whatever the others did, then one summary. The exit code is non-zero when any
 * step failed, so a unit test failure no longer hides the browser tests (nor the reverse).
 *
 *   node scripts/test.mjs            all steps
 *   node scripts/test.mjs unit e2e   only the steps named
 *
 * The typecheck and the import rules run beside the browser tests when those run too (their output is printed once the
 * browser tests are done): the browsers mostly wait on pages and services, using under one core of two on a quiet
 * machine, while the typecheck is one core's work for 20-35 s. Beside the unit tests (two busy workers) they would only
 * slow them. On a machine already busy the overlap saves little: the browser step then waits for the same cores.
 */
import { spawn } from 'node:child_process';
import { rmSync } from 'node:fs';
import { testTmpdir } from './test-tmpdir.mjs';

/** The steps, in order: each is an npm script of package.json. */
const STEPS = [
  { name: 'build', script: 'build' },
  { name: 'typecheck', script: 'typecheck', besideBrowser: true },
  { name: 'import rules', script: 'lint:deps', alias: 'deps', besideBrowser: true },
  { name: 'unit tests (vitest)', script: 'test:unit', alias: 'unit' },
  { name: 'browser tests (playwright)', script: 'test:e2e', alias: 'e2e', browser: true },
];

const wanted = process.argv.slice(2);
const unknown = wanted.filter((w) => !STEPS.some((s) => s.script === w || s.alias === w));
if (unknown.length > 0) {
  console.error(`unknown step(s): ${unknown.join(', ')}; steps: ${STEPS.map((s) => s.alias ?? s.script).join(', ')}`);
  process.exit(2);
}
const steps = wanted.length === 0 ? STEPS : STEPS.filter((s) => wanted.includes(s.script) || wanted.includes(s.alias));

/**
 * Runs `npm run <script>` with the terminal attached, or with its output kept (`quiet`, for a step beside another) and
 * handed back; resolves with its exit code (or 1 when it could not start).
 */
function run(script, { quiet = false } = {}) {
  return new Promise((resolve) => {
    let output = '';
    const child = spawn('npm', ['run', '--silent', script], {
      stdio: quiet ? ['ignore', 'pipe', 'pipe'] : 'inherit',
      shell: process.platform === 'win32',
      env: tmp ? { ...process.env, TMPDIR: tmp } : process.env,
    });
    if (quiet) for (const stream of [child.stdout, child.stderr]) stream.on('data', (chunk) => (output += chunk));
    child.on('error', (error) => {
      output += `could not start npm run ${script}: ${error.message}\n`;
      if (!quiet) console.error(output);
      resolve({ code: 1, output });
    });
    child.on('close', (code, signal) => resolve({ code: code ?? (signal ? 128 : 1), output }));
  });
}

/** Runs a step; resolves with its result (exit code, seconds, and the output when quiet). */
async function runStep(step, options) {
  const started = Date.now();
  const { code, output } = await run(step.script, options);
  return { step, code, output, seconds: (Date.now() - started) / 1000 };
}

let interrupted = false;
process.on('SIGINT', () => {
  interrupted = true; // the child got the same signal; stop after it, with the summary so far
});

const tmp = testTmpdir();
if (tmp) console.log(`temporary directories in ${tmp} (tmpfs; CNV_TEST_TMPDIR=off for the system's default)`);
// Removed however the run ends (process.exit included), with whatever a test left in it.
if (tmp) process.on('exit', () => rmSync(tmp, { recursive: true, force: true }));

const suiteStarted = Date.now();
const withBrowser = steps.some((s) => s.browser);
const results = [];
for (const step of steps) {
  if (interrupted) break;
  if (withBrowser && step.besideBrowser) continue; // started with the browser tests, below
  if (step.browser) {
    const beside = steps.filter((s) => s.besideBrowser);
    if (beside.length > 0) console.log(`\n━━ ${beside.map((s) => s.name).join(', ')}: beside the browser tests, output after them`);
    const besideResults = Promise.all(beside.map((s) => runStep(s, { quiet: true })));
    console.log(`\n━━ ${step.name}: npm run ${step.script}`);
    const browserResult = await runStep(step);
    for (const result of await besideResults) {
      console.log(`\n━━ ${result.step.name}: npm run ${result.step.script} (ran beside the browser tests)`);
      if (result.output) process.stdout.write(result.output);
      results.push(result);
    }
    results.push(browserResult);
    continue;
  }
  console.log(`\n━━ ${step.name}: npm run ${step.script}`);
  results.push(await runStep(step));
}
results.sort((a, b) => steps.indexOf(a.step) - steps.indexOf(b.step));

console.log('\n━━ summary');
for (const { step, code, seconds } of results) {
  console.log(`${code === 0 ? 'pass' : 'FAIL'}  ${step.name.padEnd(28)} ${seconds.toFixed(1).padStart(6)} s${code === 0 ? '' : `  (exit ${code})`}`);
}
for (const step of steps.filter((s) => !results.some((r) => r.step === s))) console.log(`skip  ${step.name} (interrupted)`);
console.log(`      ${'all (wall clock)'.padEnd(28)} ${((Date.now() - suiteStarted) / 1000).toFixed(1).padStart(6)} s`);
const failed = results.filter((r) => r.code !== 0);
if (failed.length > 0 || interrupted) {
  console.log(`\n${failed.length} of ${steps.length} steps failed${interrupted ? ', interrupted' : ''}.`);
  process.exit(1);
}
console.log(`\nall ${steps.length} steps passed.`);
