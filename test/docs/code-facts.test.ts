/**
 * Facts of the docs that one list in the code defines. The settings tables of docs/operations.md and docs/destinations/README.md against the service's own reading of its
 * environment (loadSettings): every variable src/server/settings.ts reads has a row, and every default a row gives as
 * one value is the default: setting the variable to it changes nothing. And the table of `cnv` commands of
 * docs/operations.md against the command line's own list: every command with its usage, and no other. And the agent
 * tools docs/agents.md names against the tools the MCP server lists, and the limits table of docs/limits.md against the
 * constants that set them.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { loadSettings } from '../../src/server/settings';
import { COMMANDS, SERVICE_COMMANDS } from '../../src/cli/commands';
import { TOOLS } from '../../src/server/mcp/tools';
import { DEFAULT_CORRELATION_TTL_SECONDS } from '../../src/protocol/cookies';
import { SNAPSHOT_MAX_BYTES } from '../../src/protocol/collector';
import { SIGNAL_VALUE_MAX } from '../../src/protocol/signals';
import { CUSTOMER_EVENT_ID_MAX, IDENTITY_VALUE_MAX, SIGNATURE_TOLERANCE_SECONDS, TRIGGER_KEY_PATTERN, WEBHOOK_MAX_BYTES } from '../../src/protocol/webhook';
import { LIST_LIMIT_DEFAULT, LIST_LIMIT_MAX } from '../../src/server/http/pagination';
import { EVENTS_LIMIT_DEFAULT, EVENTS_LIMIT_MAX } from '../../src/server/api/events/schemas';
import { CORRELATION_TTL_RANGE } from '../../src/server/api/sites/schemas';
import { PAIRING_WINDOW_MS } from '../../src/server/pairing/pairing';
import { FANOUT_MAX_HOLD_MS, FANOUT_QUIET_MS, MAX_DEFERRED_REPORTS } from '../../src/server/webhook/report-writer';
import { RATE_LIMIT_DEFAULTS } from '../../src/server/settings';

const ROOT = resolve(import.meta.dirname, '../..');
const read = (path: string) => readFileSync(join(ROOT, path), 'utf8');

interface Row {
  page: string;
  names: string[];
  defaults: string[];
}

/** The rows of a page's table under a heading: the variables of the first cell, the code spans of the second. */
function settingRows(page: string, heading: string): Row[] {
  const text = read(page);
  const start = text.indexOf(`\n## ${heading}\n`);
  expect(start, `${page} has a section "## ${heading}"`).toBeGreaterThan(-1);
  const end = text.indexOf('\n## ', start + 1);
  const section = text.slice(start + 1, end === -1 ? undefined : end);
  return section
    .split('\n')
    .filter((line) => /^\| `[A-Z]/.test(line))
    .map((line) => {
      const [first, second] = line.split(' | ').map((cell) => cell.replace(/^\| /, ''));
      const spans = (cell: string) => [...cell.matchAll(/`([^`]+)`/g)].map((m) => m[1]!);
      const names: string[] = [];
      for (const span of spans(first!)) {
        // `CNV_GOOGLE_OAUTH_AUTHORIZE_URL` / `_TOKEN_URL`, `…_CLIENT_ID` / `_SECRET`: the first with its last words
        // (as many as the shorthand has) replaced.
        if (span.startsWith('_') && names.length > 0) {
          const words = names.at(-1)!.split('_');
          const ending = span.slice(1).split('_');
          names.push([...words.slice(0, words.length - ending.length), ...ending].join('_'));
        } else names.push(span);
      }
      return { page, names, defaults: spans(second ?? '') };
    });
}

const ROWS = [...settingRows('docs/operations.md', 'Settings'), ...settingRows('docs/destinations/README.md', 'Settings of the destinations')];

// A data directory of its own, empty, so that no test reads a checkout's .cnv-data/secret.key.
const dataDir = mkdtempSync(join(tmpdir(), 'cnv-settings-doc-'));
afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

describe('the settings tables of the docs', () => {
  it('name every variable the service reads', () => {
    const source = read('src/server/settings.ts');
    const read_ = new Set([...source.matchAll(/\benv\.([A-Z][A-Z0-9_]+)|'((?:CNV|LOG)_[A-Z0-9_]+|PORT|HOST|DATABASE_URL)'/g)].map((m) => (m[1] ?? m[2])!));
    // The OAuth settings are spelled by oauthSettingName: CNV_<PLATFORM>_OAUTH_<PART>.
    for (const platform of ['GOOGLE', 'MICROSOFT', 'LINKEDIN', 'REDDIT']) {
      for (const part of ['CLIENT_ID', 'CLIENT_SECRET', 'AUTHORIZE_URL', 'TOKEN_URL']) read_.add(`CNV_${platform}_OAUTH_${part}`);
    }
    expect(read_.size).toBeGreaterThan(30);
    const documented = new Set(ROWS.flatMap((row) => row.names));
    expect([...read_].filter((name) => !documented.has(name)).sort()).toEqual([]);
  });

  it('give the defaults loadSettings applies', () => {
    const checked: string[] = [];
    const wrong: string[] = [];
    for (const row of ROWS) {
      // Only a row that pairs each variable with one value ("`PORT` | `8787`"); prose defaults are read by a person.
      if (row.defaults.length !== row.names.length) continue;
      row.names.forEach((name, i) => {
        // A value written with a placeholder (`http://HOST:PORT`, `…/token`) is a shape, not a value to set.
        if (/…|[A-Z]{4,}/.test(row.defaults[i]!)) return;
        const base = name === 'CNV_DATA_DIR' ? {} : { CNV_DATA_DIR: dataDir };
        const unset = loadSettings(base);
        let set: ReturnType<typeof loadSettings> | string;
        try {
          set = loadSettings({ ...base, [name]: row.defaults[i]! });
        } catch (error) {
          set = (error as Error).message;
        }
        checked.push(name);
        if (JSON.stringify(set) !== JSON.stringify(unset)) wrong.push(`${row.page}: ${name} = ${row.defaults[i]} is not its default`);
      });
    }
    // The numeric and on/off defaults at least (PORT, the rate limits, the retention days, the API versions).
    expect(checked).toEqual(expect.arrayContaining(['PORT', 'CNV_PG_POOL_SIZE', 'CNV_RATE_LIMIT_COLLECTOR_PER_SITE', 'CNV_IDENTITY_RETENTION_DAYS', 'CNV_LINKEDIN_API_VERSION']));
    expect(wrong).toEqual([]);
  });
});

describe("the cnv commands of docs/operations.md", () => {
  it('are the commands cnv has, each with the usage its help prints', () => {
    const text = read('docs/operations.md');
    const start = text.indexOf('\n## The `cnv` command\n');
    const section = text.slice(start, text.indexOf('\n## ', start + 1));
    // `| \`cnv erase --email … \\| --phone …\` |`: a pipe inside the code span is escaped in the table.
    const rows = [...section.matchAll(/^\| `cnv ((?:[^`\\]|\\.)+)` \|/gm)].map((m) => m[1]!.replaceAll('\\|', '|'));
    const usages = [...COMMANDS, ...SERVICE_COMMANDS].map((command) => command.usage);
    expect(usages.length).toBeGreaterThan(10);
    // Besides the commands: `cnv --version` and `cnv help`, which every command line has.
    expect(rows.filter((row) => !usages.includes(row) && row !== '--version' && row !== 'help')).toEqual([]);
    expect(usages.filter((usage) => !rows.includes(usage))).toEqual([]);
  });
});

describe('the agent tools of docs/agents.md', () => {
  it('are the tools the MCP server lists, in its order, and their number in words', () => {
    const text = read('docs/agents.md');
    // The first sentence under the page's title names them ("… `redeliver_destination`. With them …").
    const paragraph = text.split('\n\n')[1]!;
    const intro = paragraph.slice(0, paragraph.indexOf('`. ') + 1);
    const named = [...intro.matchAll(/`([a-z]+(?:_[a-z]+)+)`/g)].map((m) => m[1]!);
    expect(named).toEqual(TOOLS.map((tool) => tool.name));
    const words = ['', 'one', 'two', 'three', 'four', 'five', 'six', 'seven', 'eight', 'nine', 'ten', 'eleven', 'twelve', 'thirteen', 'fourteen', 'fifteen', 'sixteen', 'seventeen', 'eighteen', 'nineteen', 'twenty'];
    expect(intro).toContain(`with ${words[TOOLS.length]} tools`);
  });
});

describe('the limits table of docs/limits.md', () => {
  it('gives the limits the code sets', () => {
    const rows = read('docs/limits.md').split('\n').filter((line) => line.startsWith('| '));
    const row = (what: string) => rows.find((line) => line.startsWith(`| ${what} |`)) ?? `(no row "${what}")`;
    const n = (value: number) => value.toLocaleString('en-US');
    const r = RATE_LIMIT_DEFAULTS;
    const expected: Array<[string, string]> = [
      ['snapshot body', `| ${SNAPSHOT_MAX_BYTES / 1024} KB `],
      ['signal values', `trimmed, ${SIGNAL_VALUE_MAX} characters`],
      ['webhook body', `| ${WEBHOOK_MAX_BYTES / 1024} KB; \`customer_event_id\` 1 to ${CUSTOMER_EVENT_ID_MAX} characters; identity fields ${IDENTITY_VALUE_MAX} characters`],
      ['trigger key', `1 to ${/\{1,(\d+)\}/.exec(TRIGGER_KEY_PATTERN.source)![1]} characters of \`[A-Za-z0-9_-]\``],
      ['webhook signature age', `| ${SIGNATURE_TOLERANCE_SECONDS} s, past or future`],
      ['events of a burst of reports', `(${FANOUT_QUIET_MS} ms after its last queued batch; after ${FANOUT_MAX_HOLD_MS / 1000} s, between its batches); up to ${n(MAX_DEFERRED_REPORTS)} reports waiting`],
      ['pairing window', `up to ${PAIRING_WINDOW_MS / 1000} s after its report`],
      ['snapshot retention', `| ${loadSettings({ CNV_DATA_DIR: dataDir }).snapshotRetentionDays} days after the last write`],
      ['lists', `\`limit\` default ${LIST_LIMIT_DEFAULT}, max ${LIST_LIMIT_MAX}; events default ${EVENTS_LIMIT_DEFAULT}, max ${EVENTS_LIMIT_MAX}`],
      ['correlation cookie', `${n(CORRELATION_TTL_RANGE.min)} to ${n(CORRELATION_TTL_RANGE.max)} (default ${n(DEFAULT_CORRELATION_TTL_SECONDS)})`],
      ['public endpoints', `collector ${n(r.collectorPerAddress!)} and ${n(r.collectorPerSite!)}, webhook bridge ${n(r.webhookPerAddress!)} and ${n(r.webhookPerSite!)}`],
    ];
    expect(expected.filter(([what, phrase]) => !row(what).includes(phrase)).map(([what, phrase]) => `${what}: "${phrase}" not in ${row(what).slice(0, 120)}`)).toEqual([]);
  });
});
