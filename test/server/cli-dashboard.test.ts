/** `cnv dashboard` beside a running service: with CNV_API_KEY the service issues the sign-in link for the key's account. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DATABASE_KINDS } from './support/databases';
import { createRestService, type RestService } from './support/rest-harness';
import { runCli } from '../../src/cli/run';
import { pressSignIn } from './support/dashboard-sign-in';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { lockDataDir, noteServiceAddress } from '../../src/server/db/data-dir-lock';

describe('cnv dashboard through the running service', () => {
  let svc: RestService;
  let base: string;
  beforeAll(async () => {
    svc = await createRestService(DATABASE_KINDS[0]!);
    base = await svc.app.listen({ host: '127.0.0.1', port: 0 });
  });
  afterAll(() => svc.close());

  async function cli(env: Record<string, string>, args: string[] = []) {
    let out = '';
    let err = '';
    const code = await runCli(['dashboard', ...args], { out: { write: (t: string) => (out += t) }, err: { write: (t: string) => (err += t) }, env });
    return { code, out, err };
  }

  it("prints a one-time link for the key's account that signs in once", async () => {
    const { code, out } = await cli({ CNV_API_KEY: svc.apiKey, CNV_API_URL: base });
    expect(code).toBe(0);
    const url = new URL(/https?:\/\/\S+\/dashboard\/sign-in\?token=\S+/.exec(out)![0]);
    expect(out).toContain('press "Sign in"');
    const first = await pressSignIn(svc.app, url);
    expect(first.statusCode).toBe(303);
    expect(String(first.headers['set-cookie'])).toContain('HttpOnly');
    const again = await svc.app.inject({ method: 'GET', url: url.pathname + url.search });
    expect(again.statusCode).toBe(410);
  });

  it('finds the service without CNV_API_URL: by the address the service holding the embedded store noted, or by PORT', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'cnv-address-'));
    const release = lockDataDir(dir, 'the cnv service');
    try {
      // Nothing noted yet: the default address, not this test's service.
      const unnoted = await cli({ CNV_API_KEY: svc.apiKey, CNV_DATA_DIR: dir });
      expect(unnoted.code).toBe(1);
      expect(unnoted.out).toBe('');
      noteServiceAddress(dir, base);
      const noted = await cli({ CNV_API_KEY: svc.apiKey, CNV_DATA_DIR: dir });
      expect(noted.err).toBe('');
      expect(noted.code).toBe(0);
      expect(noted.out).toContain('/dashboard/sign-in?token=');
      const port = new URL(base).port;
      const byPort = await cli({ CNV_API_KEY: svc.apiKey, PORT: port, CNV_DATA_DIR: join(dir, 'elsewhere') });
      expect(byPort.code).toBe(0);
    } finally {
      release();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('refuses --account beside CNV_API_KEY (the key names the account) rather than ignoring it', async () => {
    const { code, out, err } = await cli({ CNV_API_KEY: svc.apiKey, CNV_API_URL: base }, ['--account', 'acct_other']);
    expect(code).toBe(2);
    expect(out).toBe('');
    expect(err).toContain('--account is not taken with CNV_API_KEY set');
  });

  it('says so when the key is wrong or the service does not answer', async () => {
    const wrong = await cli({ CNV_API_KEY: 'cnv_sk_' + 'x'.repeat(32), CNV_API_URL: base });
    expect(wrong.code).toBe(1);
    expect(wrong.err).toMatch(/API key/i);
    const down = await cli({ CNV_API_KEY: svc.apiKey, CNV_API_URL: 'http://127.0.0.1:9' });
    expect(down.code).toBe(1);
    expect(down.err).toContain('did not answer');
  });

  it('refuses credentials in CNV_API_URL without repeating them, and names a server that is not cnv', async () => {
    const withPassword = await cli({ CNV_API_KEY: svc.apiKey, CNV_API_URL: 'http://user:hunter2@127.0.0.1:9' });
    expect(withPassword.code).toBe(2);
    expect(withPassword.err).toContain('CNV_API_URL must not carry a user name or password');
    expect(withPassword.err).not.toContain('hunter2');
    const { createServer } = await import('node:http');
    const other = createServer((_request, response) => response.end('<html>hello</html>'));
    await new Promise<void>((resolve) => other.listen(0, '127.0.0.1', resolve));
    try {
      const url = `http://127.0.0.1:${(other.address() as { port: number }).port}`;
      const answered = await cli({ CNV_API_KEY: svc.apiKey, CNV_API_URL: url });
      expect(answered.code).toBe(1);
      expect(answered.err).toContain(`no cnv service answered at ${url} (HTTP 200, not a cnv answer): check CNV_API_URL.`);
    } finally {
      await new Promise((resolve) => other.close(resolve));
    }
  });
});
