/** The input schemas of /v1/destinations: the connected ad platform accounts of the API key's account. */
import { Type, type Static } from '@sinclair/typebox';
import { IdParams, ListOf, PlainText, Timestamp } from '../../http/schemas';
import { PageQuery } from '../../http/pagination';

/** `{id}` of /v1/destinations/{id}. */
export const DestinationIdParams = IdParams('The destination id (dst_…), as GET /v1/destinations lists it.');
export type DestinationIdParams = Static<typeof DestinationIdParams>;

/** The optional body of POST /v1/destinations/{id}/test. */
export const TestDestinationBody = Type.Optional(
  Type.Object(
    {
      conversion_id: Type.Optional(
        Type.String({
          minLength: 1,
          maxLength: 200,
          pattern: '^[^\\u0000-\\u001f]*$',
          description:
            'For google-ads: the conversion action to validate against (its numeric id, or its resource name customers/{customer id}/conversionActions/{id}). Google checks the whole request, so a test without one cannot tell whether the action exists.',
        }),
      ),
    },
    { additionalProperties: false },
  ),
);
export type TestDestinationBody = Static<typeof TestDestinationBody>;

/** Most events one POST /v1/destinations/{id}/redeliver sends again; `has_more` says when to call again. */
export const REDELIVER_LIMIT_MAX = 1000;

/** The optional body of POST /v1/destinations/{id}/redeliver: which of the destination's failed deliveries go again. */
export const RedeliverDestinationBody = Type.Optional(
  Type.Object(
    {
      site_id: Type.Optional(PlainText("Only the events of this site (site_…).", { maxLength: 100 })),
      flow_id: Type.Optional(PlainText('Only the events of this flow (flow_…).', { maxLength: 100 })),
      occurred_after: Type.Optional(Type.String({ format: 'date-time', description: 'Only events that occurred at or after this time (ISO 8601 with Z or an offset).' })),
      limit: Type.Optional(
        Type.Integer({ minimum: 1, maximum: REDELIVER_LIMIT_MAX, description: `Most events sent again in this call, oldest first: 1 to ${REDELIVER_LIMIT_MAX}, ${REDELIVER_LIMIT_MAX} when left out.` }),
      ),
    },
    { additionalProperties: false },
  ),
);
export type RedeliverDestinationBody = Static<typeof RedeliverDestinationBody>;

/** What POST /v1/destinations/{id}/redeliver queued. */
export const DestinationRedeliveryResult = Type.Object(
  {
    destination: Type.String({ description: 'The destination (dst_…), as the connection test names it.' }),
    events: Type.Integer({ minimum: 0, description: 'Events whose failed deliveries to this destination were queued again (0: none had failed).' }),
    actions: Type.Integer({ minimum: 0, description: 'Deliveries queued again (an event may hold several of one destination: one per flow action).' }),
    has_more: Type.Boolean({ description: 'More failed deliveries match than limit took: call again for the next, older-first, batch.' }),
  },
  { additionalProperties: false },
);
export type DestinationRedeliveryResult = Static<typeof DestinationRedeliveryResult>;

/** The query of GET /v1/destinations: the list pagination, no filters. */
export const ListDestinationsQuery = PageQuery;
export type ListDestinationsQuery = Static<typeof ListDestinationsQuery>;

/** A destination as the API shows it (responses). */
export const Destination = Type.Object(
  {
    id: Type.String({ description: 'The destination id (dst_…).' }),
    type: Type.String({ description: 'The platform: google-ads, meta, microsoft-ads, linkedin, reddit or tiktok.' }),
    label: Type.String({ description: "The platform's name." }),
    status: Type.Unsafe<string>({
      type: 'string',
      enum: ['connected', 'reauthorization_required'],
      description: 'reauthorization_required when the platform refused cnv\'s authorization: its conversions wait for a new connect_destination handoff.',
    }),
    account: Type.Record(Type.String(), Type.Unknown(), {
      description: "The account ids it sends to (customer id, pixel id, …) and the connection's choices (Google's `api`, `limited_data_use: true` for Meta and TikTok when chosen); never credentials.",
    }),
    connected_at: Timestamp('When it was (last) connected.'),
    created_at: Timestamp('When it was first connected.'),
    problem: Type.Optional(
      Type.Object(
        {
          code: Type.String({ description: '`oauth_client_refused`: the platform refuses this cnv service\'s own OAuth client.' }),
          message: Type.String({ description: 'What is wrong, in a sentence: not the connection\'s to fix; its conversions wait, nothing is lost.' }),
          hint: Type.Optional(Type.String({ description: 'What the service\'s operator must do (the settings to set, never their values).' })),
          since: Timestamp('Since when.'),
        },
        { additionalProperties: false },
      ),
    ),
  },
  { title: 'Destination', additionalProperties: false },
);

/** A page of the account's destinations (at most one per platform). */
export const DestinationList = ListOf(Destination, 'destinations');

/** The answer of POST /v1/destinations/{id}/test. */
export const DestinationTestResult = Type.Object(
  {
    destination: Type.String({ description: 'The destination id.' }),
    ok: Type.Boolean({ description: 'Whether the platform accepted the connection.' }),
    message: Type.String({ description: 'What the platform said, in a sentence.' }),
    error: Type.Optional(Type.Unsafe<unknown>({ type: 'object', additionalProperties: true, description: 'The error, when not ok: {code, message, hint?, …}.' })),
    warning: Type.Optional(
      Type.String({ description: "When ok but something will still fail: e.g. a flow action naming a Microsoft offline conversion goal the account does not have (also at the end of message)." }),
    ),
  },
  { title: 'DestinationTestResult', additionalProperties: false },
);
