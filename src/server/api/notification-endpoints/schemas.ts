/** The input schemas of /v1/notification_endpoints: where an account is told of trouble (DESIGN.md, outbound notifications). */
import { Type, type Static } from '@sinclair/typebox';
import { IdParams, ListOf, StringEnum, Timestamp } from '../../http/schemas';
import { PageQueryProperties } from '../../http/pagination';
import { NOTIFICATION_KINDS } from '../../notifications';

/** The body of POST /v1/notification_endpoints. */
export const CreateEndpointBody = Type.Object(
  {
    url: Type.String({
      minLength: 1,
      maxLength: 2000,
      pattern: '^[^\\u0000-\\u001f\\s]*$',
      description: 'Where notifications are POSTed: an https URL (plain http only to localhost, 127.0.0.1 or ::1). Redirects are not followed.',
    }),
    kinds: Type.Array(StringEnum(NOTIFICATION_KINDS, { description: 'A kind of notification.' }), {
      minItems: 1,
      maxItems: NOTIFICATION_KINDS.length,
      uniqueItems: true,
      description: `The kinds to send: ${NOTIFICATION_KINDS.join(', ')}.`,
    }),
  },
  { additionalProperties: false },
);
export type CreateEndpointBody = Static<typeof CreateEndpointBody>;

/** `{id}` of /v1/notification_endpoints/{id}. */
export const EndpointIdParams = IdParams('The notification endpoint id (nep_…).');
export type EndpointIdParams = Static<typeof EndpointIdParams>;

/** The query of GET /v1/notification_endpoints: pagination like every list. */
export const ListEndpointsQuery = Type.Object({ ...PageQueryProperties }, { additionalProperties: false });
export type ListEndpointsQuery = Static<typeof ListEndpointsQuery>;

/** A notification endpoint, as every answer shows it (never its secret). */
const endpointProperties = {
  id: Type.String({ description: 'The endpoint id (nep_…).' }),
  url: Type.String({ description: 'Where notifications are POSTed.' }),
  kinds: Type.Array(Type.String(), { description: 'The kinds sent to it.' }),
  created_at: Timestamp('When it was added.'),
};
export const Endpoint = Type.Object(endpointProperties);

/** The answer of POST: the endpoint and its signing secret, shown this once. */
export const CreatedEndpoint = Type.Object({
  ...endpointProperties,
  secret: Type.String({ description: 'The Standard Webhooks signing secret (whsec_ + base64), returned only in this answer: store it.' }),
});

export const EndpointList = ListOf(Endpoint, 'notification endpoints');

/** The answer of DELETE. */
export const DeletedEndpoint = Type.Object({ id: Type.String({ description: 'The endpoint removed.' }), deleted: Type.Literal(true) });
