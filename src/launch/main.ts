/**
 * The launcher `npm start` goes through: `node dist/launch/main.js <entry.js>` runs the entry (the demo with the
 * service, or `dist/server/main.js`, the service alone) in a child Node process started with the allocator's settings
 * (allocator.ts), which glibc reads only when a process starts. Where there is nothing to set (not glibc, or
 * GLIBC_TUNABLES already chooses a threshold), the entry runs in this process, with no child.
 *
 * The launcher stays while the service runs: 45 MB resident, 37 MB of it Node's own code shared with the service, about
 * 8 MB its own. It passes the child's end on: the same exit code, or the same signal. A SIGINT, SIGTERM or SIGHUP it
 * receives goes to the child as one SIGTERM (a stop, as a SIGINT is): Ctrl-C in a terminal also reaches the child
 * directly, and a second signal of the same kind would end it before its store was closed.
 */
import { spawn } from 'node:child_process';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { withMallocTunables } from './allocator';

const STOP_SIGNALS = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const;

const [entry, ...args] = process.argv.slice(2);
if (!entry) {
  console.error('usage: node dist/launch/main.js <entry.js> [arguments...]');
  process.exit(2);
}
const env = withMallocTunables(process.env);
if (!env) {
  // The entry sees the arguments it would see as a process of its own.
  process.argv = [process.argv[0]!, resolve(entry), ...args];
  await import(pathToFileURL(resolve(entry)).href);
} else {
  const child = spawn(process.execPath, [...process.execArgv, entry, ...args], { stdio: 'inherit', env });
  let stopSent = false;
  const stop = () => {
    if (stopSent) return;
    stopSent = true;
    child.kill('SIGTERM');
  };
  for (const signal of STOP_SIGNALS) process.on(signal, stop);
  child.on('error', (error) => {
    console.error(`cnv could not start ${entry}: ${error.message}`);
    process.exit(1);
  });
  child.on('exit', (code, signal) => {
    if (signal === null) process.exit(code ?? 1);
    for (const stopSignal of STOP_SIGNALS) process.off(stopSignal, stop);
    process.kill(process.pid, signal);
  });
}
