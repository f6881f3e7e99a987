/**
 * The declarations customers get with cnv/client and cnv/protocol, type-checked by a small strict consumer that
 * installs the package as npm would lay it out (package.json's `exports`, the built dist/types) under each module
 * resolution a TypeScript project uses: node16, nodenext and bundler. The types must be real: every misuse in the
 * consumer's bad.ts must fail to compile (a declaration that does not resolve makes everything `any`, which compiles).
 */
import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
// @ts-expect-error build.mjs is plain JavaScript without declarations.
import { buildTypes } from '../../build.mjs';

const root = resolve(import.meta.dirname, '../..');
const tsc = join(root, 'node_modules/typescript/bin/tsc');

/** Correct use: must compile without a single error. */
const OK = `
import { createCnvClient, CnvConfigError, readCorrelationToken, type AdjustConversionResult, type CnvClient, type ReportConversionResult, type ReportSignupResult } from 'cnv/client';
import { saasSignupPath, type SaasSignupResponse } from 'cnv/protocol';

const cnv: CnvClient = createCnvClient({ webhookBaseUrl: 'https://hooks.example.com', siteKey: 's', triggerKey: 'signup', secret: 'x' });
const result: ReportSignupResult = await cnv.reportSignup({ customerEventId: 'u1', cookieHeader: 'a=b' });
if (result.ok) {
  const correlated: boolean = result.response.correlated;
  const response: SaasSignupResponse = result.response;
  console.log(correlated, response.promoted_count.toFixed(0));
} else if (result.reason === 'invalid_input') {
  console.log(result.param.toUpperCase());
}
const stage: ReportConversionResult = await cnv.reportConversion('paid', { customerEventId: 'inv_1', customerId: 'c1', value: 29, currency: 'EUR' });
if (!stage.ok && stage.reason === 'gave_up') console.log(stage.attempts);
const adjusted: AdjustConversionResult = await cnv.adjustConversion({ adjustmentId: 'a1', customerEventId: 'inv_1', type: 'retract' });
if (adjusted.ok) console.log(adjusted.response.adjustment_id);
const token: string | null = readCorrelationToken('a=b');
const path: string = saasSignupPath('s', 'signup');
console.log(token, path, new CnvConfigError('m').message);
`;

/** Misuses, one a line: each line marked \`// misuse\` must have a compile error, and no other line. */
const BAD = `
import { createCnvClient } from 'cnv/client';
import { saasSignupPath } from 'cnv/protocol';

const n: number = createCnvClient; // misuse
const p: number = saasSignupPath; // misuse
const cnv = createCnvClient({ siteKey: 's' }); // misuse
await cnv.reportSignup({ customerEventId: 'u1', cookieHeader: 5 }); // misuse
const result = await cnv.reportSignup({ customerEventId: 'u1' });
if (result.ok) {
  const wrong: string = result.response.correlated; // misuse
  console.log(wrong);
}
const stage = await cnv.reportConversion('paid', { customerEventId: 'inv_1', customerId: 'c1' });
if (!stage.ok && stage.reason === 'no_correlation_token') console.log(stage); // misuse
const adjusted = await cnv.adjustConversion({ adjustmentId: 'a1', customerEventId: 'inv_1', type: 'retract' });
if (!adjusted.ok && adjusted.reason === 'no_correlation_token') console.log(adjusted); // misuse
console.log(n, p);
`;

const RESOLUTIONS = [
  { name: 'nodenext', module: 'nodenext', moduleResolution: 'nodenext', skipLibCheck: false },
  { name: 'nodenext-skipLibCheck', module: 'nodenext', moduleResolution: 'nodenext', skipLibCheck: true },
  { name: 'node16', module: 'node16', moduleResolution: 'node16', skipLibCheck: false },
  { name: 'bundler', module: 'esnext', moduleResolution: 'bundler', skipLibCheck: false },
] as const;

let dir: string;
const output = new Map<string, string>();

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'cnv-types-'));
  // The package as installed: its package.json (name, type, exports) and the declarations the build writes.
  const manifest = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { name: string; type: string; exports: Record<string, { types: string }> };
  const pkg = join(dir, 'node_modules', manifest.name);
  mkdirSync(pkg, { recursive: true });
  writeFileSync(join(pkg, 'package.json'), JSON.stringify({ name: manifest.name, type: manifest.type, exports: manifest.exports }));
  buildTypes(join(pkg, 'dist/types'));
  for (const [entry, { types }] of Object.entries(manifest.exports)) {
    if (!existsSync(join(pkg, types))) throw new Error(`exports[${entry}].types names ${types}, which the build does not write`);
  }
  mkdirSync(join(dir, 'node_modules/@types'));
  symlinkSync(join(root, 'node_modules/@types/node'), join(dir, 'node_modules/@types/node'), 'dir');
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: 'consumer', type: 'module', private: true }));
  writeFileSync(join(dir, 'ok.ts'), OK);
  writeFileSync(join(dir, 'bad.ts'), BAD);
  await Promise.all(
    RESOLUTIONS.map(async ({ name, ...options }) => {
      const config = `tsconfig.${name}.json`;
      const compilerOptions = { ...options, target: 'es2022', lib: ['es2022'], types: ['node'], strict: true, noEmit: true };
      writeFileSync(join(dir, config), JSON.stringify({ compilerOptions, files: ['ok.ts', 'bad.ts'] }));
      const run = await promisify(execFile)(process.execPath, [tsc, '-p', config, '--pretty', 'false'], { cwd: dir }).catch(
        (error: { stdout?: string }) => ({ stdout: error.stdout ?? String(error) }),
      );
      output.set(name, run.stdout);
    }),
  );
}, 180_000);

afterAll(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe.each(RESOLUTIONS)('the published declarations under $name resolution', ({ name }) => {
  it('type-check a correct consumer without errors, in it or in the declarations', () => {
    const errors = output.get(name)!.split('\n').filter((line) => line.includes('error TS') && !line.startsWith('bad.ts('));
    expect(errors).toEqual([]);
  });

  it('are real types, not any: every misuse fails to compile', () => {
    const lines = BAD.split('\n');
    const misuses = lines.flatMap((line, i) => (line.endsWith('// misuse') ? [i + 1] : []));
    const errorLines = [...new Set([...output.get(name)!.matchAll(/^bad\.ts\((\d+),\d+\): error TS\d+/gm)].map((m) => Number(m[1])))];
    expect(errorLines.sort((a, b) => a - b)).toEqual(misuses);
  });
});
