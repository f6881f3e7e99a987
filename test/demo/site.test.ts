import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadSettings } from '../../src/server/settings';
import { startServiceWithDemo, type ServiceWithDemo } from '../../src/demo/with-service';
import { readCredentials } from '../../src/demo/credentials';

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const address = probe.address();
      probe.close(() => resolve(typeof address === 'object' && address ? address.port : 0));
    });
  });
}

async function settingsFor(dataDir: string, demoPort: number) {
  const settings = loadSettings({ HOST: '127.0.0.1', PORT: String(await freePort()), CNV_DATA_DIR: dataDir, LOG_LEVEL: 'silent' });
  return { ...settings, demoPort };
}

describe('the demo site served beside the service', () => {
  let running: ServiceWithDemo;
  let dataDir: string;
  let demo: string;
  const secrets: string[] = [];

  beforeAll(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'cnv-demo-site-'));
    running = await startServiceWithDemo(await settingsFor(dataDir, 0));
    demo = running.demo!.url;
    secrets.push(running.service.apiKey!, running.demo!.setup.webhookSecret, readCredentials(join(dataDir, 'demo-store.json'))!.api_key);
  });

  afterAll(async () => {
    await running?.close();
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  });

  it('is served on its own origin, localhost, whose address is the demo site’s domain in cnv', () => {
    expect(demo).toMatch(/^http:\/\/localhost:\d+$/);
    expect(running.demo!.setup.site.domain).toBe(demo);
    expect(running.service.urls.api).toMatch(/^http:\/\/127\.0\.0\.1:/);
  });

  it('points the service’s Google Ads uploads at the local fake', () => {
    expect(running.demo!.fake.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
  });

  it('never shows the API key or the webhook secret to the browser', async () => {
    for (const path of ['/', '/?gclid=TeSt-x', '/pricing', '/events', '/events/table', '/assets/demo.js', '/assets/demo.css']) {
      const body = await (await fetch(`${demo}${path}`)).text();
      for (const secret of secrets) expect(body, path).not.toContain(secret);
    }
  });

  it('serves its pages under a strict content security policy that allows only itself and the service', async () => {
    const res = await fetch(`${demo}/pricing`);
    const policy = res.headers.get('content-security-policy') ?? '';
    expect(policy).toContain(`script-src 'self' ${running.service.urls.api}`);
    expect(policy).toContain(`connect-src 'self' ${running.service.urls.api}`);
    expect(await res.text()).toContain(`<script async src="${running.service.urls.api}/loader.js" data-site-key="${running.demo!.setup.site.site_key}"></script>`);
  });

  it('answers a signup form without a valid email with the form again and a 400', async () => {
    const res = await fetch(`${demo}/signup`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: 'email=nope&name=Ada',
    });
    expect(res.status).toBe(400);
    expect(await res.text()).toContain('Please enter a valid email address.');
  });

  it('reports nothing for a signup without the correlation cookie, and the welcome page says why', async () => {
    const uploadsBefore = running.demo!.fake.requests.length;
    const res = await fetch(`${demo}/signup`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: 'email=ada%40example.com&name=Ada+Lovelace',
      redirect: 'manual',
    });
    expect(res.status).toBe(303);
    const location = res.headers.get('location')!;
    expect(location).toMatch(/^\/welcome\?user=usr_/);
    // The backend answers first and reports after; the journey fragment settles once the report is done.
    let welcome = '';
    await expect
      .poll(async () => (welcome = await (await fetch(`${demo}${location}`)).text()))
      .toContain('data-final="true"');
    expect(welcome).toContain('Welcome aboard, Ada!');
    expect(welcome).toMatch(/data-step="intent" data-state="failed"/);
    expect(welcome).toMatch(/data-step="report" data-state="failed"/);
    expect(welcome).toContain('Nothing was sent');
    expect(welcome).toContain('data-final="true"');
    expect(running.demo!.fake.requests.length).toBe(uploadsBefore);
  });

  it('answers 404 for the welcome page of a user it does not know', async () => {
    expect((await fetch(`${demo}/welcome?user=usr_nobody`)).status).toBe(404);
    expect((await fetch(`${demo}/welcome/journey?user=usr_nobody`)).status).toBe(404);
  });

  it('stops the start with a message naming CNV_DEMO_PORT when the demo port is taken', async () => {
    const busy: Server = createServer();
    const port = await new Promise<number>((resolve) =>
      busy.listen(0, '127.0.0.1', () => resolve((busy.address() as { port: number }).port)),
    );
    const otherDir = mkdtempSync(join(tmpdir(), 'cnv-demo-busy-'));
    try {
      await expect(startServiceWithDemo(await settingsFor(otherDir, port))).rejects.toThrow(
        `the demo's port ${port} is in use: set CNV_DEMO_PORT to a free port, or CNV_DEMO_PORT=off to run without the demo.`,
      );
    } finally {
      busy.close();
      rmSync(otherDir, { recursive: true, force: true });
    }
  });
});
