/** The input schemas of /v1/erasures: what each route accepts, described for a reader (people and agent tools alike). */
import { Type, type Static } from '@sinclair/typebox';
import { PageQuery } from '../../http/pagination';
import { ListOf, Nullable, Timestamp } from '../../http/schemas';
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

const Count = (what: string) => Type.Integer({ minimum: 0, description: what });

/** The Erasure record (responses): what was asked and matched, never the values. */
export const Erasure = Type.Object(
  {
    id: Type.String({ description: 'The erasure id (era_…).' }),
    created_at: Timestamp('When the erasure was made.'),
    fields: Type.Array(Type.Unsafe<string>({ type: 'string', enum: ['email', 'phone', 'customer_id'] }), {
      description: 'Which kinds of identity the request named (never their values).',
    }),
    matched: Type.Object(
      {
        reports: Count('Reports whose identity and customer id were cleared.'),
        events: Count('Events anonymised (email, click ids, touch, request summaries cleared; sends not made yet cancelled).'),
        snapshots: Count('Browser snapshots deleted (IP address, user agent, click, cookies).'),
        form_submissions: Count('Form submissions whose fields, IP address and user agent were cleared.'),
      },
      { additionalProperties: false, description: 'What was found of the person, in every site of the account.' },
    ),
    repeat_of: Nullable(Type.String({ description: 'The first earlier erasure that named one of the same values (recognised by a keyed hash), or null.' })),
  },
  { title: 'Erasure', additionalProperties: false },
);

/** A page of erasures, oldest first. */
export const ErasureList = ListOf(Erasure, 'erasures');
