/** The collector protocol between the loader and the service: paths, payload shapes and limits. */
import type { ClickIdKey, PlatformCookie, UtmKey } from './signals';

/** Path prefix of the public collector endpoints. */
export const COLLECT_PREFIX = '/collect/v1';

/** A site's public collector endpoints: its loader config, signup snapshots and form submissions. */
export type CollectorEndpoint = 'config' | 'snapshots' | 'form-submissions';

/** The shape of a collector endpoint's path: the prefix, the site's key (URL-encoded) and the endpoint. */
export type CollectorPath = `${typeof COLLECT_PREFIX}/sites/${string}/${CollectorEndpoint}`;

/** Path of one of a site's collector endpoints. */
export const collectorPath = (siteKey: string, endpoint: CollectorEndpoint): CollectorPath => {
  return `${COLLECT_PREFIX}/sites/${encodeURIComponent(siteKey)}/${endpoint}`;
};

/** Path of a site's public loader config. */
export const configPath = (siteKey: string): string => {
  return collectorPath(siteKey, 'config');
};

/** Path to which the loader posts signup snapshots. */
export const snapshotsPath = (siteKey: string): string => {
  return collectorPath(siteKey, 'snapshots');
};

/** Largest snapshot body the collector accepts, in bytes. */
export const SNAPSHOT_MAX_BYTES = 16 * 1024;

/** Content type of the snapshot body: CORS-simple, so `navigator.sendBeacon` can send it. */
export const SNAPSHOT_CONTENT_TYPE = 'text/plain;charset=UTF-8';

/** Form tools whose successful submissions the loader can detect; `html` is any form marked `data-service-form`. */
export const FORM_INTEGRATIONS = [
  'gravity-forms', 'hubspot', 'contact-form-7', 'wpforms', 'elementor', 'webflow', 'typeform', 'calendly', 'html',
] as const;

export type FormIntegration = (typeof FORM_INTEGRATIONS)[number];

/** Whether value names a known form integration (the config and the collector both check with this). */
export const isFormIntegration = (value: unknown): value is FormIntegration => {
  return typeof value === 'string' && (FORM_INTEGRATIONS as readonly string[]).includes(value);
};

/** One entry of the site config's `forms`: an integration a live form-trigger flow watches, and on which pages. */
export interface FormWatch {
  integration: FormIntegration;
  /** A page filter (see page-filter.ts): `all` or a path pattern. */
  page_filter: string;
}

/** What `GET /collect/v1/sites/{site_key}/config` returns. */
export interface SiteConfig {
  site_key: string;
  /** Canonical origin of the site, or null: then no page is accepted. */
  domain: string | null;
  /**
   * The registrable domain of `domain` (Public Suffix List, computed by the service), the Domain of the loader's cookies;
   * null for IP addresses and localhost. Optional: a service that does not send it leaves the loader to probe.
   */
  cookie_domain?: string | null;
  correlation_ttl_seconds: number;
  honor_gpc: boolean;
  /**
   * The form integrations of the site's live form-trigger flows (empty when none): the loader fetches its form
   * detectors only when this is not empty. Optional: a config from a service that predates it watches no forms.
   */
  forms?: FormWatch[];
}

/** One ad landing: the click ids and UTM of a decorated URL. */
export interface Touch {
  click_ids: Partial<Record<ClickIdKey, string>>;
  utm: Partial<Record<UtmKey, string>>;
  landing_page_url: string;
  referrer: string | null;
  captured_at: string;
}

/** One of Google Consent Mode's answers as the page's dataLayer last set it; null when the page never said. */
export type ConsentAnswer = 'granted' | 'denied' | null;

/** The Consent Mode v2 signals a snapshot carries, so delivery can pass them to the ad platform. */
export interface ConsentSignals {
  ad_user_data: ConsentAnswer;
  ad_personalization: ConsentAnswer;
}

/** What set the snapshot off. */
export type SnapshotTrigger = 'form_submit' | 'api';

/** The snapshot body the loader posts on signup intent. */
export interface Snapshot {
  correlation_token: string;
  occurred_at: string;
  trigger: SnapshotTrigger;
  page_url: string;
  referrer: string | null;
  touch: Touch | null;
  cookies: Partial<Record<PlatformCookie, string>>;
  /** Consent Mode signals at snapshot time; absent from a loader that does not send them. */
  consent?: ConsentSignals;
}
