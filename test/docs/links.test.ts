/**
 * Every relative link and every #anchor in README.md, ARCHITECTURE.md and docs/**\/*.md resolves: the file (or folder)
 * exists, and the anchor is a heading of the target page under GitHub's slug rules (github-slugger, the package GitHub's
 * renderer follows: lower-cased text of the heading, punctuation dropped, spaces to hyphens, repeats numbered -1, -2…).
 * Every file a page names in a code span (`src/server/db/keyset.ts`, `collector/sql.ts`, `e2e/support/axe.ts`) exists,
 * and docs/testing.md's table of browser specs has a row for every spec in e2e/.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import GithubSlugger from 'github-slugger';
import { describe, expect, it } from 'vitest';

const ROOT = resolve(import.meta.dirname, '../..');

function markdownFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return markdownFiles(path);
    return entry.name.endsWith('.md') ? [path] : [];
  });
}

const FILES = [join(ROOT, 'README.md'), join(ROOT, 'ARCHITECTURE.md'), ...markdownFiles(join(ROOT, 'docs'))];

/** The page's lines outside fenced code blocks (links and headings inside code are neither). */
function outsideFences(text: string): Array<{ line: number; raw: string }> {
  const out: Array<{ line: number; raw: string }> = [];
  let fence: string | null = null;
  text.split('\n').forEach((raw, index) => {
    const marker = /^\s*(`{3,}|~{3,})/.exec(raw);
    if (marker) {
      if (fence === null) fence = marker[1]![0]!;
      else if (marker[1]![0] === fence) fence = null;
      return;
    }
    if (fence === null) out.push({ line: index + 1, raw });
  });
  return out;
}

/** The prose lines of a page, with inline code spans blanked (links inside code are not links). */
function proseLines(text: string): Array<{ line: number; text: string }> {
  return outsideFences(text).map(({ line, raw }) => ({ line, text: raw.replace(/(`+)[^`]*?\1/g, (m) => ' '.repeat(m.length)) }));
}

/** The heading text GitHub renders: links reduced to their text, code marks and emphasis removed. */
function headingText(raw: string): string {
  return raw
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/`/g, '')
    .replace(/(\*\*|__|\*)(.+?)\1/g, '$2')
    .replace(/<[^>]+>/g, '')
    .trim();
}

const anchorCache = new Map<string, Set<string>>();
/** The anchors of a Markdown file: its headings' slugs (plus explicit `<a id>` / `<a name>`). */
function anchorsOf(file: string): Set<string> {
  let anchors = anchorCache.get(file);
  if (anchors) return anchors;
  const slugger = new GithubSlugger();
  anchors = new Set();
  for (const { raw } of outsideFences(readFileSync(file, 'utf8'))) {
    const heading = /^ {0,3}#{1,6}\s+(.*?)\s*#*\s*$/.exec(raw);
    if (heading) anchors.add(slugger.slug(headingText(heading[1]!)));
    for (const named of raw.matchAll(/<a\s+(?:id|name)="([^"]+)"/g)) anchors.add(named[1]!);
  }
  anchorCache.set(file, anchors);
  return anchors;
}

interface Link {
  file: string;
  line: number;
  target: string;
}

function linksOf(file: string): Link[] {
  const links: Link[] = [];
  for (const { line, text } of proseLines(readFileSync(file, 'utf8'))) {
    for (const m of text.matchAll(/!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)) links.push({ file, line, target: m[1]! });
    for (const m of text.matchAll(/<(?:a|img)\s[^>]*(?:href|src)="([^"]+)"/g)) links.push({ file, line, target: m[1]! });
  }
  return links;
}

/** Why a link does not resolve, or null when it does. External links (a scheme, or `//`) are not checked here. */
function problem(link: Link): string | null {
  const { target } = link;
  if (/^[a-z][a-z0-9+.-]*:/i.test(target) || target.startsWith('//')) return null;
  const [pathPart, anchor] = target.split('#', 2) as [string, string | undefined];
  const path = pathPart === '' ? link.file : resolve(dirname(link.file), decodeURIComponent(pathPart));
  if (!path.startsWith(ROOT)) return `${target} points outside the repository`;
  if (!existsSync(path)) return `${target}: no such file ${relative(ROOT, path)}`;
  if (anchor === undefined) return null;
  if (statSync(path).isDirectory() || !path.endsWith('.md')) return `${target}: an anchor into something that is not a Markdown page`;
  if (!anchorsOf(path).has(decodeURIComponent(anchor))) return `${target}: no heading with the anchor #${anchor} in ${relative(ROOT, path)}`;
  return null;
}

/** Every file of the repository (its path from the root), outside node_modules, dist and what tests write. */
function repositoryFiles(dir = ROOT): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    if (['node_modules', 'dist', 'test-results', '.git', 'playwright-report'].includes(entry.name)) return [];
    const path = join(dir, entry.name);
    return entry.isDirectory() ? repositoryFiles(path) : [relative(ROOT, path)];
  });
}

/** A code span that names a file of the repository: a path or a name ending in a source, page or data extension. */
const FILE_NAME = /^(?:[\w.-]+\/)*[\w.-]+\.(?:ts|mjs|cjs|js|json|md|png)$/;

/**
 * Why a file named in a page's code span does not exist, or null when it does. A path is found from the repository's
 * root, from `src/` or `src/server/` (ARCHITECTURE.md names `collector/sql.ts`, `loader/landing.ts`), or as the end of
 * a path in the repository (`fakes/meta.ts`); a bare name (`keyset.ts`) as the name of a file, or, for what the build
 * or the service writes (`loader.js`, `demo-store.json`), as a name the build or the source spells out.
 */
function missingFile(name: string, files: readonly string[], written: string): string | null {
  if (name.startsWith('../')) return null; // beside the repository (../shared/DESIGN.md)
  if ([name, `src/${name}`, `src/server/${name}`].some((path) => existsSync(join(ROOT, path)))) return null;
  if (files.some((file) => file.endsWith(`/${name}`))) return null;
  if (!name.includes('/') && written.includes(name)) return null;
  return `${name}: no such file`;
}

describe('documentation names files that exist', () => {
  const files = repositoryFiles();
  const written = [readFileSync(join(ROOT, 'build.mjs'), 'utf8'), ...files.filter((f) => f.startsWith('src/')).map((f) => readFileSync(join(ROOT, f), 'utf8'))].join('\n');
  // docs/benchmarks.md names the results its runs write (bench/results/…), which no checkout holds.
  const pages = FILES.filter((file) => !file.endsWith('docs/benchmarks.md'));

  it('finds file names in the pages', () => {
    const named = pages.flatMap((file) => [...readFileSync(file, 'utf8').matchAll(/`([^`\s]+)`/g)].filter((m) => FILE_NAME.test(m[1]!)));
    expect(named.length).toBeGreaterThan(150);
    // A name that is no file must be found missing, or the check finds everything.
    expect(missingFile('src/server/db/no-such-module.ts', files, written)).not.toBeNull();
    expect(missingFile('collector/no-such-module.ts', files, written)).not.toBeNull();
  });

  it.each(pages.map((file) => [relative(ROOT, file), file] as const))('%s: every file named in a code span exists', (_name, file) => {
    const missing = readFileSync(file, 'utf8')
      .split('\n')
      .flatMap((text, index) =>
        [...text.matchAll(/`([^`\s]+)`/g)]
          .map((m) => m[1]!)
          .filter((name) => FILE_NAME.test(name))
          .map((name) => missingFile(name, files, written))
          .filter((why) => why !== null)
          .map((why) => `${relative(ROOT, file)}:${index + 1}: ${why}`),
      );
    expect(missing).toEqual([]);
  });

  it("ARCHITECTURE.md names every folder of src/, of the service, of its REST API and of its destinations", () => {
    const architecture = readFileSync(join(ROOT, 'ARCHITECTURE.md'), 'utf8');
    const folders = (dir: string) =>
      readdirSync(join(ROOT, dir), { withFileTypes: true })
        .filter((entry) => entry.isDirectory())
        .map((entry) => `${dir}/${entry.name}`);
    const all = [...folders('src'), ...folders('src/server'), ...folders('src/server/api'), ...folders('src/server/destinations')];
    expect(all.length).toBeGreaterThan(30);
    // Named as a path or in one (`src/loader/`, `collector/`, `meta/`, `api/<resource>/`) or, for a REST resource, by
    // name in the api/<resource>/ row (`sites`).
    const named = (folder: string) => {
      const name = folder.slice(folder.lastIndexOf('/') + 1);
      return new RegExp(`\`(?:[\\w<>.-]+/)*${name}/[^\`\\s]*\``).test(architecture) || (folder.startsWith('src/server/api/') && architecture.includes(`\`${name}\``));
    };
    expect(all.filter((folder) => !named(folder))).toEqual([]);
  });

  it('docs/README.md, the index, links every page of docs/', () => {
    const index = join(ROOT, 'docs/README.md');
    const linked = new Set(linksOf(index).map((link) => resolve(dirname(index), link.target.split('#')[0]!)));
    const pages = markdownFiles(join(ROOT, 'docs')).filter((page) => page !== index);
    expect(pages.length).toBeGreaterThan(20);
    expect(pages.filter((page) => !linked.has(page)).map((page) => relative(ROOT, page))).toEqual([]);
  });

  it("docs/testing.md's table of browser specs has a row for every spec of e2e/", () => {
    const testing = readFileSync(join(ROOT, 'docs/testing.md'), 'utf8');
    const rows = new Set([...testing.matchAll(/^\| `([\w-]+)` \|/gm)].map((m) => m[1]!));
    const specs = readdirSync(join(ROOT, 'e2e')).filter((name) => name.endsWith('.spec.ts')).map((name) => name.slice(0, -'.spec.ts'.length));
    expect(specs.length).toBeGreaterThan(10);
    expect(specs.filter((spec) => !rows.has(spec)).sort()).toEqual([]);
    expect([...rows].filter((row) => !specs.includes(row)).sort()).toEqual([]);
  });
});

describe('documentation links', () => {
  it('finds the pages and their links', () => {
    expect(FILES.length).toBeGreaterThan(15);
    expect(FILES.flatMap(linksOf).length).toBeGreaterThan(50);
  });

  it.each(FILES.map((file) => [relative(ROOT, file), file] as const))('%s: every relative link and anchor resolves', (_name, file) => {
    const broken = linksOf(file)
      .map((link) => ({ link, why: problem(link) }))
      .filter((entry) => entry.why !== null)
      .map(({ link, why }) => `${relative(ROOT, link.file)}:${link.line}: ${why}`);
    expect(broken).toEqual([]);
  });

  it('follows GitHub heading slugs (the rules the anchors rely on)', () => {
    const slugger = new GithubSlugger();
    expect(slugger.slug(headingText('Reporting signups from your backend (`cnv/client`)'))).toBe('reporting-signups-from-your-backend-cnvclient');
    expect(slugger.slug(headingText('`window.__service`'))).toBe('window__service');
    expect(slugger.slug(headingText('Destinations: what to set up on each platform'))).toBe('destinations-what-to-set-up-on-each-platform');
    expect(slugger.slug(headingText('Settings'))).toBe('settings');
    expect(slugger.slug(headingText('Settings'))).toBe('settings-1');
  });

  it('keeps the README short, with both commands at the top', () => {
    const readme = readFileSync(join(ROOT, 'README.md'), 'utf8').split('\n');
    expect(readme.length).toBeLessThan(250);
    const top = readme.slice(0, 40).join('\n');
    expect(top).toContain('npm install && npm start');
    expect(top).toContain('npm test');
  });
});
