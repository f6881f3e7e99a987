/**
 * What a site owner copies from the docs is what the service prints and what the loader reads: the install snippet of
 * README.md and docs/loader.md, the tag-manager snippet of docs/loader.md (the dashboard's, plus one commented line),
 * the attributes and cookies of docs/loader.md's tables, and the console warning docs/troubleshooting.md tells them to
 * look for. A renamed attribute, cookie or message without the docs following fails here, and so does a loader size
 * of docs/loader.md or docs/limits.md that is no longer what build.mjs measures and enforces.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CLICK_COOKIE, CORRELATION_COOKIE } from '../../src/protocol/cookies';
import { installSnippet } from '../../src/protocol/install';
import { tagManagerSnippetOf } from '../../src/server/dashboard/pages/sites';
import { ensureLoaderBuilt } from '../../e2e/support/build-loader';

const ROOT = resolve(import.meta.dirname, '../..');
const read = (path: string) => readFileSync(join(ROOT, path), 'utf8');
const LOADER_MD = read('docs/loader.md');
const README = read('README.md');
const TROUBLESHOOTING = read('docs/troubleshooting.md');

/** The source of the loader, its optional scripts and the protocol (where the attributes are named and read). */
function loaderSource(): string {
  return ['src/loader', 'src/loader-forms', 'src/protocol']
    .flatMap((dir) => readdirSync(join(ROOT, dir)).map((name) => read(join(dir, name))))
    .join('\n');
}

/** The `html` fenced blocks of a page. */
function htmlBlocks(text: string): string[] {
  return [...text.matchAll(/^\s*```html\n([\s\S]*?)^\s*```/gm)].map((match) => match[1]!.replace(/^ {3}/gm, '').trim());
}

/** The rows of the Markdown table that follows `heading` (first cell of each row, without its backticks). */
function firstCells(text: string, heading: string): string[] {
  const section = text.slice(text.indexOf(heading));
  const table = section.slice(section.indexOf('\n|'));
  const rows = table.split('\n').slice(1);
  const end = rows.findIndex((row) => !row.startsWith('|'));
  return rows
    .slice(2, end)
    .map((row) => row.split(/(?<!\\)\|/)[1]!.trim())
    .map((cell) => /^`([^`]+)`/.exec(cell)?.[1] ?? cell);
}

const SNIPPET = installSnippet('https://SERVICE_HOST', 'SITE_KEY');

describe('the install snippets of the docs', () => {
  it('README.md and docs/loader.md show the install snippet the service prints', () => {
    expect(htmlBlocks(README)).toContain(SNIPPET);
    expect(htmlBlocks(LOADER_MD)).toContain(SNIPPET);
  });

  it("docs/loader.md's tag-manager snippet is the dashboard's, with the consent line commented out", () => {
    const block = htmlBlocks(LOADER_MD).find((html) => html.includes('createElement'));
    expect(block).toBeDefined();
    const withoutComment = block!
      .split('\n')
      .filter((line) => !line.trim().startsWith('//'))
      .join('\n');
    expect(withoutComment).toBe(tagManagerSnippetOf('https://SERVICE_HOST', 'SITE_KEY'));
    // The commented line sets an attribute the loader reads.
    expect(block).toContain("s.setAttribute('data-consent-required', '')");
  });
});

describe("docs/loader.md's tables", () => {
  const source = loaderSource();

  it('every attribute of the Attributes table is read by the loader', () => {
    const attributes = firstCells(LOADER_MD, '## Attributes').map((cell) => /^(data-[a-z-]+)/.exec(cell)?.[1]);
    expect(attributes).toEqual([
      'data-site-key',
      'data-api',
      'data-consent-required',
      'data-url-passthrough',
      'data-linker',
      'data-service-form',
      'data-service-signup-intent',
    ]);
    for (const attribute of attributes) expect(source, attribute).toContain(`'${attribute}'`);
  });

  it('the cookies table names the protocol cookies', () => {
    expect(firstCells(LOADER_MD, '## Cookies and storage')).toEqual([CLICK_COOKIE, CORRELATION_COOKIE]);
  });

  it("every member of the window.__service table is one the loader's API has", () => {
    const api = read('src/loader/api.ts');
    const members = firstCells(LOADER_MD, '## `window.__service`').map((cell) => /^(\w+)/.exec(cell)![1]!);
    expect(members).toEqual(['captureSaasSignupIntent', 'consent', 'ready', 'q', 'siteKey']);
    for (const member of members) expect(api, member).toMatch(new RegExp(`\\b${member}\\??[:(]`));
  });
});

describe("docs/loader.md's queue stub", () => {
  it('queues exactly the methods the loader replays (those of the window.__service table)', () => {
    const stub = htmlBlocks(LOADER_MD).find((html) => html.includes('s.q = s.q || []'));
    expect(stub).toBeDefined();
    expect(stub).toContain("['captureSaasSignupIntent', 'consent'].forEach");
    expect(stub).toContain('w.__service = w.__service || {}');
    // The stub queues; ready is the loader's (a stub's own is replaced: test/loader/boot.test.ts).
    expect(stub).not.toContain('ready');
  });
});

describe('docs/troubleshooting.md', () => {
  it("quotes the loader's console warning as the loader writes it", () => {
    const quoted = /one console warning `([^`]+)`/.exec(TROUBLESHOOTING)?.[1];
    expect(quoted).toBeDefined();
    expect(read('src/loader/start.ts')).toContain(`console.warn('${quoted}')`);
  });
});

describe('the loader sizes the docs give', () => {
  it("are build.mjs's budgets and what the build measures now (docs/loader.md's table, docs/limits.md)", async () => {
    ensureLoaderBuilt(ROOT);
    const sizes = JSON.parse(read('dist/loader-size.json')) as Record<string, { raw: number; gzip: number; brotli: number }>;
    // build.mjs is plain JavaScript: imported by URL, typed here by what the test reads.
    const { LOADER_BUNDLES } = (await import(new URL('../../build.mjs', import.meta.url).href)) as {
      LOADER_BUNDLES: Record<string, { budget: number; target?: number }>;
    };
    const bytes = (n: number) => `${n.toLocaleString('en-US')} B`;
    const wrong: string[] = [];
    const same = (where: string, documented: string | undefined, actual: string) => {
      if (documented !== actual) wrong.push(`${where}: the docs say ${documented}, the build ${actual}`);
    };
    expect(Object.keys(LOADER_BUNDLES).length).toBe(4);
    for (const [file, { budget, target }] of Object.entries(LOADER_BUNDLES)) {
      // | bundle | loaded | raw | gzip | brotli | build fails above (gzip) |
      const row = LOADER_MD.split('\n').find((line) => line.startsWith(`| \`${file}\``));
      expect(row, `docs/loader.md has a size row for ${file}`).toBeDefined();
      const cells = row!.split('|').map((cell) => cell.trim());
      same(`docs/loader.md ${file} raw`, cells[3], bytes(sizes[file]!.raw));
      same(`docs/loader.md ${file} gzip`, cells[4], bytes(sizes[file]!.gzip));
      same(`docs/loader.md ${file} brotli`, cells[5], bytes(sizes[file]!.brotli));
      same(`docs/loader.md ${file} budget`, cells[6], target ? `${bytes(budget)} (target ${bytes(target)})` : bytes(budget));
    }
    const limits = read('docs/limits.md').split('\n').find((line) => line.startsWith('| loader size |')) ?? '';
    const lean = LOADER_BUNDLES['site-loader.js']!;
    const expected = [
      `build fails above ${bytes(lean.budget)} gzip, target ${bytes(lean.target!)} (now ${bytes(sizes['site-loader.js']!.gzip)})`,
      `full core \`loader.js\` ${bytes(LOADER_BUNDLES['loader.js']!.budget)}, measured without a config (now ${bytes(sizes['loader.js']!.gzip)};`,
      `\`loader-links.js\` ${bytes(LOADER_BUNDLES['loader-links.js']!.budget)};`,
      `\`loader-forms.js\` ${bytes(LOADER_BUNDLES['loader-forms.js']!.budget)} (`,
    ];
    for (const phrase of expected) if (!limits.includes(phrase)) wrong.push(`docs/limits.md does not say: ${phrase}`);
    expect(wrong).toEqual([]);
  });
});
