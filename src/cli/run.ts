/**
 * The `cnv` operator command: accounts, API keys, sites and webhook secrets, straight on the service's store (the
 * same DATABASE_URL / CNV_DATA_DIR settings). `runCli` is the whole command, callable in process by tests.
 */
import { parseArgs } from 'node:util';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Database } from '../server/db/db';
import { loadSettings, type Settings } from '../server/settings';
import { openStore } from '../server/db/open-store';
import { recordedPublicUrl } from '../server/db/service-facts';
import { ApiError } from '../server/http/errors';
import { COMMANDS, CommandLineError, DEFAULT_API_URL, HELP, SERVICE_COMMANDS, type CommandContext } from './commands';
import { explainStoreError } from '../server/start-errors';
import { packageRoot } from '../server/http/static-file';

import { terminalSafe, type Output } from './output';
import { secretKeyProblem } from './secret-key';

export type { Output } from './output';

export interface CliIo {
  out: Output;
  err: Output;
  /** An open database to use (tests); otherwise the store the settings name is opened and closed. */
  db?: Database;
  /** Environment for the settings (default process.env). */
  env?: NodeJS.ProcessEnv;
}

/** Exit codes: 0 done, 1 the command failed, 2 the command line is wrong. */
export const EXIT_OK = 0;
export const EXIT_FAILED = 1;
export const EXIT_USAGE = 2;


/** What the help of a command shows. */
type Described = Pick<(typeof COMMANDS)[number], 'name' | 'usage' | 'summary' | 'options'>;

/** The usage of one command: what it does, its synopsis and each option. */
export function commandHelp(command: Described): string {
  const options = [...Object.entries(command.options), ['help', 'Show this help.'] as const];
  const width = Math.max(...options.map(([name]) => name.length));
  return (
    `cnv ${command.name}: ${command.summary}\n\nUsage:\n  cnv ${command.usage}\n\nOptions:\n` +
    options.map(([name, text]) => `  --${name.padEnd(width)}  ${text}`).join('\n') +
    '\n'
  );
}

/** `cnv <command…> --help` (or `cnv help <command…>`): that command's usage, or a group's commands; null when it names none. */
function helpFor(words: readonly string[]): string | null {
  const [first, second] = words;
  const all: readonly Described[] = [...COMMANDS, ...SERVICE_COMMANDS];
  const command = all.find((c) => c.name === `${first} ${second}`) ?? all.find((c) => c.name === first);
  if (command) return commandHelp(command);
  const group = all.filter((c) => c.name.startsWith(`${first} `));
  if (group.length === 0) return null;
  return `cnv ${first}: ${group.length} commands.\n\n${group.map((c) => `  cnv ${c.usage}\n      ${c.summary}`).join('\n')}\n\nRun 'cnv <command> --help' for a command's options.\n`;
}

/** This cnv's version, from its package.json ('unknown' where none is found). */
function cnvVersion(): string {
  try {
    return (JSON.parse(readFileSync(join(packageRoot(), 'package.json'), 'utf8')) as { version?: string }).version ?? 'unknown';
  } catch {
    return 'unknown';
  }
}

/**
 * The base URL the links and snippets cnv prints carry: the operator's own settings when they name the address
 * (CNV_PUBLIC_URL, PORT or HOST), else the one the service recorded in the store when it last started, else the default
 * (unconfirmed: the commands that print a link say so).
 */
async function publicUrlOf(env: NodeJS.ProcessEnv, settings: Settings, db: Database): Promise<{ url: string; confirmed: boolean }> {
  if (env.CNV_PUBLIC_URL || env.PORT || env.HOST) return { url: settings.publicUrl, confirmed: true };
  const recorded = await recordedPublicUrl(db);
  return recorded ? { url: recorded, confirmed: true } : { url: settings.publicUrl, confirmed: false };
}

/** Runs `cnv <argv…>` and returns the exit code. Never throws for a user mistake. */
export async function runCli(argv: readonly string[], given: CliIo): Promise<number> {
  // Names and labels that accounts chose reach the operator's terminal: their control characters are shown, not obeyed.
  const io: CliIo = { ...given, out: terminalSafe(given.out), err: terminalSafe(given.err) };
  const [first, second] = argv;
  if ((first === '--version' || first === '-v' || first === 'version') && argv.length === 1) {
    io.out.write(`cnv ${cnvVersion()}\n`);
    return EXIT_OK;
  }
  if (first === undefined || first === '--help' || first === '-h' || (first === 'help' && argv.length === 1)) {
    (first === undefined ? io.err : io.out).write(HELP);
    return first === undefined ? EXIT_USAGE : EXIT_OK;
  }
  if (first === 'help' || argv.includes('--help') || argv.includes('-h')) {
    const words = (first === 'help' ? argv.slice(1) : argv).filter((word) => !word.startsWith('-'));
    const help = helpFor(words);
    if (help === null) {
      io.err.write(`cnv: unknown command '${words.join(' ')}'. Run 'cnv help' for the list of commands.\n`);
      return EXIT_USAGE;
    }
    io.out.write(help);
    return EXIT_OK;
  }
  const name = second === undefined || second.startsWith('-') ? first : `${first} ${second}`;
  const storeCommand = COMMANDS.find((c) => c.name === name);
  const serviceCommand = storeCommand ? undefined : SERVICE_COMMANDS.find((c) => c.name === name);
  const command = storeCommand ?? serviceCommand;
  if (!command) {
    const group = COMMANDS.filter((c) => c.name.startsWith(`${first} `)).map((c) => `cnv ${c.name}`);
    // A group named alone (`cnv keys`): its commands, as `cnv keys --help` shows them, and a usage error.
    const groupHelp = second === undefined || second.startsWith('-') ? helpFor([first]) : null;
    if (group.length > 0 && groupHelp !== null) {
      io.err.write(`cnv ${first} needs one of its commands:\n\n${groupHelp}`);
      return EXIT_USAGE;
    }
    io.err.write(
      group.length > 0
        ? `cnv: unknown command 'cnv ${argv.slice(0, 2).join(' ')}'. Did you mean: ${group.join(', ')}?\n`
        : `cnv: unknown command '${first}'. Run 'cnv help' for the list of commands.\n`,
    );
    return EXIT_USAGE;
  }
  let values: Record<string, string | boolean | undefined>;
  try {
    const parsed = parseArgs({
      args: argv.slice(command.name.split(' ').length) as string[],
      options: Object.fromEntries(Object.keys(command.options).map((key) => [key, { type: 'string' as const }])),
      allowPositionals: false,
      strict: true,
      tokens: true,
    });
    // An option given twice is a mistake (which one was meant?), not a silent override by the last.
    const given = new Set<string>();
    for (const token of parsed.tokens) {
      if (token.kind !== 'option') continue;
      if (given.has(token.name)) throw new Error(`Option '--${token.name}' is given twice: give it once.`);
      given.add(token.name);
    }
    values = parsed.values as Record<string, string | undefined>;
  } catch (error) {
    io.err.write(`cnv ${command.name}: ${(error as Error).message}\nUsage: cnv ${command.usage}\n`);
    return EXIT_USAGE;
  }

  const missing = storeCommand?.required?.find((option) => values[option] === undefined);
  if (missing !== undefined) {
    // Before the store is opened: a command line missing a value is exit 2 whether or not the store is free.
    io.err.write(`cnv ${command.name}: --${missing} is required.\nUsage: cnv ${command.usage}\n`);
    return EXIT_USAGE;
  }
  try {
    storeCommand?.check?.(values as Record<string, string | undefined>);
  } catch (error) {
    // A value the command would refuse anyway: exit 2 now, whether or not the store is free.
    if (error instanceof CommandLineError) {
      io.err.write(`cnv ${command.name}: ${error.message}\nUsage: cnv ${command.usage}\n`);
      return EXIT_USAGE;
    }
    if (error instanceof ApiError && error.status === 400) {
      io.err.write(`cnv ${command.name}: ${error.message}\n`);
      return EXIT_USAGE;
    }
    throw error;
  }

  if (serviceCommand) {
    // Beside the service: no settings of the store, no store opened (the running service may hold the embedded one).
    try {
      await serviceCommand.run({ env: io.env ?? process.env, err: io.err, options: values as Record<string, string | undefined> });
      return EXIT_OK;
    } catch (error) {
      const usage = error instanceof CommandLineError ? `\nUsage: cnv ${command.usage}` : '';
      io.err.write(`cnv ${command.name}: ${error instanceof Error ? error.message : String(error)}${usage}\n`);
      return error instanceof CommandLineError ? EXIT_USAGE : EXIT_FAILED;
    }
  }

  const env = io.env ?? process.env;
  if (storeCommand?.runWithService && env.CNV_API_KEY?.trim() && !io.db) {
    // Beside a running service that holds the embedded store: ask the service instead of opening the store.
    if (values.account !== undefined) {
      io.err.write(`cnv ${command.name}: --account is not taken with CNV_API_KEY set: the key names the account (unset CNV_API_KEY to choose one on the store).\nUsage: cnv ${command.usage}\n`);
      return EXIT_USAGE;
    }
    try {
      await storeCommand.runWithService({ env, err: io.err, out: io.out, options: values as Record<string, string | undefined> });
      return EXIT_OK;
    } catch (error) {
      io.err.write(`cnv ${command.name}: ${error instanceof Error ? error.message : String(error)}\n`);
      return error instanceof CommandLineError ? EXIT_USAGE : EXIT_FAILED;
    }
  }

  let settings: Settings;
  try {
    settings = loadSettings(env);
  } catch (error) {
    io.err.write(`cnv: ${(error as Error).message}\n`);
    return EXIT_FAILED;
  }
  // Before the store is opened (and before a key file could be made): a command that needs the service's key.
  const keyProblem = storeCommand!.usesSecretKey ? secretKeyProblem(settings, command.name) : null;
  if (keyProblem) {
    io.err.write(`cnv ${command.name}: ${keyProblem}\n`);
    return EXIT_FAILED;
  }
  let store: { db: Database; close(): Promise<void>; newerMigrations?: number[] } | undefined;
  // An embedded store that does not exist yet is created by the open: said, since a mistyped CNV_DATA_DIR would
  // otherwise answer 'No accounts.' as if the data were gone.
  const newStore = !io.db && !settings.databaseUrl && !existsSync(join(settings.dataDir, 'PG_VERSION'));
  try {
    store = io.db
      ? { db: io.db, close: async () => undefined }
      : await openStore(settings, 'the cnv command').catch((error: unknown) => {
          const explained = explainStoreError(error, settings) as Error;
          // The running service holds the embedded store: this command can ask it instead.
          if (storeCommand!.runWithService && /is in use by/.test(explained.message)) {
            throw new Error(`${explained.message}\nWhile the service runs, set CNV_API_KEY (and CNV_API_URL if it is not ${DEFAULT_API_URL}) and run 'cnv ${command.name}' again: the service does it.`);
          }
          throw explained;
        });
    if (newStore) {
      io.err.write(
        `cnv: note: ${settings.dataDir} held no store (CNV_DATA_DIR), so a new, empty one was created there. ` +
          "If you expected your data, check CNV_DATA_DIR: the service's default is ./.cnv-data in the directory it was started from.\n",
      );
    }
    if (store.newerMigrations) {
      io.err.write(
        `cnv: warning: the store was last used by a newer version of cnv (it holds migrations ${store.newerMigrations.join(', ')}, ` +
          'which this version does not have); this version runs on it, as migrations only add.\n',
      );
    }
    const publicUrl = await publicUrlOf(env, settings, store.db);
    const ctx: CommandContext = {
      db: store.db,
      settings: { ...settings, publicUrl: publicUrl.url },
      publicUrlConfirmed: publicUrl.confirmed,
      out: io.out,
      err: io.err,
      options: values as Record<string, string | undefined>,
    };
    await storeCommand!.run(ctx);
    return EXIT_OK;
  } catch (error) {
    if (error instanceof CommandLineError) {
      io.err.write(`cnv ${command.name}: ${error.message}\nUsage: cnv ${command.usage}\n`);
      return EXIT_USAGE;
    }
    if (error instanceof ApiError) {
      // A value on the command line failed validation (e.g. --domain): a command-line mistake.
      io.err.write(`cnv ${command.name}: ${error.message}\n`);
      return error.status === 400 ? EXIT_USAGE : EXIT_FAILED;
    }
    io.err.write(`cnv ${command.name}: ${error instanceof Error ? error.message : String(error)}\n`);
    return EXIT_FAILED;
  } finally {
    await store?.close();
  }
}
