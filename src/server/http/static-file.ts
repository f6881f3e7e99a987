/** A built file served from disk: read on first use and again whenever its mtime or size changes, with a strong ETag. */
import { createHash } from 'node:crypto';
import { readFile, stat } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/** A file's bytes and validator. */
export interface FileVersion {
  body: Buffer;
  /** Strong ETag, quoted: a hash of the content. */
  etag: string;
}

/** Serves the current version of one file; null while it does not exist. */
export class StaticFile {
  #cached: { mtimeMs: number; size: number; version: FileVersion } | null = null;

  constructor(readonly path: string) {}

  /** The file's current content and ETag, or null when it is missing. */
  async current(): Promise<FileVersion | null> {
    let info;
    try {
      info = await stat(this.path);
    } catch {
      this.#cached = null;
      return null;
    }
    const cached = this.#cached;
    if (cached && cached.mtimeMs === info.mtimeMs && cached.size === info.size) return cached.version;
    const body = await readFile(this.path);
    const etag = `"${createHash('sha256').update(body).digest('base64url').slice(0, 32)}"`;
    this.#cached = { mtimeMs: info.mtimeMs, size: info.size, version: { body, etag } };
    return this.#cached.version;
  }
}

/** Whether an If-None-Match header names this ETag (a list, `*`, or weak forms of it). */
export function etagMatches(ifNoneMatch: string | undefined, etag: string): boolean {
  if (!ifNoneMatch) return false;
  if (ifNoneMatch.trim() === '*') return true;
  return ifNoneMatch.split(',').some((tag) => tag.trim().replace(/^W\//, '') === etag);
}

/** The package root: the nearest folder above this module with the cnv package.json (src/ in dev, dist/ when built). */
export function packageRoot(from: string = dirname(fileURLToPath(import.meta.url))): string {
  for (let dir = from; ; dir = dirname(dir)) {
    const manifest = join(dir, 'package.json');
    if (existsSync(manifest) && (JSON.parse(readFileSync(manifest, 'utf8')) as { name?: string }).name === 'cnv') return dir;
    if (dirname(dir) === dir) throw new Error(`No cnv package.json above ${from}`);
  }
}
