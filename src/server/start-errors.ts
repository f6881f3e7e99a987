/**
 * Start-up failures in words a person can act on: the setting to change (PORT, CNV_WEBHOOK_PORT, DATABASE_URL,
 * CNV_DATA_DIR), the directory or file to look at. Used by the service and the `cnv` command.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { redactDatabaseUrl } from './db/open-store';
import type { Settings } from './settings';

/** A start-up failure whose message says what to do; printed as it is. */
export class StartError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'StartError';
  }
}

/** A listen failure on a port setting, explained (taken, or not allowed); other errors come back unchanged. */
export function explainListenError(error: unknown, setting: 'PORT' | 'CNV_WEBHOOK_PORT', host: string, port: number): unknown {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  if (code === 'EADDRINUSE') {
    return new StartError(
      `Port ${port} on ${host} is already in use by another process (${setting}=${port}). Stop that process, or start cnv on a free port, ` +
        `e.g. ${setting}=${port + 3} npm start.${setting === 'PORT' ? ' Nothing was created: the first start creates the account and its API key only once it listens.' : ''}`,
      { cause: error },
    );
  }
  if (code === 'EACCES') {
    return new StartError(`Not allowed to listen on port ${port} on ${host} (${setting}=${port}): ports below 1024 need privileges; pick another ${setting}.`, { cause: error });
  }
  if (code === 'EADDRNOTAVAIL' || code === 'ENOTFOUND') {
    return new StartError(`Cannot listen on ${host}: it is not an address of this machine (HOST=${host}). Use 127.0.0.1, 0.0.0.0 or one of this machine's addresses.`, { cause: error });
  }
  return error;
}

const UNREACHABLE = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'ETIMEDOUT', 'ECONNRESET', 'EHOSTUNREACH', 'ENETUNREACH']);
/** PostgreSQL errors of the connection itself: bad password, no such role or database, no access. */
const CONNECTION_SQLSTATES: Record<string, string> = {
  '28P01': 'the password was refused',
  '28000': 'the user may not connect',
  '3D000': 'the database does not exist',
  '53300': 'the server has no connection slot left',
  '57P03': 'the server is starting up or shutting down',
};

/** Whether an error is the embedded store's engine failing on its files (PGlite aborts, or fails to start). */
function looksLikeDamagedStore(error: unknown): boolean {
  if (error instanceof WebAssembly.RuntimeError) return true;
  const message = error instanceof Error ? error.message : String(error);
  return /Aborted\(|failed to initiali[sz]e|memory access out of bounds|unreachable|PANIC|could not read|invalid checkpoint|database files are incompatible/i.test(message);
}

/** What runs as process `pid`, when it can be told: its command line, or null. */
function commandOf(pid: number): string | null {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').filter(Boolean).join(' ') || null;
  } catch {
    try {
      return execFileSync('ps', ['-o', 'command=', '-p', String(pid)], { encoding: 'utf8', timeout: 2_000 }).trim() || null;
    } catch {
      return null;
    }
  }
}

/** Whether a command line may be a cnv process (cnv runs on Node; its tests run under vitest or Playwright). */
function mayBeCnv(command: string): boolean {
  const program = basename(command.split(' ')[0] ?? '');
  return /^(node|nodejs|bun|deno)(\d+)?$/i.test(program) || /cnv|vitest|playwright/i.test(command);
}

/** The embedded store's lock naming a live process that is not cnv: explained, or null when that is not the case. */
function staleLock(dataDir: string): string | null {
  const path = join(dataDir, 'cnv.lock');
  let pid: number;
  try {
    pid = Number((JSON.parse(readFileSync(path, 'utf8')) as { pid?: unknown }).pid);
  } catch {
    return null;
  }
  if (!Number.isInteger(pid) || pid <= 0) return null;
  const command = commandOf(pid);
  if (command === null || mayBeCnv(command)) return null;
  return (
    `The data directory ${dataDir} has a stale lock: ${path} names process ${pid}, which is running '${command.slice(0, 80)}', not cnv ` +
    '(a cnv process stopped without removing its lock, and its process id was reused since). ' +
    `Make sure no cnv uses ${dataDir}, then delete ${path} and start again.`
  );
}

/** An error of opening the store, explained with the setting or directory to look at; other errors come back unchanged. */
export function explainStoreError(error: unknown, settings: Pick<Settings, 'databaseUrl' | 'dataDir'>): unknown {
  if (error instanceof StartError) return error;
  const message = error instanceof Error ? error.message : String(error);
  if (settings.databaseUrl) {
    const where = redactDatabaseUrl(settings.databaseUrl);
    const { code } = error as { code?: string };
    const why = code && UNREACHABLE.has(code) ? `${code === 'ENOTFOUND' || code === 'EAI_AGAIN' ? 'the host name does not resolve' : 'the connection failed'} (${code})` : code ? CONNECTION_SQLSTATES[code] : undefined;
    if (why || /connect|timeout|terminated/i.test(message)) {
      return new StartError(
        `DATABASE_URL cannot be reached: ${why ?? message} (${where}). Check the host, port, user, password and database name ` +
          'in DATABASE_URL, or unset it to use the embedded store.',
        { cause: error },
      );
    }
    return error;
  }
  if (/is in use by/.test(message)) return staleLock(settings.dataDir) ? new StartError(staleLock(settings.dataDir)!, { cause: error }) : error;
  if (looksLikeDamagedStore(error)) {
    return new StartError(
      `The embedded store in ${settings.dataDir} (CNV_DATA_DIR) cannot be opened: its files look damaged (${message.slice(0, 120)}). ` +
        `Move the directory aside (mv ${settings.dataDir} ${settings.dataDir}.damaged) and start again to create a new, empty store, ` +
        'or restore it from a backup.',
      { cause: error },
    );
  }
  return error;
}
