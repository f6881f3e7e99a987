/**
 * Global setup of the browser tests: builds the loader, starts the REAL service (embedded store, fresh data directory),
 * creates the test sites through its REST API, starts the fixture site, and hands everything to the specs through
 * one environment variable. Returns the teardown.
 *
 * Google Ads is the fake Google (OAuth + Data Manager API, started first): the account connects google-ads through the
 * hosted handoff with the OAuth sign-in, and the sites the click journeys use (`main`, `linkerApp`) get the API
 * trigger source and a live flow API trigger → Google Ads, so a journey can go from the ad landing to the upload.
 * The `forms` site (same domain as `main`) gets one live form-trigger flow per form integration → Google Ads (html on
 * '/forms/*', the others on 'all'), plus an html flow on '/pricing/*' that the form pages never match.
 *
 * https, for what only https shows (the `SameSite=None; Secure` correlation cookie): a throwaway self-signed
 * certificate (openssl), the fixture site's second listener over https, and a TLS-terminating reverse proxy in front
 * of the same real service; the `secure` site is `main` over https, with its own API trigger and live flow.
 */
import { join } from 'node:path';
import { ensureLoaderBuilt } from './build-loader';
import { E2E_ENV_VARIABLE, type E2EEnv, type E2EFormFlows, type E2ESite, type E2EWebhook, type SiteName } from './env';
import { startFakeGoogle, type FakeGoogle } from '../../src/demo/fakes/google';
import { connectGoogleAds, googleSettings } from '../../test/server/support/google-connection';
import { findSnapshot } from '../../src/server/collector/sql';
import { STORED_SNAPSHOT_PATH, startFixtureServer } from './fixture-server';
import { startHttpsProxy, type HttpsProxy } from './https-proxy';
import { throwawayCertificate } from './tls';
import { startRealService, type RunningService } from './real-service';
import { connectApiTriggerSource, connectGoogleAdsDestination, createSite, disableGpc, E2E_TRIGGER_KEY, publishFormFlow, publishSignupFlow } from './service-api';
import { FORM_INTEGRATIONS, type FormIntegration } from '../../src/protocol/collector';

/** The host name under which pages load the service: cross-site from example.com, as in production. */
const SERVICE_HOST = 'cnv.test';

/** The names the throwaway certificate covers: the fixture hosts, the identity provider's and the service's. */
const CERTIFICATE_HOSTS = ['example.com', '*.example.com', '*.example.net', SERVICE_HOST];

const root = join(import.meta.dirname, '..', '..');

export default async function globalSetup(): Promise<() => Promise<void>> {
  ensureLoaderBuilt(root);

  let env: E2EEnv | undefined;
  let service: RunningService | undefined;
  const certificate = throwawayCertificate(CERTIFICATE_HOSTS);
  // The fake Google before the service: the service's settings name its URLs.
  const google: FakeGoogle = await startFakeGoogle();
  // The fixture site before the service too: the sites' domains name its port.
  const fixture = await startFixtureServer({
    dir: join(root, 'e2e', 'fixtures'),
    tls: certificate,
    values: (scheme) =>
      scheme === 'https'
        ? { SERVICE: env!.https.serviceOrigin, PORT: String(env!.https.fixturePort), APP_ORIGIN: `https://app.example.com:${env!.https.fixturePort}` }
        : { SERVICE: env!.serviceOrigin, PORT: String(env!.fixturePort), APP_ORIGIN: `http://app.example.com:${env!.fixturePort}` },
    siteKeys: () => Object.fromEntries(Object.entries(env!.sites).map(([name, site]) => [name, site.key])),
    inspect: {
      // What the real collector stored for a token: read through the service's own store module.
      [STORED_SNAPSHOT_PATH]: (query) => findSnapshot(service!.db, query.get('site_id') ?? '', query.get('token') ?? ''),
    },
  }).catch(async (error: unknown) => {
    await google.close();
    throw error;
  });

  service = await startRealService(SERVICE_HOST, googleSettings(google)).catch(async (error: unknown) => {
    await fixture.close();
    await google.close();
    throw error;
  });
  let proxy: HttpsProxy | undefined;
  try {
    proxy = await startHttpsProxy(certificate, service.port);
    const p = fixture.port;
    const sp = fixture.securePort!;
    const { base, apiKey } = service;
    const nullDomain: E2ESite = { id: service.bootstrapSite.id, key: service.bootstrapSite.site_key, domain: service.bootstrapSite.domain };
    if (nullDomain.domain !== null) throw new Error(`the bootstrap site should start with domain null, has ${nullDomain.domain}`);
    const main = await createSite(base, apiKey, 'Example (all subdomains)', `http://example.com:${p}`);
    const www = await createSite(base, apiKey, 'Example (www only)', `http://www.example.com:${p}`);
    const noGpc = await disableGpc(base, apiKey, await createSite(base, apiKey, 'Example (GPC not honored)', `http://example.com:${p}`));
    const linkerApp = await createSite(base, apiKey, 'Example app on another registrable domain', `http://app.example.net:${p}`);
    const forms = await createSite(base, apiKey, 'Example (form triggers)', `http://example.com:${p}`);
    const secure = await createSite(base, apiKey, 'Example over https (all subdomains)', `https://example.com:${sp}`);

    // Google Ads for the account, then per journey site its webhook and a live flow to Google Ads.
    await connectGoogleAdsDestination(base, apiKey, connectGoogleAds);
    const webhooks: Partial<Record<SiteName, E2EWebhook>> = {};
    for (const [name, site] of [['main', main], ['linkerApp', linkerApp], ['secure', secure]] as const) {
      const secret = await connectApiTriggerSource(base, apiKey, site.id);
      await publishSignupFlow(base, apiKey, site.id);
      webhooks[name] = { secret, triggerKey: E2E_TRIGGER_KEY };
    }
    const pageFilters: E2EFormFlows['pageFilters'] = { html: '/forms/*' };
    const byIntegration = {} as Record<FormIntegration, string>;
    for (const integration of FORM_INTEGRATIONS) {
      byIntegration[integration] = await publishFormFlow(base, apiKey, forms.id, integration, pageFilters[integration] ?? 'all');
    }
    const formFlows: E2EFormFlows = { byIntegration, pageFilters, outsideFilter: await publishFormFlow(base, apiKey, forms.id, 'html', '/pricing/*') };

    env = {
      serviceOrigin: `http://${SERVICE_HOST}:${service.port}`,
      serviceBase: base,
      apiKey,
      webhooks,
      fixturePort: p,
      fixtureControl: `http://127.0.0.1:${p}`,
      https: { fixturePort: sp, serviceOrigin: `https://${SERVICE_HOST}:${proxy.port}` },
      sites: { main, nullDomain, www, noGpc, linkerApp, forms, secure },
      formFlows,
    };
    process.env[E2E_ENV_VARIABLE] = JSON.stringify(env);
  } catch (error) {
    await proxy?.close();
    await fixture.close();
    await service.close();
    await google.close();
    throw error;
  }

  return async () => {
    await proxy!.close();
    await fixture.close();
    await service!.close();
    await google.close();
  };
}
