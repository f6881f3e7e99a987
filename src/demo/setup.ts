/**
 * The first-run demo setup, run on every start and idempotent: it looks at what exists and creates only what is
 * missing (and signs in again to the platforms whose in-process fakes forgot, with the last process, the grants they
 * issued). The demo lives in an account of its own, so nothing a user does with the account the first start printed
 * (connecting their own Google Ads, editing flows) can break it, and the demo's events never mix with theirs.
 *
 * Creating an account is an operator's act, not an API call (the CLI's `cnv accounts create` writes it to the store),
 * so that one step goes to the store in process; everything else takes the path a user takes: a site through the REST
 * API, each ad platform connected through its hosted handoff (sign-in with the platform's OAuth, then the account
 * form; Meta's form alone), the API trigger source through its hosted page, and a flow created and published through
 * the REST API. The one read the API does not offer (the site's current webhook secret) goes to the store.
 */
import type { Database } from '../server/db/db';
import type { SecretBox } from '../server/db/secret-box';
import { findAccountByApiKey, insertAccount, issueApiKey, listAccounts, listApiKeys, revokeApiKey, type Account } from '../server/accounts';
import { activeWebhookSecrets } from '../server/webhook';
import { DEMO_ACCOUNTS, DEMO_FORM_VALUES, DEMO_SIGN_IN_PLATFORMS } from './ad-platforms';
import { readCredentials, writeCredentials } from './credentials';
import { DEMO_ACCOUNT_NAME } from './account';
import { completeDestinationHandoff, submitHostedForm, localHandoffUrl, webhookSecretOnPage } from './hosted-handoff';
import { ServiceApi, type FlowRecord, type HandoffRecord, type SiteRecord } from './service-api';

/** One action of the demo flow: a destination and the config its platform needs. */
export interface DemoAction {
  integrationId: string;
  config: Record<string, unknown>;
}

/** The names and ids the demo creates; a person finds them again through the API. */
export const DEMO = {
  /** The demo's own account (never the one the first start created); `cnv` knows it by this name too. */
  accountName: DEMO_ACCOUNT_NAME,
  siteName: 'Demo store',
  timezone: 'America/New_York',
  flowName: 'Demo signups',
  triggerKey: 'demo-signup',
  /** The later stage the welcome page's "Upgrade to paid" reports: a `conversion` trigger of its own flow. */
  stageFlowName: 'Demo paid plans',
  stageTriggerKey: 'demo-paid',
  /** What the paid plan costs, as the store's backend reports it. */
  paidPlan: { value: 29, currency: 'EUR' },
  /** What the demo types into each platform's hosted connect form, after signing in (the fakes consent at once). */
  connectForms: DEMO_FORM_VALUES as Readonly<Record<string, Readonly<Record<string, string>>>>,
  /** The demo flow's actions: one per platform, each config as its platform's check wants it. */
  actions: [
    { integrationId: 'google-ads', config: { conversion: { id: DEMO_ACCOUNTS.google.conversionActionId } } },
    { integrationId: 'meta', config: { event_name: DEMO_ACCOUNTS.meta.eventName } },
    { integrationId: 'microsoft-ads', config: { conversion_name: DEMO_ACCOUNTS.microsoft.goalName } },
    { integrationId: 'linkedin', config: { conversion_rule: DEMO_ACCOUNTS.linkedin.conversionRuleId } },
    { integrationId: 'reddit', config: { event_name: DEMO_ACCOUNTS.reddit.eventName } },
    { integrationId: 'tiktok', config: { event_name: DEMO_ACCOUNTS.tiktok.eventName } },
  ] as readonly DemoAction[],
  /**
   * The paid-plan flow's actions: a conversion of its own on each platform (Google's conversion action, Microsoft's
   * goal, LinkedIn's rule; a purchase event where the platform names events), so payments never count as signups.
   */
  stageActions: [
    { integrationId: 'google-ads', config: { conversion: { id: DEMO_ACCOUNTS.google.paidConversionActionId } } },
    { integrationId: 'meta', config: { event_name: 'Purchase' } },
    { integrationId: 'microsoft-ads', config: { conversion_name: DEMO_ACCOUNTS.microsoft.paidGoalName } },
    { integrationId: 'linkedin', config: { conversion_rule: DEMO_ACCOUNTS.linkedin.paidConversionRuleId } },
    { integrationId: 'reddit', config: { event_name: 'PURCHASE' } },
    { integrationId: 'tiktok', config: { event_name: 'Purchase' } },
  ] as readonly DemoAction[],
  apiKeyLabel: 'demo store backend',
} as const;

export interface DemoSetupOptions {
  db: Database;
  /** The service's secret box: the webhook secret is stored sealed with it. */
  box: SecretBox;
  /** Base URL of the REST API and hosted pages, reachable from this process. */
  apiBase: string;
  /** The demo site's origin (its domain in cnv). */
  demoOrigin: string;
  /** Where the demo backend keeps its API key. */
  credentialsFile: string;
  log: { info(message: string): void };
}

/** What the demo backend needs, once set up. */
export interface DemoSetup {
  accountId: string;
  api: ServiceApi;
  site: SiteRecord;
  /** The signup flow (trigger `saas_signup`). */
  flow: FlowRecord;
  /** The paid-plan flow (trigger `conversion`, the later stage). */
  stageFlow: FlowRecord;
  webhookSecret: string;
  /** What this run created (empty when everything existed). */
  created: string[];
  /** The platforms connected at an earlier start that this run signed in to again (their fakes forgot the grants). */
  reconnected: string[];
}

interface DestinationRecord {
  id: string;
  type: string;
  status: string;
}

/** Revokes a key the demo no longer uses (an earlier demo's key on the first account), so no orphan key stays live. */
async function revokeOldKey(db: Database, account: Account, key: string): Promise<void> {
  const row = (await listApiKeys(db, account.id)).find((k) => k.prefix === key.slice(0, 12) && k.label === DEMO.apiKeyLabel && !k.revoked_at);
  if (row) await revokeApiKey(db, row.id);
}

/** The demo's own account and its API key: the stored key when it still opens that account, else a new key. */
async function ensureAccount(options: DemoSetupOptions, created: string[]): Promise<{ account: Account; apiKey: string }> {
  const { db } = options;
  const stored = readCredentials(options.credentialsFile);
  if (stored) {
    const account = await findAccountByApiKey(db, stored.api_key);
    if (account?.name === DEMO.accountName) return { account, apiKey: stored.api_key };
    // An earlier demo joined the first account: it moves to its own, and gives that account's key back.
    if (account) await revokeOldKey(db, account, stored.api_key);
  }
  const found = (await listAccounts(db)).filter((a) => a.name === DEMO.accountName);
  let account = found[0];
  if (!account) {
    if (!(await listAccounts(db)).length) {
      // The first account is the user's (the start banner prints its key): the service makes it before the demo.
      throw new Error('The database has no account yet: the service creates the first one on its first start, before the demo.');
    }
    account = await insertAccount(db, DEMO.accountName);
    created.push(`the account "${DEMO.accountName}"`);
  }
  const { key } = await issueApiKey(db, account.id, DEMO.apiKeyLabel);
  writeCredentials(options.credentialsFile, { api_key: key });
  created.push('an API key for the demo backend');
  return { account, apiKey: key };
}

async function ensureSite(api: ServiceApi, demoOrigin: string, created: string[]): Promise<SiteRecord> {
  const sites = await api.listAll<SiteRecord>('/v1/sites');
  const site = sites.find((s) => s.domain === demoOrigin) ?? sites.find((s) => s.name === DEMO.siteName);
  if (!site) {
    created.push(`the site "${DEMO.siteName}"`);
    const made = await api.call<SiteRecord>('POST', '/v1/sites', { name: DEMO.siteName, timezone: DEMO.timezone });
    return api.call<SiteRecord>('PATCH', `/v1/sites/${encodeURIComponent(made.id)}`, { domain: demoOrigin });
  }
  if (site.domain !== demoOrigin) {
    // The demo port changed since the last start: the loader accepts only the site's domain.
    created.push(`the domain ${demoOrigin} of "${site.name}"`);
    return api.call<SiteRecord>('PATCH', `/v1/sites/${encodeURIComponent(site.id)}`, { domain: demoOrigin });
  }
  return site;
}

/** Learns a handoff's outcome the way the application that sent the user to the link does: by reading it. */
async function expectCompleted(api: ServiceApi, handoff: HandoffRecord): Promise<void> {
  const after = await api.call<HandoffRecord>('GET', `/v1/handoffs/${encodeURIComponent(handoff.id)}`);
  if (after.status !== 'completed') throw new Error(`Handoff ${handoff.id} is still ${after.status} after its hosted page was completed.`);
}

/** Connects a platform through a connect_destination handoff, as a user does (signing in first where it asks). */
async function connectDestination(api: ServiceApi, integrationId: string): Promise<void> {
  const handoff = await api.call<HandoffRecord>('POST', '/v1/handoffs', { purpose: 'connect_destination', destination_type: integrationId });
  await completeDestinationHandoff(handoff.url, api.baseUrl, DEMO.connectForms[integrationId] ?? {});
  await expectCompleted(api, handoff);
}

/**
 * Connects every platform the demo flow delivers to that GET /v1/destinations does not list as connected, and signs in
 * again to those connected by signing in (DEMO_SIGN_IN_PLATFORMS): their fakes started with this process and do not
 * know the refresh tokens of an earlier start, which would turn the first conversions `reauthorization_required`.
 * Returns the platforms signed in to again.
 */
async function ensureDestinations(api: ServiceApi, created: string[]): Promise<string[]> {
  const connected = new Set(
    (await api.listAll<DestinationRecord>('/v1/destinations')).filter((d) => d.status === 'connected').map((d) => d.type),
  );
  const reconnected: string[] = [];
  for (const { integrationId } of DEMO.actions) {
    if (!connected.has(integrationId)) {
      await connectDestination(api, integrationId);
      created.push(`the ${integrationId} destination`);
    } else if (DEMO_SIGN_IN_PLATFORMS.includes(integrationId)) {
      await connectDestination(api, integrationId);
      reconnected.push(integrationId);
    }
  }
  return reconnected;
}

async function ensureWebhookSecret(options: DemoSetupOptions, api: ServiceApi, site: SiteRecord, created: string[]): Promise<string> {
  const [current] = await activeWebhookSecrets(options.db, options.box, site.id);
  if (current) return current;
  const handoff = await api.call<HandoffRecord>('POST', '/v1/handoffs', { purpose: 'connect_trigger_source', trigger_source: 'api', site_id: site.id });
  const page = await submitHostedForm(localHandoffUrl(handoff.url, api.baseUrl), {});
  await expectCompleted(api, handoff);
  // The backend takes the secret from the page it is shown on, once, as a user copies it.
  const secret = webhookSecretOnPage(page);
  if (!secret) throw new Error('The trigger source page did not show a webhook secret.');
  created.push(`the API trigger source of "${site.name}" and its webhook secret`);
  return secret;
}

/** The actions of a flow as comparable text (destination and config), in order. */
function actionsKey(actions: ReadonlyArray<Record<string, unknown>>): string {
  return JSON.stringify(actions.map((a) => [a.integrationId, a.config]));
}

/** One flow the demo keeps live: its name and API trigger, delivering to every demo platform. */
interface DemoFlow {
  name: string;
  type: 'saas_signup' | 'conversion';
  key: string;
  actions: readonly DemoAction[];
}

async function ensureFlow(api: ServiceApi, site: SiteRecord, wantedFlow: DemoFlow, created: string[]): Promise<FlowRecord> {
  const onTrigger = (f: FlowRecord) =>
    f.trigger_config.integrationId === 'api' && f.trigger_config.key === wantedFlow.key && (f.trigger_config.type ?? 'saas_signup') === wantedFlow.type;
  const flows = (await api.listAll<FlowRecord>('/v1/flows', { site_id: site.id })).filter(onTrigger);
  const wanted = actionsKey(wantedFlow.actions as unknown as Array<Record<string, unknown>>);
  let flow = flows.find((f) => f.name === wantedFlow.name && actionsKey(f.actions_config) === wanted);
  if (!flow) {
    flow = await api.call<FlowRecord>('POST', '/v1/flows', {
      site_id: site.id,
      name: wantedFlow.name,
      trigger_config: { type: wantedFlow.type, integrationId: 'api', key: wantedFlow.key },
      actions_config: wantedFlow.actions,
    });
    created.push(`the flow "${wantedFlow.name}"`);
  }
  // Another live flow on the same trigger (an older demo's) would deliver every report twice.
  for (const other of flows) {
    if (other.id !== flow.id && other.status === 'live') {
      await api.call('POST', `/v1/flows/${encodeURIComponent(other.id)}/unpublish`);
      created.push(`unpublished the older flow ${other.id}`);
    }
  }
  if (flow.status !== 'live') {
    flow = await api.call<FlowRecord>('POST', `/v1/flows/${encodeURIComponent(flow.id)}/publish`);
    created.push(`published "${wantedFlow.name}"`);
  }
  return flow;
}

/**
 * Makes sure the demo's account, site, six destinations, trigger source and two live flows (signups, paid plans) exist;
 * creates only what is missing, and signs in again to the platforms whose fakes forget their grants on a restart.
 */
export async function ensureDemoSetup(options: DemoSetupOptions): Promise<DemoSetup> {
  const created: string[] = [];
  const { account, apiKey } = await ensureAccount(options, created);
  const api = new ServiceApi(options.apiBase, apiKey);
  const site = await ensureSite(api, options.demoOrigin, created);
  const reconnected = await ensureDestinations(api, created);
  const webhookSecret = await ensureWebhookSecret(options, api, site, created);
  const flow = await ensureFlow(api, site, { name: DEMO.flowName, type: 'saas_signup', key: DEMO.triggerKey, actions: DEMO.actions }, created);
  const stageFlow = await ensureFlow(api, site, { name: DEMO.stageFlowName, type: 'conversion', key: DEMO.stageTriggerKey, actions: DEMO.stageActions }, created);
  if (created.length > 0) options.log.info(`demo setup created ${created.join(', ')}`);
  if (reconnected.length > 0) options.log.info(`demo setup signed in again with ${reconnected.join(', ')} (their local fakes started without the grants of the last start)`);
  return { accountId: account.id, api, site, flow, stageFlow, webhookSecret, created, reconnected };
}
