/** The input schemas of /v1/events: what each route accepts, described for a reader (people and agent tools alike). */
import { Type, type Static } from '@sinclair/typebox';
import { IdParams, PlainText, StringEnum } from '../../http/schemas';
import type { EventStatus } from '../../delivery';

/** Default and largest `limit` of GET /v1/events (the spec fixes only the maximum). */
export const EVENTS_LIMIT_DEFAULT = 25;
export const EVENTS_LIMIT_MAX = 100;

/** Event status values (spec, Event). */
export const EVENT_STATUSES = ['queued', 'completed', 'failed'] as const satisfies readonly EventStatus[];

const TIMESTAMP = 'an ISO 8601 timestamp with a time zone, such as 2026-11-21T09:30:00Z (URL-encode a + offset as %2B)';

/** The query of GET /v1/events: filters and the timestamp cursor, newest first. */
export const ListEventsQuery = Type.Object(
  {
    site_id: Type.Optional(PlainText('Only the events of this site (site_…); events of all sites are merged otherwise.', { maxLength: 100 })),
    flow_id: Type.Optional(PlainText('Only the events of this flow (flow_…).', { maxLength: 100 })),
    email: Type.Optional(PlainText("Only the events of this email address, matched case-insensitively (recent events only).", { maxLength: 320 })),
    status: Type.Optional(StringEnum(EVENT_STATUSES, { description: 'Only the events with this delivery status (recent events only).' })),
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
