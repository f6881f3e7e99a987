/** The input schemas of /v1/handoffs: what each route accepts, described for a reader (people and agent tools alike). */
import { Type, type Static } from '@sinclair/typebox';
import { IdParams, Nullable, PlainText, StringEnum, Timestamp } from '../../http/schemas';

/** What a handoff can do. */
export const HANDOFF_PURPOSES = ['connect_destination', 'connect_trigger_source'] as const;

/** The trigger sources a handoff can connect: the spec's API trigger only. */
export const TRIGGER_SOURCES = ['api'] as const;

const Purpose = StringEnum(HANDOFF_PURPOSES, {
  description: 'connect_destination: connect an ad platform; connect_trigger_source: connect the API trigger (the signed webhook) of a site.',
});

/** A handoff that connects a destination (an ad platform) to the account. */
export const ConnectDestinationBody = Type.Object(
  {
    purpose: Type.Literal('connect_destination', { description: 'Connect a destination.' }),
    destination_type: PlainText('The destination to connect, for example google-ads.', { maxLength: 100 }),
  },
  { additionalProperties: false, description: 'Connect a destination: the hosted page asks the user to authorize it.' },
);

/** A handoff that connects the API trigger of a site: its hosted page shows the webhook URL and secret, once. */
export const ConnectTriggerSourceBody = Type.Object(
  {
    purpose: Type.Literal('connect_trigger_source', { description: 'Connect a trigger source.' }),
    trigger_source: Type.Optional(StringEnum(TRIGGER_SOURCES, { description: "The trigger source; 'api' (the default) is the signed webhook." })),
    site_id: Type.Optional(PlainText('The site whose webhook to connect (site_…); may be left out when the account has one site.', { maxLength: 100 })),
  },
  {
    additionalProperties: false,
    description: 'Connect the API trigger of a site: the hosted page shows the webhook URL and secret (never returned by the API).',
  },
);

/**
 * The body of POST /v1/handoffs: by `purpose`, one of the two above. Written as if/then/else on purpose, so a fault is
 * reported against the fields of the purpose the caller chose.
 */
export const CreateHandoffBody = Type.Unsafe<Static<typeof ConnectDestinationBody> | Static<typeof ConnectTriggerSourceBody>>({
  type: 'object',
  description: 'A new handoff; its url is the hosted page the user opens to authorize.',
  // In order: the purpose first (so an unknown one is named as such), then the fields of that purpose.
  allOf: [
    { required: ['purpose'], properties: { purpose: Purpose } },
    {
      if: { type: 'object', required: ['purpose'], properties: { purpose: { const: 'connect_destination' } } },
      then: ConnectDestinationBody,
      else: ConnectTriggerSourceBody,
    },
  ],
});
export type CreateHandoffBody = Static<typeof CreateHandoffBody>;

/** `{id}` of /v1/handoffs/{id}. */
export const HandoffIdParams = IdParams('The handoff id (hdf_…).');
export type HandoffIdParams = Static<typeof HandoffIdParams>;

/** The Handoff record (responses). */
export const Handoff = Type.Object(
  {
    id: Type.String({ description: 'The handoff id (hdf_…).' }),
    url: Nullable(Type.String({ description: 'The hosted page to send the user to (addressed by an unguessable token); null when the service key changed since the handoff was created (the link still works for whoever holds it).' })),
    status: StringEnum(['pending', 'completed', 'expired'] as const, {
      description: 'completed once the user finished the hosted page; expired when nobody did within a day (the link no longer works: create a new handoff).',
    }),
    purpose: StringEnum(HANDOFF_PURPOSES, { description: 'What the handoff connects.' }),
    destination_type: Nullable(Type.String({ description: 'The platform, for connect_destination.' })),
    trigger_source: Nullable(Type.String({ description: "'api', for connect_trigger_source." })),
    site_id: Nullable(Type.String({ description: 'The site, for connect_trigger_source.' })),
    created_at: Timestamp('When the handoff was created.'),
    completed_at: Nullable(Timestamp('When the user completed it.')),
  },
  { title: 'Handoff', additionalProperties: false },
);
