/** The commands of `cnv`: each names its options and runs against the store. */
import type { Database } from '../server/db/db';
import { DEFAULT_SERVICE_URL, loadSettings, type Settings } from '../server/settings';
import { runningServiceAddress } from '../server/db/data-dir-lock';
import { insertAccount, issueApiKey, listAccounts, listApiKeys, revokeApiKey, type Account } from '../server/accounts/sql';
import { findSiteAnyAccount, insertSite, listAllSites, type SiteRow } from '../server/api/sites/sql';
import { PREVIOUS_SECRET_GRACE_MS, rotateWebhookSecret } from '../server/webhook/secret-sql';
import { serviceSecretBox } from '../server/db/secret-box';
import { parseSiteDomain, parseSiteName, parseTimezone } from '../server/api/sites/site-fields';
import { nonEmptyString } from '../server/http/input';
import { issueSignInLink, SIGN_IN_TTL_MS } from '../server/dashboard';
import { serveStdio } from '../server/mcp';
import { installSnippet } from '../protocol/install';
import { erasePerson, erasureHash, erasureTarget, type ErasureRecord } from '../server/api/erasures';
import { isDemoAccount } from '../demo/account';
import type { Output } from './output';

export interface CommandContext {
  db: Database;
  /** The settings, their publicUrl the service's own where cnv's environment does not name one (run.ts). */
  settings: Settings;
  /** False when settings.publicUrl is the default, neither set here nor recorded by a service in the store. */
  publicUrlConfirmed: boolean;
  out: Output;
  /** For notes beside the result (stderr). */
  err: Output;
  options: Record<string, string | undefined>;
}

/** What a command that works beside the service, through its API, gets: no store (the service may hold it). */
export interface ServiceCommandContext {
  env: NodeJS.ProcessEnv;
  err: Output;
  options: Record<string, string | undefined>;
}

/** A command that leaves the store alone and talks to the running service instead (`cnv mcp`). */
export interface ServiceCommand {
  name: string;
  usage: string;
  summary: string;
  options: Record<string, string>;
  run(ctx: ServiceCommandContext): Promise<void>;
}

/** Where `cnv mcp` finds the service when CNV_API_URL is not set: the local one, at its default port. */
export const DEFAULT_API_URL = DEFAULT_SERVICE_URL;

export interface Command {
  name: string;
  usage: string;
  summary: string;
  /** Option name (without --) to its description; every option takes a value. */
  options: Record<string, string>;
  /** The options the command cannot run without: checked before the store is opened (a missing one is exit 2 either way). */
  required?: readonly string[];
  /**
   * Checks the options' values that need no store (a name's length, a domain's form, an erasure's fields), before the
   * store is opened, so a mistyped value is exit 2 with its reason even while the service holds the embedded store;
   * throws as `run` would (CommandLineError, or the API's 400 of the same value).
   */
  check?(options: Record<string, string | undefined>): void;
  /** Seals or hashes with the service's secret key: refused on PostgreSQL without it (secret-key.ts). */
  usesSecretKey?: true;
  run(ctx: CommandContext): Promise<void>;
  /** The same through the running service's API, used when CNV_API_KEY is set (the store stays closed). */
  runWithService?(ctx: ServiceCommandContext & { out: Output }): Promise<void>;
}

/** A mistake on the command line (exit code 2). Defined here to keep the commands free of the runner. */
class CommandLineError extends Error {}
export { CommandLineError };

function required(options: Record<string, string | undefined>, option: string): string {
  const value = options[option];
  if (value === undefined) throw new CommandLineError(`--${option} is required.`);
  return value;
}

/**
 * The account an option names or, when none is named, the only account besides the one `npm start`'s demo made for
 * itself (every store `npm start` served holds that one too). Several candidates: a usage error listing them all.
 */
async function resolveAccount(db: Database, accountId: string | undefined): Promise<Account> {
  const accounts = await listAccounts(db);
  if (accountId !== undefined) {
    const account = accounts.find((a) => a.id === accountId);
    if (!account) throw new Error(`No such account: '${accountId}'. See 'cnv accounts list'.`);
    return account;
  }
  if (accounts.length === 1) return accounts[0]!;
  if (accounts.length === 0) {
    throw new Error("There is no account yet: start the service once (npm start) or run 'cnv accounts create --name …'.");
  }
  const candidates = accounts.filter((a) => !isDemoAccount(a));
  if (candidates.length === 1) return candidates[0]!;
  const listed = accounts.map((a) => `  ${a.id}  ${a.name}${isDemoAccount(a) ? "  (npm start's demo)" : ''}`).join('\n');
  throw new CommandLineError(`There are ${accounts.length} accounts: pass --account acct_… with one of\n${listed}`);
}

/** After a link or snippet: says when its address is only the default, which no service confirmed. */
function noteUnconfirmedUrl(ctx: CommandContext): void {
  if (ctx.publicUrlConfirmed) return;
  ctx.err.write(
    `cnv: note: the address above, ${ctx.settings.publicUrl}, is the default: no service has recorded the one it serves in this store ` +
      '(it does at every start). If yours serves elsewhere, set CNV_PUBLIC_URL (or PORT and HOST) here as the service has them.\n',
  );
}

function snippet(settings: Settings, site: SiteRow): string {
  return installSnippet(settings.publicUrl, site.site_key);
}

function describeSite(settings: Settings, site: SiteRow): string {
  return [
    `  id:        ${site.id}`,
    `  name:      ${site.name}`,
    `  site key:  ${site.site_key}`,
    `  domain:    ${site.domain ?? '(none: the snippet accepts no page until a domain is set)'}`,
    `  timezone:  ${site.timezone}`,
    `  snippet:   ${snippet(settings, site)}`,
  ].join('\n');
}

function printKey(out: Output, account: Account, key: string): void {
  out.write(`API key for ${account.id} (${account.name}):\n\n  ${key}\n\nShown only now and stored only as a hash: copy it.\n`);
}

/** Formats rows as aligned columns under a header. */
function table(header: string[], rows: string[][]): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const line = (cells: string[]) => cells.map((c, i) => c.padEnd(widths[i]!)).join('  ').trimEnd();
  return [line(header), ...rows.map(line)].join('\n') + '\n';
}

export const COMMANDS: readonly Command[] = [
  {
    name: 'dashboard',
    usage: 'dashboard [--account acct_…]',
    summary:
      'Print a one-time sign-in link to the dashboard (works once, for 15 minutes). With CNV_API_KEY set, the running\n' +
      `      service at CNV_API_URL (else the one holding CNV_DATA_DIR, else ${DEFAULT_API_URL}) issues it for the key's account (use this while it holds the embedded store).`,
    options: { account: 'Account to sign in to; optional when there is only one besides the demo\'s (not with CNV_API_KEY: the key names it).' },
    async runWithService(ctx) {
      const { apiUrl, apiKey } = serviceAddress(ctx.env);
      const answer = await fetch(`${apiUrl}/v1/dashboard/sign-in-links`, {
        method: 'POST',
        headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
        body: '{}',
        signal: AbortSignal.timeout(10_000),
      }).catch((error: unknown) => {
        throw new Error(`the service at ${apiUrl} did not answer (${(error as Error).message}): start it, or set CNV_API_URL.`);
      });
      const body = (await answer.json().catch(() => null)) as { url?: string; expires_at?: string; error?: { message?: string } } | null;
      if (!answer.ok || !body?.url) throw new Error(body?.error?.message ?? notCnv(apiUrl, answer.status));
      ctx.out.write(`Dashboard sign-in link:\n\n  ${body.url}\n\nIt works once, for ${SIGN_IN_TTL_MS / 60_000} minutes (until ${body.expires_at}). Open it in your browser and press "Sign in".\n`);
    },
    async run(ctx) {
      const account = await resolveAccount(ctx.db, ctx.options.account);
      const link = await issueSignInLink(ctx.db, ctx.settings, account.id);
      ctx.out.write(
        `Dashboard sign-in link for ${account.id} (${account.name}):\n\n  ${link.url}\n\n` +
          `It works once, for ${SIGN_IN_TTL_MS / 60_000} minutes (until ${link.expiresAt.toISOString()}). Open it in your browser and press "Sign in".\n`,
      );
      noteUnconfirmedUrl(ctx);
    },
  },
  {
    name: 'keys create',
    usage: 'keys create [--account acct_…] [--label …]',
    summary: 'Issue a new API key (printed once).',
    options: { account: 'Account of the key; optional when there is only one besides the demo\'s.', label: 'A note to tell keys apart.' },
    check: (options) => void keyLabelOf(options),
    async run(ctx) {
      const label = keyLabelOf(ctx.options);
      const account = await resolveAccount(ctx.db, ctx.options.account);
      const { key } = await issueApiKey(ctx.db, account.id, label);
      printKey(ctx.out, account, key);
    },
  },
  {
    name: 'keys list',
    usage: 'keys list [--account acct_…]',
    summary: 'List API keys (their first characters, never the keys).',
    options: { account: 'Only this account’s keys.' },
    async run(ctx) {
      if (ctx.options.account !== undefined) await resolveAccount(ctx.db, ctx.options.account);
      const keys = await listApiKeys(ctx.db, ctx.options.account);
      if (keys.length === 0) {
        ctx.out.write('No API keys.\n');
        return;
      }
      ctx.out.write(
        table(
          ['ID', 'ACCOUNT', 'STARTS WITH', 'LABEL', 'CREATED', 'REVOKED'],
          keys.map((k) => [k.id, k.account_id, `${k.prefix}…`, k.label, k.created_at.toISOString(), k.revoked_at?.toISOString() ?? '']),
        ),
      );
    },
  },
  {
    name: 'keys revoke',
    usage: 'keys revoke --key key_…',
    summary: 'Revoke an API key: requests with it are refused (401) from now on.',
    options: { key: 'Id of the key (see cnv keys list).' },
    required: ['key'],
    async run(ctx) {
      const id = required(ctx.options, 'key');
      const revoked = await revokeApiKey(ctx.db, id);
      if (!revoked) throw new Error(`No such API key: '${id}'. See 'cnv keys list'.`);
      ctx.out.write(`API key ${revoked.id} (${revoked.prefix}…) of ${revoked.account_id} is revoked since ${revoked.revoked_at!.toISOString()}.\n`);
    },
  },
  {
    name: 'sites create',
    usage: 'sites create --name … [--domain https://…] [--timezone Area/City] [--account acct_…]',
    summary: 'Create a site.',
    options: {
      name: 'Site name.',
      domain: 'Bare origin, e.g. https://www.example.com.',
      timezone: 'IANA timezone (default America/New_York).',
      account: 'Owner; optional when there is only one account besides the demo\'s.',
    },
    required: ['name'],
    check: (options) => void siteFieldsOf(options),
    async run(ctx) {
      const { name, domain, timezone } = siteFieldsOf(ctx.options);
      const account = await resolveAccount(ctx.db, ctx.options.account);
      const site = await insertSite(ctx.db, account.id, { name, domain, ...(timezone ? { timezone } : {}) });
      ctx.out.write(`Site created for ${account.id}:\n${describeSite(ctx.settings, site)}\n`);
      noteUnconfirmedUrl(ctx);
    },
  },
  {
    name: 'sites list',
    usage: 'sites list [--account acct_…]',
    summary: 'List sites (of all accounts, or of one).',
    options: { account: 'Only this account’s sites.' },
    async run(ctx) {
      if (ctx.options.account !== undefined) await resolveAccount(ctx.db, ctx.options.account);
      const sites = await listAllSites(ctx.db, ctx.options.account);
      if (sites.length === 0) {
        ctx.out.write('No sites.\n');
        return;
      }
      ctx.out.write(
        table(
          ['ID', 'SITE KEY', 'NAME', 'DOMAIN', 'TIMEZONE', 'ACCOUNT'],
          sites.map((s) => [s.id, s.site_key, s.name, s.domain ?? '-', s.timezone, s.account_id]),
        ),
      );
    },
  },
  {
    name: 'accounts create',
    usage: 'accounts create --name …',
    summary: 'Create an account with its first API key (printed once) and a default site.',
    options: { name: 'Account name.' },
    required: ['name'],
    check: (options) => void accountNameOf(options),
    async run(ctx) {
      const name = accountNameOf(ctx.options);
      const { account, key, site } = await ctx.db.transaction(async (tx) => {
        const account = await insertAccount(tx, name);
        const { key } = await issueApiKey(tx, account.id, 'first key');
        const site = await insertSite(tx, account.id);
        return { account, key, site };
      });
      printKey(ctx.out, account, key);
      ctx.out.write(`\nIts site:\n${describeSite(ctx.settings, site)}\n`);
      noteUnconfirmedUrl(ctx);
    },
  },
  {
    name: 'accounts list',
    usage: 'accounts list',
    summary: 'List accounts.',
    options: {},
    async run(ctx) {
      const accounts = await listAccounts(ctx.db);
      ctx.out.write(
        accounts.length === 0
          ? 'No accounts.\n'
          : table(['ID', 'NAME', 'CREATED'], accounts.map((a) => [a.id, a.name, a.created_at.toISOString()])),
      );
    },
  },
  {
    name: 'webhook-secret rotate',
    usage: 'webhook-secret rotate --site site_…',
    summary: "Replace a site's webhook secret (printed once); the previous one keeps verifying for 24 hours.",
    options: { site: 'The site whose API trigger secret to rotate.' },
    required: ['site'],
    usesSecretKey: true,
    async run(ctx) {
      const siteId = required(ctx.options, 'site');
      const site = await findSiteAnyAccount(ctx.db, siteId);
      if (!site) throw new Error(`No such site: '${siteId}'. See 'cnv sites list'.`);
      const now = new Date();
      const rotated = await rotateWebhookSecret(ctx.db, serviceSecretBox(ctx.settings), site.id, 'api', now);
      if (!rotated) {
        throw new Error(
          `Site ${site.id} has no API trigger source yet, so there is no secret to rotate: connect it through a connect_trigger_source handoff (POST /v1/handoffs).`,
        );
      }
      const until = new Date(now.getTime() + PREVIOUS_SECRET_GRACE_MS).toISOString();
      ctx.out.write(
        `New webhook secret of ${site.id} (${site.name}):\n\n  ${rotated.secret}\n\n` +
          `Shown only now: put it in your backend's configuration. The previous secret keeps verifying until ${until}.\n`,
      );
    },
  },
  {
    name: 'erase',
    usage: 'erase --email … | --phone … | --customer-id … [--account acct_…]',
    summary:
      'Erase a person: what is stored under the given values in every site of the account (reports, events, browser\n' +
      '      snapshots, form submissions) removed or anonymised at once, as POST /v1/erasures does; give every email, phone\n' +
      '      and customer id you hold for them. Conversions already delivered to ad\n' +
      '      platforms are not called back. With CNV_API_KEY set, the running service does it for the key\'s account.',
    options: {
      email: 'The email address of the person (matched trimmed and lower-cased).',
      phone: 'The phone number with its country code, + or 00 first (matched in E.164 form).',
      'customer-id': 'Your id of the customer, as your backend reported it.',
      account: 'Account to erase in; optional when there is only one besides the demo\'s (not with CNV_API_KEY: the key names it).',
    },
    check: (options) => void erasureTarget(erasureBodyOf(options)),
    usesSecretKey: true,
    async runWithService(ctx) {
      const { apiUrl, apiKey } = serviceAddress(ctx.env);
      const answer = await fetch(`${apiUrl}/v1/erasures`, {
        method: 'POST',
        headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
        body: JSON.stringify(erasureBodyOf(ctx.options)),
        signal: AbortSignal.timeout(30_000),
      }).catch((error: unknown) => {
        throw new Error(`the service at ${apiUrl} did not answer (${(error as Error).message}): start it, or set CNV_API_URL.`);
      });
      const body = (await answer.json().catch(() => null)) as (ErasureRecord & { error?: { message?: string } }) | null;
      if (!answer.ok || !body?.id) {
        const message = body?.error?.message ?? notCnv(apiUrl, answer.status);
        throw answer.status === 400 ? new CommandLineError(message) : new Error(message);
      }
      ctx.out.write(describeErasure(body));
    },
    async run(ctx) {
      const target = erasureTarget(erasureBodyOf(ctx.options));
      const account = await resolveAccount(ctx.db, ctx.options.account);
      const erasure = await erasePerson(ctx.db, account.id, target, erasureHash(ctx.settings));
      ctx.out.write(`In ${account.id} (${account.name}):\n${describeErasure(erasure)}`);
    },
  },
];

/** `cnv keys create`'s label ('' when not given). */
function keyLabelOf(options: Record<string, string | undefined>): string {
  return options.label === undefined ? '' : nonEmptyString(options.label, '--label', 200);
}

/** `cnv sites create`'s fields, checked as the API checks them. */
function siteFieldsOf(options: Record<string, string | undefined>): { name: string; domain: string | null; timezone: string | undefined } {
  return {
    name: parseSiteName(required(options, 'name'), '--name'),
    domain: options.domain === undefined ? null : parseSiteDomain(options.domain, '--domain'),
    timezone: options.timezone === undefined ? undefined : parseTimezone(options.timezone, '--timezone'),
  };
}

/** `cnv accounts create`'s name. */
function accountNameOf(options: Record<string, string | undefined>): string {
  return nonEmptyString(required(options, 'name'), '--name', 200);
}

/** The body of an erasure from `cnv erase`'s options; at least one is required. */
function erasureBodyOf(options: Record<string, string | undefined>): { email?: string; phone?: string; customer_id?: string } {
  const body = {
    ...(options.email !== undefined ? { email: options.email } : {}),
    ...(options.phone !== undefined ? { phone: options.phone } : {}),
    ...(options['customer-id'] !== undefined ? { customer_id: options['customer-id'] } : {}),
  };
  if (Object.keys(body).length === 0) throw new CommandLineError('Name the person: give --email, --phone or --customer-id (or several).');
  return body;
}

/** What an erasure did, for the terminal (never the values). */
function describeErasure(erasure: ErasureRecord): string {
  const { reports, events, snapshots, form_submissions: forms } = erasure.matched;
  return (
    `Erasure ${erasure.id} (${erasure.created_at}), by ${erasure.fields.join(', ')}:\n` +
    `  reports:           ${reports}\n  events:            ${events}\n  browser snapshots: ${snapshots}\n  form submissions:  ${forms}\n` +
    (erasure.repeat_of ? `The same person was erased before (${erasure.repeat_of}).\n` : '') +
    'Conversions already delivered to ad platforms are not called back: see docs/personal-data.md for each platform\'s deletion path.\n'
  );
}

/** What to say of an answer that is not a cnv service's (no error envelope, or not what the route returns). */
function notCnv(apiUrl: string, status: number): string {
  return `no cnv service answered at ${apiUrl} (HTTP ${status}, not a cnv answer): check CNV_API_URL.`;
}

/**
 * Where the running service answers when CNV_API_URL is not set: the address the service's own settings give here
 * (CNV_PUBLIC_URL, PORT or HOST set), else the one noted by the service that holds the embedded store in
 * CNV_DATA_DIR, else the default.
 */
function serviceUrlWithoutApiUrl(env: NodeJS.ProcessEnv): string {
  try {
    const settings = loadSettings(env);
    if (env.CNV_PUBLIC_URL || env.PORT || env.HOST) return settings.publicUrl;
    if (!settings.databaseUrl) return runningServiceAddress(settings.dataDir) ?? DEFAULT_API_URL;
  } catch {
    // A setting this command does not need is unusable: the default, and the error names CNV_API_URL if it is wrong.
  }
  return DEFAULT_API_URL;
}

/**
 * The running service's address and the API key, from CNV_API_URL (else serviceUrlWithoutApiUrl) and CNV_API_KEY (a
 * usage error when unusable).
 */
function serviceAddress(env: NodeJS.ProcessEnv): { apiUrl: string; apiKey: string } {
  const apiKey = env.CNV_API_KEY?.trim();
  if (!apiKey) throw new CommandLineError("CNV_API_KEY is not set: put an API key of the account in it (see 'cnv keys create').");
  const apiUrl = (env.CNV_API_URL?.trim() || serviceUrlWithoutApiUrl(env)).replace(/\/+$/, '');
  if (!/^https?:\/\/[^/]/.test(apiUrl) || !URL.canParse(apiUrl)) {
    throw new CommandLineError(`CNV_API_URL must be the service's http(s) address, such as ${DEFAULT_API_URL}.`);
  }
  const url = new URL(apiUrl);
  if (url.username || url.password) {
    throw new CommandLineError('CNV_API_URL must not carry a user name or password: the API key in CNV_API_KEY is what the service checks.');
  }
  return { apiUrl, apiKey };
}

export const SERVICE_COMMANDS: readonly ServiceCommand[] = [
  {
    name: 'mcp',
    usage: 'mcp',
    summary:
      'Serve the agent tools (Model Context Protocol) on stdio, for an MCP client to start. It calls the running\n' +
      `      service's API at CNV_API_URL (else the one holding CNV_DATA_DIR, else ${DEFAULT_API_URL}) with the API key in CNV_API_KEY.`,
    options: {},
    async run(ctx) {
      const { apiUrl, apiKey } = serviceAddress(ctx.env);
      // stdout carries the protocol only; a note for the person reading the client's log goes to stderr.
      ctx.err.write(`cnv mcp: serving the agent tools on stdio for the service at ${apiUrl}\n`);
      await serveStdio({ apiUrl, apiKey });
    },
  },
];

export const HELP = `cnv: operator commands of the cnv conversion tracking service.

They work on the service's store: DATABASE_URL (PostgreSQL) or, unset, the embedded store in CNV_DATA_DIR
(default ./.cnv-data). The embedded store serves one process at a time: stop the service before using cnv on it.
cnv mcp is the exception: it leaves the store to the running service and uses its API. The links and snippets cnv
prints carry the address the service recorded in the store at its last start; CNV_PUBLIC_URL, PORT or HOST set here win.

Usage:
${[...COMMANDS, ...SERVICE_COMMANDS].map((c) => `  cnv ${c.usage}\n      ${c.summary}`).join('\n')}
  cnv help
      Show this help. 'cnv <command> --help' shows a command's options.
  cnv --version
      Print the version of cnv.

Exit codes: 0 done, 1 failed, 2 wrong command line.
`;
