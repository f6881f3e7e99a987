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
 */
import { join } from 'node:path';
import { ensureLoaderBuilt } from './build-loader';
import { E2E_ENV_VARIABLE, type E2EEnv, type E2EFormFlows, type E2ESite, type E2EWebhook, type SiteName } from './env';
import { startFakeGoogle, type FakeGoogle } from '../../src/demo/fakes/google';
import { connectGoogleAds, googleSettings } from '../../test/server/support/google-connection';
import { findSnapshot } from '../../src/server/collector/sql';
import { STORED_SNAPSHOT_PATH, startFixtureServer } from './fixture-server';
import { startRealService, type RunningService } from './real-service';
import { connectApiTriggerSource, connectGoogleAdsDestination, createSite, disableGpc, E2E_TRIGGER_KEY, publishFormFlow, publishSignupFlow } from './service-api';
import { FORM_INTEGRATIONS, type FormIntegration } from '../../src/protocol/collector';

/** The host name under which pages load the service: cross-site from example.com, as in production. */
const SERVICE_HOST = 'cnv.test';

const root = join(import.meta.dirname, '..', '..');

export default async function globalSetup(): Promise<() => Promise<void>> {
  ensureLoaderBuilt(root);

  let env: E2EEnv | undefined;
  let service: RunningService | undefined;
  // The fake Google before the service: the service's settings name its URLs.
  const google: FakeGoogle = await startFakeGoogle();
  // The fixture site before the service too: the sites' domains name its port.
  const fixture = await startFixtureServer({
    dir: join(root, 'e2e', 'fixtures'),
    values: () => ({
      SERVICE: env!.serviceOrigin,
      PORT: String(env!.fixturePort),
      APP_ORIGIN: `http://app.example.com:${env!.fixturePort}`,
    }),
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
  try {
    const p = fixture.port;
    const { base, apiKey } = service;
    const nullDomain: E2ESite = { id: service.bootstrapSite.id, key: service.bootstrapSite.site_key, domain: service.bootstrapSite.domain };
    if (nullDomain.domain !== null) throw new Error(`the bootstrap site should start with domain null, has ${nullDomain.domain}`);
    const main = await createSite(base, apiKey, 'Example (all subdomains)', `http://example.com:${p}`);
    const www = await createSite(base, apiKey, 'Example (www only)', `http://www.example.com:${p}`);
    const noGpc = await disableGpc(base, apiKey, await createSite(base, apiKey, 'Example (GPC not honored)', `http://example.com:${p}`));
    const linkerApp = await createSite(base, apiKey, 'Example app on another registrable domain', `http://app.example.net:${p}`);
    const forms = await createSite(base, apiKey, 'Example (form triggers)', `http://example.com:${p}`);

    // Google Ads for the account, then per journey site its webhook and a live flow to Google Ads.
    await connectGoogleAdsDestination(base, apiKey, connectGoogleAds);
    const webhooks: Partial<Record<SiteName, E2EWebhook>> = {};
    for (const [name, site] of [['main', main], ['linkerApp', linkerApp]] as const) {
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
      sites: { main, nullDomain, www, noGpc, linkerApp, forms },
      formFlows,
    };
    process.env[E2E_ENV_VARIABLE] = JSON.stringify(env);
  } catch (error) {
    await fixture.close();
    await service.close();
    await google.close();
    throw error;
  }

  return async () => {
    await fixture.close();
    await service!.close();
    await google.close();
  };
}
