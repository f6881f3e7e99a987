/** What `npm start` prints: the first-run API key, the dashboard sign-in link, the site key and snippet, the URLs, and how to use `cnv`. */
import { installSnippet } from '../protocol/install';
import type { RunningService } from './service';
import { DEFAULT_SERVICE_URL } from './settings';

function clock(date: Date): string {
  return date.toISOString().slice(11, 16) + ' UTC';
}

/**
 * What `cnv` needs to find this service beside the API key: nothing at the default address (where `cnv` looks), else
 * CNV_API_URL, so the printed command works as it is with another PORT or HOST.
 */
function cliEnvOf(apiUrl: string): string {
  return apiUrl === DEFAULT_SERVICE_URL ? '' : `CNV_API_URL=${apiUrl} `;
}

/** The start-up text of a running service. */
export function startupBanner(service: Pick<RunningService, 'urls' | 'apiKey' | 'site' | 'storeLocation' | 'dashboardLink'>): string {
  const { urls, site } = service;
  const lines = [
    '',
    `cnv is running on ${urls.listening}`,
    `  data:              ${service.storeLocation}`,
    `  dashboard:         ${urls.api}/`,
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
      '  This key is shown only now and stored only as a hash: copy it. Make more with `cnv keys create` or on the dashboard.',
      '',
    );
  } else {
    lines.push(
      'API keys are shown only when they are made (this start made none). To get one: the dashboard\'s API keys page, or',
      '`npx cnv keys create` (with the embedded store, stop the service first).',
      '',
    );
  }
  if (service.dashboardLink) {
    lines.push(
      'Dashboard: open this sign-in link (it works once, until ' + clock(service.dashboardLink.expiresAt) + '):',
      '',
      `  ${service.dashboardLink.url}`,
      '',
      `  A fresh one while the service runs: ${cliEnvOf(urls.api)}CNV_API_KEY=<API key> npx cnv dashboard`,
      '',
    );
  } else {
    lines.push(`Dashboard: ${urls.api}/ (sign in with a link from \`${cliEnvOf(urls.api)}CNV_API_KEY=<API key> npx cnv dashboard\`; every start on a terminal prints one too).`, '');
  }
  lines.push(
    `Site "${site.name}" (${site.id})`,
    `  site key:  ${site.site_key}`,
    `  domain:    ${site.domain ?? '(not set: the snippet accepts no page until you set one on the dashboard or PATCH /v1/sites/' + site.id + ')'}`,
    '  install snippet:',
    `    ${installSnippet(urls.api, site.site_key)}`,
    '',
    'Try it:',
    `  curl -H "Authorization: Bearer <API key>" ${urls.api}/v1/sites`,
    '',
    `Operator commands: run them with the same DATABASE_URL / CNV_DATA_DIR; their links and snippets use ${urls.api}, recorded there by this service.`,
    `On the embedded store, stop the service first, or run dashboard, erase and mcp through it with ${cliEnvOf(urls.api)}CNV_API_KEY=<API key>:`,
    '  npx cnv help | dashboard | erase --email … | mcp | keys create | keys list | keys revoke --key … | sites create --name … | sites list | accounts create --name … | webhook-secret rotate --site …',
    '  npx cnv <command> --help shows a command\'s options.',
    '',
  );
  return lines.join('\n');
}
