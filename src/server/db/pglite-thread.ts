/**
 * Where the embedded PGlite runs: in this thread, or on a worker thread of its own. PGlite is PostgreSQL compiled to
 * WASM and runs each statement synchronously; on the service's thread it took about two thirds of that thread under
 * the webhook load, so HTTP, validation and signatures waited for SQL and one core did everything (docs/benchmarks.md).
 * On a worker, PGlite has a core of its own, and the service's thread only encodes and parses protocol messages.
 *
 * Durability is unchanged: a statement's answer (a COMMIT's included) comes back only after PGlite ran it, its writes
 * made to the data directory's files by the worker's synchronous file calls, exactly as in this thread. A kill -9 ends
 * the worker with the process, before or after a commit, never half-way through the reply.
 *
 * The worker's code is a short CommonJS script given as a string (`eval`), so it runs the same under the test runner,
 * from the bundle and from the sources: it loads PGlite by the path resolved here and answers protocol bytes with
 * protocol bytes (transferred, not copied).
 *
 * A commit reaches the disk before it is answered (see durableOptions): PGlite as shipped never asks the operating
 * system to write anything through, so a commit survived a kill -9 of the service but not a power cut or a kernel crash.
 */
import { spawn } from 'node:child_process';
import fs, { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { Worker } from 'node:worker_threads';
import { PGlite } from '@electric-sql/pglite';
import { NodeFS } from '@electric-sql/pglite/nodefs';
import type { ProtocolEndpoint } from './pglite-connection';
import { STORE_STOPPED_CODE } from './store-trouble';

export interface PgliteOptions {
  /** Data directory; undefined or 'memory://' keeps the data in memory. */
  dataDir?: string | undefined;
  /** A `dumpDataDir` tarball to start from instead of an empty cluster. */
  image?: Blob | undefined;
}

/** PGlite in this thread. */
export async function pgliteHere(options: PgliteOptions): Promise<ProtocolEndpoint> {
  if (isNewStore(options)) await createCluster(options.dataDir!);
  const lite = await PGlite.create(durableOptions(pgliteArgs(options), NodeFS, (fd) => fs.fsyncSync(fd)));
  return { exec: (messages) => answerOf(lite, messages), close: () => lite.close() };
}

/**
 * PostgreSQL's own buffer pool inside PGlite. PostgreSQL's default (128 MB) made PGlite's WASM memory grow to 188 MB and
 * the process about 300 MB resident before the service served anything; with 32 MB, WASM memory stays at its initial
 * 128 MB and the process at about 195 MB (measured on a store of the benchmark's size). A block missing from the pool is
 * read from the data directory's files, which the operating system caches: the pool would hold a second copy. 16 MB
 * instead of 32 (2026-11-26, with glibc's allocator set as `npm start` sets it): the service's peak RSS under the
 * benchmark's load 20 to 40 MB lower in three pairs of runs, CPU per report and reports/s the same within the noise.
 * A store many times the benchmark's size, whose hot index pages outgrow the pool (each block then a read from the
 * file cache), measured 2026-11-27: with 2,020,000 snapshots (the token index 127 MB, eight times the pool; the table
 * 1.6 GB), a batch of 25 snapshots took 1.69 ms at p50 and 3.4 ms at p99, against 1.47 and 7.7 ms on a new store.
 */
export const PGLITE_SHARED_BUFFERS = '16MB';

/**
 * PostgreSQL's start parameters inside PGlite: PGlite's own, without `-F` (fsync off), with WAL written through by
 * fsync() (see durableOptions), the buffer pool above, and new WAL segments not zero-filled.
 *
 * `wal_init_zero=off`: by default PostgreSQL writes a new 16 MB WAL segment full of zeros and syncs it before it uses
 * it. Under the webhook benchmark's burst that happened every 5 s (about 13,000 reports), and the statement that
 * crossed into the new segment ran 40 to 70 ms instead of 5: the store's slowest statements, with every request in
 * flight waiting behind each (2026-11-26, traced on PGlite's thread; docs/benchmarks.md, eighth pass). Off, PostgreSQL
 * writes only the segment's last byte (its documented alternative, for file systems where zero-filling buys nothing).
 * Durability is unchanged: a commit is answered after fsync() of its WAL file, and fsync (not fdatasync) writes the
 * file's newly allocated blocks with it. What changes: a full disk shows at the first write into a new segment
 * instead of at its creation; either stops the store, as before.
 */
export const PGLITE_START_PARAMS = [
  ...PGlite.defaultStartParams.filter((param) => param !== '-F'),
  '-c', 'fsync=on',
  '-c', 'wal_sync_method=fsync',
  '-c', 'wal_init_zero=off',
  '-c', `shared_buffers=${PGLITE_SHARED_BUFFERS}`,
];

interface PgliteArgs {
  dataDir?: string;
  loadDataDir?: Blob;
  startParams: string[];
}

function pgliteArgs({ dataDir, image }: PgliteOptions): PgliteArgs {
  return {
    ...(dataDir && dataDir !== 'memory://' ? { dataDir } : {}),
    ...(image ? { loadDataDir: image } : {}),
    startParams: PGLITE_START_PARAMS,
  };
}

/** What durableOptions needs of PGlite's Emscripten module: its Node file system driver. */
interface EmscriptenWithNodeFs {
  NODEFS: { stream_ops: Record<string, unknown>; tryFSOperation(operation: () => unknown): unknown };
}

/**
 * PGlite's options with a data directory on disk made durable: the directory mounted through PGlite's NodeFS, whose
 * stream operations gain the fsync that Emscripten leaves out, so that PostgreSQL's fsync() of a WAL segment (at every
 * commit, wal_sync_method=fsync), of a data file (at a checkpoint) or of a directory (after creating a file) is a real
 * fsync of that file. Without it, PostgreSQL's fdatasync and fsync inside PGlite return at once without asking the
 * operating system for anything, and PGlite starts PostgreSQL with fsync off besides.
 *
 * Self-contained (it uses nothing but its arguments), because the worker's script and the cluster's child process take
 * its source text: one definition for the three places PGlite runs. Options without a data directory (in memory, or an
 * image) come back as they are.
 */
export function durableOptions<T extends { dataDir?: string }>(
  options: T,
  NodeFs: typeof NodeFS,
  fsync: (fd: number) => void,
): Omit<T, 'dataDir'> & { fs?: NodeFS } {
  const { dataDir, ...rest } = options;
  if (!dataDir) return rest;
  class DurableNodeFS extends NodeFs {
    // @ts-expect-error PGlite's declaration of init names a module type it does not export
    override async init(pg, opts) {
      const { emscriptenOpts } = await super.init(pg, opts);
      const syncToDisk = (mod: EmscriptenWithNodeFs) => {
        mod.NODEFS.stream_ops.fsync = (stream: { nfd: number }) => {
          mod.NODEFS.tryFSOperation(() => fsync(stream.nfd));
          return 0;
        };
      };
      return { emscriptenOpts: { ...emscriptenOpts, preRun: [...(emscriptenOpts.preRun ?? []), syncToDisk] } };
    }
  }
  return { ...rest, fs: new DurableNodeFS(dataDir) };
}

/**
 * The backend's answer to protocol messages, as raw bytes. PGlite's execProtocolRaw also parsed every message of the
 * answer into JavaScript objects that nothing here reads (node-postgres parses the bytes again where they are used):
 * about 4 % of the worker's time under the webhook load, with a copy of the answer besides. Self-contained, like
 * durableOptions: the worker's script takes its source text.
 */
export async function answerOf(lite: Pick<PGlite, 'execProtocolRawStream'>, messages: Uint8Array): Promise<Uint8Array> {
  const chunks: Uint8Array[] = [];
  let length = 0;
  // A chunk is a view of PGlite's memory, valid only during the call: copied.
  await lite.execProtocolRawStream(messages, { onRawData: (chunk) => void (chunks.push(chunk.slice()), (length += chunk.length)) });
  if (chunks.length === 1) return chunks[0]!;
  const answer = new Uint8Array(length);
  let offset = 0;
  for (const chunk of chunks) {
    answer.set(chunk, offset);
    offset += chunk.length;
  }
  return answer;
}

/**
 * The young generation of the worker's JavaScript heap. The worker only passes protocol bytes to and from PGlite, so
 * nearly all it allocates dies at once; V8's default let that garbage grow the worker's heap to about 70 MB under the
 * webhook benchmark's load, and 4 MB kept it to about 25 MB with the same throughput (docs/benchmarks.md).
 */
export const PGLITE_WORKER_YOUNG_GENERATION_MB = 4;

const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const fs = require('node:fs');
const { PGlite } = require(workerData.pglitePath);
const { NodeFS } = require(workerData.nodefsPath);
const durableOptions = ${durableOptions.toString()};
const answerOf = ${answerOf.toString()};
const describe = (error) => String((error && error.stack) || error);
(async () => {
  const wasmModule = workerData.wasmModule ?? (await WebAssembly.compile(fs.readFileSync(workerData.wasmPath)));
  const options = durableOptions(workerData.options, NodeFS, (fd) => fs.fsyncSync(fd));
  return { lite: await PGlite.create({ ...options, pgliteWasmModule: wasmModule }), wasmModule };
})().then(({ lite, wasmModule }) => {
  parentPort.on('message', (message) => {
    if (message.type === 'exec') {
      answerOf(lite, message.messages).then(
        (answer) => parentPort.postMessage({ type: 'answer', id: message.id, answer }, [answer.buffer]),
        (error) => parentPort.postMessage({ type: 'answer', id: message.id, error: describe(error) }),
      );
    } else if (message.type === 'close') {
      lite.close().then(
        () => parentPort.postMessage({ type: 'closed' }),
        (error) => parentPort.postMessage({ type: 'closed', error: describe(error) }),
      );
    }
  });
  parentPort.postMessage({ type: 'ready', wasmModule });
}, (error) => parentPort.postMessage({ type: 'failed', error: describe(error) }));
`;

type FromWorker =
  | { type: 'ready'; wasmModule: WebAssembly.Module }
  | { type: 'failed'; error: string }
  | { type: 'answer'; id: number; answer?: Uint8Array; error?: string }
  | { type: 'closed'; error?: string };

/**
 * PGlite on a worker thread of its own; resolves once it is ready (the data directory opened, recovered if need be).
 * A data directory not created yet is created first by a short-lived child process (see createCluster), and the
 * service's worker then opens it like any existing store.
 */
export async function pgliteOnWorker(options: PgliteOptions): Promise<ProtocolEndpoint> {
  if (isNewStore(options)) await createCluster(options.dataDir!);
  return startWorker(options);
}

/** A data directory on disk without a cluster yet (not one in memory, nor one restored from an image). */
function isNewStore({ dataDir, image }: PgliteOptions): boolean {
  return dataDir !== undefined && dataDir !== 'memory://' && !image && !existsSync(join(dataDir, 'PG_VERSION'));
}

/**
 * Where PGlite, its Node file system module and its WASM are: the worker's script and the cluster's child load them by
 * path (the WASM sits beside PGlite's entry point, where PGlite itself reads it).
 */
const PGLITE_PATHS = (() => {
  const { resolve } = createRequire(import.meta.url);
  const pglite = resolve('@electric-sql/pglite');
  return { pglite, nodefs: resolve('@electric-sql/pglite/nodefs'), wasm: join(dirname(pglite), 'pglite.wasm') };
})();

/**
 * PGlite's WASM as the first worker of the process compiled it, handed to every later one. A worker compiles PGlite's
 * 9 MB of WASM for itself otherwise (PGlite keeps its compiled module per thread), and warms it up again: a worker's
 * open of the test image took 1.2 to 1.6 s of CPU, and 0.5 s with the module handed on (2026-11-29, this 2-core
 * machine, one process opening six stores in turn). It matters to a process that opens the store more than once: the service whose store is opened again after its
 * thread ended, and the tests, which open some hundred. The compiled code is shared between the threads, not copied,
 * and a process that opens its store once holds nothing it did not hold before (its worker's module is the same one).
 */
let compiledPglite: WebAssembly.Module | undefined;

/**
 * The short-lived child process that opens the data directory by itself (see createCluster and freezeDatabases): for
 * each run, PGlite opened on the run's database (the cluster's default when none), the run's SQL, and closed.
 */
const CHILD_SOURCE = `
const fs = require('node:fs');
const { PGlite } = require(process.env.CNV_PGLITE_PATH);
const { NodeFS } = require(process.env.CNV_PGLITE_NODEFS_PATH);
const durableOptions = ${durableOptions.toString()};
const options = JSON.parse(process.env.CNV_PGLITE_OPTIONS);
(async () => {
  for (const run of JSON.parse(process.env.CNV_PGLITE_RUNS)) {
    const lite = await PGlite.create(durableOptions({ ...options, ...(run.database ? { database: run.database } : {}) }, NodeFS, (fd) => fs.fsyncSync(fd)));
    if (run.sql) await lite.exec(run.sql);
    await lite.close();
  }
})().then(() => process.exit(0), (error) => { process.stderr.write(String((error && error.stack) || error)); process.exit(1); });
`;

interface ChildRun {
  database?: string;
  sql?: string;
}

/** Runs `runs` on the data directory in the child process; `failure` begins the error thrown when it fails. */
async function inChildProcess(dataDir: string, runs: ChildRun[], failure: string): Promise<void> {
  const child = spawn(process.execPath, ['-e', CHILD_SOURCE], {
    env: {
      ...process.env,
      CNV_PGLITE_PATH: PGLITE_PATHS.pglite,
      CNV_PGLITE_NODEFS_PATH: PGLITE_PATHS.nodefs,
      CNV_PGLITE_OPTIONS: JSON.stringify(pgliteArgs({ dataDir })),
      CNV_PGLITE_RUNS: JSON.stringify(runs),
    },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr = (stderr + chunk).slice(-4000)));
  const code = await new Promise<number | null>((resolve, reject) => {
    child.on('error', reject);
    child.on('close', resolve);
  });
  if (code !== 0) throw new Error(`${failure} (exit code ${code}): ${stderr.trim()}`);
}

/**
 * Creates a new cluster (PostgreSQL's initdb, inside PGlite) in a child process that then exits. Creating a cluster
 * leaves hundreds of megabytes of the creating process's memory in use for good, whichever thread did it (measured:
 * 758 MB resident after opening a new data directory from a worker thread that had ended, against 204 MB for the same
 * directory opened again); a process that exits gives all of it back, so a new store starts as lean as an old one.
 */
async function createCluster(dataDir: string): Promise<void> {
  await inChildProcess(dataDir, [{}], `the embedded database could not be created in ${dataDir}`);
}

/**
 * Freezes other databases of the cluster (`vacuum freeze` in each: template0 and template1, which the service's
 * connection cannot reach; see maintenance.ts) in the child process, with the data directory closed meanwhile: each is
 * opened there on its own (a standalone backend may open template0, which refuses connections under a server).
 */
export async function freezeDatabases(dataDir: string, databases: readonly string[]): Promise<void> {
  const runs = databases.map((database) => ({ database, sql: 'vacuum freeze' }));
  await inChildProcess(dataDir, runs, `the embedded store's databases ${databases.join(', ')} could not be frozen`);
}

/** The error of a store whose thread is gone: every later statement fails with it (db/store-trouble.ts names it). */
function stopped(message: string): Error {
  return Object.assign(new Error(message), { code: STORE_STOPPED_CODE });
}

async function startWorker(options: PgliteOptions): Promise<ProtocolEndpoint> {
  const worker = new Worker(WORKER_SOURCE, {
    eval: true,
    resourceLimits: { maxYoungGenerationSizeMb: PGLITE_WORKER_YOUNG_GENERATION_MB },
    workerData: {
      pglitePath: PGLITE_PATHS.pglite,
      nodefsPath: PGLITE_PATHS.nodefs,
      wasmPath: PGLITE_PATHS.wasm,
      ...(compiledPglite ? { wasmModule: compiledPglite } : {}),
      options: pgliteArgs(options),
    },
  });
  const pending = new Map<number, { resolve(answer: Uint8Array): void; reject(error: Error): void }>();
  let nextId = 1;
  let gone: Error | null = null;
  let onClosed: ((error?: string) => void) | null = null;
  let onStart: { resolve(): void; reject(error: Error): void } | null = null;
  const started = new Promise<void>((resolve, reject) => (onStart = { resolve, reject }));

  const fail = (error: Error) => {
    gone ??= error;
    onStart?.reject(error);
    for (const call of pending.values()) call.reject(error);
    pending.clear();
  };
  worker.on('message', (message: FromWorker) => {
    if (message.type === 'ready') {
      compiledPglite ??= message.wasmModule;
      onStart?.resolve();
    } else if (message.type === 'failed') fail(stopped(`the embedded database could not start: ${message.error}`));
    else if (message.type === 'closed') onClosed?.(message.error);
    else {
      const call = pending.get(message.id);
      pending.delete(message.id);
      if (message.error !== undefined) call?.reject(new Error(message.error));
      else call?.resolve(message.answer!);
    }
  });
  worker.on('error', (error) => fail(error));
  worker.on('exit', (code) => fail(stopped(`the embedded database's thread ended (exit code ${code})`)));
  try {
    await started;
  } catch (error) {
    await worker.terminate();
    throw error;
  }
  onStart = null;

  return {
    exec(messages) {
      if (gone) return Promise.reject(gone);
      const id = nextId++;
      return new Promise<Uint8Array>((resolve, reject) => {
        pending.set(id, { resolve, reject });
        worker.postMessage({ type: 'exec', id, messages });
      });
    },
    async close() {
      if (!gone) {
        const closed = new Promise<string | undefined>((resolve) => (onClosed = resolve));
        worker.postMessage({ type: 'close' });
        const error = await closed;
        if (error) throw new Error(`closing the embedded database failed: ${error}`);
      }
      await worker.terminate();
    },
    async abandon() {
      gone ??= stopped('the embedded database was abandoned');
      await worker.terminate();
    },
  };
}
