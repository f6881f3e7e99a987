/**
 * The browser's module loader as the happy-dom tests see it (it stands in for src/loader/import-module.ts, through
 * test/support/module-loader.setup.ts): an import of `/loader-links.js` or `/loader-forms.js` resolves the module as
 * its entry builds it, fails, or never settles, as the test's page asked; every URL imported is recorded.
 */
import { guard } from '../../src/loader/guard';
import { startLinks } from '../../src/loader/links';
import { formsRunner } from '../../src/loader-forms/submissions';

/**
 * What an import of an optional script does: `run` (the module loads and its default export is what its entry,
 * src/loader/links-script.ts or src/loader-forms/script.ts, exports), `fail` (the import rejects: a network error or a
 * CSP refusal), or `hang` (it never arrives).
 */
export type OptionalScriptReply = 'run' | 'fail' | 'hang';

/** Each optional script's module as its entry builds it (a fresh one per page, as a new page would load it). */
const ENTRIES: Record<string, () => { default: unknown }> = {
  'loader-links.js': () => ({ default: guard(startLinks) }),
  'loader-forms.js': () => ({ default: guard(formsRunner()) }),
};

interface OptionalModules {
  reply: OptionalScriptReply;
  /** The URLs imported, in order. */
  imported: string[];
}

/**
 * One record for the whole process, kept on globalThis: the unit tests share a worker's module cache (isolate: false),
 * and the stand-in that the loader reaches through the mock may be another instance of this module than the test's.
 */
const shared = globalThis as typeof globalThis & { __cnvOptionalModules?: OptionalModules };
export const optionalModules: OptionalModules = (shared.__cnvOptionalModules ??= { reply: 'run', imported: [] });

/** The stand-in for importModule. */
export async function importModule(url: string): Promise<{ default?: unknown }> {
  optionalModules.imported.push(url);
  const entry = ENTRIES[new URL(url).pathname.slice(1)];
  if (!entry || optionalModules.reply === 'fail') throw new TypeError(`Failed to fetch dynamically imported module: ${url}`);
  if (optionalModules.reply === 'hang') return new Promise(() => {});
  return entry();
}
