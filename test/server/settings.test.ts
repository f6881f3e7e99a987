/** The settings read from the environment: defaults, how they combine, and refusals that name the setting. */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadSettings } from '../../src/server/settings';

const base = { CNV_DEMO_PORT: 'off' };

describe('the webhook base URL', () => {
  it('is the public URL by default, which the main port serves the webhook on', () => {
    expect(loadSettings({ ...base, HOST: '127.0.0.1', PORT: '8787' }).webhookBaseUrl).toBe('http://127.0.0.1:8787');
    expect(loadSettings({ ...base, CNV_PUBLIC_URL: 'https://cnv.example.com/' }).webhookBaseUrl).toBe('https://cnv.example.com');
  });

  it("is the webhook's own port only where no public URL was set, and a public URL wins over it", () => {
    expect(loadSettings({ ...base, HOST: '127.0.0.1', CNV_WEBHOOK_PORT: '8790' }).webhookBaseUrl).toBe('http://127.0.0.1:8790');
    expect(loadSettings({ ...base, CNV_WEBHOOK_PORT: '8790', CNV_PUBLIC_URL: 'https://cnv.example.com' }).webhookBaseUrl).toBe('https://cnv.example.com');
    expect(
      loadSettings({ ...base, CNV_WEBHOOK_PORT: '8790', CNV_PUBLIC_URL: 'https://cnv.example.com', CNV_WEBHOOK_BASE_URL: 'https://hooks.example.com//' }).webhookBaseUrl,
    ).toBe('https://hooks.example.com');
  });

  it('refuses a public URL that cannot be the base of a snippet or a link, naming the setting, never echoing a password', () => {
    for (const [name, value] of [
      ['CNV_PUBLIC_URL', 'garbage'], ['CNV_PUBLIC_URL', 'http://exa mple.com'], ['CNV_PUBLIC_URL', 'javascript:alert(1)'],
      ['CNV_PUBLIC_URL', 'https://cnv.example.com/?x=1'], ['CNV_PUBLIC_URL', 'https://cnv.example.com/#top'],
      ['CNV_WEBHOOK_BASE_URL', 'not a url'], ['CNV_WEBHOOK_BASE_URL', 'ftp://hooks.example.com'],
    ] as const) {
      expect(() => loadSettings({ ...base, [name]: value }), value).toThrow(new RegExp(`^${name} `));
    }
    const withPassword = (() => {
      try {
        loadSettings({ ...base, CNV_PUBLIC_URL: 'https://user:hunter2@cnv.example.com' });
      } catch (error) {
        return (error as Error).message;
      }
    })();
    expect(withPassword).toMatch(/^CNV_PUBLIC_URL must not carry a user name or password/);
    expect(withPassword).not.toContain('hunter2');
    // A path (a proxy's prefix) is fine.
    expect(loadSettings({ ...base, CNV_PUBLIC_URL: 'https://example.com/cnv/' }).publicUrl).toBe('https://example.com/cnv');
  });

  it('takes CNV_RATE_LIMITS as every switch (on/off, true/false, 1/0), and checks each limit even while off', () => {
    expect(loadSettings({ ...base, CNV_RATE_LIMITS: 'false' }).rateLimits.webhookPerSite).toBeNull();
    expect(loadSettings({ ...base, CNV_RATE_LIMITS: '1' }).rateLimits.webhookPerSite).toBe(12_000);
    expect(() => loadSettings({ ...base, CNV_RATE_LIMITS: 'maybe' })).toThrow(/^CNV_RATE_LIMITS must be on or off/);
    expect(() => loadSettings({ ...base, CNV_RATE_LIMITS: 'off', CNV_RATE_LIMIT_WEBHOOK_PER_SITE: 'garbage' })).toThrow(/^CNV_RATE_LIMIT_WEBHOOK_PER_SITE /);
  });

  it("refuses the webhook's or the demo's port when it is PORT, naming the setting", () => {
    expect(() => loadSettings({ ...base, PORT: '8787', CNV_WEBHOOK_PORT: '8787' })).toThrow(/^CNV_WEBHOOK_PORT must differ from PORT \(8787\)/);
    expect(() => loadSettings({ PORT: '8787', CNV_DEMO_PORT: '8787' })).toThrow(/^CNV_DEMO_PORT must differ from PORT \(8787\)/);
    // The service alone may take the demo's default port.
    expect(loadSettings({ PORT: '8788' }).port).toBe(8788);
  });

  it('refuses a port that is not digits (a space read as 0 started on a random port)', () => {
    for (const port of [' ', '8787 ', '0x50', '1e3', '-1', '65536']) expect(() => loadSettings({ ...base, PORT: port }), port).toThrow(/^PORT must be a port number, digits from 0 to 65535, got '/);
    expect(loadSettings({ ...base, PORT: '0' }).port).toBe(0);
  });

  it('brackets an IPv6 host, as the public URL does', () => {
    const settings = loadSettings({ ...base, HOST: '::1', PORT: '8787', CNV_WEBHOOK_PORT: '8790' });
    expect(settings.publicUrl).toBe('http://[::1]:8787');
    expect(settings.webhookBaseUrl).toBe('http://[::1]:8790');
    expect(new URL(settings.webhookBaseUrl).port).toBe('8790');
  });
});

describe('HOST and the platform addresses', () => {
  it('refuses a HOST no URL can carry at start, naming the setting (it stopped after the store opened with "Invalid URL")', () => {
    for (const host of ['999.1.1.1', 'my host', 'cnv.example.com/x', 'http://0.0.0.0']) {
      expect(() => loadSettings({ HOST: host }), host).toThrow(/^HOST must be an address to listen on \(127\.0\.0\.1, 0\.0\.0\.0, ::\) or a host name, got '/);
    }
    expect(loadSettings({ HOST: '0.0.0.0' }).host).toBe('0.0.0.0');
    expect(loadSettings({ HOST: 'cnv-1.internal' }).publicUrl).toBe('http://cnv-1.internal:8787');
    expect(loadSettings({ HOST: '[::]' })).toMatchObject({ host: '::', publicUrl: 'http://[::]:8787' });
  });

  it("refuses a platform's API base or OAuth endpoint that is not an absolute http(s) URL, naming the setting", () => {
    const cases = {
      CNV_META_GRAPH_API_BASE: 'graph.facebook.com', CNV_TIKTOK_API_BASE: 'ftp://business-api.tiktok.com',
      CNV_GOOGLE_ADS_API_BASE: 'googleads', CNV_MICROSOFT_OAUTH_TOKEN_URL: 'login.microsoftonline.com/common/oauth2/v2.0/token',
      CNV_REDDIT_API_BASE: 'https://user:pass@ads-api.reddit.com',
    };
    for (const [name, value] of Object.entries(cases)) {
      expect(() => loadSettings({ [name]: value }), name).toThrow(new RegExp(`^${name} must be an absolute http\\(s\\) URL`));
      expect(() => loadSettings({ [name]: value }), name).not.toThrow(/pass/);
    }
    const set = loadSettings({ CNV_META_GRAPH_API_BASE: 'http://127.0.0.1:9999/', CNV_LINKEDIN_OAUTH_TOKEN_URL: 'https://www.linkedin.com/oauth/v2/accessToken/' });
    expect(set.meta.graphApiBase).toBe('http://127.0.0.1:9999');
    expect(set.linkedin.oauthTokenUrl).toBe('https://www.linkedin.com/oauth/v2/accessToken/');
  });
});

describe('LOG_LEVEL', () => {
  it("takes pino's levels and silent, info by default", () => {
    expect(loadSettings(base).logLevel).toBe('info');
    for (const level of ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']) expect(loadSettings({ ...base, LOG_LEVEL: level }).logLevel).toBe(level);
  });

  it('refuses anything else, naming the setting', () => {
    expect(() => loadSettings({ ...base, LOG_LEVEL: 'verbose' })).toThrow(/^LOG_LEVEL must be one of fatal, error, warn, info, debug, trace, silent; got 'verbose'$/);
  });
});

describe('the PostgreSQL pool size', () => {
  it('reads CNV_PG_POOL_SIZE, else the older PG_POOL_SIZE, else 10', () => {
    expect(loadSettings(base).pgPoolSize).toBe(10);
    expect(loadSettings({ ...base, PG_POOL_SIZE: '4' }).pgPoolSize).toBe(4);
    expect(loadSettings({ ...base, PG_POOL_SIZE: '4', CNV_PG_POOL_SIZE: '6' }).pgPoolSize).toBe(6);
    expect(() => loadSettings({ ...base, CNV_PG_POOL_SIZE: '0' })).toThrow(/CNV_PG_POOL_SIZE must be a whole number of connections from 1 to 1000/);
  });
});

describe('the Google Ads API version of the legacy path', () => {
  it('is v26 by default (Google sunset v22 on 7 October 2026)', () => {
    expect(loadSettings(base).googleAdsApiVersion).toBe('v26');
  });
});

describe('CNV_SECRET_KEY and the data directory key', () => {
  const withDir = async (run: (dir: string) => void | Promise<void>) => {
    const dir = mkdtempSync(join(tmpdir(), 'cnv-settings-'));
    try {
      await run(dir);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  };

  it('takes 64 hex characters or base64 of 32 bytes', () => {
    expect(loadSettings({ ...base, CNV_SECRET_KEY: '5'.repeat(64) }).secretKey).toBe('5'.repeat(64));
    const b64 = Buffer.alloc(32, 7).toString('base64');
    expect(loadSettings({ ...base, CNV_SECRET_KEY: `${b64}\n` }).secretKey).toBe(`${b64}\n`);
  });

  it('refuses a key of another length before anything opens, naming the setting, never echoing the value', () => {
    const value = 'not-a-key-sekrit';
    expect(() => loadSettings({ ...base, CNV_SECRET_KEY: value })).toThrow(/^CNV_SECRET_KEY must be 32 bytes, written as 64 hex characters or base64/);
    try {
      loadSettings({ ...base, CNV_SECRET_KEY: value });
    } catch (error) {
      expect((error as Error).message).not.toContain('sekrit');
    }
  });

  it("says so when it holds a file's path instead of the key", async () => {
    await withDir(async (dir) => {
      const path = `${dir}/key`;
      writeFileSync(path, Buffer.alloc(32, 1).toString('base64'));
      expect(() => loadSettings({ ...base, CNV_SECRET_KEY: path })).toThrow(/holds the key itself, not the path of a file: .*CNV_SECRET_KEY="\$\(cat .*\/key\)"/);
    });
  });

  it('unset: names an unreadable or damaged secret.key of CNV_DATA_DIR, and says not to replace it', async () => {
    await withDir(async (dir) => {
      expect(loadSettings({ ...base, CNV_DATA_DIR: dir }).secretKey).toBeUndefined(); // no key file yet: made at start
      writeFileSync(`${dir}/secret.key`, 'garbage\n');
      expect(() => loadSettings({ ...base, CNV_DATA_DIR: dir })).toThrow(new RegExp(`credentials key ${dir}/secret.key .* does not hold a key .*Do not replace it`));
      rmSync(`${dir}/secret.key`);
      mkdirSync(`${dir}/secret.key`);
      expect(() => loadSettings({ ...base, CNV_DATA_DIR: dir })).toThrow(/secret\.key .*cannot be read \(EISDIR\)\. Do not replace it/);
      // CNV_SECRET_KEY set: the file is not the key in use.
      expect(loadSettings({ ...base, CNV_DATA_DIR: dir, CNV_SECRET_KEY: '5'.repeat(64) }).secretKey).toBe('5'.repeat(64));
      rmSync(`${dir}/secret.key`, { recursive: true });
      writeFileSync(`${dir}/secret.key`, `${Buffer.alloc(32, 3).toString('base64')}\n`);
      expect(loadSettings({ ...base, CNV_DATA_DIR: dir }).secretKey).toBeUndefined();
    });
  });
});
