import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DATABASE_KINDS } from './support/databases';
import { cnv } from './support/cli-harness';
import type { Database } from '../../src/server/db/db';
import { findAccountByApiKey, insertAccount, listAccounts, listApiKeys } from '../../src/server/accounts/sql';
import { listAllSites, type SiteRow } from '../../src/server/api/sites/sql';
import { activeWebhookSecrets, connectTriggerSource } from '../../src/server/webhook/secret-sql';
import { bootstrap } from '../../src/server/accounts/bootstrap';
import { lockDataDir } from '../../src/server/db/data-dir-lock';
import { DEMO } from '../../src/demo/setup';
import { recordPublicUrl } from '../../src/server/db/service-facts';
import { TEST_SECRET_BOX, TEST_SECRET_KEY } from './support/fixtures';


const KEY = /cnv_sk_[A-Za-z0-9]{32}/;

describe('cnv help and command-line mistakes', () => {
  it('prints the commands for `cnv help` and exits 0', async () => {
    const { code, out } = await cnv(['help']);
    expect(code).toBe(0);
    for (const command of ['keys create', 'keys list', 'keys revoke', 'sites create', 'sites list', 'accounts create', 'webhook-secret rotate']) expect(out).toContain(`cnv ${command}`);
  });

  it('lists `cnv mcp`, the one command that leaves the store to the running service', async () => {
    const { out } = await cnv(['help']);
    expect(out).toContain('cnv mcp');
    expect(out).toContain('CNV_API_KEY');
  });

  it('prints its version (the package.json one) for --version, -v and version', async () => {
    const { version } = JSON.parse((await import('node:fs')).readFileSync(join(import.meta.dirname, '../../package.json'), 'utf8')) as { version: string };
    for (const flag of ['--version', '-v', 'version']) {
      expect(await cnv([flag]), flag).toEqual({ code: 0, out: `cnv ${version}\n`, err: '' });
    }
  });

  it('prints the help to stderr and exits 2 without a command', async () => {
    const { code, err } = await cnv([]);
    expect(code).toBe(2);
    expect(err).toContain('Usage:');
  });

  it.each([
    [['launch'], /unknown command 'launch'/],
    [['keys', 'delete'], /Did you mean: cnv keys create/],
    [['keys'], /^cnv keys needs one of its commands:\n\ncnv keys: 3 commands\.\n[\s\S]*cnv keys revoke --key/],
    [['sites', '--json'], /^cnv sites needs one of its commands:/],
    [['keys', 'create', '--colour', 'red'], /Unknown option '--colour'/],
    [['sites', 'create', '--name'], /argument missing/],
    [['sites', 'create', 'extra'], /Unexpected argument 'extra'/],
    [['keys', 'list', '--account', 'acct_a', '--account=acct_b'], /Option '--account' is given twice: give it once\./],
  ])('exits 2 for %j with a clear message', async (argv, message) => {
    const { code, err } = await cnv(argv);
    expect(code).toBe(2);
    expect(err).toMatch(message);
  });
});

describe.each(DATABASE_KINDS)('cnv commands on $name', (kind) => {
  let db: Database;
  beforeAll(async () => {
    db = await kind.open();
  });
  afterAll(() => db.close());

  it('says to start the service first when there is no account yet', async () => {
    const { code, err } = await cnv(['keys', 'create'], { db });
    expect(code).toBe(1);
    expect(err).toMatch(/no account yet/);
  });

  it('creates a key for the only account, printed once and stored only as a hash', async () => {
    const first = await bootstrap(db);
    expect(first.created).toBe(true);
    const { code, out } = await cnv(['keys', 'create', '--label', 'ci'], { db });
    expect(code).toBe(0);
    const key = KEY.exec(out)![0];
    expect((await findAccountByApiKey(db, key))?.id).toBe(first.created ? first.account.id : '');
    const stored = await db.query<{ label: string; key_hash: string }>('select label, key_hash from api_keys where label = $1', ['ci']);
    expect(stored).toHaveLength(1);
    expect(JSON.stringify(stored)).not.toContain(key);
  });

  it('creates an account with its first key and a default site', async () => {
    const { code, out } = await cnv(['accounts', 'create', '--name', 'Acme'], { db });
    expect(code).toBe(0);
    const account = await findAccountByApiKey(db, KEY.exec(out)![0]);
    expect(account?.name).toBe('Acme');
    const sites = await listAllSites(db, account!.id);
    expect(sites).toMatchObject([{ name: 'My Website', timezone: 'America/New_York', domain: null }]);
    expect(out).toContain(`<script async src="https://api.cnv.test/loader.js?site_key=${sites[0]!.site_key}"></script>`);
  });

  it('needs --account once there are several accounts, and refuses an unknown one', async () => {
    const several = await cnv(['keys', 'create'], { db });
    expect(several.code).toBe(2);
    expect(several.err).toMatch(/pass --account/);
    const unknown = await cnv(['keys', 'create', '--account', 'acct_nope'], { db });
    expect(unknown.code).toBe(1);
    expect(unknown.err).toMatch(/No such account: 'acct_nope'/);
    const [acme] = (await listAccounts(db)).filter((a) => a.name === 'Acme');
    const ok = await cnv(['keys', 'create', '--account', acme!.id], { db });
    expect((await findAccountByApiKey(db, KEY.exec(ok.out)![0]))?.id).toBe(acme!.id);
  });

  it('lists keys by their first characters only, and a revoked key is refused from then on', async () => {
    const [acme] = (await listAccounts(db)).filter((a) => a.name === 'Acme');
    const created = await cnv(['keys', 'create', '--account', acme!.id, '--label', 'leaked'], { db });
    const key = KEY.exec(created.out)![0];
    const listed = await cnv(['keys', 'list', '--account', acme!.id], { db });
    expect(listed.code).toBe(0);
    expect(listed.out).toContain(`${key.slice(0, 12)}…`);
    expect(listed.out).not.toContain(key);
    const id = (await listApiKeys(db, acme!.id)).find((k) => k.label === 'leaked')!.id;
    const revoked = await cnv(['keys', 'revoke', '--key', id], { db });
    expect(revoked.code).toBe(0);
    expect(revoked.out).toMatch(new RegExp(`API key ${id} .* is revoked since`));
    expect(await findAccountByApiKey(db, key)).toBeNull();
    expect((await cnv(['keys', 'list', '--account', acme!.id], { db })).out).toMatch(new RegExp(`${id}.*leaked\\s+\\S+\\s+\\d{4}-`));
    const unknown = await cnv(['keys', 'revoke', '--key', 'key_nope'], { db });
    expect(unknown.code).toBe(1);
    expect(unknown.err).toMatch(/No such API key: 'key_nope'/);
  });

  it('creates a site with validated, normalised fields', async () => {
    const account = await insertAccount(db, 'Sites');
    const { code, out } = await cnv(
      ['sites', 'create', '--name', 'Blog', '--domain', 'https://Blog.Example.com:443', '--timezone', 'europe/paris', '--account', account.id],
      { db },
    );
    expect(code).toBe(0);
    const [site] = await listAllSites(db, account.id);
    expect(site).toMatchObject({ name: 'Blog', domain: 'https://blog.example.com', timezone: 'Europe/Paris' });
    expect(out).toContain(site!.site_key);
  });

  it.each([
    [['--name', 'X', '--domain', 'https://x.example/path'], /--domain must not contain a path/],
    [['--name', 'X', '--timezone', 'Moon/Base'], /--timezone 'Moon\/Base' is not an IANA timezone/],
    [['--name', '   '], /--name must not be empty/],
    [['--domain', 'https://x.example'], /--name is required/],
  ])('refuses `sites create %j` with exit 2, creating nothing', async (args, message) => {
    const account = await insertAccount(db, 'Refused');
    const { code, err } = await cnv(['sites', 'create', ...args, '--account', account.id], { db });
    expect(code).toBe(2);
    expect(err).toMatch(message);
    expect(await listAllSites(db, account.id)).toEqual([]);
  });

  it("shows, not obeys, the control characters of a name an account chose (an ESC sequence would drive the operator's terminal)", async () => {
    const account = await insertAccount(db, 'Escapes');
    await cnv(['sites', 'create', '--name', 'Plain', '--account', account.id], { db });
    const [site] = await listAllSites(db, account.id);
    await db.query('update sites set name = $2 where id = $1', [site!.id, '\u001b[2J\u001b]0;pwned\u0007Evil\r\nFAKE LINE\u009b31m']);
    const { code, out } = await cnv(['sites', 'list', '--account', account.id], { db });
    expect(code).toBe(0);
    expect(out).toContain('\\u001b[2J\\u001b]0;pwned\\u0007Evil\\u000d');
    expect(out).toContain('\\u009b31m');
    expect(out).not.toMatch(/[\u001b\u0007\r\u009b]/);
  });

  it('lists sites as a table', async () => {
    const sites = await listAllSites(db);
    const { code, out } = await cnv(['sites', 'list'], { db });
    expect(code).toBe(0);
    expect(out.split('\n')[0]).toMatch(/^ID\s+SITE KEY\s+NAME\s+DOMAIN\s+TIMEZONE\s+ACCOUNT$/);
    for (const site of sites) expect(out).toContain(site.site_key);
  });

  describe('webhook-secret rotate', () => {
    let site: SiteRow;
    beforeAll(async () => {
      const account = await insertAccount(db, 'Hooks');
      await cnv(['sites', 'create', '--name', 'Hooked', '--account', account.id], { db });
      [site] = (await listAllSites(db, account.id)) as [SiteRow];
    });

    it('explains that there is nothing to rotate before the trigger source is connected', async () => {
      const { code, err } = await cnv(['webhook-secret', 'rotate', '--site', site.id], { db });
      expect(code).toBe(1);
      expect(err).toMatch(/no API trigger source yet/);
    });

    it('prints a new secret once; the previous one keeps verifying for 24 hours', async () => {
      const { secret: old } = await connectTriggerSource(db, TEST_SECRET_BOX, site.account_id, site.id);
      const { code, out } = await cnv(['webhook-secret', 'rotate', '--site', site.id], { db, env: { CNV_SECRET_KEY: TEST_SECRET_KEY } });
      expect(code).toBe(0);
      const fresh = /whsec_[A-Za-z0-9]{32}/.exec(out)![0];
      expect(fresh).not.toBe(old);
      expect(await activeWebhookSecrets(db, TEST_SECRET_BOX, site.id)).toEqual([fresh, old]);
      expect(await activeWebhookSecrets(db, TEST_SECRET_BOX, site.id, new Date(Date.now() + 25 * 3600 * 1000))).toEqual([fresh]);
      expect(out).toMatch(/keeps verifying until \d{4}-/);
    });

    it('refuses an unknown site and a missing --site', async () => {
      expect((await cnv(['webhook-secret', 'rotate', '--site', 'site_nope'], { db })).err).toMatch(/No such site/);
      const missing = await cnv(['webhook-secret', 'rotate'], { db });
      expect(missing.code).toBe(2);
      expect(missing.err).toMatch(/--site is required/);
    });
  });
});

describe.each(DATABASE_KINDS)("cnv's default account beside npm start's demo account, on $name", (kind) => {
  let db: Database;
  let mine: { id: string; name: string };
  let demo: { id: string; name: string };
  beforeAll(async () => {
    db = await kind.open();
    // What every `npm start` store holds: the first account (the user's), then the demo's own, named as the demo names it.
    const first = await bootstrap(db);
    if (!first.created) throw new Error('a fresh store has no account');
    mine = first.account;
    demo = await insertAccount(db, DEMO.accountName);
  });
  afterAll(() => db.close());

  it('keys create, dashboard, sites create and erase take the one account that is not the demo\'s', async () => {
    const key = await cnv(['keys', 'create'], { db });
    expect(key.code, key.err).toBe(0);
    expect((await findAccountByApiKey(db, KEY.exec(key.out)![0]))?.id).toBe(mine.id);
    const dashboard = await cnv(['dashboard'], { db });
    expect(dashboard.code, dashboard.err).toBe(0);
    expect(dashboard.out).toContain(`Dashboard sign-in link for ${mine.id} (${mine.name})`);
    const site = await cnv(['sites', 'create', '--name', 'Mine'], { db });
    expect(site.code, site.err).toBe(0);
    expect((await listAllSites(db, mine.id)).map((s) => s.name)).toContain('Mine');
    expect((await listAllSites(db, demo.id)).map((s) => s.name)).not.toContain('Mine');
    const erased = await cnv(['erase', '--email', 'someone@example.com'], { db });
    expect(erased.code, erased.err).toBe(0);
    expect(erased.out).toMatch(new RegExp(`^In ${mine.id} \\(${mine.name}\\):\nErasure era_`));
    // The demo's account is still there to name.
    const named = await cnv(['keys', 'create', '--account', demo.id], { db });
    expect((await findAccountByApiKey(db, KEY.exec(named.out)![0]))?.id).toBe(demo.id);
  });

  it('refuses when another account makes it ambiguous, listing every account and the demo\'s as such', async () => {
    const other = await insertAccount(db, 'Second shop');
    for (const argv of [['keys', 'create'], ['dashboard'], ['sites', 'create', '--name', 'Where'], ['erase', '--email', 'a@example.com']]) {
      const { code, err } = await cnv(argv, { db });
      expect(code, argv.join(' ')).toBe(2);
      expect(err).toContain('There are 3 accounts: pass --account acct_… with one of');
      expect(err).toContain(`  ${mine.id}  ${mine.name}\n`);
      expect(err).toContain(`  ${other.id}  Second shop\n`);
      expect(err).toContain(`  ${demo.id}  ${DEMO.accountName}  (npm start's demo)\n`);
    }
  });
});

describe.each(DATABASE_KINDS)('the address in the links and snippets cnv prints, on $name', (kind) => {
  let db: Database;
  beforeAll(async () => {
    db = await kind.open();
    await bootstrap(db);
  });
  afterAll(() => db.close());
  // cnv's environment names no address: no CNV_PUBLIC_URL, PORT or HOST (the harness sets CNV_PUBLIC_URL otherwise).
  const unset = { CNV_PUBLIC_URL: undefined };

  it('is the default, said to be unconfirmed, while no service has recorded its own in the store', async () => {
    const site = await cnv(['sites', 'create', '--name', 'Before'], { db, env: unset });
    expect(site.code, site.err).toBe(0);
    expect(site.out).toContain('<script async src="http://127.0.0.1:8787/loader.js?site_key=');
    expect(site.err).toContain('cnv: note: the address above, http://127.0.0.1:8787, is the default: no service has recorded');
    const list = await cnv(['sites', 'list'], { db, env: unset });
    expect(list.err).toBe('');
  });

  it("is the one the service recorded when it started, in site snippets, new accounts' and sign-in links", async () => {
    await recordPublicUrl(db, 'http://127.0.0.1:47510');
    const site = await cnv(['sites', 'create', '--name', 'After'], { db, env: unset });
    expect(site.out).toContain('<script async src="http://127.0.0.1:47510/loader.js?site_key=');
    expect(site.err).toBe('');
    const dashboard = await cnv(['dashboard'], { db, env: unset });
    expect(dashboard.out).toMatch(/\n {2}http:\/\/127\.0\.0\.1:47510\/dashboard\/sign-in\?token=\S+\n/);
    expect(dashboard.err).toBe('');
    const account = await cnv(['accounts', 'create', '--name', 'Later'], { db, env: unset });
    expect(account.out).toContain('<script async src="http://127.0.0.1:47510/loader.js?site_key=');
  });

  it.each([
    [{ CNV_PUBLIC_URL: 'https://cnv.example.com' }, 'https://cnv.example.com'],
    [{ CNV_PUBLIC_URL: undefined, PORT: '47511' }, 'http://127.0.0.1:47511'],
    [{ CNV_PUBLIC_URL: undefined, HOST: 'localhost' }, 'http://localhost:8787'],
  ])("is cnv's own when its environment names one (%j), over the recorded one", async (env, url) => {
    await recordPublicUrl(db, 'http://127.0.0.1:47510');
    const [mine] = await listAccounts(db);
    const site = await cnv(['sites', 'create', '--name', 'Own', '--account', mine!.id], { db, env });
    expect(site.out).toContain(`<script async src="${url}/loader.js?site_key=`);
    expect(site.err).toBe('');
  });
});

describe('cnv on the embedded store of CNV_DATA_DIR', () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'cnv-cli-'));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('opens, migrates and keeps its data between runs', async () => {
    const env = { CNV_DATA_DIR: dir };
    const created = await cnv(['accounts', 'create', '--name', 'Persisted'], { env });
    expect(created.code).toBe(0);
    // The first run made the store, and said so (a mistyped CNV_DATA_DIR would otherwise look like lost data).
    expect(created.err).toContain(`cnv: note: ${dir} held no store (CNV_DATA_DIR), so a new, empty one was created there.`);
    const listed = await cnv(['sites', 'list'], { env });
    expect(listed.code).toBe(0);
    expect(listed.err).not.toContain('held no store');
    expect(listed.out).toContain(/loader\.js\?site_key=([0-9a-z]{12})"/.exec(created.out)![1]);
  }, 120_000); // two PGlite boots on disk, the first with initdb

  it('refuses to open a data directory the service is using', async () => {
    const release = lockDataDir(dir, 'the cnv service');
    try {
      const { code, err } = await cnv(['sites', 'list'], { env: { CNV_DATA_DIR: dir } });
      expect(code).toBe(1);
      expect(err).toMatch(/is in use by the cnv service/);
      // A command the running service can do instead says how.
      const dashboard = await cnv(['dashboard'], { env: { CNV_DATA_DIR: dir } });
      expect(dashboard.code).toBe(1);
      expect(dashboard.err).toMatch(/is in use by the cnv service[\s\S]*While the service runs, set CNV_API_KEY/);
      // A command line missing a required value is a usage mistake, told before the store is tried.
      for (const argv of [['sites', 'create'], ['accounts', 'create'], ['keys', 'revoke'], ['webhook-secret', 'rotate']]) {
        const missing = await cnv(argv, { env: { CNV_DATA_DIR: dir } });
        expect(missing.code, argv.join(' ')).toBe(2);
        expect(missing.err).toMatch(/--\w+ is required\.\nUsage: cnv /);
        expect(missing.err).not.toMatch(/in use/);
      }
      // So is a value the command would refuse, with its reason.
      for (const [argv, reason] of [
        [['sites', 'create', '--name', 'Shop', '--domain', 'example.com/path'], /--domain/],
        [['sites', 'create', '--name', 'Shop', '--timezone', 'Mars/Olympus'], /--timezone 'Mars\/Olympus' is not an IANA timezone name/],
        [['sites', 'create', '--name', '   '], /--name/],
        [['accounts', 'create', '--name', 'x'.repeat(201)], /--name must be at most 200 characters/],
        [['keys', 'create', '--label', ''], /--label must not be empty/],
        [['keys', 'create', '--label', 'ci\u001b[2J'], /--label must be one line of text, without control characters/],
        [['sites', 'create', '--name', 'Shop\nline two'], /--name must be one line of text/],
        // Checked as sent, as REST checks a name: a trailing line break or tab is refused, not trimmed away.
        [['sites', 'create', '--name', 'Shop\n'], /--name must be one line of text/],
        [['accounts', 'create', '--name', 'Acme\t'], /--name must be one line of text/],
        [['keys', 'create', '--label', 'ci\r\n'], /--label must be one line of text/],
        [['erase'], /Name the person/],
        [['erase', '--email', 'x'.repeat(600)], /email must be a string of at most/],
      ] as const) {
        const refused = await cnv([...argv], { env: { CNV_DATA_DIR: dir } });
        expect(refused.code, argv.join(' ')).toBe(2);
        expect(refused.err, argv.join(' ')).toMatch(reason);
        expect(refused.err).not.toMatch(/in use/);
      }
      // A valid command line still meets the held store.
      const valid = await cnv(['sites', 'create', '--name', 'Shop', '--domain', 'https://shop.example'], { env: { CNV_DATA_DIR: dir } });
      expect(valid.code).toBe(1);
      expect(valid.err).toMatch(/in use/);
    } finally {
      release();
    }
  });
});
