/**
 * What each dashboard page shows and what each form does, through the same logic as the REST routes (the api/*
 * folders' index.ts): the dashboard adds no second implementation, only the translation from forms to those calls.
 * Input is checked with the REST routes' own schemas (`Validate` runs them with the app's validator).
 */
import type { TSchema } from '@sinclair/typebox';
import type { Database } from '../db/db';
import { platformApiElsewhere, type Settings } from '../settings';
import { serviceSecretBox } from '../db/secret-box';
import { html } from '../http/page';
import type { Notice } from './layout';
import { ApiError, notFound } from '../http/errors';
import { hasControlCharacter } from '../http/input';
import { getSite, listSites, patchSite, createSite, requireSite, ListSitesQuery, SiteFields, parseSiteDomain, parseSiteName, parseTimezone, type SiteRecord } from '../api/sites';
import { allDestinationRecords, redeliverDestination, testDestination, type DestinationRecord } from '../api/destinations';
import { createHandoff, ConnectDestinationBody } from '../api/handoffs';
import { createFlow, flowOverlaps, flowsPublishProblems, getFlow, listFlows, publishFlow, unpublishFlow, CreateFlowBody, type FlowOverlap, type FlowRecord } from '../api/flows';
import { listEvents, EVENT_STATUSES, ListEventsQuery } from '../api/events';
import { identityWindowStart } from '../privacy';
import { erasePerson, erasureTarget, latestErasures, previewErasure, ErasureBody, type ErasureCounts, type ErasureRecord } from '../api/erasures';
import { listOriginTraffic } from '../collector';
import { connectTriggerSource, findTriggerSource, findTriggerSources, reportsAwaitingEvents, revokePreviousWebhookSecret, rotateWebhookSecret } from '../webhook';
import { issueApiKey, listApiKeys, revokeApiKey, type ApiKeyRow } from '../accounts';
import { platformFor, supportedDestinationTypes, type Problem } from '../destinations';
import { FORM_INTEGRATIONS } from '../../protocol/forms';
import { parsePageFilter } from '../../protocol/page-filter';
import { apiTriggerPath } from '../../protocol/webhook';
import { coveringDomainsOf, installCheckOf, loaderSeen } from './install-check';
import { actionFieldOf, type ActionField } from './action-fields';
import { attentionCounts, deliveredEventId, failedDeliveriesByDestination, sitePageCursor, sitesWithDomains } from './sql';
import type { ChartData } from './chart-data';
import type { SetupState } from './setup';
import { triggerOf } from './flow-trigger';
import { conversionsChart, daysBetween, valueChart, type ChartView } from './chart';
import type { SiteView } from './pages/sites';
import type { FlowProblem, FlowsPageData, ShownSecret, TriggerSourceView } from './pages/flows';
import type { EventFilterForm, EventsPageData } from './pages/events';
import type { PlatformChoice, TestOutcome } from './pages/destinations';
import type { ErasureForm } from './pages/privacy';

/** Checks a value against a REST route's schema; throws the REST route's 400 (an ApiError) when it does not pass. */
export type Validate = (schema: TSchema, value: unknown, context: 'body' | 'querystring') => void;

/** A submitted form: string fields only. */
export type Form = Record<string, string>;

/** At most this many sites and flows are shown at once (one page of the REST list); the Sites page pages on by cursor. */
export const DASHBOARD_PAGE_SIZE = 100;
const PAGE = { limit: DASHBOARD_PAGE_SIZE };

/** The account's sites (first page). */
export async function accountSites(db: Database, accountId: string): Promise<SiteRecord[]> {
  return (await listSites(db, accountId, PAGE)).data;
}

/**
 * Sites with their install checks. A refused origin that another site of the account covers is named with that site
 * (its snippet belongs on those pages), looked up by the few domains that would cover the refused origins.
 */
async function withChecks(db: Database, accountId: string, sites: readonly SiteRecord[]): Promise<SiteView[]> {
  return Promise.all(
    sites.map(async (site) => {
      const traffic = await listOriginTraffic(db, site.id);
      const refused = [...new Set(traffic.filter((row) => row.kind === 'refused' && row.reason === 'not_covered').map((row) => row.origin))];
      const siblings = await sitesWithDomains(db, accountId, site.id, [...new Set(refused.flatMap(coveringDomainsOf))]);
      return { site, check: installCheckOf(traffic, site.domain, siblings) };
    }),
  );
}

/** The account's first page of sites, each with its install check (the setup checklist). */
export async function sitesView(db: Database, accountId: string): Promise<SiteView[]> {
  return withChecks(db, accountId, await accountSites(db, accountId));
}

/** One page of the Sites page: up to DASHBOARD_PAGE_SIZE sites after `startingAfter` (a site id), and the next page's cursor. */
export async function sitesPageView(
  db: Database,
  validate: Validate,
  accountId: string,
  startingAfter: unknown,
): Promise<{ views: SiteView[]; nextCursor: string | null }> {
  const query = startingAfter === undefined ? PAGE : { ...PAGE, starting_after: startingAfter };
  validate(ListSitesQuery, query, 'querystring');
  const page = await listSites(db, accountId, query as ListSitesQuery);
  return { views: await withChecks(db, accountId, page.data), nextCursor: page.has_more ? page.next_cursor : null };
}

/**
 * The Sites page's cursor whose page starts with this site, or undefined when the site is on the first page (a site
 * just added or saved is shown where it is, also past the first DASHBOARD_PAGE_SIZE sites).
 */
export async function sitesPageCursorOf(db: Database, accountId: string, siteId: string): Promise<string | undefined> {
  return sitePageCursor(db, accountId, siteId, DASHBOARD_PAGE_SIZE);
}

/** One site of the account with its install check (the Sites page's live fragment); another account's site is not found. */
export async function siteView(db: Database, accountId: string, siteId: string): Promise<SiteView> {
  const [view] = await withChecks(db, accountId, [await getSite(db, accountId, siteId)]);
  return view!;
}

/** What the setup checklist reads of the account: sites (domain, loader seen, webhook secret), destinations, flows, deliveries. */
export async function setupView(db: Database, accountId: string): Promise<SetupState> {
  const [sites, flows, destinations, delivered] = await Promise.all([
    sitesView(db, accountId),
    listFlows(db, accountId, PAGE).then((page) => page.data),
    destinationsView(db, accountId),
    deliveredEventId(db, accountId),
  ]);
  const secrets = await findTriggerSources(db, accountId, sites.map((v) => v.site.id), 'api');
  return {
    sites: sites.map((v) => ({ id: v.site.id, name: v.site.name, domain: v.site.domain, loaderSeen: loaderSeen(v.check), hasWebhookSecret: secrets.get(v.site.id) != null })),
    connectedDestinations: destinations.filter((d) => d.status === 'connected').map((d) => d.label),
    flows: flows.map((f) => ({ id: f.id, status: f.status, trigger: triggerOf(f).kind })),
    firstDeliveredEventId: delivered,
  };
}

/** What the Overview asks the account's people to look at (pages/overview.ts). */
export interface Attention {
  /** Platforms whose connection needs a new authorization (their conversions wait for it). */
  reconnect: string[];
  /** Events that failed in the last ATTENTION_DAYS days. */
  failed: number;
  /** Events of those days still queued an hour after they happened. */
  waiting: number;
  days: number;
}

/** How far back the Overview looks for failures. */
export const ATTENTION_DAYS = 7;
const HOUR_MS = 3_600_000;

/** What needs the account's attention now: destinations to reconnect, failed conversions, conversions stuck in the queue. */
export async function attentionView(db: Database, accountId: string, now: Date = new Date()): Promise<Attention> {
  const since = new Date(now.getTime() - ATTENTION_DAYS * 24 * HOUR_MS);
  const [destinations, counts] = await Promise.all([
    destinationsView(db, accountId),
    attentionCounts(db, accountId, since, new Date(now.getTime() - HOUR_MS)),
  ]);
  return { reconnect: destinations.filter((d) => d.status === 'reauthorization_required').map((d) => d.label), ...counts, days: ATTENTION_DAYS };
}

/** The dashboard's labels of the API's parameters, by form. */
const SITE_LABELS: Readonly<Record<string, string>> = { name: 'Name', domain: 'Domain', timezone: 'Time zone' };
const FLOW_LABELS: Readonly<Record<string, string>> = {
  name: 'Name', site_id: 'Site', 'trigger_config.key': 'Trigger key', 'trigger_config.integrationId': 'Form tool',
  'trigger_config.pageFilter': 'Pages', actions_config: 'Sends to',
};

/**
 * A refusal of the API's validation in the words of the dashboard's form: `Invalid parameter 'trigger_config.key': it
 * …` becomes `Trigger key: it …`, `Missing required parameter: name.` becomes `Name is missing.`, `domain must …` becomes
 * `Domain must …`. Anything else as it is.
 */
export function inFormWords(error: unknown, labels: Readonly<Record<string, string>>): unknown {
  if (error instanceof FormProblems) return error; // in the form's words already
  if (!(error instanceof ApiError) || error.status !== 400 || !error.param || !Object.hasOwn(labels, error.param)) return error;
  const label = labels[error.param]!;
  const named = error.message.startsWith(`${error.param} `) ? `${label}${error.message.slice(error.param.length)}` : error.message;
  const message = named
    .replace(`Invalid parameter '${error.param}': `, `${label}: `)
    .replace(`Invalid parameter '${error.param}'. `, `${label}: `)
    .replace(`Missing required parameter: ${error.param}.`, `${label} is missing.`);
  return new ApiError(error.status, error.type, error.code, message, error.param);
}

/** Runs `fn`, its 400 refusals put in the form's words (inFormWords). */
async function inFormTerms<T>(labels: Readonly<Record<string, string>>, fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (error) {
    throw inFormWords(error, labels);
  }
}

/** A form's refusal naming every field that is wrong (each `{param, message}` in the form's words), not just the first. */
export class FormProblems extends ApiError {
  constructor(readonly problems: ReadonlyArray<{ param: string; message: string }>) {
    super(400, 'invalid_request_error', 'parameter_invalid', problems.map((p) => p.message).join(' '), problems[0]?.param);
  }
}

/** Each site field of a form checked on its own (schema, then its parser): every problem, in the form's words. */
function siteFieldProblems(validate: Validate, fields: Record<string, unknown>): Array<{ param: string; message: string }> {
  const problems: Array<{ param: string; message: string }> = [];
  const parsers = { name: parseSiteName, domain: parseSiteDomain, timezone: parseTimezone } as const;
  for (const [name, parse] of Object.entries(parsers)) {
    if (!Object.hasOwn(fields, name)) continue;
    try {
      validate(SiteFields, { [name]: fields[name] }, 'body');
      parse(fields[name]);
    } catch (error) {
      const worded = inFormWords(error, SITE_LABELS);
      if (!(worded instanceof ApiError) || worded.status !== 400) throw worded;
      problems.push({ param: worded.param ?? name, message: worded.message });
    }
  }
  return problems;
}

/** Refuses a form with any wrong field, naming each. */
function refuseProblems(problems: ReadonlyArray<{ param: string; message: string }>): void {
  if (problems.length > 0) throw new FormProblems(problems);
}

/** The site fields a form sends: an empty domain clears it. Only fields present in the form are sent. */
function siteFieldsOf(form: Form): Record<string, unknown> {
  const fields: Record<string, unknown> = {};
  if (form.name !== undefined) fields.name = form.name;
  if (form.domain !== undefined) fields.domain = form.domain.trim() === '' ? null : form.domain.trim();
  if (form.timezone !== undefined) fields.timezone = form.timezone.trim();
  return fields;
}

/** Saves a site's settings form (PATCH /v1/sites/{id}). */
export async function saveSite(db: Database, validate: Validate, accountId: string, siteId: string, form: Form): Promise<SiteRecord> {
  return inFormTerms(SITE_LABELS, async () => {
    const fields = siteFieldsOf(form);
    refuseProblems(siteFieldProblems(validate, fields));
    validate(SiteFields, fields, 'body');
    return patchSite(db, accountId, siteId, fields as SiteFields);
  });
}

/** Creates a site from the form (POST /v1/sites); unlike the API, a name is required. */
export async function addSite(db: Database, validate: Validate, accountId: string, form: Form): Promise<SiteRecord> {
  return inFormTerms(SITE_LABELS, () => createSiteOf(db, validate, accountId, form));
}

async function createSiteOf(db: Database, validate: Validate, accountId: string, form: Form): Promise<SiteRecord> {
  const fields = siteFieldsOf(form);
  // The API names a site without a name "My Website"; here that would make a second site of the same name.
  const named = typeof fields.name === 'string' && fields.name.trim() !== '';
  const { name: _name, ...others } = fields;
  const missing = { param: 'name', message: 'Give the site a name, to tell it from your other sites.' };
  refuseProblems([...(named ? [] : [missing]), ...siteFieldProblems(validate, named ? fields : others)]);
  validate(SiteFields, fields, 'body');
  return createSite(db, accountId, fields as SiteFields);
}

/** Platforms cnv can connect. */
export function platformChoices(): PlatformChoice[] {
  return supportedDestinationTypes().map((type) => ({ type, label: platformFor(type)?.label ?? type }));
}

/**
 * A warning for the Destinations page when this service sends platforms' calls somewhere else than the platforms
 * (`npm start`'s demo points every one at its local fake), or null: a real connection made now would be refused there.
 */
export function platformsElsewhere(settings: Settings): Notice | null {
  const elsewhere = platformChoices().flatMap((p) => {
    const to = platformApiElsewhere(settings, p.type);
    return to ? [{ label: p.label, ...to }] : [];
  });
  if (elsewhere.length === 0) return null;
  const list = elsewhere.map((e, i) => html`${i > 0 ? ', ' : ''}${e.label} to <code>${e.url}</code>`);
  return {
    kind: 'warn',
    role: 'note',
    text: html`<strong>Not the real platforms.</strong> This service sends ${list} (their <code>CNV_…_API_BASE</code> settings). While <code>npm start</code>’s demo runs, those are its local fakes, which take only the demo’s test values (each connect page shows them beside its fields; docs/demo.md lists them): to connect and deliver to your own ad accounts, restart the service with <code>CNV_DEMO_PORT=off</code>.`,
  };
}

/** The account's destinations. */
export async function destinationsView(db: Database, accountId: string): Promise<DestinationRecord[]> {
  return allDestinationRecords(db, accountId);
}

/** What the Destinations page shows: the connections, the conversion ids to test Google with, the failed deliveries. */
export async function destinationsData(db: Database, accountId: string) {
  const [records, googleConversionIds, failed] = await Promise.all([
    destinationsView(db, accountId),
    liveGoogleConversionIds(db, accountId),
    failedDeliveriesByDestination(db, accountId),
  ]);
  return { records, googleConversionIds, failed };
}

/** Most rounds of REDELIVER_LIMIT_MAX events one press of the dashboard's button sends again (then it says more are left). */
export const DASHBOARD_REDELIVER_ROUNDS = 10;

/**
 * Sends a destination's failed deliveries again (POST /v1/destinations/{id}/redeliver), round after round, and says
 * whether some are left after DASHBOARD_REDELIVER_ROUNDS. `rounds` and `limit` are for tests.
 */
export async function redeliverDestinationFailures(
  db: Database,
  accountId: string,
  id: string,
  { rounds = DASHBOARD_REDELIVER_ROUNDS, limit }: { rounds?: number; limit?: number } = {},
): Promise<{ actions: number; more: boolean }> {
  let actions = 0;
  for (let round = 0; round < rounds; round++) {
    const done = await redeliverDestination(db, accountId, id, limit ? { limit } : {});
    actions += done.actions;
    if (!done.has_more) return { actions, more: false };
  }
  return { actions, more: true };
}

/** Opens a connect_destination handoff (POST /v1/handoffs) and returns its hosted url. */
export async function connectDestination(db: Database, settings: Settings, validate: Validate, accountId: string, form: Form): Promise<string> {
  const body = { purpose: 'connect_destination', destination_type: form.destination_type ?? '' };
  validate(ConnectDestinationBody, body, 'body');
  return (await createHandoff(db, settings, accountId, body as Parameters<typeof createHandoff>[3])).url;
}

/** Tests a connection (POST /v1/destinations/{id}/test); Google Ads validates against the conversion action given. */
export async function testConnection(db: Database, settings: Settings, accountId: string, id: string, form: Form = {}): Promise<TestOutcome> {
  const conversionId = typeof form.conversion_id === 'string' && form.conversion_id.trim() !== '' ? form.conversion_id.trim().slice(0, 200) : undefined;
  const result = await testDestination(db, settings, accountId, id, conversionId);
  return { destinationId: id, ok: result.ok, message: result.message, error: result.error, warning: result.warning, ...(conversionId ? { conversionId } : {}) };
}

/** The Google Ads conversion action ids the account's live flows name, to offer for a connection test. */
export async function liveGoogleConversionIds(db: Database, accountId: string): Promise<string[]> {
  const rows = await db.query<{ id: string }>(
    `select distinct a -> 'config' -> 'conversion' ->> 'id' as id
     from flows f, jsonb_array_elements(f.actions_config) a
     where f.account_id = $1 and f.status = 'live' and a ->> 'integrationId' = 'google-ads' and a -> 'config' -> 'conversion' ->> 'id' is not null
     order by 1`,
    [accountId],
  );
  return rows.map((r) => r.id);
}

/** Everything the Flows page shows. */
export async function flowsView(
  db: Database,
  settings: Settings,
  accountId: string,
  extra: Pick<FlowsPageData, 'shownSecret' | 'error'> = {},
): Promise<FlowsPageData> {
  const [sitePage, flowPage, destinations] = await Promise.all([
    listSites(db, accountId, PAGE),
    listFlows(db, accountId, PAGE),
    destinationsView(db, accountId),
  ]);
  const flows = flowPage.data;
  // A flow shown on the page is shown with its site (its webhook URL, its backend), also one past the first page of sites.
  const sites = [...sitePage.data];
  for (const siteId of new Set(flows.map((f) => f.site_id))) {
    if (!sites.some((s) => s.id === siteId)) sites.push(await getSite(db, accountId, siteId));
  }
  // One statement for every site's webhook secret (one a site ran behind a delivery burst's statements: seconds).
  const triggerSources: Map<string, TriggerSourceView | null> = await findTriggerSources(db, accountId, sites.map((s) => s.id), 'api');
  const publishProblems = new Map<string, FlowProblem[]>();
  const drafts = flows.filter((flow) => flow.status !== 'live');
  const problemsOf = await flowsPublishProblems(db, accountId, drafts.map((flow) => flow.id));
  for (const flow of drafts) publishProblems.set(flow.id, dashboardProblems(problemsOf.get(flow.id) ?? [], flow, sites, triggerSources));
  // Flows sending one conversion twice where a platform counts each (both cards say so, a draft before it goes live).
  const overlaps = new Map<string, FlowOverlap[]>();
  for (const flow of flows) {
    const found = flowOverlaps(flow, flows);
    if (found.length > 0) overlaps.set(flow.id, found);
  }
  return {
    flows,
    publishProblems,
    overlaps,
    sites,
    more: { flows: flowPage.has_more, sites: sitePage.has_more },
    destinations,
    triggerSources,
    formIntegrations: FORM_INTEGRATIONS,
    webhookBaseUrl: settings.webhookBaseUrl,
    webhookUrlOf: (site, key, type) =>
      `${settings.webhookBaseUrl}${apiTriggerPath(site.site_key, key, type)}`,
    ...extra,
  };
}

/** The body of POST /v1/flows a create form asks for: the trigger chosen, one action per destination ticked. */
export function flowBodyOf(form: Form): Record<string, unknown> {
  const trigger =
    form.trigger_type === 'form'
      ? { integrationId: form.integration ?? '', pageFilter: (form.page_filter ?? '').trim() || 'all' }
      : { type: form.api_type === 'conversion' ? 'conversion' : 'saas_signup', integrationId: 'api', key: (form.key ?? '').trim() };
  const actions = supportedDestinationTypes()
    .filter((type) => form[`action_${type}`] === 'on')
    .map((type) => ({ integrationId: type, config: actionFieldOf(type).config((form[`value_${type}`] ?? '').trim()) }));
  return { site_id: form.site_id ?? '', name: form.name ?? '', trigger_config: trigger, actions_config: actions };
}

/** Creates a draft flow from the form (POST /v1/flows). */
export async function addFlow(db: Database, validate: Validate, accountId: string, form: Form): Promise<FlowRecord> {
  return inFormTerms(FLOW_LABELS, () => createFlowOf(db, validate, accountId, form));
}

async function createFlowOf(db: Database, validate: Validate, accountId: string, form: Form): Promise<FlowRecord> {
  const body = flowBodyOf(form);
  // Every check runs, so that a form with several mistakes is told of them all at once.
  const problems: Array<{ param: string; message: string }> = [];
  const refused = (error: unknown) => {
    const worded = inFormWords(error, FLOW_LABELS);
    if (!(worded instanceof ApiError) || worded.status !== 400) throw worded;
    problems.push({ param: worded.param ?? 'name', message: worded.message });
  };
  const actions = body.actions_config as { integrationId: string; config: Record<string, unknown> }[];
  if (actions.length === 0) problems.push({ param: 'actions_config', message: 'Tick at least one destination for the flow to send to.' });
  try {
    // The schema's own checks (name, trigger), the actions aside when none is ticked (said above).
    validate(CreateFlowBody, actions.length === 0 ? { ...body, actions_config: [{ integrationId: 'meta', config: {} }] } : body, 'body');
  } catch (error) {
    refused(error);
  }
  // The dashboard cannot edit a flow later, so what would keep it from publishing is said now: its page filter…
  const pages = (body.trigger_config as { pageFilter?: unknown }).pageFilter;
  if (pages !== undefined) {
    const filter = parsePageFilter(pages);
    if (!filter.ok && !problems.some((p) => p.param === 'trigger_config.pageFilter')) problems.push({ param: 'page_filter', message: `Pages: ${filter.error}` });
  }
  // …and its actions.
  const trigger = (body.trigger_config as { integrationId?: string }).integrationId === 'api' ? 'saas_signup' : 'form_submission';
  for (const [i, action] of actions.entries()) {
    const platform = platformFor(action.integrationId);
    const [problem] = platform?.checkAction(action.config, `actions_config[${i}].config`, trigger) ?? [];
    if (problem && !problems.some((p) => p.param.startsWith(`actions_config[${i}]`))) {
      problems.push({ param: `value_${action.integrationId}`, message: `${platform!.label}: ${inWords(problem.message, `actions_config[${i}].config`, actionFieldOf(action.integrationId))}` });
    }
  }
  refuseProblems(problems);
  return createFlow(db, accountId, body as CreateFlowBody);
}

/**
 * An API problem message about an action's config in the form's words: the path of its one field (`….config.conversion.id`)
 * becomes the field's label, any other path the key alone.
 */
export function inWords(message: string, param: string, field: Pick<ActionField, 'label' | 'param'>): string {
  const text = message.split(`${param}.${field.param}`).join(field.label.toLowerCase()).split(`${param}.`).join('').split(param).join(field.label.toLowerCase());
  return text.charAt(0).toUpperCase() + text.slice(1);
}

/**
 * What keeps a draft from publishing, in the dashboard's words, each with the fix: the webhook secret its site lacks,
 * the platform to connect, or what an action's setting needs.
 */
export function dashboardProblems(
  problems: readonly Problem[],
  flow: FlowRecord,
  sites: readonly SiteRecord[],
  triggerSources: ReadonlyMap<string, TriggerSourceView | null>,
): FlowProblem[] {
  const site = sites.find((s) => s.id === flow.site_id);
  const trigger = triggerOf(flow);
  return problems.map((problem): FlowProblem => {
    if (problem.param === 'site_id') return { text: "This flow's site no longer exists: create the flow again on another site." };
    if (problem.param === 'trigger_config' && trigger.kind === 'api' && site && !triggerSources.get(site.id)) {
      return {
        text: `Your backend is not connected to ${site.name} yet: create the webhook secret your server signs its signup reports with.`,
        fix: { post: `/dashboard/sites/${site.id}/webhook-secret`, label: 'Create webhook secret' },
      };
    }
    const action = /^actions_config\[(\d+)\]\.(integrationId|config)/.exec(problem.param);
    if (action) {
      const type = String(flow.actions_config[Number(action[1])]?.integrationId ?? '');
      const platform = platformFor(type);
      if (!platform) return { text: `${type} is not a platform cnv can send to.` };
      if (action[2] === 'integrationId') {
        return {
          text: `${platform.label} is not connected to cnv.`,
          fix: { post: '/dashboard/destinations/connect', label: `Connect ${platform.label}`, fields: { destination_type: type } },
        };
      }
      return { text: `${platform.label}: ${inWords(problem.message, `actions_config[${action[1]}].config`, actionFieldOf(type))}` };
    }
    return { text: problem.message.charAt(0).toUpperCase() + problem.message.slice(1) };
  });
}

/** Publishes or unpublishes a flow (POST /v1/flows/{id}/publish, /unpublish). */
export async function setFlowLive(db: Database, accountId: string, id: string, live: boolean): Promise<FlowRecord> {
  return live ? publishFlow(db, accountId, id) : unpublishFlow(db, accountId, id);
}

/**
 * A new webhook secret for a site's API trigger, shown once: a rotation when it has one (the previous secret verifies
 * for the grace period), else the trigger source is connected with its first secret (as a trigger-source handoff does).
 */
export async function newWebhookSecret(db: Database, settings: Settings, accountId: string, siteId: string, now = new Date()): Promise<ShownSecret> {
  const site = await requireSite(db, accountId, siteId);
  const box = serviceSecretBox(settings);
  const existing = await findTriggerSource(db, accountId, site.id, 'api');
  if (existing) {
    const rotated = await rotateWebhookSecret(db, box, site.id, 'api', now);
    if (rotated) return { siteId: site.id, secret: rotated.secret, previousValidUntil: rotated.source.previous_secret_expires_at };
  }
  const connected = await connectTriggerSource(db, box, accountId, site.id, 'api', now);
  return { siteId: site.id, secret: connected.secret, previousValidUntil: connected.created ? null : connected.source.previous_secret_expires_at };
}

/** Ends the previous webhook secret's grace period at once (after a rotation because it leaked). */
export async function revokeOldWebhookSecret(db: Database, accountId: string, siteId: string): Promise<boolean> {
  const site = await requireSite(db, accountId, siteId);
  return revokePreviousWebhookSecret(db, accountId, site.id, 'api');
}

/** Days the chart covers. */
export const CHART_DAYS = 14;

/**
 * The Events page's status choice for the events whose person was erased: they show an `erased` badge whatever their
 * delivery status, and `failed` leaves them out. Not a status of GET /v1/events (the spec fixes those).
 */
export const ERASED_CHOICE = 'erased';

/** The Events page's status choices: the spec's statuses, then erased. */
export const EVENT_STATUS_CHOICES: readonly string[] = [...EVENT_STATUSES, ERASED_CHOICE];

/** The REST query of the Events page's filters (dates become inclusive UTC day bounds; erased is no REST status). */
export function eventsQueryOf(filters: EventFilterForm, cursor: string | undefined): Record<string, unknown> {
  const query: Record<string, unknown> = {};
  if (filters.site_id) query.site_id = filters.site_id;
  if (filters.flow_id) query.flow_id = filters.flow_id;
  if (filters.email) query.email = filters.email;
  if (filters.status && filters.status !== ERASED_CHOICE) query.status = filters.status;
  if (filters.from) query.occurred_after = /^\d{4}-\d{2}-\d{2}$/.test(filters.from) ? `${filters.from}T00:00:00.000Z` : filters.from;
  if (filters.to) query.occurred_before = /^\d{4}-\d{2}-\d{2}$/.test(filters.to) ? `${filters.to}T23:59:59.999Z` : filters.to;
  if (cursor) query.starting_after = cursor;
  return query;
}

/** The filters of the page's query string (unknown keys ignored, empty values dropped), and the chart's view. */
export function eventFiltersOf(query: Record<string, unknown>): { filters: EventFilterForm; cursor: string | undefined; chartView: ChartView } {
  const pick = (key: string) => (typeof query[key] === 'string' && query[key] !== '' ? (query[key] as string).slice(0, 320) : undefined);
  const filters: EventFilterForm = {};
  for (const key of ['site_id', 'flow_id', 'email', 'status', 'from', 'to'] as const) {
    const value = pick(key);
    if (value !== undefined) filters[key] = value;
  }
  return { filters, cursor: pick('starting_after'), chartView: query.chart === 'value' ? 'value' : 'conversions' };
}

/** Everything the Events page shows; a filter the REST route refuses becomes the page's error, with no events. */
export async function eventsView(
  db: Database,
  validate: Validate,
  accountId: string,
  filters: EventFilterForm,
  cursor: string | undefined,
  retentionDays: number,
  now: Date,
  chartView: ChartView,
  chartData: ChartData,
): Promise<EventsPageData> {
  const [sites, flows, awaitingEvents] = await Promise.all([
    accountSites(db, accountId),
    listFlows(db, accountId, PAGE).then((p) => p.data),
    reportsAwaitingEvents(db, accountId),
  ]);
  let listed: Pick<EventsPageData, 'events' | 'nextCursor' | 'error' | 'errorField'>;
  try {
    const query = eventsQueryOf(filters, cursor);
    validate(ListEventsQuery, query, 'querystring');
    const page = await listEvents(db, accountId, query as ListEventsQuery, identityWindowStart(retentionDays, now), { erased: filters.status === ERASED_CHOICE });
    listed = { events: page.data, nextCursor: page.next_cursor };
    // The filters' lists hold the first page of sites and flows; a site or flow past it (the link of a Sites page card,
    // of a flow's card) is added, so the filter shows it chosen and the chart is of it, as the list is. The listing
    // above found both in the account.
    if (filters.site_id && !sites.some((s) => s.id === filters.site_id)) sites.push(await getSite(db, accountId, filters.site_id));
    if (filters.flow_id && !flows.some((f) => f.id === filters.flow_id)) flows.push(await getFlow(db, accountId, filters.flow_id));
  } catch (error) {
    if (!(error instanceof ApiError && error.status < 500)) throw error;
    const errorField = FILTER_PARAMS.find((filter) => filter.param === error.param)?.field;
    // The page's Status offers erased too, which the API's status does not know: its refusal would list three of four.
    const message = error.param === 'status' ? `Status must be one of ${EVENT_STATUS_CHOICES.join(', ')}.` : inFilterWords(error.message);
    listed = { events: [], nextCursor: null, error: message, ...(errorField ? { errorField } : {}) };
  }
  const since = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate() - (CHART_DAYS - 1)));
  const siteForChart = filters.site_id && sites.some((s) => s.id === filters.site_id) ? filters.site_id : undefined;
  const days = daysBetween(since, now);
  const today = days[days.length - 1]!;
  const chart =
    chartView === 'value'
      ? valueChart(await chartData.value(accountId, siteForChart, days, today), days)
      : conversionsChart(await chartData.conversions(accountId, siteForChart, days, today), days);
  return { filters, cursor, sites, flows, statuses: EVENT_STATUS_CHOICES, chart, chartView, awaitingEvents, identityDays: retentionDays, ...listed };
}

/**
 * Each API parameter of the Events page's filters: the page's field of it (marked invalid when a refusal names it) and,
 * where the API's name differs from the page's label, the label a refusal's message uses instead.
 */
const FILTER_PARAMS: ReadonlyArray<{ param: string; field: string; label?: string }> = [
  { param: 'occurred_after', field: 'from', label: 'From' },
  { param: 'occurred_before', field: 'to', label: 'To' },
  { param: 'site_id', field: 'site_id', label: 'Site' },
  { param: 'flow_id', field: 'flow_id', label: 'Flow' },
  { param: 'status', field: 'status' },
  { param: 'email', field: 'email' },
];

/** A refusal's message with the filters' API names as the Events page labels its fields. */
function inFilterWords(message: string): string {
  return FILTER_PARAMS.reduce((text, { param, label }) => (label ? text.replaceAll(param, label) : text), message);
}

/** The account's API keys. */
export async function keysView(db: Database, accountId: string): Promise<ApiKeyRow[]> {
  return listApiKeys(db, accountId);
}

/** A new API key of the account, returned in clear this once. */
export async function addApiKey(db: Database, accountId: string, form: Form): Promise<{ id: string; key: string }> {
  // Checked as sent, as REST checks a name (the ranges of SINGLE_LINE_TEXT), then trimmed: a trailing line break or tab
  // is refused, not dropped. A blank label gets the default below.
  const sent = form.label ?? '';
  const label = sent.trim();
  if (sent.length > 200) throw new ApiError(400, 'invalid_request_error', 'parameter_invalid', 'The label is longer than 200 characters.', 'label');
  if (hasControlCharacter(sent)) {
    throw new ApiError(400, 'invalid_request_error', 'parameter_invalid', 'The label must be one line of text, without control characters.', 'label');
  }
  // Without a label, one that still tells keys apart: when it was made.
  return issueApiKey(db, accountId, label || `Made in the dashboard, ${new Date().toISOString().slice(0, 16).replace('T', ' ')} UTC`);
}

/** Revokes one of the account's keys (another account's key is not found). */
export async function revokeAccountKey(db: Database, accountId: string, keyId: string): Promise<ApiKeyRow> {
  const key = (await listApiKeys(db, accountId)).find((k) => k.id === keyId);
  if (!key) throw notFound('API key', keyId);
  return (await revokeApiKey(db, key.id))!;
}

/** How many erasures the Personal data page lists. */
export const ERASURES_SHOWN = 100;

/** The account's latest erasures, newest first: only those shown are read, whatever the account's history holds. */
export async function erasuresView(db: Database, accountId: string): Promise<ErasureRecord[]> {
  return latestErasures(db, accountId, ERASURES_SHOWN);
}

/** The erasure form's fields as typed. */
export function erasureFormOf(form: Form): ErasureForm {
  return { email: form.email ?? '', phone: form.phone ?? '', customer_id: form.customer_id ?? '' };
}

/** The REST body of an erasure form (blank fields left out), checked with the REST route's schema and rules. */
function erasureTargetOf(validate: Validate, values: ErasureForm) {
  const body = Object.fromEntries(Object.entries(values).filter(([, value]) => value.trim() !== ''));
  validate(ErasureBody, body, 'body');
  return erasureTarget(body as ErasureBody);
}

/** What erasing the person of the form would remove (nothing changes). */
export async function previewPersonErasure(
  db: Database, validate: Validate, hash: (value: string) => string, accountId: string, values: ErasureForm,
): Promise<ErasureCounts> {
  return previewErasure(db, accountId, erasureTargetOf(validate, values), hash);
}

/** Erases the person of the form, as POST /v1/erasures does. */
export async function erasePersonOfForm(
  db: Database, validate: Validate, hash: (value: string) => string, accountId: string, values: ErasureForm,
): Promise<ErasureRecord> {
  return erasePerson(db, accountId, erasureTargetOf(validate, values), hash);
}
