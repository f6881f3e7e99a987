/** The input schemas of /v1/events: what each route accepts, described for a reader (people and agent tools alike). */
import { Type, type Static } from '@sinclair/typebox';
import { IdParams, Nullable, PlainText, StringEnum, Timestamp } from '../../http/schemas';
import type { EventStatus } from '../../delivery';

/** Default and largest `limit` of GET /v1/events (the spec fixes only the maximum). */
export const EVENTS_LIMIT_DEFAULT = 25;
export const EVENTS_LIMIT_MAX = 100;

/** Event status values (spec, Event). */
export const EVENT_STATUSES = ['queued', 'completed', 'failed'] as const satisfies readonly EventStatus[];

/** The timestamp descriptions' advice for a hand-written query string (a tool, which encodes the query, leaves it out). */
export const URL_ENCODE_OFFSET = ' (URL-encode a + offset as %2B)';

const TIMESTAMP = `an ISO 8601 timestamp with a time zone, such as 2026-11-21T09:30:00Z${URL_ENCODE_OFFSET}`;

/** The query of GET /v1/events: filters and the timestamp cursor, newest first. */
export const ListEventsQuery = Type.Object(
  {
    site_id: Type.Optional(PlainText('Only the events of this site (site_…); events of all sites are merged otherwise.', { maxLength: 100 })),
    flow_id: Type.Optional(PlainText('Only the events of this flow (flow_…).', { maxLength: 100 })),
    email: Type.Optional(PlainText("Only the events of this email address, matched case-insensitively (recent events only).", { maxLength: 320 })),
    status: Type.Optional(StringEnum(EVENT_STATUSES, { description: "Only the events with this delivery status (recent events only); failed leaves out an erased person's events, whose sends the erasure stopped on purpose." })),
    occurred_after: Type.Optional(Type.String({ format: 'date-time', description: `Inclusive lower bound on occurred_at: ${TIMESTAMP}.` })),
    occurred_before: Type.Optional(Type.String({ format: 'date-time', description: `Inclusive upper bound on occurred_at: ${TIMESTAMP}.` })),
    limit: Type.Optional(
      Type.Integer({ minimum: 1, maximum: EVENTS_LIMIT_MAX, description: `How many events to return: 1 to ${EVENTS_LIMIT_MAX}, ${EVENTS_LIMIT_DEFAULT} when left out.` }),
    ),
    starting_after: Type.Optional(
      Type.String({
        format: 'date-time',
        errorCode: 'invalid_cursor',
        description: `The next_cursor of the previous page, to get the next, older page: ${TIMESTAMP}.`,
      }),
    ),
    ending_before: Type.Optional(
      Type.Never({
        errorCode: 'parameter_unsupported',
        description: 'ending_before is not supported on GET /v1/events: walk newest to oldest with starting_after = the previous next_cursor.',
      }),
    ),
  },
  { additionalProperties: false },
);
export type ListEventsQuery = Static<typeof ListEventsQuery>;

/** `{id}` of /v1/events/{id}. */
export const EventIdParams = IdParams('The event id (evt_…).');
export type EventIdParams = Static<typeof EventIdParams>;

/** One destination's delivery of an event (responses). */
export const EventAction = Type.Object(
  {
    destination: Type.String({ description: 'The platform it goes to: google-ads, meta, microsoft-ads, linkedin, reddit, tiktok.' }),
    status: Type.String({ description: 'queued, delivered, failed, or skipped (held back by consent: the reason is in error; never makes the event failed).' }),
    conversion_id: Nullable(Type.String({ description: "The platform's conversion (action, rule, goal) it fires." })),
    attempts: Type.Integer({ minimum: 0, description: 'Sends so far.' }),
    error: Type.Unknown({ description: 'The last error, {code, message, hint?, status?, retrying?}, or null.' }),
    request: Type.Union([Type.Record(Type.String(), Type.Unknown()), Type.Null()], {
      description: 'What was sent, without personal data (hashes, ids, kinds), and Google\'s diagnostics; null before the first send.',
    }),
    delivered_at: Nullable(Timestamp('When the platform accepted it.')),
    history: Type.Optional(
      Type.Array(
        Type.Object(
          {
            attempt: Type.Integer(),
            at: Timestamp('When this send happened.'),
            outcome: Type.String({ description: 'delivered, retry, retry_later or failed.' }),
            error: Type.Unknown(),
            request: Type.Union([Type.Record(Type.String(), Type.Unknown()), Type.Null()]),
          },
          { additionalProperties: false },
        ),
        { description: 'GET /v1/events/{id} only: every send, oldest first.' },
      ),
    ),
  },
  { title: 'EventAction', additionalProperties: false },
);

/** One restatement or retraction of an event (responses), with its result per destination. */
export const EventAdjustment = Type.Object(
  {
    adjustment_id: Type.String({ description: "Your id of the adjustment: the adjustment webhook's adjustment_id." }),
    type: Type.Unsafe<string>({ type: 'string', enum: ['restate', 'retract'], description: 'restate (a new value) or retract (the conversion taken back).' }),
    value: Nullable(Type.Number({ description: 'The restated value in the major unit of currency; null for a retraction.' })),
    currency: Nullable(Type.String({ description: 'ISO 4217 code of the restated value; null for a retraction.' })),
    occurred_at: Timestamp('When the adjustment happened, as reported.'),
    created_at: Timestamp('When the service recorded it.'),
    superseded: Type.Boolean({
      description:
        'True for a restatement dated before the restatement its conversion stood at when it arrived: recorded, never sent to any platform, never the current_value. The conversion stands at its retraction if it has one, else at the last to arrive (the list is in the order they arrived) of its restatements not superseded.',
    }),
    results: Type.Array(
      Type.Object(
        {
          destination: Type.String({ description: 'The platform of one action of the event.' }),
          status: Type.String({ description: 'queued, adjusted, unsupported (the platform has no such operation) or failed.' }),
          reason: Nullable(Type.String({ description: 'Why it is unsupported or failed; null otherwise.' })),
        },
        { additionalProperties: false },
      ),
      { description: "One per action of the event, in the actions' order." },
    ),
  },
  { title: 'EventAdjustment', additionalProperties: false },
);

/** The Event record (responses): the fields the service owns, and the stored data passed through beside them. */
export const Event = Type.Object(
  {
    id: Type.String({ description: 'The event id (evt_…).' }),
    site_id: Type.String(),
    site_key: Type.String(),
    occurred_at: Timestamp("When the conversion happened (the browser's signup time when paired)."),
    flow_id: Nullable(Type.String()),
    flow_name: Nullable(Type.String()),
    trigger: Nullable(Type.String({ description: 'api (a webhook report) or form_submission.' })),
    trigger_type: Nullable(Type.String({ description: 'Which trigger type fired: saas_signup, conversion (a later stage) or form_submission.' })),
    status: Type.Unsafe<string>({ type: 'string', enum: [...EVENT_STATUSES], description: 'queued while any action is pending; completed when every action is delivered or skipped; failed when any failed.' }),
    match_quality: Nullable(Type.String({ description: 'high, medium, low; null while the snapshot is pending.' })),
    email: Nullable(Type.String({ description: 'The reported email, trimmed and lower-cased.' })),
    customer_event_id: Nullable(Type.String({ description: "Your id of the conversion: the webhook's customer_event_id." })),
    value: Nullable(Type.Number({ description: 'What the conversion is worth, in the major unit of currency; null when not reported.' })),
    currency: Nullable(Type.String({ description: 'ISO 4217 code of value; null without a value.' })),
    current_value: Nullable(Type.Number({ description: "The value as it stands after its adjustments: 0 once retracted, else that of the last restatement to arrive that is not superseded (see adjustments), else value." })),
    current_currency: Nullable(Type.String({ description: 'ISO 4217 code of current_value; null when current_value is null (or 0 after a retraction of a conversion reported without a value).' })),
    customer_id: Nullable(Type.String({ description: 'Your customer id as reported (links later stages to the signup); null when not reported or erased.' })),
    click_ids: Nullable(Type.Record(Type.String(), Type.String(), { description: 'The ad click ids paired with it.' })),
    utm: Type.Unknown({ description: 'The UTM parameters of the touch, or null.' }),
    actions: Type.Array(EventAction, { description: 'One per destination of its flow.' }),
    adjustments: Type.Array(EventAdjustment, { description: 'Restatements and retractions of this conversion, oldest first.' }),
    created_at: Timestamp('When the service recorded it.'),
  },
  {
    title: 'Event',
    additionalProperties: true,
    description: 'Fields beyond these (landing_page_url, page_url, match_reason, …) are the stored data, passed through.',
  },
);

/** A page of events, newest first, with a timestamp cursor. */
export const EventList = Type.Object(
  {
    data: Type.Array(Event, { description: 'The events, newest first.' }),
    has_more: Type.Boolean({ description: 'Whether older events follow.' }),
    next_cursor: Nullable(Type.String({ description: 'The starting_after of the next, older page (a timestamp); null when has_more is false.' })),
  },
  { additionalProperties: false },
);
