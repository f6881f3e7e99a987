/**
 * Global setup of the browser tests: builds the loader, starts the REAL service (embedded store, fresh data directory),
 * creates the test sites through its REST API, starts the fixture site, and hands everything to the specs through
 * one environment variable. Returns the teardown.
 */
import { join } from 'node:path';
import { ensureLoaderBuilt } from './build-loader';
import { E2E_ENV_VARIABLE, type E2EEnv, type E2ESite } from './env';
import { findSnapshot } from '../../src/server/collector/sql';
import { STORED_SNAPSHOT_PATH, startFixtureServer } from './fixture-server';
import { startRealService, type RunningService } from './real-service';
import { createSite, disableGpc } from './service-api';

/** The host name under which pages load the service: cross-site from example.com, as in production. */
const SERVICE_HOST = 'cnv.test';

const root = join(import.meta.dirname, '..', '..');

export default async function globalSetup(): Promise<() => Promise<void>> {
  ensureLoaderBuilt(root);

  // The fixture site first: the sites' domains name its port.
  let env: E2EEnv | undefined;
  let service: RunningService | undefined;
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
  });

  service = await startRealService(SERVICE_HOST).catch(async (error: unknown) => {
    await fixture.close();
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

    env = {
      serviceOrigin: `http://${SERVICE_HOST}:${service.port}`,
      fixturePort: p,
      fixtureControl: `http://127.0.0.1:${p}`,
      sites: { main, nullDomain, www, noGpc, linkerApp },
    };
    process.env[E2E_ENV_VARIABLE] = JSON.stringify(env);
  } catch (error) {
    await fixture.close();
    await service.close();
    throw error;
  }

  return async () => {
    await fixture.close();
    await service!.close();
  };
}
