import { rmSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHash } from 'node:crypto';
import { loadSettings } from '../../src/server/settings';
import { startServiceWithDemo, type ServiceWithDemo } from '../../src/demo/with-service';
import { readCredentials } from '../../src/demo/credentials';
import { DEMO_ACCOUNTS } from '../../src/demo/ad-platforms';
import { acceptedEvents } from '../../src/demo/fakes/meta';
import { newDemoClickIds } from '../../src/demo/site';
import { CORRELATION_COOKIE, SNAPSHOT_CONTENT_TYPE, snapshotsPath } from '../../src/protocol/index';
import { seededDataDir } from '../support/pglite';

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
    dataDir = await seededDataDir('cnv-demo-site-');
    // The free port is probed, then listened on: a test in another worker may take it in between (seen once in CI),
    // so a start refused for a port in use is tried again on another.
    for (let attempt = 1; ; attempt++) {
      try {
        running = await startServiceWithDemo(await settingsFor(dataDir, 0));
        break;
      } catch (error) {
        if (attempt === 3 || !/already in use/.test((error as Error).message)) throw error;
      }
    }
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

  it('points the service at the six local fake ad platforms, OAuth included, and leaves the production defaults alone', () => {
    const { fakes } = running.demo!;
    for (const fake of [fakes.google, fakes.meta, fakes.microsoft, fakes.linkedin, fakes.reddit, fakes.tiktok]) expect(fake.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    const settings = running.settings;
    expect(settings.google).toMatchObject({ dataManagerApiBase: fakes.google.url, oauthAuthorizeUrl: fakes.google.urls.authorize, oauthClientId: fakes.google.client.id });
    expect(settings.meta.graphApiBase).toBe(fakes.meta.url);
    expect(settings.microsoft).toMatchObject({ adsApiBase: fakes.microsoft.url, oauthTokenUrl: fakes.microsoft.tokenUrl, developerToken: fakes.microsoft.developerToken });
    expect(settings.linkedin).toMatchObject({ apiBase: fakes.linkedin.url, oauthAuthorizeUrl: fakes.linkedin.authorizeUrl });
    expect(settings.reddit.apiBase).toBe(fakes.reddit.url);
    expect(settings.tiktok.apiBase).toBe(fakes.tiktok.url);
    expect(loadSettings({}).google.dataManagerApiBase).toBe('https://datamanager.googleapis.com');
    expect(loadSettings({}).reddit.apiBase).toBe('https://ads-api.reddit.com');
    expect(loadSettings({}).tiktok.apiBase).toBe('https://business-api.tiktok.com');
  });

  it('keeps the demo in its own account: the first start’s key sees none of its sites or destinations', async () => {
    const auth = { authorization: `Bearer ${running.service.apiKey}` };
    const sites = (await (await fetch(`${running.service.urls.api}/v1/sites`, { headers: auth })).json()) as { data: Array<{ id: string }> };
    expect(sites.data.map((s) => s.id)).not.toContain(running.demo!.setup.site.id);
    const destinations = (await (await fetch(`${running.service.urls.api}/v1/destinations`, { headers: auth })).json()) as { data: unknown[] };
    expect(destinations.data).toEqual([]);
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
    expect(await res.text()).toContain(`<script async src="${running.service.urls.api}/loader.js?site_key=${running.demo!.setup.site.site_key}"></script>`);
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
    const { fakes } = running.demo!;
    const sent = () => fakes.google.server.requests.length + fakes.meta.requests.length + fakes.microsoft.requests.length + fakes.linkedin.requests.length;
    const uploadsBefore = sent();
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
    expect(sent()).toBe(uploadsBefore);
  });

  /** The signup the delivery test made, for the paid plan after it. */
  let signedUp: { userId: string; clicks: ReturnType<typeof newDemoClickIds> } | null = null;

  it('delivers a signup whose visit carried all six click ids to the six fakes, and the welcome page shows each request', async () => {
    const { fakes, setup } = running.demo!;
    const clicks = newDemoClickIds();
    const email = `ada.${Date.now()}@example.com`;
    const token = 'QUJDREVGR0hJSktMTU5PUA';
    const now = new Date().toISOString();
    // What the loader sends inside the submit event, from the demo origin: the landing's touch under a fresh token.
    const snapshot = await fetch(`${running.service.urls.api}${snapshotsPath(setup.site.site_key)}`, {
      method: 'POST',
      headers: { origin: demo, 'content-type': SNAPSHOT_CONTENT_TYPE, 'user-agent': 'Mozilla/5.0 (demo test)' },
      body: JSON.stringify({
        correlation_token: token,
        occurred_at: now,
        trigger: 'form_submit',
        page_url: `${demo}/pricing`,
        referrer: `${demo}/`,
        touch: { click_ids: clicks, utm: { utm_campaign: 'demo' }, landing_page_url: `${demo}/?gclid=${clicks.gclid}`, referrer: null, captured_at: now },
        cookies: {},
        consent: { ad_user_data: null, ad_personalization: null },
      }),
    });
    expect(snapshot.status).toBe(204);
    const res = await fetch(`${demo}/signup`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: `${CORRELATION_COOKIE}=${token}` },
      body: new URLSearchParams({ email, name: 'Ada Lovelace' }).toString(),
      redirect: 'manual',
    });
    const location = res.headers.get('location')!;
    const userId = new URL(location, demo).searchParams.get('user')!;
    signedUp = { userId, clicks };
    let welcome = '';
    await expect.poll(async () => (welcome = await (await fetch(`${demo}${location}`)).text()), { timeout: 20_000 }).toContain('data-final="true"');

    const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');
    const hashedEmail = sha256(email.toLowerCase());
    // Google: Data Manager API events:ingest, the gclid in adIdentifiers, the conversion action as productDestinationId.
    const google = fakes.google.ingested().filter((e) => e.event.adIdentifiers?.gclid === clicks.gclid);
    expect(google).toEqual([
      expect.objectContaining({
        destination: { operatingAccountId: '1234567890', loginAccountId: null, productDestinationId: DEMO_ACCOUNTS.google.conversionActionId },
        event: expect.objectContaining({ eventSource: 'WEB', userData: { userIdentifiers: expect.arrayContaining([{ emailAddress: hashedEmail }]) } }),
      }),
    ]);
    // Meta: a website CompleteRegistration whose fbc is built from the fbclid, the user id as event_id.
    const meta = acceptedEvents(fakes.meta).filter((e) => e.event_id === userId);
    expect(meta).toEqual([
      expect.objectContaining({
        event_name: 'CompleteRegistration',
        action_source: 'website',
        user_data: expect.objectContaining({ fbc: expect.stringMatching(new RegExp(`^fb\\.1\\.\\d{13}\\.${clicks.fbclid}$`)) }),
      }),
    ]);
    // Microsoft: an offline conversion of the demo goal with the msclkid as MicrosoftClickId (and, as Microsoft
    // normalises emails, the periods before the @ dropped before hashing).
    expect(fakes.microsoft.applied.filter((c) => c.microsoftClickId === clicks.msclkid)).toEqual([
      expect.objectContaining({ conversionName: DEMO_ACCOUNTS.microsoft.goalName, hashedEmailAddress: sha256(email.replace(/\.(?=[^@]*@)/g, '')), duplicate: false }),
    ]);
    // LinkedIn: a conversion event of the demo rule with the li_fat_id as a first-party ads tracking UUID.
    const linkedin = fakes.linkedin.events.filter((e) => e.userIds.some((u) => u.idValue === clicks.li_fat_id));
    expect(linkedin).toEqual([
      expect.objectContaining({
        conversion: `urn:lla:llaPartnerConversion:${DEMO_ACCOUNTS.linkedin.conversionRuleId}`,
        userIds: expect.arrayContaining([
          { idType: 'LINKEDIN_FIRST_PARTY_ADS_TRACKING_UUID', idValue: clicks.li_fat_id },
          { idType: 'SHA256_EMAIL', idValue: hashedEmail },
        ]),
      }),
    ]);

    // Reddit: a SIGN_UP with the rdt_cid as click_id and the user id as conversion_id; the email canonicalised first.
    const canonicalEmail = `${email.split('@')[0]!.replace(/[^a-z0-9]/gi, '').toLowerCase()}@example.com`;
    expect(fakes.reddit.counted().filter((c) => c.event.click_id === clicks.rdt_cid)).toEqual([
      expect.objectContaining({
        pixelId: DEMO_ACCOUNTS.reddit.pixelId,
        event: expect.objectContaining({
          action_source: 'WEBSITE',
          type: { tracking_type: 'SIGN_UP' },
          metadata: { conversion_id: userId },
          user: expect.objectContaining({ email: sha256(canonicalEmail) }),
        }),
      }),
    ]);
    // TikTok: a CompleteRegistration with the ttclid in user.ttclid and the user id as event_id.
    expect(fakes.tiktok.counted().filter((c) => c.event.user?.ttclid === clicks.ttclid)).toEqual([
      expect.objectContaining({
        pixelCode: DEMO_ACCOUNTS.tiktok.pixelCode,
        event: expect.objectContaining({ event: 'CompleteRegistration', event_id: userId, user: expect.objectContaining({ email: hashedEmail }) }),
      }),
    ]);

    // The welcome page: each platform's card delivered, with the request its fake received and no access token.
    for (const destination of ['google-ads', 'meta', 'microsoft-ads', 'linkedin', 'reddit', 'tiktok']) {
      expect(welcome).toMatch(new RegExp(`data-delivery="${destination}" data-state="done"`));
    }
    expect(welcome).toContain('/v1/events:ingest');
    expect(welcome).toContain(`/v24.0/${DEMO_ACCOUNTS.meta.pixelId}/events`);
    expect(welcome).toContain('/CampaignManagement/v13/OfflineConversions/Apply');
    expect(welcome).toContain('/rest/conversionEvents');
    expect(welcome).toContain(`/api/v3/pixels/${DEMO_ACCOUNTS.reddit.pixelId}/conversion_events`);
    expect(welcome).toContain('/open_api/v1.3/event/track/');
    for (const value of Object.values(clicks)) expect(welcome).toContain(value);
    for (const token of [DEMO_ACCOUNTS.meta.accessToken, DEMO_ACCOUNTS.reddit.accessToken, DEMO_ACCOUNTS.tiktok.accessToken]) expect(welcome).not.toContain(token);
    expect(welcome).not.toContain('access_token');
  });

  it('sends the paid plan to a conversion of its own on Google, Microsoft and LinkedIn, never counted as a signup', async () => {
    const { fakes } = running.demo!;
    const { userId, clicks } = signedUp!;
    const res = await fetch(`${demo}/welcome/upgrade`, {
      method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams({ user: userId }).toString(), redirect: 'manual',
    });
    expect(res.status).toBe(303);
    const paid = () => ({
      google: fakes.google.ingested().filter((e) => e.event.adIdentifiers?.gclid === clicks.gclid && e.event.conversionValue === 29),
      microsoft: fakes.microsoft.applied.filter((c) => c.microsoftClickId === clicks.msclkid && c.conversionValue === 29),
      linkedin: fakes.linkedin.events.filter((e) => e.userIds.some((u) => u.idValue === clicks.li_fat_id) && e.conversionValue?.amount === '29'),
    });
    await expect.poll(() => Object.values(paid()).map((found) => found.length), { timeout: 15_000 }).toEqual([1, 1, 1]);
    const { google, microsoft, linkedin } = paid();
    expect(google[0]!.destination.productDestinationId).toBe(DEMO_ACCOUNTS.google.paidConversionActionId);
    expect(microsoft[0]).toMatchObject({ conversionName: DEMO_ACCOUNTS.microsoft.paidGoalName, duplicate: false });
    expect(linkedin[0]!.conversion).toBe(`urn:lla:llaPartnerConversion:${DEMO_ACCOUNTS.linkedin.paidConversionRuleId}`);
    // Not the signup's conversion action, goal and rule.
    expect([DEMO_ACCOUNTS.google.paidConversionActionId, DEMO_ACCOUNTS.microsoft.paidGoalName, DEMO_ACCOUNTS.linkedin.paidConversionRuleId]).toEqual([
      expect.not.stringMatching(`^${DEMO_ACCOUNTS.google.conversionActionId}$`),
      expect.not.stringMatching(`^${DEMO_ACCOUNTS.microsoft.goalName}$`),
      expect.not.stringMatching(`^${DEMO_ACCOUNTS.linkedin.conversionRuleId}$`),
    ]);
    for (const fake of [fakes.google.server, fakes.microsoft, fakes.linkedin]) expect(fake.requests.flatMap((r) => r.problems)).toEqual([]);
  }, 30_000);

  it('answers 404 for the welcome page of a user it does not know', async () => {
    expect((await fetch(`${demo}/welcome?user=usr_nobody`)).status).toBe(404);
    expect((await fetch(`${demo}/welcome/journey?user=usr_nobody`)).status).toBe(404);
  });

  it('answers an address it does not have with a page of the store, not JSON', async () => {
    const res = await fetch(`${demo}/nope`);
    expect(res.status).toBe(404);
    expect(res.headers.get('content-type')).toMatch(/^text\/html/);
    const page = await res.text();
    expect(page).toContain('This page does not exist');
    expect(page).toContain('href="/events"');
  });

  it('stops the start with a message naming CNV_DEMO_PORT when the demo port is taken', async () => {
    const busy: Server = createServer();
    const port = await new Promise<number>((resolve) =>
      busy.listen(0, '127.0.0.1', () => resolve((busy.address() as { port: number }).port)),
    );
    const otherDir = await seededDataDir('cnv-demo-busy-');
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
