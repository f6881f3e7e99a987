/** The input schemas of /v1/destinations: the connected ad platform accounts of the API key's account. */
import { Type, type Static } from '@sinclair/typebox';
import { IdParams } from '../../http/schemas';

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
            'For google-ads: the conversion action to validate against (its numeric id). Google checks the whole request, so a test without one cannot tell whether the action exists.',
        }),
      ),
    },
    { additionalProperties: false },
  ),
);
export type TestDestinationBody = Static<typeof TestDestinationBody>;

/** The query of GET /v1/destinations: none (an account has at most one connection per platform). */
export const ListDestinationsQuery = Type.Object({}, { additionalProperties: false });
