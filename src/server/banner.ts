/** What `npm start` prints: the first-run API key, the site key and snippet, the URLs, and how to use `cnv`. */
import type { RunningService } from './service';

/** The start-up text of a running service. */
export function startupBanner(service: Pick<RunningService, 'urls' | 'apiKey' | 'site' | 'storeLocation'>): string {
  const { urls, site } = service;
  const lines = [
    '',
    `cnv is running on ${urls.listening}`,
    `  data:              ${service.storeLocation}`,
    `  REST API:          ${urls.api}/v1   (Authorization: Bearer <API key>)`,
    `  webhook base URL:  ${urls.webhook}${urls.webhookListening ? `   (own listener on ${urls.webhookListening})` : ''}`,
    '',
  ];
  if (service.apiKey) {
    lines.push(
      'First start: an account, an API key and a site were created.',
      '',
      `  API key:  ${service.apiKey}`,
      '',
      '  This key is shown only now and stored only as a hash: copy it. Make more with `cnv keys create`.',
      '',
    );
  }
  lines.push(
    `Site "${site.name}" (${site.id})`,
    `  site key:  ${site.site_key}`,
    `  domain:    ${site.domain ?? '(not set: the snippet accepts no page until you PATCH /v1/sites/' + site.id + ' with a domain)'}`,
    '  install snippet:',
    `    <script async src="${urls.api}/loader.js" data-site-key="${site.site_key}"></script>`,
    '',
    'Try it:',
    `  curl -H "Authorization: Bearer <API key>" ${urls.api}/v1/sites`,
    '',
    'Operator commands (same DATABASE_URL / CNV_DATA_DIR; stop the service first when using the embedded store):',
    '  npx cnv help | keys create | keys list | keys revoke --key … | sites create --name … | sites list | accounts create --name … | webhook-secret rotate --site …',
    '',
  );
  return lines.join('\n');
}
