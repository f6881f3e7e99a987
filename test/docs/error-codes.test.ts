/**
 * The error table of docs/api.md lists every error code the service's source can answer with a status of its own: each
 * `new ApiError(status, type, 'code', …)`, each schema's `errorCode`, and the codes answered on the socket before a
 * request reaches Fastify (`[431, 'headers_too_large', …]`). A new code without a row fails here, and so does a row
 * whose code or type the source no longer spells (a code renamed or removed).
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = resolve(import.meta.dirname, '../..');

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return entry.name.endsWith('.ts') ? [path] : [];
  });
}

const PATTERNS = [
  /new ApiError\(\s*\d{3},\s*'[a-z_]+',\s*'([a-z_]+)'/g,
  /errorCode: '([a-z_]+)'/g,
  /\[\s*\d{3},\s*'([a-z_]+)',\s*'[^']*'\s*\]/g,
  /answerOnSocket\([^,]+,\s*\d{3},\s*'([a-z_]+)'/g,
];

describe('the error codes of docs/api.md', () => {
  it('has a row for every code the service answers', () => {
    const codes = new Set<string>();
    for (const file of sourceFiles(join(ROOT, 'src/server'))) {
      const text = readFileSync(file, 'utf8');
      for (const pattern of PATTERNS) for (const match of text.matchAll(pattern)) codes.add(match[1]!);
    }
    // The ones the brief of this test names must be found, or the patterns no longer read the source.
    for (const code of ['route_not_found', 'method_not_allowed', 'path_too_long', 'invalid_path', 'invalid_request', 'headers_too_large', 'parameter_unsupported']) {
      expect(codes, code).toContain(code);
    }
    const doc = readFileSync(join(ROOT, 'docs/api.md'), 'utf8');
    const section = doc.slice(doc.indexOf('\n## Errors'), doc.indexOf('\n## ', doc.indexOf('\n## Errors') + 1));
    const rows = section.split('\n').filter((line) => /^\| \d{3}/.test(line));
    const listed = new Set(rows.flatMap((row) => [...row.split('|')[3]!.matchAll(/`([a-z_]+)`/g)].map((m) => m[1]!)));
    expect([...codes].filter((code) => !listed.has(code)).sort()).toEqual([]);
  });

  it('lists no code and no type the service never answers with', () => {
    const source = sourceFiles(join(ROOT, 'src/server')).map((file) => readFileSync(file, 'utf8')).join('\n');
    const doc = readFileSync(join(ROOT, 'docs/api.md'), 'utf8');
    const section = doc.slice(doc.indexOf('\n## Errors'), doc.indexOf('\n## ', doc.indexOf('\n## Errors') + 1));
    const rows = section.split('\n').filter((line) => /^\| \d{3}/.test(line));
    expect(rows.length).toBeGreaterThan(30);
    const named = rows.flatMap((row) => [2, 3].flatMap((cell) => [...row.split('|')[cell]!.matchAll(/`([a-z_]+)`/g)].map((m) => m[1]!)));
    // A code or type the source spells nowhere as a string (`'flow_live'`) is one no answer carries.
    expect([...new Set(named)].filter((name) => !source.includes(`'${name}'`)).sort()).toEqual([]);
  });
});
