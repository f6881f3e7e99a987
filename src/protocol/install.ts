/** The install surface of the loader: what a page writes (script tag, attributes, global) and what the loader reads. */

/** The one global the loader defines: `window.__service`. */
export const SERVICE_GLOBAL = '__service';

/** Path under which the service serves the loader; key discovery also looks for script tags whose path ends with it. */
export const LOADER_PATH = '/loader.js';

/**
 * The install snippet (DESIGN.md, Install snippet): the loader with the site's key in its URL, which the service
 * answers with the loader with the site's config inside. `serviceUrl` is the service's public base URL.
 */
export const installSnippet = (serviceUrl: string, siteKey: string): string => {
  const src = `${serviceUrl}${LOADER_PATH}?${SITE_KEY_PARAM}=${encodeURIComponent(siteKey)}`;
  return `<script async src="${src.replace(/&/g, '&amp;').replace(/"/g, '&quot;')}"></script>`;
};

/** Script tag attribute carrying the site key (the older snippet). */
export const SITE_KEY_ATTRIBUTE = 'data-site-key';

/** Query parameter of the loader's src carrying the site key (tag managers strip data-* attributes). */
export const SITE_KEY_PARAM = 'site_key';

/** Script tag attribute overriding the service base URL (default: the origin of the loader's src). */
export const API_ATTRIBUTE = 'data-api';

/** Script tag attribute: write and send nothing until `window.__service.consent(true)`. */
export const CONSENT_REQUIRED_ATTRIBUTE = 'data-consent-required';

/** Form attribute marking a signup form: its submit (or a click on its buttons) is a signup intent. */
export const SIGNUP_INTENT_ATTRIBUTE = 'data-service-signup-intent';

/**
 * The loader's optional scripts: features only some sites use, fetched by the loader only on pages that use them.
 * `links`: the cross-domain linker and URL passthrough (a tag with `data-linker` or `data-url-passthrough`);
 * `forms`: the form-tool detectors (a config whose `forms` is not empty).
 */
export const OPTIONAL_SCRIPTS = ['links', 'forms'] as const;

export type OptionalScript = (typeof OPTIONAL_SCRIPTS)[number];

/** The path of an optional script, beside LOADER_PATH. */
export type OptionalScriptPath = `/loader-${OptionalScript}.js`;

/** Path under which the service serves an optional script, beside LOADER_PATH. */
export const optionalScriptPath = (name: OptionalScript): OptionalScriptPath => {
  return `/loader-${name}.js`;
};
