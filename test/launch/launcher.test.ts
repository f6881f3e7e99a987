/**
 * The launcher `npm start` goes through (src/launch/main.ts), run for real: bundled, started as a process, with a small
 * entry script in place of the service that reports what it was started with and which signals reached it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MALLOC_TUNABLES, onGlibc, withMallocTunables } from '../../src/launch/allocator';
import { bundleChild, type BundledChild } from '../server/support/bundle-child';

/**
 * The stand-in for the service: prints its pid, its parent's and its GLIBC_TUNABLES as one JSON line; then, by its
 * argument, exits with code 3, kills itself with SIGKILL, or waits as a running service does (SIGINT and SIGTERM handled
 * once each, as run-until-signal handles them, and printed) and exits 0 when the test writes a line to its standard
 * input. Its handlers are in place before it prints, so a signal sent once it printed finds them.
 */
const ENTRY = `
const mode = process.argv[2];
for (const signal of ['SIGINT', 'SIGTERM']) process.once(signal, () => process.stdout.write('signal ' + signal + '\\n'));
process.stdin.once('data', () => process.exit(0));
process.stdout.write(JSON.stringify({ pid: process.pid, ppid: process.ppid, tunables: process.env.GLIBC_TUNABLES ?? null }) + '\\n');
if (mode === 'exit') process.exit(3);
if (mode === 'die') process.kill(process.pid, 'SIGKILL');
`;

interface Run {
  child: ChildProcess;
  /** Everything printed so far. */
  out(): string;
  /** Resolves once the output matches. */
  printed(pattern: RegExp): Promise<string>;
  ended: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

describe('the launcher', () => {
  let bundle: BundledChild;
  let dir: string;
  let entry: string;
  const running: ChildProcess[] = [];

  beforeAll(async () => {
    bundle = await bundleChild(join(__dirname, '../../src/launch/main.ts'), 'launcher');
    dir = mkdtempSync(join(tmpdir(), 'cnv-launch-'));
    entry = join(dir, 'entry.mjs');
    writeFileSync(entry, ENTRY);
  });
  afterAll(() => {
    for (const child of running) child.kill('SIGKILL');
    bundle?.remove();
    rmSync(dir, { recursive: true, force: true });
  });

  function launch(mode: string, env: NodeJS.ProcessEnv = {}, { group = false } = {}): Run {
    const base = { ...process.env };
    delete base.GLIBC_TUNABLES;
    const child = spawn(process.execPath, [bundle.file, entry, mode], { env: { ...base, ...env }, stdio: ['pipe', 'pipe', 'inherit'], detached: group });
    running.push(child);
    let out = '';
    const waiters: Array<() => void> = [];
    child.stdout!.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      for (const wake of waiters.splice(0)) wake();
    });
    const ended = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
    const printed = (pattern: RegExp) =>
      new Promise<string>((resolve, reject) => {
        const check = () => {
          const match = pattern.exec(out);
          if (match) resolve(match[0]);
          else waiters.push(check);
        };
        void ended.then(() => setImmediate(() => (pattern.test(out) ? resolve(pattern.exec(out)![0]) : reject(new Error(`ended without printing ${pattern}: ${out}`)))));
        check();
      });
    return { child, out: () => out, printed, ended };
  }

  const started = async (run: Run) => JSON.parse(await run.printed(/^\{.*\}$/m)) as { pid: number; ppid: number; tunables: string | null };

  it.runIf(onGlibc())('starts the entry in a child process with the allocator setting, and passes its exit code on', async () => {
    const run = launch('exit', { GLIBC_TUNABLES: 'glibc.malloc.arena_max=4' });
    const entryProcess = await started(run);
    expect(entryProcess.tunables).toBe(`glibc.malloc.arena_max=4:${MALLOC_TUNABLES}`);
    expect(entryProcess.pid).not.toBe(run.child.pid);
    expect(entryProcess.ppid).toBe(run.child.pid);
    expect(await run.ended).toEqual({ code: 3, signal: null });
  });

  it('runs the entry in its own process when the environment already chooses a threshold (the operator’s stands)', async () => {
    const run = launch('exit', { GLIBC_TUNABLES: 'glibc.malloc.mmap_threshold=65536' });
    const entryProcess = await started(run);
    expect(entryProcess).toMatchObject({ pid: run.child.pid, tunables: 'glibc.malloc.mmap_threshold=65536' });
    expect(await run.ended).toEqual({ code: 3, signal: null });
  });

  it.runIf(onGlibc())('stops the entry with one SIGTERM when it receives SIGTERM, SIGINT or SIGHUP', async () => {
    for (const signal of ['SIGTERM', 'SIGINT', 'SIGHUP'] as const) {
      const run = launch('wait');
      await started(run);
      run.child.kill(signal);
      await run.printed(/^signal SIGTERM$/m);
      run.child.stdin!.end('done\n');
      expect(await run.ended).toEqual({ code: 0, signal: null });
      expect(run.out()).not.toContain('signal SIGINT');
    }
  });

  it.runIf(onGlibc())('lets a stopping entry finish when Ctrl-C reaches both (the terminal signals the whole group)', async () => {
    const run = launch('wait', {}, { group: true });
    await started(run);
    process.kill(-run.child.pid!, 'SIGINT');
    // The entry saw the terminal's SIGINT and the launcher's SIGTERM, each once; a second SIGINT would have ended it.
    await run.printed(/^signal SIGINT$/m);
    await run.printed(/^signal SIGTERM$/m);
    run.child.stdin!.end('done\n');
    expect(await run.ended).toEqual({ code: 0, signal: null });
  });

  it.runIf(onGlibc())('ends with the signal that ended the entry', async () => {
    const run = launch('die');
    await started(run);
    expect(await run.ended).toEqual({ code: null, signal: 'SIGKILL' });
  });
});

describe('withMallocTunables', () => {
  it('adds the setting on glibc, after the tunables already set', () => {
    expect(withMallocTunables({ PATH: '/bin' }, true)).toEqual({ PATH: '/bin', GLIBC_TUNABLES: MALLOC_TUNABLES });
    expect(withMallocTunables({ GLIBC_TUNABLES: 'glibc.malloc.arena_max=2' }, true)?.GLIBC_TUNABLES).toBe(`glibc.malloc.arena_max=2:${MALLOC_TUNABLES}`);
  });

  it('changes nothing elsewhere, or when the environment already sets a threshold', () => {
    expect(withMallocTunables({ PATH: '/bin' }, false)).toBeUndefined();
    expect(withMallocTunables({ GLIBC_TUNABLES: 'glibc.malloc.mmap_threshold=65536' }, true)).toBeUndefined();
    expect(withMallocTunables({ GLIBC_TUNABLES: 'glibc.malloc.arena_max=2:glibc.malloc.mmap_threshold=0' }, true)).toBeUndefined();
  });

  it('sets a threshold that turns glibc’s adjustment off: a number of bytes, between its 128 KB default and 32 MB', () => {
    const bytes = Number(/^glibc\.malloc\.mmap_threshold=(\d+)$/.exec(MALLOC_TUNABLES)?.[1]);
    expect(bytes).toBeGreaterThan(128 * 1024);
    expect(bytes).toBeLessThanOrEqual(32 * 1024 * 1024);
  });
});
