/**
 * The agent tools: one table of name, description (written for a model), input schema and the REST request each input
 * becomes. A tool is a thin layer over one REST route: the route's own schema checks the input and its logic runs, so
 * no rule lives here twice. Input schemas are the REST routes' TypeBox schemas, imported through each folder's index.
 */
import { Type, type TSchema } from '@sinclair/typebox';
import { ListSitesQuery, SiteFields, SiteIdParams } from '../api/sites';
import { ConnectDestinationBody, ConnectTriggerSourceBody, HandoffIdParams } from '../api/handoffs';
import { CreateFlowBody, FlowIdParams, ListFlowsQuery, PatchFlowBody } from '../api/flows';
import { DestinationIdParams, ListDestinationsQuery, REDELIVER_LIMIT_MAX, RedeliverDestinationBody } from '../api/destinations';
import { EventIdParams, ListEventsQuery, URL_ENCODE_OFFSET } from '../api/events';
import { supportedDestinationTypes } from '../destinations';
import { invalidParam, missingParam, printable } from '../http/errors';
import { NOT_WITH_ENDING_BEFORE } from '../http/pagination';
import { isWellFormedText, nonFiniteNumberPath, numberTooLarge } from '../http/json-text';
import type { ErrorBody } from '../../protocol/errors';
import { installSnippet } from '../../protocol/install';
import { apiTriggerPath } from '../../protocol/webhook';

/** A tool's arguments as the client sent them (checked by the REST route, not here, but for undeclared names). */
export type ToolInput = Record<string, unknown>;

export type RestMethod = 'GET' | 'POST' | 'PATCH';

/** One REST call: a method, a path under /v1, query parameters and a JSON body. */
export interface RestRequest {
  method: RestMethod;
  path: string;
  query?: ToolInput;
  body?: unknown;
}

export interface RestResponse {
  status: number;
  body: unknown;
}

/**
 * How a transport reaches the REST API: stdio over fetch to the running service, POST /mcp through `app.inject` on the
 * same app. Either way the caller's API key goes along, so the call is scoped to its account.
 */
export type CallRest = (method: RestMethod, path: string, options: { query?: ToolInput; body?: unknown }) => Promise<RestResponse>;

export interface ToolDefinition {
  name: string;
  title: string;
  description: string;
  /** A JSON Schema object (TypeBox), the REST route's own input schema. */
  inputSchema: TSchema;
  /** True for tools that only read. */
  readOnly: boolean;
  /**
   * True for tools that may overwrite or undo what was there (MCP's destructiveHint: not only additive): a site's
   * setting replaced or cleared, a flow's actions replaced, a live flow stopped.
   */
  destructive?: boolean;
  /** True for tools that reach outside cnv (MCP's openWorldHint): the redeliver tools send to the ad platforms. */
  openWorld?: boolean;
  /** The REST request for an input. */
  toRequest(input: ToolInput): RestRequest;
  /** True for tools whose next step needs the service's public base URL (the install snippet's address). */
  usesPublicUrl?: boolean;
  /**
   * A sentence for the model about what to do after an error, in tools rather than REST routes: the route's message
   * may name a REST request (POST /v1/…) that the model can only make through a tool, or none.
   */
  errorStep?(error: ErrorBody['error'], input: ToolInput): string | undefined;
  /** A sentence for the model about what comes next, read from a successful answer. */
  nextStep?(body: Record<string, unknown>, context: NextStepContext): string | undefined;
  /** A REST read (with the same key) whose answer the next step also needs, such as the flow's site; none when undefined. */
  nextStepRead?(body: Record<string, unknown>): RestRequest | undefined;
}

/** What a next step may need besides the answer. */
export interface NextStepContext {
  /** The tool's arguments. */
  input: ToolInput;
  /** The service's public base URL (CNV_PUBLIC_URL), when the tool asked for it and it is known. */
  publicUrl?: string;
  /** The answer of the tool's nextStepRead, when it succeeded. */
  read?: Record<string, unknown>;
}

/** What a transport tells the tools about the service. */
export interface ToolContext {
  /** The service's public base URL, the address of the install snippet; read only by the tools that print it. */
  publicUrl?: () => Promise<string | undefined>;
}

/** Thrown while building a request when a path parameter is missing (the path cannot be written without it). */
class ToolInputError extends Error {
  constructor(readonly body: ErrorBody) {
    super(body.error.message);
  }
}

/** Splits the `{id}` of a path from the rest of the input. */
function withId(input: ToolInput): { id: string; rest: ToolInput } {
  const { id, ...rest } = input;
  if (id === undefined || id === null || id === '') throw new ToolInputError(missingParam('id').toBody());
  if (typeof id !== 'string') throw new ToolInputError(invalidParam('id', `id must be a string, not ${Array.isArray(id) ? 'an array' : typeof id}.`).toBody());
  // A lone UTF-16 surrogate cannot be percent-encoded (encodeURIComponent throws): no id holds one.
  if (!isWellFormedText(id)) throw new ToolInputError(invalidParam('id', 'id holds an unpaired UTF-16 surrogate: no id does.').toBody());
  // `.` and `..` are left as they are by encodeURIComponent, and a path normalized with them names another route.
  if (id === '.' || id === '..') throw new ToolInputError(invalidParam('id', `'${id}' is no id.`).toBody());
  return { id: encodeURIComponent(id), rest };
}

/** The properties of an object schema, for composing a tool input from the REST schemas. */
function propertiesOf(schema: TSchema): Record<string, TSchema> {
  return (schema as unknown as { properties?: Record<string, TSchema> }).properties ?? {};
}

const NEXT_PAGE = 'To read the next page, call again with starting_after set to next_cursor, while has_more is true.';

/**
 * A REST schema with some parameters described for the tool (the validation stays the route's own): the tool writes
 * the query string itself, so a value is sent as it is, never URL-encoded by the caller, and a parameter the tool
 * leaves out (ending_before) is not named.
 */
function redescribed(schema: TSchema, descriptions: Record<string, string>): TSchema {
  const properties = { ...propertiesOf(schema) };
  for (const [name, description] of Object.entries(descriptions)) properties[name] = { ...properties[name]!, description };
  return { ...schema, properties } as TSchema;
}

/** The list tools' `starting_after` (an id cursor), without the REST route's ending_before. */
const ID_CURSOR = { starting_after: 'Return the items after this id: the next_cursor of the previous page.' };

/** A timestamp as a tool takes it: the tool encodes the query, so a + offset is written as it is. */
const TOOL_TIMESTAMP = 'an ISO 8601 timestamp with a time zone, such as 2026-11-21T09:30:00Z or 2026-11-21T10:30:00+01:00 (as it is: do not URL-encode it)';

/**
 * Advice of the REST routes' descriptions that is wrong for a tool, which writes the query itself: quoted by a REST
 * error's message ("Expected: …"), it is taken out of a tool's error.
 */
const REST_ONLY_ADVICE = [URL_ENCODE_OFFSET, NOT_WITH_ENDING_BEFORE];

/** The connect tool call that makes a fresh handoff like this one (for one that expired). */
function freshHandoffCall(body: Record<string, unknown>): string {
  if (body.purpose === 'connect_destination') return `connect_destination with destination_type '${String(body.destination_type)}'`;
  return body.site_id ? `connect_trigger_source with site_id '${String(body.site_id)}'` : 'connect_trigger_source';
}

/**
 * What to do next with a handoff, by its status: a pending one's url goes to the user (`fresh`: just made by a connect
 * tool) or is still awaited (read again by get_handoff); a completed one needs nothing; an expired one's url is dead
 * (its hosted page answers 410), so a new handoff is made.
 */
function handoffStep(body: Record<string, unknown>, fresh: boolean): string {
  const id = String(body.id);
  switch (body.status) {
    case 'completed':
      return `Handoff ${id} is completed: the user finished the hosted page.`;
    case 'expired':
      return (
        `Handoff ${id} has expired: nobody finished its hosted page within a day, and its url no longer works (do not give ` +
        `it to the user). Nothing was connected. To try again, call ${freshHandoffCall(body)} for a fresh link.`
      );
    case 'pending':
      // Its link cannot be shown when it was sealed under another CNV_SECRET_KEY: whoever holds it can still finish it.
      if (typeof body.url !== 'string') {
        return (
          `Handoff ${id} is pending, but cnv can no longer show its url (the service's key changed since it was made). If ` +
          `the user still has the link, they can finish it; otherwise call ${freshHandoffCall(body)} for a fresh link.`
        );
      }
      return fresh
        ? `Handoff ${id} is pending. Give the user this url and ask them to open it in their browser: ${String(body.url)} . ` +
            'Nothing is connected until they finish that page. When they say they are done, call get_handoff with this id.'
        : `Handoff ${id} is still pending: the user has not finished ${String(body.url)} yet. Ask them to open it in their ` +
            'browser and finish it, and call get_handoff again when they say they are done.';
    default:
      return `Handoff ${id} has status '${String(body.status)}'; its url is not known to work: do not give it to the user.`;
  }
}

/** What to do when the account has no site: every setup step needs one. */
const NO_SITE_STEP = "Call create_site with the website's domain (ask the user for its address), then go on with that site's id.";

/**
 * What to do next with a site: one without a domain accepts no page (set it with update_site); one with a domain needs
 * the install snippet (DESIGN.md, Install snippet) on every page of the website, which only the user can paste, or no
 * ad click is captured and no signup can be paired with one.
 */
function siteStep(site: Record<string, unknown>, publicUrl: string | undefined): string {
  const named = `Site ${String(site.id)}${typeof site.name === 'string' ? ` ("${printable(site.name, 200)}")` : ''}`;
  if (typeof site.domain !== 'string' || site.domain === '') {
    return (
      `${named} has no domain yet: the tracking snippet accepts no page, so no ad click is captured. Ask the user for ` +
      "the website's address and call update_site with this id and domain."
    );
  }
  if (publicUrl === undefined || typeof site.site_key !== 'string') {
    return `${named} accepts pages of ${site.domain}; the user's dashboard (Sites page) shows its install snippet.`;
  }
  return (
    `${named} accepts pages of ${site.domain}. Unless the user has done so already, give them its install snippet to ` +
    "paste into the <head> of every page of the website (or a tag manager's Custom HTML tag on all pages): without it " +
    `no ad click is captured and no signup can be paired with one. ${installSnippet(publicUrl, site.site_key)}`
  );
}

/** What to do once a flow is live: how its trigger fires, and where a test conversion shows. */
function liveFlowStep(flow: Record<string, unknown>, { read: site }: NextStepContext = { input: {} }): string | undefined {
  if (flow.status !== 'live') return undefined;
  const id = String(flow.id);
  const trigger = isRecord(flow.trigger_config) ? flow.trigger_config : {};
  const warnings = Array.isArray(flow.warnings) ? flow.warnings.filter(isRecord).map((w) => String(w.message)) : [];
  const warned = warnings.length > 0 ? ` Tell the user before anything else (the flow is live): ${warnings.join(' ')}` : '';
  const check = `Ask the user for a test conversion, then call list_events with flow_id '${id}' to see it arrive and get_event for its deliveries.${warned}`;
  if (trigger.integrationId === 'api') {
    const key = String(trigger.key);
    const stage = trigger.type === 'conversion';
    const report = stage ? 'a later stage (with the customer_id of the signup)' : 'a signup';
    // The path with the site's key (read with the flow's site_id), or {site_key} left for it when that read failed (a
    // trigger key is [A-Za-z0-9_-]: decoding changes nothing of it).
    const siteKey = typeof site?.site_key === 'string' ? site.site_key : undefined;
    const path = decodeURIComponent(apiTriggerPath(siteKey ?? '{site_key}', key, stage ? 'conversion' : 'saas_signup'));
    const whose = siteKey
      ? `site ${String(flow.site_id)}'s${typeof site?.name === 'string' ? ` ("${printable(site.name, 200)}")` : ''}`
      : "site's";
    return (
      `Flow ${id} is live: it fires when the user's backend reports ${report} through the ${whose} signed webhook ` +
      `...${path} (with the cnv client: ${siteKey ? `siteKey '${siteKey}', ` : ''}triggerKey '${key}'). ${check}`
    );
  }
  return (
    `Flow ${id} is live: it fires on a submission of a ${String(trigger.integrationId)} form on the pages ` +
    `'${String(trigger.pageFilter)}' of the site, which must carry the install snippet (list_sites). ${check}`
  );
}

const DESTINATION_TYPES = supportedDestinationTypes().join(', ');

/** The tools, in the order of the typical path. */
export const TOOLS: readonly ToolDefinition[] = [
  {
    name: 'list_sites',
    title: 'List sites',
    description:
      'List the sites of the account. A site is the root of everything else: flows and events belong to one. Each site has ' +
      'id (site_…, what the other tools take as site_id), name, domain, timezone and site_key (the public key of the install ' +
      `snippet and of the webhook URL). Call this first to learn the site id. Returns {data, has_more, next_cursor}, and ` +
      "for each site what it still needs: a domain (update_site), or its install snippet for the user to put on every " +
      `page of the website. ${NEXT_PAGE}`,
    inputSchema: redescribed(Type.Omit(ListSitesQuery, ['ending_before'], { additionalProperties: false }), ID_CURSOR),
    readOnly: true,
    toRequest: (input) => ({ method: 'GET', path: '/v1/sites', query: input }),
    usesPublicUrl: true,
    nextStep: (body, { publicUrl, input }) => {
      const sites = Array.isArray(body.data) ? body.data.filter(isRecord) : [];
      if (sites.length > 0) return sites.map((site) => siteStep(site, publicUrl)).join('\n');
      // An empty page after a cursor is the end of the list, not an account without sites.
      return input.starting_after === undefined || input.starting_after === null ? `The account has no site. ${NO_SITE_STEP}` : undefined;
    },
  },
  {
    name: 'update_site',
    title: 'Update a site',
    description:
      "Change a site's settings; send the site id and only the fields to change. Most often: set domain to the bare origin " +
      'of the website (such as https://www.example.com): until a domain is set, the tracking snippet accepts no page, so no ' +
      'ad click is captured. Returns the updated site and, once it has a domain, its install snippet: the user must paste ' +
      'it into every page of the website.',
    inputSchema: Type.Object(
      { ...propertiesOf(SiteIdParams), ...propertiesOf(SiteFields) },
      { additionalProperties: false, description: 'The site id and the fields to change.' },
    ),
    readOnly: false,
    destructive: true,
    toRequest: (input) => {
      const { id, rest } = withId(input);
      return { method: 'PATCH', path: `/v1/sites/${id}`, body: rest };
    },
    usesPublicUrl: true,
    nextStep: (body, { publicUrl }) => siteStep(body, publicUrl),
  },
  {
    name: 'create_site',
    title: 'Create a site',
    description:
      'Create a site in the account, for a website on a domain no site of the account covers yet (a landing-page ' +
      "domain, a second brand); all fields are optional. A site accepts pages of its domain and of that domain's " +
      'subdomains (https://example.com covers https://www.example.com and https://app.example.com, but ' +
      'https://www.example.com does not cover https://app.example.com), so check list_sites first: a page a site ' +
      'already covers needs no other site. Each site has its own install snippet, API trigger (connect_trigger_source ' +
      "with its site_id), flows and events; the account's destinations are shared by all its sites. A signup reported to " +
      "one site's webhook is paired only with what that site's snippet captured: the site whose snippet runs on the " +
      "signup page is the one whose webhook the user's backend reports to. Returns the new site (its id is the site_id " +
      'the other tools take) and, once it has a domain, its install snippet for the user.',
    inputSchema: Type.Object(propertiesOf(SiteFields), {
      additionalProperties: false,
      description: 'The new site: name, domain and the other settings, each optional (a site without a domain accepts no page yet).',
    }),
    readOnly: false,
    toRequest: (input) => ({ method: 'POST', path: '/v1/sites', body: input }),
    usesPublicUrl: true,
    nextStep: (body, { publicUrl }) =>
      `${siteStep(body, publicUrl)} Its flows and webhook are its own: pass site_id '${String(body.id)}' to ` +
      'connect_trigger_source, create_flow and list_events for this website.',
  },
  {
    name: 'connect_destination',
    title: 'Connect an ad platform',
    description:
      `Start connecting an ad platform (a destination: ${DESTINATION_TYPES}) to the account, so flows can send it ` +
      "conversions. Returns a handoff {id, url, status: 'pending'}. You cannot finish it yourself: give the url to the user " +
      'and ask them to open it in their browser, where they sign in to the platform or paste its credentials (these never ' +
      "pass through you). Then call get_handoff with the id to check that status is 'completed'. publish_flow refuses a " +
      'flow whose destination is not connected yet. A destination belongs to the account and serves all its sites, one ' +
      'per platform: when list_destinations already shows this platform, finishing the page replaces that connection (its ' +
      'ad account, pixel or credentials) for every site of the account, so do it only to reconnect the same ad account ' +
      "or when the user wants all the account's sites to send to the new one (a website sending to another ad account " +
      'of the same platform belongs in a cnv account of its own).',
    inputSchema: Type.Omit(ConnectDestinationBody, ['purpose'], { additionalProperties: false }),
    readOnly: false,
    toRequest: (input) => ({ method: 'POST', path: '/v1/handoffs', body: { purpose: 'connect_destination', ...input } }),
    nextStep: (body) => handoffStep(body, true),
  },
  {
    name: 'connect_trigger_source',
    title: "Connect the backend's signed webhook",
    description:
      "Connect the API trigger of a site: the signed webhook the user's backend calls to report a conversion such as a " +
      "signup. Returns a handoff {id, url, status: 'pending'}. Ask the user to open this url in their browser to see the " +
      "webhook URL and the webhook secret, and to put them into their backend's configuration (for example for the cnv " +
      'client library). The secret is never shown to you and must not be pasted into this conversation. Then call ' +
      'get_handoff with the id to check that it is completed. site_id may be left out when the account has one site. ' +
      "Once per site is enough: finishing it again replaces the site's webhook secret (the old one keeps working for 24 " +
      "hours, then the backend's reports are refused until it has the new one), so do not call it again unless the user " +
      'lost the secret or wants a new one.',
    inputSchema: Type.Omit(ConnectTriggerSourceBody, ['purpose'], { additionalProperties: false }),
    readOnly: false,
    toRequest: (input) => ({ method: 'POST', path: '/v1/handoffs', body: { purpose: 'connect_trigger_source', ...input } }),
    errorStep: (error) => (error.code === 'no_site' ? NO_SITE_STEP : undefined),
    nextStep: (body) => handoffStep(body, true),
  },
  {
    name: 'get_handoff',
    title: 'Check a handoff',
    description:
      'Read a handoff made by connect_destination or connect_trigger_source, to learn whether the user has finished its ' +
      "hosted page: status is 'pending' until then and 'completed' after (completed_at says when); 'expired' when nobody " +
      'finished it within a day: its url no longer works, so call connect_destination or connect_trigger_source again for ' +
      'a fresh link. Call it when the user ' +
      'says they are done; do not poll in a tight loop.',
    inputSchema: HandoffIdParams,
    readOnly: true,
    toRequest: (input) => ({ method: 'GET', path: `/v1/handoffs/${withId(input).id}` }),
    nextStep: (body) => handoffStep(body, false),
  },
  {
    name: 'list_destinations',
    title: 'List connected ad platforms',
    description:
      'List the ad platforms connected to the account (destinations), each with id, type (the integrationId a flow action ' +
      "names), account (the ids it sends to, never credentials) and status: 'connected', or 'reauthorization_required' " +
      'when the platform refused the authorization: its conversions then wait, queued, until the user connects it again ' +
      '(connect_destination with the same destination_type). A destination with a `problem` (oauth_client_refused) waits ' +
      "for the cnv service's operator (its own OAuth client is refused): connecting again does not help. " +
      `Returns {data, has_more, next_cursor}. ${NEXT_PAGE}`,
    inputSchema: redescribed(Type.Omit(ListDestinationsQuery, ['ending_before'], { additionalProperties: false }), ID_CURSOR),
    readOnly: true,
    toRequest: (input) => ({ method: 'GET', path: '/v1/destinations', query: input }),
    nextStep: (body) => {
      const rows = Array.isArray(body.data) ? body.data.filter(isRecord) : [];
      const waiting = rows.filter((d) => d.status === 'reauthorization_required').map((d) => String(d.type));
      const operator = rows.filter((d) => isRecord(d.problem) && d.problem.code === 'oauth_client_refused').map((d) => String(d.type));
      const steps = [
        ...(waiting.length > 0 ? [`Needs connecting again: ${waiting.join(', ')}. Call connect_destination with that destination_type and give the user the url.`] : []),
        ...(operator.length > 0
          ? [`Waiting for the cnv service's operator: ${operator.join(', ')} (the platform refuses the service's own OAuth client; see each problem's hint). Tell the user; connecting again does not help, and nothing is lost.`]
          : []),
      ];
      return steps.length > 0 ? steps.join(' ') : undefined;
    },
  },
  {
    name: 'list_flows',
    title: 'List flows',
    description:
      'List the flows of the account, or of one site. A flow ties one trigger (the API trigger or a form submission) to one ' +
      'or more actions (send the conversion to a destination); it is a draft until published, then live. Returns ' +
      `{data, has_more, next_cursor}. ${NEXT_PAGE}`,
    inputSchema: redescribed(Type.Omit(ListFlowsQuery, ['ending_before'], { additionalProperties: false }), ID_CURSOR),
    readOnly: true,
    toRequest: (input) => ({ method: 'GET', path: '/v1/flows', query: input }),
  },
  {
    name: 'create_flow',
    title: 'Create a flow',
    description:
      'Create a flow as a draft: it delivers nothing until publish_flow. trigger_config is the API trigger ' +
      "{type: 'saas_signup', integrationId: 'api', key: 'signup'} (fired when the user's backend reports a conversion " +
      "through the signed webhook whose URL ends with the key; connect it with connect_trigger_source), the API trigger of a " +
      "later stage {type: 'conversion', integrationId: 'api', key: 'paid'} (a trial, a qualified lead, a payment or a renewal " +
      "of a customer who signed up before, reported to /api/webhook-bridge/conversion/{site_key}/{key} with the customer_id; " +
      'its click is found through the signup), or a form trigger ' +
      "{integrationId: 'gravity-forms', pageFilter: 'all'}. actions_config lists the destinations, for example " +
      "[{integrationId: 'google-ads', config: {conversion: {id: '<conversion action id>'}}}] or " +
      "[{integrationId: 'meta', config: {}}]. Configs per destination: google-ads {conversion: {id}}; meta {event_name?}; " +
      "microsoft-ads {conversion_name}; linkedin {conversion_rule}; reddit {event_name?: a tracking type such as 'SIGN_UP', " +
      "'LEAD', 'PURCHASE', or a custom name}; tiktok {event_name?: e.g. 'CompleteRegistration', 'Lead', 'Purchase'}. " +
      'Returns the draft flow with its id.',
    inputSchema: CreateFlowBody,
    readOnly: false,
    toRequest: (input) => ({ method: 'POST', path: '/v1/flows', body: input }),
    nextStep: (body) => `Flow ${String(body.id)} is a draft: call publish_flow with this id to make it deliver.`,
  },
  {
    name: 'publish_flow',
    title: 'Publish a flow',
    description:
      'Publish a draft flow so it starts delivering conversions to its destinations. The flow is checked first: its ' +
      'destinations must be connected (connect_destination), an API trigger needs the site’s trigger source ' +
      '(connect_trigger_source), and each action’s config must be complete. If not, the error says what to fix. Returns ' +
      'the live flow, and what fires it and how to see a test conversion arrive; its warnings name another live flow that ' +
      'sends the same conversions to the same Google Ads conversion action (counted twice there).',
    inputSchema: FlowIdParams,
    readOnly: false,
    toRequest: (input) => ({ method: 'POST', path: `/v1/flows/${withId(input).id}/publish` }),
    nextStepRead: (flow) => (typeof flow.site_id === 'string' ? { method: 'GET', path: `/v1/sites/${encodeURIComponent(flow.site_id)}` } : undefined),
    nextStep: liveFlowStep,
  },
  {
    name: 'get_flow',
    title: 'Read a flow',
    description:
      'Read one flow: its site_id, name, trigger_config, actions_config (each destination with its config, such as the ' +
      'Google Ads conversion id) and status (draft or live).',
    inputSchema: FlowIdParams,
    readOnly: true,
    toRequest: (input) => ({ method: 'GET', path: `/v1/flows/${withId(input).id}` }),
  },
  {
    name: 'update_flow',
    title: 'Change a flow',
    description:
      "Change a flow's name, trigger_config or actions_config (the same shapes as create_flow); send the flow id and only " +
      'the fields to change. actions_config is replaced whole: send every action the flow should keep. A live flow may ' +
      'only be renamed (409 flow_live otherwise): call unpublish_flow first, change it, then publish_flow again. Returns ' +
      'the flow.',
    inputSchema: Type.Object(
      { ...propertiesOf(FlowIdParams), ...propertiesOf(PatchFlowBody) },
      { additionalProperties: false, description: 'The flow id and the fields to change.' },
    ),
    readOnly: false,
    destructive: true,
    toRequest: (input) => {
      const { id, rest } = withId(input);
      return { method: 'PATCH', path: `/v1/flows/${id}`, body: rest };
    },
    errorStep: (error, input) =>
      error.code === 'flow_live'
        ? `With the tools: call unpublish_flow with id '${printable(String(input.id))}', then update_flow with the same ` +
          'input again, then publish_flow to make it deliver again.'
        : undefined,
    nextStep: (body) => (body.status === 'draft' ? `Flow ${String(body.id)} is a draft: call publish_flow with this id to make it deliver.` : undefined),
  },
  {
    name: 'unpublish_flow',
    title: 'Unpublish a flow',
    description:
      'Take a live flow back to draft, to change what it delivers with update_flow. While it is a draft it delivers nothing: ' +
      "a report to its trigger meanwhile is kept but answered 'no_matching_flow' and sent nowhere, so publish it again " +
      'soon. Returns the draft flow.',
    inputSchema: FlowIdParams,
    readOnly: false,
    destructive: true,
    toRequest: (input) => ({ method: 'POST', path: `/v1/flows/${withId(input).id}/unpublish` }),
    nextStep: (body) => `Flow ${String(body.id)} is a draft again: change it with update_flow, then call publish_flow.`,
  },
  {
    name: 'list_events',
    title: 'List conversions',
    description:
      'List captured conversions (events), newest first, optionally only those of a site, a flow, an email, a delivery ' +
      'status or a time range. Each event has id, site_id, site_key, occurred_at, flow_id, flow_name, trigger, status (queued, completed, ' +
      'failed) and actions (one delivery result per destination). Use it to confirm that a test conversion arrived. ' +
      `Returns {data, has_more, next_cursor}; next_cursor is a timestamp. ${NEXT_PAGE}`,
    inputSchema: redescribed(Type.Omit(ListEventsQuery, ['ending_before'], { additionalProperties: false }), {
      occurred_after: `Inclusive lower bound on occurred_at: ${TOOL_TIMESTAMP}.`,
      occurred_before: `Inclusive upper bound on occurred_at: ${TOOL_TIMESTAMP}.`,
      starting_after: 'The next_cursor of the previous page, as it is, to get the next, older page.',
    }),
    readOnly: true,
    toRequest: (input) => ({ method: 'GET', path: '/v1/events', query: input }),
  },
  {
    name: 'get_event',
    title: 'Read a conversion',
    description:
      'Read one event (a captured conversion) with its per-destination delivery results in actions, for example to ' +
      'explain why a delivery failed.',
    inputSchema: EventIdParams,
    readOnly: true,
    toRequest: (input) => ({ method: 'GET', path: `/v1/events/${withId(input).id}` }),
  },
  {
    name: 'redeliver_event',
    title: 'Send failed deliveries again',
    description:
      "Send an event's failed deliveries again, once the cause get_event shows in its actions was fixed (a conversion id: " +
      'unpublish_flow, update_flow, publish_flow; a permission on the platform; a destination connected again). Only failed actions are sent, with the same dedup ids as before; ' +
      'the answer is the event, queued again: call get_event later for the outcome. Refused (409 nothing_to_redeliver) ' +
      'when nothing of the event failed, and (409 event_erased) when its person was erased.',
    inputSchema: EventIdParams,
    readOnly: false,
    openWorld: true,
    toRequest: (input) => ({ method: 'POST', path: `/v1/events/${withId(input).id}/redeliver` }),
  },
  {
    name: 'redeliver_destination',
    title: "Send a destination's failed deliveries again",
    description:
      'Send every failed delivery to one destination (its id from list_destinations) again, once what the platform refused ' +
      'was fixed for all of them (a permission on the platform, a conversion action created in the ad account, the destination ' +
      "connected again). Only that destination's deliveries go, oldest events first, with the same dedup ids as before; an " +
      `erased person's events never do. Optional: site_id, flow_id, occurred_after, limit (at most ${REDELIVER_LIMIT_MAX} events a call). ` +
      'Returns {events, actions, has_more}: with has_more, call it again for the next batch; then list_events with ' +
      "status 'failed' shows what is left.",
    inputSchema: Type.Object(
      { ...propertiesOf(redescribed(DestinationIdParams, { id: 'The destination id (dst_…), as list_destinations lists it.' })), ...propertiesOf(RedeliverDestinationBody) },
      { additionalProperties: false, description: 'The destination id, and optionally which of its failed deliveries to send again.' },
    ),
    readOnly: false,
    openWorld: true,
    toRequest: (input) => {
      const { id, rest } = withId(input);
      return { method: 'POST', path: `/v1/destinations/${id}/redeliver`, body: rest };
    },
    nextStep: (body) => (body.has_more === true ? 'More failed deliveries are left: call redeliver_destination again with the same input.' : undefined),
  },
];

/** The MCP result of a tool call: `structuredContent` is the REST body, or the error envelope with `isError`. */
export interface ToolResult {
  [key: string]: unknown;
  content: Array<{ type: 'text'; text: string }>;
  structuredContent?: Record<string, unknown>;
  isError?: boolean;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The envelope of an error answer, or one describing an answer that carried none. */
function envelopeOf(response: RestResponse): ErrorBody {
  const error = isRecord(response.body) ? response.body.error : undefined;
  if (isRecord(error) && typeof error.code === 'string' && typeof error.message === 'string') return response.body as ErrorBody;
  return { error: { type: 'api_error', code: 'unexpected_response', message: `The service answered HTTP ${response.status} without an error body.` } };
}

/** The envelope with the REST-only advice its message may quote from a query parameter's description taken out. */
function withoutRestOnlyAdvice(envelope: ErrorBody): ErrorBody {
  const message = REST_ONLY_ADVICE.reduce((text, advice) => text.split(advice).join(''), envelope.error.message);
  return message === envelope.error.message ? envelope : { ...envelope, error: { ...envelope.error, message } };
}

/** A tool error carrying the envelope's code and message (and param when there is one). */
export function toolError(envelope: ErrorBody): ToolResult {
  const { code, message, param } = envelope.error;
  return {
    content: [{ type: 'text', text: `${code}: ${message}${param ? ` (param: ${param})` : ''}\n${JSON.stringify(envelope)}` }],
    structuredContent: envelope as unknown as Record<string, unknown>,
    isError: true,
  };
}

/**
 * 400 `parameter_unknown` (the envelope a REST route gives an unknown body field) for an argument the tool's input
 * schema does not declare. Every tool schema says additionalProperties: false, but not every argument reaches a REST
 * schema that would refuse it: an id tool sends only the id in its path, a list tool's schema leaves out some of its
 * route's query parameters, and a connect tool sets `purpose` itself.
 */
function undeclaredArgument(tool: ToolDefinition, input: ToolInput): ErrorBody | undefined {
  const declared = propertiesOf(tool.inputSchema);
  const unknown = Object.keys(input).find((name) => !Object.prototype.hasOwnProperty.call(declared, name));
  if (unknown === undefined) return undefined;
  const param = printable(unknown);
  const allowed = Object.keys(declared);
  const hint = allowed.length > 0 ? ` Allowed here: ${allowed.join(', ')}.` : ' No parameters are allowed here.';
  return invalidParam(param, `Unknown parameter: ${param}.${hint}`, 'parameter_unknown').toBody();
}

/**
 * How long an argument without a maxLength of its own (a timestamp, a cursor) may go into a URL: longer than any value
 * such a parameter takes, far shorter than the request line the service's HTTP server accepts (16 KB).
 */
const URL_ARGUMENT_MAX = 1_000;

/**
 * The arguments `names` that go into the request's URL (a list tool's query, a path's id), each text longer than its
 * schema's maxLength (or URL_ARGUMENT_MAX) cut to one character (code point, as the schema counts) over it. The route refuses it all the
 * same, with its own message; but sent whole, a long one (a 20,000-character email) made the request line too large
 * for the service's HTTP server, and `cnv mcp` got `headers_too_large` where POST /mcp, run in process, got the route's
 * "at most 320 characters".
 */
function cutForUrl(tool: ToolDefinition, input: ToolInput, names: readonly string[]): ToolInput {
  const declared = propertiesOf(tool.inputSchema);
  let cut: ToolInput | undefined;
  for (const name of names) {
    const value = input[name];
    const declaredMax = (declared[name] as { maxLength?: unknown } | undefined)?.maxLength;
    const max = typeof declaredMax === 'number' ? declaredMax : URL_ARGUMENT_MAX;
    if (typeof value !== 'string' || value.length <= max) continue;
    const codePoints = Array.from(value);
    if (codePoints.length <= max) continue;
    cut ??= { ...input };
    cut[name] = codePoints.slice(0, max + 1).join('');
  }
  return cut ?? input;
}

/** What each tool's `id` names, and which tools' ids are which kind (the rest take no id, or their errorStep says). */
const ID_KINDS: Readonly<Record<string, 'site' | 'handoff' | 'flow' | 'event' | 'destination'>> = {
  update_site: 'site', get_handoff: 'handoff', publish_flow: 'flow', get_flow: 'flow', update_flow: 'flow',
  unpublish_flow: 'flow', get_event: 'event', redeliver_event: 'event', redeliver_destination: 'destination',
};

/** Where the id of each kind comes from: its prefix and the tool that lists them (a handoff's, the connect tool that made it). */
const ID_SOURCES = {
  site: { prefix: 'site_', where: 'call list_sites for the ids of its sites' },
  handoff: { prefix: 'hdf_', where: 'use the id a connect_destination or connect_trigger_source call of this account returned, or call that tool again for a new handoff' },
  flow: { prefix: 'flow_', where: 'call list_flows for the ids of its flows' },
  event: { prefix: 'evt_', where: 'call list_events for the ids of its events' },
  destination: { prefix: 'dst_', where: 'call list_destinations for the ids of its destinations' },
} as const;

/**
 * What to do after a `resource_missing`: which tool lists the ids of that kind. Ids are the API key's account's only
 * (another client's id is not found, like one that does not exist), and a site_key is not a site id.
 */
function notFoundStep(toolName: string, error: ErrorBody['error'], input: ToolInput): string | undefined {
  if (error.code !== 'resource_missing') return undefined;
  const kind = error.param === 'site_id' ? 'site' : error.param === 'flow_id' ? 'flow' : error.param === 'id' ? ID_KINDS[toolName] : undefined;
  if (!kind) return undefined;
  const { prefix, where } = ID_SOURCES[kind];
  const given = error.param ? input[error.param] : undefined;
  const wrongKind = typeof given === 'string' && !given.startsWith(prefix)
    ? ` '${printable(given, 100)}' is not a ${kind} id (those start with ${prefix})${kind === 'site' ? ': a site_key, the install snippet\'s key, is not one' : ''}.`
    : '';
  return (
    `No ${kind} with this id belongs to this account (the account of the API key you use: another account's ids are ` +
    `not found).${wrongKind} To find the right one, ${where}.`
  );
}

/** Runs a tool: its REST request through `callRest`, the answer as a tool result. */
export async function runTool(tool: ToolDefinition, input: ToolInput, callRest: CallRest, context: ToolContext = {}): Promise<ToolResult> {
  const undeclared = undeclaredArgument(tool, input);
  if (undeclared) return toolError(undeclared);
  // A number beyond a double (1e999, read as Infinity) would reach the REST route as null: refused here, by its path.
  const tooLarge = nonFiniteNumberPath(input);
  if (tooLarge !== null) return toolError(numberTooLarge(printable(tooLarge)).toBody());
  let request: RestRequest;
  try {
    request = tool.toRequest(cutForUrl(tool, input, ['id']));
  } catch (error) {
    if (error instanceof ToolInputError) return toolError(error.body);
    throw error;
  }
  if (request.query) request = { ...request, query: cutForUrl(tool, request.query, Object.keys(request.query)) };
  const response = await callRest(request.method, request.path, {
    ...(request.query ? { query: request.query } : {}),
    ...(request.body !== undefined ? { body: request.body } : {}),
  });
  if (response.status < 200 || response.status >= 300) {
    const envelope = request.query ? withoutRestOnlyAdvice(envelopeOf(response)) : envelopeOf(response);
    const result = toolError(envelope);
    const step = tool.errorStep?.(envelope.error, input) ?? notFoundStep(tool.name, envelope.error, input);
    if (step) result.content.push({ type: 'text', text: step });
    return result;
  }
  const body = isRecord(response.body) ? response.body : { data: response.body };
  const publicUrl = tool.usesPublicUrl ? await context.publicUrl?.() : undefined;
  const readRequest = tool.nextStepRead?.(body);
  const readResponse = readRequest ? await callRest(readRequest.method, readRequest.path, {}) : undefined;
  const read = readResponse && readResponse.status === 200 && isRecord(readResponse.body) ? readResponse.body : undefined;
  const next = tool.nextStep?.(body, { input, ...(publicUrl === undefined ? {} : { publicUrl }), ...(read ? { read } : {}) });
  return {
    content: [{ type: 'text', text: JSON.stringify(body, null, 2) }, ...(next ? [{ type: 'text' as const, text: next }] : [])],
    structuredContent: body,
  };
}

/** Query values as text: a JSON null or absent value is left out (a query string has no null), the rest as written. */
export function queryString(query: ToolInput | undefined): string {
  const params = new URLSearchParams();
  for (const [name, value] of Object.entries(query ?? {})) {
    if (value === null || value === undefined) continue;
    params.append(name, typeof value === 'string' ? value : JSON.stringify(value));
  }
  const text = params.toString();
  return text ? `?${text}` : '';
}

/** A tool's input schema as the MCP tool list shows it: plain JSON, without the service's own Ajv annotations. */
export function toolInputSchema(tool: ToolDefinition): { type: 'object'; [key: string]: unknown } {
  return JSON.parse(JSON.stringify(tool.inputSchema, (key, value) => (key === 'errorCode' ? undefined : value)));
}
