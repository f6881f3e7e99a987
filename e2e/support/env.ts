/** What the global setup hands to the specs: where the real service and the fixture site listen, and the test sites. */

import type { FormIntegration } from '../../src/protocol/collector';

/** A site created in the real service for the browser tests. */
export interface E2ESite {
  id: string;
  key: string;
  domain: string | null;
}

/** The names under which fixture pages pick a site (`?site=<name>`, default `main`). */
export type SiteName = 'main' | 'nullDomain' | 'www' | 'noGpc' | 'linkerApp' | 'forms' | 'secure';

/**
 * The live form-trigger flows of the `forms` site, all → Google Ads: one per integration (`byIntegration`; pageFilter
 * 'all', except html on '/forms/*'), plus one html flow whose filter no fixture page matches (`outsideFilter`).
 */
export interface E2EFormFlows {
  byIntegration: Record<FormIntegration, string>;
  /** The html flow on '/pricing/*': a submission on /forms/html.html must not fire it. */
  outsideFilter: string;
  /** The page filters of `byIntegration`'s flows that are not 'all'. */
  pageFilters: Partial<Record<FormIntegration, string>>;
}

/** A site's connected API trigger source: what the customer's backend needs to report a signup through the webhook. */
export interface E2EWebhook {
  /** The webhook signing secret the hosted trigger-source page showed once (whsec_…). */
  secret: string;
  /** The key of the API trigger of the site's live flow. */
  triggerKey: string;
}

export interface E2EEnv {
  /** Loopback base URL of the real service for the specs' own REST and webhook calls. */
  serviceBase: string;
  /** The account's API key (Bearer) for the REST API. */
  apiKey: string;
  /**
   * The sites with an API trigger source and a live flow (API trigger → Google Ads through the fake Google's Data
   * Manager API): `main`, `linkerApp` and `secure`.
   */
  webhooks: Partial<Record<SiteName, E2EWebhook>>;
  /** Origin under which pages reach the service, cross-site from the fixture site: `http://cnv.test:<port>`. */
  serviceOrigin: string;
  /** Port of the fixture site server; pages are served as http://{www,app}.example.com:<port> and http://www.evil.example.net:<port>. */
  fixturePort: number;
  /** Loopback URL of the fixture server for the specs' own calls (its request record, for both listeners). */
  fixtureControl: string;
  /**
   * The https side, for pages that need it (a `SameSite=None; Secure` cookie): the fixture site over https on
   * `fixturePort` (https://{www,app}.example.com:<port>, https://idp.example.net:<port>), and the service behind a
   * TLS-terminating proxy at `serviceOrigin` (https://cnv.test:<port>). The certificate is a throwaway self-signed
   * one: a context that uses these needs `ignoreHTTPSErrors`.
   */
  https: { fixturePort: number; serviceOrigin: string };
  /**
   * The test sites: `noGpc` is like `main` with honor_gpc turned off; `linkerApp` is the app of `main` on another
   * registrable domain (`http://app.example.net:<port>`), for the cross-domain linker; `forms` is like `main` with the
   * live form-trigger flows (`formFlows`), so the other specs on `main` see a config without forms; `secure` is
   * `main` over https (`https://example.com:<https.fixturePort>`), with its own API trigger and live flow.
   */
  sites: Record<SiteName, E2ESite>;
  /** The form-trigger flows of the `forms` site (the site the form detector spec's pages pick with `?site=forms`). */
  formFlows: E2EFormFlows;
}

/** Environment variable through which the global setup passes the E2EEnv (workers inherit the runner's environment). */
export const E2E_ENV_VARIABLE = 'CNV_E2E_ENV';

/** Reads the environment the global setup prepared; a clear error when the specs run without it. */
export function e2eEnv(): E2EEnv {
  const raw = process.env[E2E_ENV_VARIABLE];
  if (!raw) throw new Error(`${E2E_ENV_VARIABLE} is not set: run the browser tests through playwright.config.ts (its global setup starts the service)`);
  return JSON.parse(raw) as E2EEnv;
}

/** The hosts under which the fixture site is served; all resolve to 127.0.0.1 through Chromium's host resolver rules. */
export const FIXTURE_HOSTS = {
  www: 'www.example.com',
  app: 'app.example.com',
  evil: 'www.evil.example.net',
} as const;

export type FixtureHost = keyof typeof FIXTURE_HOSTS;

/** The URL of a fixture page under one of the fixture hosts, e.g. fixtureUrl('www', '/landing.html?gclid=abc'). */
export function fixtureUrl(host: FixtureHost, pathAndQuery: string, env: E2EEnv = e2eEnv()): string {
  return `http://${FIXTURE_HOSTS[host]}:${env.fixturePort}${pathAndQuery}`;
}

/** The https URL of a fixture page (the fixture site's https listener), e.g. secureFixtureUrl('www', '/landing.html?site=secure'). */
export function secureFixtureUrl(host: FixtureHost, pathAndQuery: string, env: E2EEnv = e2eEnv()): string {
  return `https://${FIXTURE_HOSTS[host]}:${env.https.fixturePort}${pathAndQuery}`;
}

/** The origin of a fixture host. */
export function fixtureOrigin(host: FixtureHost, env: E2EEnv = e2eEnv()): string {
  return `http://${FIXTURE_HOSTS[host]}:${env.fixturePort}`;
}
