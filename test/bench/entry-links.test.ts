import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const runMjs = fileURLToPath(new URL('../../bench/run.mjs', import.meta.url));

// The benchmark is plain JavaScript outside the typecheck: a named import that no module exports is only found when
// `npm run bench` is run (main once shipped such a break). Node links every import of run.mjs, transitively, before
// its first line runs; an unknown section is then refused by the argument parser, which proves the linking passed.
describe('npm run bench links', () => {
  it('loads bench/run.mjs and every module it imports', () => {
    const run = spawnSync(process.execPath, [runMjs, '--only=no-such-section'], { encoding: 'utf8', timeout: 30_000 });
    expect(run.stderr).not.toMatch(/SyntaxError|ERR_MODULE_NOT_FOUND|does not provide an export/);
    expect(run.stderr).toMatch(/unknown section\(s\) no-such-section/);
    expect(run.status).toBe(1);
  });
});
