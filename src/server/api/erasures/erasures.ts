/**
 * Erasure of a person (POST /v1/erasures): everything stored of them in every site of the account, found by email,
 * phone or customer_id and through what links those rows (a report's events and snapshot, a form submission's events),
 * removed or anonymised in ONE transaction, and an audit entry that never holds the values (keyed hashes recognise a
 * repeat). Matching uses the normalisation delivery uses (src/protocol/identity.ts).
 */
import type { Database, Queryable } from '../../db/db';
import { newId } from '../../db/ids';
import { invalidParam } from '../../http/errors';
import { paginate, pageRequestOf, type ListEnvelope } from '../../http/pagination';
import { exceedsCharacters } from '../../../protocol/webhook';
import { MAX_IDENTITY_FIELD_LENGTH, normalizeEmail, normalizePhoneE164, type RawIdentity } from '../../../protocol/identity';
import {
  anonymiseEvents,
  anonymiseFormSubmissions,
  anonymiseReports,
  customerIdsOf,
  deleteSnapshots,
  eventCustomerEventIds,
  findRepeatedErasure,
  formSubmissionCandidates,
  insertErasure,
  linkedEvents,
  listErasuresPage,
  latestErasureRows,
  lockPersonalDataWrites,
  anonymiseAdjustments,
  reportAdjustmentIds,
  reportCandidates,
  reportEventIds,
  reportsOfCustomers,
  storedIdentities,
  reportTokens,
  type ErasureCounts,
  type ErasureProbe,
  type ErasureRow,
  type IdentityCandidate,
} from './sql';
import { erasedIdHash } from './keyed-hash';
import { CUSTOMER_ID_MAX, type ErasureBody, type ListErasuresQuery } from './schemas';

/** The identity kinds an erasure may name, in the order the audit lists them. */
export const ERASURE_FIELDS = ['email', 'phone', 'customer_id'] as const;
export type ErasureField = (typeof ERASURE_FIELDS)[number];

/** The person to erase, normalised. */
export interface ErasureTarget {
  email: string | null;
  phone: string | null;
  customerId: string | null;
}

/** The Erasure record: never the values. */
export interface ErasureRecord {
  id: string;
  created_at: string;
  /** Which kinds of identity the request named. */
  fields: ErasureField[];
  matched: ErasureCounts;
  /** The first earlier erasure of the account that named one of the same values, or null. */
  repeat_of: string | null;
}

/** Keys of an erased event's data that identify no one; everything else (touch, page, token, utm…) goes. */
const KEPT_EVENT_DATA = ['customer_event_id', 'trigger_key', 'integration', 'form_id', 'match_reason', 'form_submission_id', 'trigger_type', 'stage', 'match'];

/**
 * The person an erasure body names, normalised as for delivery; a 400 naming the field when none is given or one is
 * malformed (never quoting the value).
 */
export function erasureTarget(body: ErasureBody): ErasureTarget {
  if (body.email === undefined && body.phone === undefined && body.customer_id === undefined) {
    throw invalidParam('email', 'Name the person to erase: give at least one of email, phone and customer_id.', 'parameter_missing');
  }
  for (const [field, max] of [['email', MAX_IDENTITY_FIELD_LENGTH], ['phone', MAX_IDENTITY_FIELD_LENGTH], ['customer_id', CUSTOMER_ID_MAX]] as const) {
    const value = body[field];
    if (value !== undefined && (typeof value !== 'string' || exceedsCharacters(value, max))) throw invalidParam(field, `${field} must be a string of at most ${max} characters.`);
  }
  let email: string | null = null;
  if (body.email !== undefined) {
    email = normalizeEmail(body.email);
    if (email?.startsWith('mailto:')) throw invalidParam('email', 'email must be the address alone, without a mailto: prefix (name@example.com).');
    // An address reachable on the internet has a dot in its domain (a@b matches nobody, and a typo erases no one).
    if (email === null || !/@[^@.]+(\.[^@.]+)+$/.test(email)) throw invalidParam('email', 'email must be one email address (name@domain, the domain with a dot: name@example.com).');
  }
  let phone: string | null = null;
  if (body.phone !== undefined) {
    phone = normalizePhoneE164(body.phone);
    if (phone === null) {
      throw invalidParam('phone', 'phone must be a phone number with its country code, starting with + or 00 (E.164: at most 15 digits).');
    }
  }
  let customerId: string | null = null;
  if (body.customer_id !== undefined) {
    if (body.customer_id.trim() === '') throw invalidParam('customer_id', 'customer_id must not be blank.');
    customerId = body.customer_id;
  }
  return { email, phone, customerId };
}

/** Whether stored raw identity fields name the person (after the same normalisation). */
function identityMatches(identity: RawIdentity | null, target: ErasureTarget): boolean {
  if (!identity) return false;
  if (target.email !== null && normalizeEmail(identity.email) === target.email) return true;
  return target.phone !== null && normalizePhoneE164(identity.phone) === target.phone;
}

function confirmed(candidates: readonly IdentityCandidate[], target: ErasureTarget): string[] {
  return candidates.filter((c) => c.confirmed === true || identityMatches(c.identity, target)).map((c) => c.id);
}

/**
 * The values erased, as they could appear inside another text (a customer_event_id): those the request named, and
 * every email, phone and customer id the person's rows held (erased by phone, their email goes too).
 */
function erasedValues(target: ErasureTarget, identities: readonly RawIdentity[], customerIds: Iterable<string>): string[] {
  const values = new Set<string>(customerIds);
  for (const identity of [{ email: target.email, phone: target.phone }, ...identities]) {
    const email = normalizeEmail(identity.email);
    const phone = normalizePhoneE164(identity.phone);
    if (email) values.add(email);
    if (phone) values.add(phone).add(phone.slice(1));
  }
  if (target.customerId) values.add(target.customerId);
  return [...values];
}

/** A row whose caller id (customer_event_id, adjustment_id) an erasure may replace. */
interface CallerIdRow {
  id: string;
  customer_event_id: string;
  /** What the replacement is made of: the row's own id, or (an event) its report's, so both get the same one. */
  key?: string | null;
}

/**
 * A caller's customer_event_id that holds an erased value (say `signup-ada@example.com`) cannot stay: it is replaced
 * by an opaque `erased_…` id, the same for the report and its events. The replacement is a keyed hash of the row's own
 * id (unique), never of the caller's id: two rows of one caller id (a retry stored before erased reports were
 * recognised) must not collide on the unique index. Others are kept: they dedupe retries.
 */
function renamedIds(rows: readonly CallerIdRow[], values: readonly string[], hash: (value: string) => string): Map<string, string> {
  const renamed = new Map<string, string>();
  for (const row of rows) {
    const text = row.customer_event_id.toLowerCase();
    if (values.some((value) => text.includes(value.toLowerCase()))) renamed.set(row.id, `erased_${hash(`replacement of ${row.key ?? row.id}`).slice(0, 24)}`);
  }
  return renamed;
}

/** The keyed hashes that recognise a repeated erasure: one per value, its kind included. */
function identityHashes(target: ErasureTarget, hash: (value: string) => string): { fields: ErasureField[]; hashes: string[] } {
  const named: Array<[ErasureField, string | null]> = [['email', target.email], ['phone', target.phone], ['customer_id', target.customerId]];
  const given = named.filter((entry): entry is [ErasureField, string] => entry[1] !== null);
  return { fields: given.map(([field]) => field), hashes: given.map(([field, value]) => hash(`${field}:${value}`)) };
}

/** Everything stored of the person, anonymised in the caller's transaction; returns what was matched. */
async function eraseInTransaction(
  tx: Queryable,
  accountId: string,
  target: ErasureTarget,
  hash: (value: string) => string,
  now: Date,
): Promise<ErasureCounts> {
  await lockPersonalDataWrites(tx);
  const probe: ErasureProbe = { email: target.email, phone: target.phone, phoneDigits: target.phone?.slice(1) ?? null, customerId: target.customerId };
  const reports = new Set(confirmed(await reportCandidates(tx, accountId, probe), target));
  const submissions = new Set(confirmed(await formSubmissionCandidates(tx, accountId, probe), target));

  // Through the events: an event of the email links its report and form submission, whose other events follow; a
  // customer id of the person's reports links the later stages reported with it alone.
  const events = new Map<string, Awaited<ReturnType<typeof linkedEvents>>[number]>();
  const customerIds = new Set(target.customerId === null ? [] : [target.customerId]);
  for (let grown = true; grown; ) {
    grown = false;
    for (const id of await customerIdsOf(tx, [...reports], [...events.keys()])) {
      if (customerIds.has(id)) continue;
      customerIds.add(id);
      for (const report of await reportsOfCustomers(tx, accountId, [id])) reports.add(report);
    }
    for (const event of await linkedEvents(tx, accountId, target.email, [...customerIds], [...reports], [...submissions])) {
      if (events.has(event.id)) continue;
      events.set(event.id, event);
      if (event.report_id && !reports.has(event.report_id)) {
        reports.add(event.report_id);
        grown = true;
      }
      if (event.form_submission_id && !submissions.has(event.form_submission_id)) {
        submissions.add(event.form_submission_id);
        grown = true;
      }
    }
  }

  const tokens = [
    ...(await reportTokens(tx, [...reports])).map((key) => key.token),
    ...[...events.values()].flatMap((e) => (e.correlation_token ? [e.correlation_token] : [])),
  ];

  const values = erasedValues(target, await storedIdentities(tx, [...reports], [...submissions], [...events.keys()]), customerIds);
  // Each erased report and adjustment keeps a keyed hash of its caller's id, so that a retry is still a repeat.
  const idHash = erasedIdHash(hash);
  const reportIds = await reportEventIds(tx, [...reports]);
  const renamedReports = renamedIds(reportIds, values, hash);
  const renamedEvents = renamedIds(await eventCustomerEventIds(tx, [...events.keys()]), values, hash);
  const adjustments = await reportAdjustmentIds(tx, [...reports]);
  await anonymiseAdjustments(
    tx,
    renamedIds(adjustments, values, hash),
    new Map(adjustments.map((a) => [a.id, idHash(a.site_id, 'adjustment_id', a.customer_event_id)])),
  );
  return {
    reports: await anonymiseReports(
      tx,
      [...reports],
      renamedReports,
      new Map(reportIds.map((r) => [r.id, idHash(r.site_id, 'customer_event_id', r.customer_event_id)])),
    ),
    events: await anonymiseEvents(tx, [...events.keys()], KEPT_EVENT_DATA, renamedEvents, now),
    snapshots: await deleteSnapshots(tx, accountId, tokens),
    form_submissions: await anonymiseFormSubmissions(tx, [...submissions]),
  };
}

function toRecord(row: ErasureRow): ErasureRecord {
  return {
    id: row.id,
    created_at: row.created_at.toISOString(),
    fields: row.fields as ErasureField[],
    matched: row.matched,
    repeat_of: row.repeat_of,
  };
}

/** PostgreSQL's deadlock and serialization failures: the erasure is retried whole. */
function isRetryable(error: unknown): boolean {
  const code = (error as { code?: unknown }).code;
  return code === '40P01' || code === '40001';
}

/**
 * Erases a person from an account: one transaction (retried whole after a deadlock with a concurrent writer), and the
 * audit entry written in it. A person found nowhere still gets an entry, with zero counts.
 */
export async function erasePerson(
  db: Database,
  accountId: string,
  target: ErasureTarget,
  hash: (value: string) => string,
  now: Date = new Date(),
): Promise<ErasureRecord> {
  const { fields, hashes } = identityHashes(target, hash);
  for (let attempt = 1; ; attempt++) {
    try {
      return await db.transaction(async (tx) => {
        const matched = await eraseInTransaction(tx, accountId, target, hash, now);
        const repeatOf = await findRepeatedErasure(tx, accountId, hashes);
        return toRecord(await insertErasure(tx, { id: newId('era'), accountId, fields, hashes, matched, repeatOf, at: now }));
      });
    } catch (error) {
      if (attempt >= 3 || !isRetryable(error)) throw error;
    }
  }
}

/** Thrown to roll a preview back. */
class PreviewDone extends Error {
  constructor(readonly counts: ErasureCounts) {
    super('preview');
  }
}

/**
 * What erasing the person would match, without changing anything: the erasure runs in a transaction that is rolled
 * back (the dashboard's confirmation says exactly what will go).
 */
export async function previewErasure(db: Database, accountId: string, target: ErasureTarget, hash: (value: string) => string): Promise<ErasureCounts> {
  try {
    await db.transaction(async (tx) => {
      throw new PreviewDone(await eraseInTransaction(tx, accountId, target, hash, new Date()));
    });
  } catch (error) {
    if (error instanceof PreviewDone) return error.counts;
    throw error;
  }
  throw new Error('unreachable: a preview always rolls back');
}

/** The account's latest `limit` erasures, newest first (the dashboard's history). */
export async function latestErasures(db: Queryable, accountId: string, limit: number): Promise<ErasureRecord[]> {
  return (await latestErasureRows(db, accountId, limit)).map(toRecord);
}

/** GET /v1/erasures: the account's erasures, oldest first, without the values. */
export async function listErasures(db: Queryable, accountId: string, query: ListErasuresQuery): Promise<ListEnvelope<ErasureRecord>> {
  return paginate(pageRequestOf(query), (request) => listErasuresPage(db, accountId, request), toRecord);
}
