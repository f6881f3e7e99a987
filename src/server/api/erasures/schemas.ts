/** The input schemas of /v1/erasures: what each route accepts, described for a reader (people and agent tools alike). */
import { Type, type Static } from '@sinclair/typebox';
import { PageQuery } from '../../http/pagination';
import { MAX_IDENTITY_FIELD_LENGTH } from '../../../protocol/identity';

/** Longest customer_id (DESIGN.md, "Value, later stages and adjustments"). */
export const CUSTOMER_ID_MAX = 200;

/** The body of POST /v1/erasures: at least one identity of the person. */
export const ErasureBody = Type.Object(
  {
    email: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: MAX_IDENTITY_FIELD_LENGTH,
        description: 'The email address of the person, matched trimmed and lower-cased (as delivery normalises it).',
      }),
    ),
    phone: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: MAX_IDENTITY_FIELD_LENGTH,
        description:
          'The phone number of the person with its country code (+ or 00 first), matched in E.164 form (as delivery normalises it): "+1 (800) 555-0100" matches "+18005550100".',
      }),
    ),
    customer_id: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: CUSTOMER_ID_MAX,
        description: `Your id of the customer, as your backend reported it (1 to ${CUSTOMER_ID_MAX} characters, matched exactly).`,
      }),
    ),
  },
  {
    additionalProperties: false,
    description:
      'Who to erase: at least one of email, phone and customer_id. Everything stored of that person in every site of the account is removed or anonymised in one step.',
  },
);
export type ErasureBody = Static<typeof ErasureBody>;

/** The query of GET /v1/erasures: the list pagination, no filters. */
export const ListErasuresQuery = PageQuery;
export type ListErasuresQuery = Static<typeof ListErasuresQuery>;
