/** A child Node process driven by request/response messages over IPC (the load generator, the fake Google Ads API). */
import { fork } from 'node:child_process';

/**
 * Forks `modulePath` (with Node flags `execArgv`, e.g. --cpu-prof) and resolves once it reports `{ready: true}`;
 * `call(message)` resolves with its `result`.
 */
export function startChild(modulePath, { env = {}, execArgv = [] } = {}) {
  const child = fork(modulePath, [], { env: { ...process.env, ...env }, execArgv, stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const pending = new Map();
  let nextId = 1;
  let exited = false;
  const ready = new Promise((resolve, reject) => {
    child.on('message', (message) => {
      if (message?.ready) return resolve();
      const waiter = pending.get(message?.id);
      if (!waiter) return;
      pending.delete(message.id);
      if (message.error) waiter.reject(new Error(`${modulePath}: ${message.error}`));
      else waiter.resolve(message.result);
    });
    child.on('exit', (code, signal) => {
      exited = true;
      const error = new Error(`${modulePath} exited (${signal ?? code})`);
      reject(error);
      for (const waiter of pending.values()) waiter.reject(error);
      pending.clear();
    });
  });
  return ready.then(() => ({
    pid: child.pid,
    call(message) {
      if (exited) return Promise.reject(new Error(`${modulePath} has exited`));
      const id = nextId++;
      return new Promise((resolve, reject) => {
        pending.set(id, { resolve, reject });
        child.send({ ...message, id });
      });
    },
    stop() {
      if (exited) return Promise.resolve();
      return new Promise((resolve) => {
        child.once('exit', () => resolve());
        child.kill('SIGTERM');
      });
    },
  }));
}
