/** The input schemas of /v1/flows: what each route accepts, described for a reader (people and agent tools alike). */
import { Type, type Static } from '@sinclair/typebox';
import { TRIGGER_KEY_PATTERN } from '../../../protocol/webhook';
import { IdParams, ListOf, NonBlankText, Nullable, PlainText, StringEnum, Timestamp } from '../../http/schemas';
import { PageQueryProperties } from '../../http/pagination';

/** Longest flow name. */
export const FLOW_NAME_MAX = 200;
/** Most actions one flow may have. */
export const FLOW_ACTIONS_MAX = 20;

/** The API trigger's types: a signup, or a later stage of the customer. */
export const API_TRIGGER_TYPES = ['saas_signup', 'conversion'] as const;

/** The API trigger: a signed webhook report whose URL carries this key fires the flow. */
export const ApiTriggerConfig = Type.Object(
  {
    type: StringEnum(API_TRIGGER_TYPES, {
      description:
        "'saas_signup' (the signup report, POST /api/webhook-bridge/saas-signup/{site_key}/{key}) or 'conversion' (a later " +
        'stage of the customer, such as a trial, a qualified lead, a payment or a renewal: POST /api/webhook-bridge/conversion/{site_key}/{key}).',
    }),
    integrationId: Type.Literal('api', { description: "Always 'api' for the API trigger." }),
    key: Type.String({
      pattern: TRIGGER_KEY_PATTERN.source,
      description: 'The trigger key (for a conversion, the stage), the last segment of the webhook URL: 1 to 64 characters from [A-Za-z0-9_-]. Several flows may share one.',
    }),
  },
  { additionalProperties: false, description: "The API trigger: {type: 'saas_signup' | 'conversion', integrationId: 'api', key}." },
);

/** The form trigger: a successful submission of a form tool on the site's pages, detected by the loader. */
export const FormTriggerConfig = Type.Object(
  {
    integrationId: NonBlankText('The form tool, for example gravity-forms, hubspot, webflow or html.', 100),
    pageFilter: NonBlankText("Which pages count: 'all', or a path pattern where * matches any characters, such as /signup or /pricing/*.", 500),
  },
  { additionalProperties: false, description: 'A form trigger: {integrationId, pageFilter}.' },
);

/**
 * A flow's trigger: the API trigger when it says so (it has `type` or `key`, or `integrationId` is 'api'), else a form
 * trigger. Written as if/then/else rather than anyOf, so a fault is reported inside the trigger the caller meant
 * (`trigger_config.key`), not as "matches no alternative".
 */
export const TriggerConfig = Type.Unsafe<Static<typeof ApiTriggerConfig> | Static<typeof FormTriggerConfig>>({
  description:
    "What fires the flow: the API trigger {type: 'saas_signup' | 'conversion', integrationId: 'api', key} (a signed webhook report), " +
    'or a form trigger {integrationId, pageFilter} (a form submission in the browser).',
  if: {
    anyOf: [
      { type: 'object', required: ['type'] },
      { type: 'object', required: ['key'] },
      { type: 'object', required: ['integrationId'], properties: { integrationId: { const: 'api' } } },
    ],
  },
  then: ApiTriggerConfig,
  else: FormTriggerConfig,
});
export type TriggerConfig = Static<typeof TriggerConfig>;

/** One action: a destination and its settings (checked against the destination when the flow is published). */
export const ActionConfigSchema = Type.Object(
  {
    integrationId: NonBlankText('The destination, for example google-ads.', 100),
    config: Type.Record(Type.String(), Type.Unknown(), {
      description: "The destination's settings; for google-ads, {conversion: {id}} names the conversion action to fire.",
    }),
  },
  { additionalProperties: false, description: 'An action {integrationId, config}.' },
);

/** What a flow does when it fires: 1 to 20 actions. */
export const ActionsConfig = Type.Array(ActionConfigSchema, {
  minItems: 1,
  maxItems: FLOW_ACTIONS_MAX,
  description: `The actions of the flow, 1 to ${FLOW_ACTIONS_MAX}: each sends the conversion to one destination.`,
});
export type ActionsConfig = Static<typeof ActionsConfig>;

const FlowName = NonBlankText(`A label for the flow: 1 to ${FLOW_NAME_MAX} characters, not blank; surrounding spaces are trimmed.`, FLOW_NAME_MAX);

/** The body of POST /v1/flows: a draft flow of one of the account's sites. */
export const CreateFlowBody = Type.Object(
  {
    site_id: PlainText('The site the flow belongs to (site_…).', { maxLength: 100 }),
    name: FlowName,
    trigger_config: TriggerConfig,
    actions_config: ActionsConfig,
  },
  { additionalProperties: false, description: 'A new flow; it is created as a draft and delivers nothing until published.' },
);
export type CreateFlowBody = Static<typeof CreateFlowBody>;

/** The body of PATCH /v1/flows/{id}: the fields to change (a live flow may only be renamed). */
export const PatchFlowBody = Type.Object(
  {
    name: Type.Optional(FlowName),
    trigger_config: Type.Optional(TriggerConfig),
    actions_config: Type.Optional(ActionsConfig),
  },
  { additionalProperties: false, description: 'Flow fields to change; a live flow may only be renamed (unpublish it to edit the rest).' },
);
export type PatchFlowBody = Static<typeof PatchFlowBody>;

/** The query of GET /v1/flows: the list pagination and a site filter. */
export const ListFlowsQuery = Type.Object(
  { ...PageQueryProperties, site_id: Type.Optional(PlainText('Only the flows of this site (site_…).', { maxLength: 100 })) },
  { additionalProperties: false },
);
export type ListFlowsQuery = Static<typeof ListFlowsQuery>;

/** `{id}` of /v1/flows/{id} and its publish and unpublish. */
export const FlowIdParams = IdParams('The flow id (flow_…).');
export type FlowIdParams = Static<typeof FlowIdParams>;

/** The Flow record (responses). */
export const Flow = Type.Object(
  {
    id: Type.String({ description: 'The flow id (flow_…).' }),
    site_id: Type.String({ description: 'The site whose conversions it handles.' }),
    name: Type.String({ description: 'The label of the flow.' }),
    trigger_config: Type.Record(Type.String(), Type.Unknown(), {
      description: "What fires it: {type: 'saas_signup' | 'conversion', integrationId: 'api', key} or a form trigger {integrationId, pageFilter}.",
    }),
    actions_config: Type.Array(Type.Record(Type.String(), Type.Unknown()), { description: 'Its actions, {integrationId, config} each.' }),
    status: StringEnum(['draft', 'live'] as const, { description: 'draft delivers nothing; live fires on its trigger.' }),
    created_at: Timestamp('When the flow was created.'),
    updated_at: Timestamp('When it last changed.'),
    published_at: Nullable(Timestamp('When it was last published; null for a draft never published.')),
  },
  { title: 'Flow', additionalProperties: false },
);

/** The answer of a publish: the live flow and what it does that its owner likely did not mean. */
export const PublishedFlow = Type.Object(
  {
    ...Flow.properties,
    warnings: Type.Array(
      Type.Object(
        {
          code: Type.Literal('double_counted', {
            description: 'double_counted: another live flow fires on the same conversions and sends them where a platform counts each (a Google Ads conversion action).',
          }),
          flow_id: Type.String({ description: 'The other live flow (flow_…).' }),
          message: Type.String({ description: 'What happens and what to change.' }),
        },
        { additionalProperties: false },
      ),
      { description: 'Empty when nothing looks unintended. The flow is live either way.' },
    ),
  },
  { title: 'PublishedFlow', additionalProperties: false },
);

/** A page of flows. */
export const FlowList = ListOf(Flow, 'flows');

/** The 400 answer of a publish that fails validation: the envelope plus every problem. */
export const FlowInvalid = Type.Object(
  {
    error: Type.Object(
      {
        type: Type.Literal('invalid_request_error'),
        code: Type.Literal('flow_invalid'),
        message: Type.String({ description: 'The first problem, and how many more.' }),
        param: Type.Optional(Type.String()),
        errors: Type.Array(
          Type.Object(
            {
              param: Type.String({ description: 'The parameter at fault, e.g. actions_config[0].config.conversion.id.' }),
              message: Type.String({ description: 'What is wrong and what to do.' }),
            },
            { additionalProperties: false },
          ),
          { description: 'Every problem found, each with the parameter at fault.' },
        ),
      },
      { additionalProperties: true },
    ),
  },
  { title: 'FlowInvalid', additionalProperties: false },
);
