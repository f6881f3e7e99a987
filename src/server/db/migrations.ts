/** Versioned schema migrations: the same SQL runs on PGlite and on PostgreSQL. Append new versions; never edit old ones. */
import type { Database, Queryable } from './db';

export interface Migration {
  version: number;
  name: string;
  sql: string;
}

export const MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    name: 'initial schema',
    sql: `
create table accounts (
  id text primary key,
  name text not null,
  created_at timestamptz not null default now()
);

-- API keys are stored only as a SHA-256 hash; prefix is the first characters, to tell keys apart in listings.
create table api_keys (
  id text primary key,
  account_id text not null references accounts(id),
  label text not null default '',
  prefix text not null,
  key_hash text not null unique,
  created_at timestamptz not null default now(),
  revoked_at timestamptz
);

create table sites (
  seq bigint generated always as identity unique,
  id text primary key,
  account_id text not null references accounts(id),
  name text not null default 'My Website',
  domain text,
  timezone text not null default 'America/New_York',
  site_key text not null unique,
  correlation_ttl_seconds integer not null default 1800,
  honor_gpc boolean not null default true,
  created_at timestamptz not null default now()
);
create index sites_account_seq on sites (account_id, seq);

-- A hosted authorization step. token is the unguessable part of the hosted url.
create table handoffs (
  seq bigint generated always as identity unique,
  id text primary key,
  account_id text not null references accounts(id),
  purpose text not null,
  destination_type text,
  trigger_source text,
  site_id text references sites(id),
  token text not null unique,
  status text not null default 'pending',
  result jsonb,
  created_at timestamptz not null default now(),
  completed_at timestamptz
);
create index handoffs_account_seq on handoffs (account_id, seq);

-- A connected ad platform account; one per (account, type), replaced by a later connect.
create table destinations (
  id text primary key,
  account_id text not null references accounts(id),
  type text not null,
  settings jsonb not null default '{}'::jsonb,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  unique (account_id, type)
);

-- A connected trigger source of a site (the API trigger) and its webhook secret; the previous secret verifies
-- until previous_secret_expires_at after a rotation.
create table trigger_sources (
  id text primary key,
  account_id text not null references accounts(id),
  site_id text not null references sites(id),
  type text not null,
  secret text not null,
  previous_secret text,
  previous_secret_expires_at timestamptz,
  created_at timestamptz not null default now(),
  rotated_at timestamptz,
  unique (site_id, type)
);

create table flows (
  seq bigint generated always as identity unique,
  id text primary key,
  account_id text not null references accounts(id),
  site_id text not null references sites(id),
  name text not null,
  trigger_config jsonb not null,
  actions_config jsonb not null,
  status text not null default 'draft',
  -- for API triggers: the trigger key the webhook path names (indexed for fan-out)
  trigger_key text,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  published_at timestamptz
);
create index flows_account_seq on flows (account_id, seq);
create index flows_site_trigger on flows (site_id, trigger_key) where status = 'live';

-- What the loader captured on signup intent, by site and correlation token. Click data once stored is never lost.
create table snapshots (
  id bigint generated always as identity primary key,
  site_id text not null references sites(id),
  correlation_token text not null,
  occurred_at timestamptz not null,
  trigger text not null,
  page_url text,
  referrer text,
  touch jsonb,
  cookies jsonb not null default '{}'::jsonb,
  received_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  unique (site_id, correlation_token)
);

-- A report through the signed webhook. The unique constraint makes a repeated customer_event_id count once,
-- also under concurrent retries; response is what the first report was answered.
create table reports (
  id text primary key,
  site_id text not null references sites(id),
  customer_event_id text not null,
  trigger_key text not null,
  correlation_token text,
  identity jsonb not null default '{}'::jsonb,
  allow_uncorrelated boolean not null default false,
  response jsonb,
  created_at timestamptz not null default now(),
  unique (site_id, customer_event_id)
);

-- A captured conversion. sort_at is occurred_at made unique within an account (microsecond tie-breaker), so the
-- timestamp cursor of GET /v1/events neither loses nor repeats events that share a timestamp.
create table events (
  seq bigint generated always as identity unique,
  id text primary key,
  account_id text not null references accounts(id),
  site_id text not null references sites(id),
  site_key text not null,
  flow_id text references flows(id),
  flow_name text,
  report_id text references reports(id),
  trigger text,
  occurred_at timestamptz not null,
  sort_at timestamptz not null,
  status text not null default 'queued',
  match_quality text,
  email text,
  click_ids jsonb,
  data jsonb not null default '{}'::jsonb,
  created_at timestamptz not null default now(),
  unique (account_id, sort_at)
);
create index events_account_sort on events (account_id, sort_at desc);
create index events_site_sort on events (site_id, sort_at desc);
create index events_flow_sort on events (flow_id, sort_at desc);
create index events_email on events (account_id, email);

-- Per-destination result of an event: one row per action of the flow.
create table event_actions (
  id text primary key,
  event_id text not null references events(id),
  position integer not null,
  destination text not null,
  conversion_id text,
  status text not null default 'queued',
  attempts integer not null default 0,
  error jsonb,
  request jsonb,
  delivered_at timestamptz,
  updated_at timestamptz not null default now(),
  unique (event_id, position)
);

-- Delivery work: one row per pending event action. A worker claims due rows (locked_until), sends, then deletes the
-- row or reschedules it with backoff. Rows survive a restart of the service.
create table outbox (
  id bigint generated always as identity primary key,
  event_action_id text not null unique references event_actions(id),
  due_at timestamptz not null default now(),
  attempts integer not null default 0,
  locked_until timestamptz,
  last_error text,
  created_at timestamptz not null default now()
);
create index outbox_due on outbox (due_at);
`,
  },
  {
    version: 2,
    name: 'pairing indexes',
    // A snapshot that arrives after its report looks up the waiting report by token and its events by report.
    sql: `
create index reports_site_token on reports (site_id, correlation_token) where correlation_token is not null;
create index events_report on events (report_id) where report_id is not null;
`,
  },
  {
    version: 3,
    name: 'drop duplicate events index',
    // The unique (account_id, sort_at) index already serves the newest-first scan; the copy only cost every insert.
    sql: `
drop index if exists events_account_sort;
`,
  },
  {
    version: 5,
    name: 'platform connections: encrypted credentials, status, OAuth step of a handoff',
    sql: `
alter table destinations add column credentials text;
alter table destinations add column status text not null default 'connected';
alter table destinations add column connected_at timestamptz not null default now();
alter table handoffs add column oauth_state text unique;
alter table handoffs add column oauth_verifier text;
alter table handoffs add column oauth_grant text;
`,
  },
  {
    version: 6,
    name: 'snapshots: visitor user agent and IP address, consent, every click id received',
    // user_agent and ip_address: what the collector saw with the snapshot, for Meta's client_user_agent and
    // client_ip_address. Personal data: they live only in the snapshot row, which retention deletes whole (30 days).
    // received_click_ids: every click id that reached the token, {key: [values in arrival order]}, while touch holds
    // the one touch delivered. Filled here for the rows already stored.
    sql: `
alter table snapshots add column user_agent text;
alter table snapshots add column ip_address text;
alter table snapshots add column consent jsonb;
alter table snapshots add column received_click_ids jsonb not null default '{}'::jsonb;
update snapshots set received_click_ids = (
  select coalesce(jsonb_object_agg(c.key, jsonb_build_array(c.value)), '{}'::jsonb) from jsonb_each_text(touch -> 'click_ids') as c(key, value)
) where touch is not null;
`,
  },
  {
    version: 7,
    name: 'form submissions (the form trigger)',
    sql: `
-- A successful submission of a form tool that the loader saw: one per (site, submission_id), so a repeat creates
-- nothing. fields holds the raw identity fields for delivery-time hashing; the row is purged with the snapshots.
create table form_submissions (
  id text primary key,
  site_id text not null references sites(id),
  submission_id text not null,
  integration text not null,
  form_id text,
  occurred_at timestamptz not null,
  page_url text not null,
  referrer text,
  touch jsonb,
  cookies jsonb not null default '{}'::jsonb,
  consent jsonb,
  fields jsonb not null default '{}'::jsonb,
  user_agent text,
  ip_address text,
  received_at timestamptz not null default now(),
  unique (site_id, submission_id)
);
create index form_submissions_received on form_submissions (received_at);
`,
  },
  {
    version: 8,
    name: 'dashboard sign-in links and sessions; what the collector saw per page origin',
    sql: `
-- A one-time sign-in link of the dashboard: stored as a SHA-256 hash, used once, valid 15 minutes.
create table dashboard_sign_in_tokens (
  token_hash text primary key,
  account_id text not null references accounts(id),
  created_at timestamptz not null default now(),
  expires_at timestamptz not null,
  used_at timestamptz
);
create index dashboard_sign_in_tokens_expires on dashboard_sign_in_tokens (expires_at);

-- A signed-in browser: the cookie holds the token, this table its SHA-256 hash; one account per session.
create table dashboard_sessions (
  token_hash text primary key,
  account_id text not null references accounts(id),
  created_at timestamptz not null default now(),
  expires_at timestamptz not null,
  last_seen_at timestamptz not null default now()
);
create index dashboard_sessions_expires on dashboard_sessions (expires_at);

-- The install check: per site and page origin, what the collector served (config, snapshot, form submission) or
-- refused and why, counted, with the last time. No personal data: an origin, a kind, a reason code. Bounded per site.
create table collector_origins (
  site_id text not null references sites(id),
  origin text not null,
  kind text not null,
  reason text not null default '',
  domain text,
  count bigint not null default 0,
  first_seen_at timestamptz not null default now(),
  last_seen_at timestamptz not null default now(),
  primary key (site_id, origin, kind, reason)
);
create index collector_origins_site_seen on collector_origins (site_id, last_seen_at);
`,
  },
  {
    version: 9,
    name: 'delivery attempts: every send of an event action, with what was sent and what the platform answered',
    sql: `
-- One row per send of an event action (not per wait): the PII-free request summary and the platform's answer, so the
-- dashboard's event page shows each attempt. Deleted with its action.
create table delivery_attempts (
  id bigint generated always as identity primary key,
  event_action_id text not null references event_actions(id) on delete cascade,
  attempt integer not null,
  at timestamptz not null,
  outcome text not null,
  error jsonb,
  request jsonb
);
create index delivery_attempts_action on delivery_attempts (event_action_id, id);
`,
  },
  {
    version: 10,
    name: 'outbound notifications: endpoints (sealed Standard Webhooks secrets), their outbox and every attempt',
    sql: `
create table notification_endpoints (
  seq bigint generated always as identity unique,
  id text primary key,
  account_id text not null references accounts(id),
  url text not null,
  kinds text[] not null,
  -- the whsec_ signing secret, sealed with the service's secret key
  secret text not null,
  created_at timestamptz not null default now()
);
create index notification_endpoints_account on notification_endpoints (account_id, seq);

-- The notification outbox: one row per message and endpoint, written with what it tells.
create table notifications (
  id bigint generated always as identity primary key,
  message_id text not null,
  endpoint_id text not null references notification_endpoints(id) on delete cascade,
  account_id text not null,
  kind text not null,
  payload jsonb not null,
  status text not null default 'pending',
  attempts int not null default 0,
  due_at timestamptz not null default now(),
  locked_until timestamptz,
  created_at timestamptz not null default now(),
  delivered_at timestamptz
);
create index notifications_due on notifications (due_at) where status = 'pending';
create index notifications_account on notifications (account_id, created_at);

create table notification_attempts (
  id bigint generated always as identity primary key,
  notification_id bigint not null references notifications(id) on delete cascade,
  attempt int not null,
  at timestamptz not null,
  status int,
  error text,
  duration_ms int not null
);
create index notification_attempts_notification on notification_attempts (notification_id, attempt);
`,
  },
  {
    version: 11,
    name: 'value, later stages and adjustments',
    sql: `
-- What a conversion is worth and whose it is: on the report as received and on each event it fanned out to.
-- value is in the currency's major unit (0 to 1e9, at most 6 decimals); customer_id links a later stage to its signup.
alter table reports add column value numeric(16, 6);
alter table reports add column currency text;
alter table reports add column customer_id text;
-- saas_signup or conversion (a later stage); occurred_at: a later stage's own time as reported (null: when received).
alter table reports add column kind text not null default 'saas_signup';
alter table reports add column occurred_at timestamptz;
alter table events add column value numeric(16, 6);
alter table events add column currency text;
alter table events add column customer_id text;
-- A later stage finds its click through the latest signup of the same customer of the site.
create index reports_site_customer on reports (site_id, customer_id, created_at desc) where customer_id is not null and kind = 'saas_signup';

-- A restatement or retraction of what one report produced, once per (site, adjustment_id); events: how many events of
-- that report it applies to (what every repeat is answered with).
create table adjustments (
  id text primary key,
  site_id text not null references sites(id),
  adjustment_id text not null,
  report_id text not null references reports(id),
  type text not null,
  value numeric(16, 6),
  currency text,
  occurred_at timestamptz not null,
  events integer not null,
  created_at timestamptz not null default now(),
  unique (site_id, adjustment_id)
);
create index adjustments_report on adjustments (report_id, created_at);

-- The adjustment of one event action, with its own small queue: due once the original delivery has settled (and the
-- earlier adjustments of that action have), sent, then adjusted, unsupported or failed with the reason.
create table adjustment_results (
  id text primary key,
  adjustment_id text not null references adjustments(id) on delete cascade,
  event_action_id text not null references event_actions(id) on delete cascade,
  destination text not null,
  seq bigint generated always as identity unique,
  status text not null default 'queued',
  reason text,
  attempts integer not null default 0,
  due_at timestamptz not null default now(),
  locked_until timestamptz,
  request jsonb,
  error jsonb,
  updated_at timestamptz not null default now(),
  unique (adjustment_id, event_action_id)
);
create index adjustment_results_due on adjustment_results (due_at) where status = 'queued';
create index adjustment_results_action on adjustment_results (event_action_id, seq);
`,
  },
  {
    version: 13,
    name: 'personal data: erasures, identity retention, recent-events filters',
    sql: `
-- One erasure request of an account (POST /v1/erasures): which kinds of identity were given, what was matched, and
-- keyed hashes (HMAC-SHA256 under a key derived from the server secret) of the normalised values, so a repeat is
-- recognised without the values ever being stored.
create table erasures (
  seq bigint generated always as identity unique,
  id text primary key,
  account_id text not null references accounts(id),
  fields text[] not null,
  identity_hashes text[] not null,
  matched jsonb not null,
  repeat_of text references erasures(id),
  created_at timestamptz not null default now()
);
create index erasures_account_seq on erasures (account_id, seq);

-- When an erasure anonymised the event: delivery then stores no request summary for it.
alter table events add column erased_at timestamptz;

-- The email filter of GET /v1/events: equality on the account's recent events, newest first, without a sort. Rows
-- whose email retention (or an erasure) cleared leave the index.
drop index if exists events_email;
create index events_email_sort on events (account_id, email, sort_at desc) where email is not null;
-- The status filter: queued and failed events are few; completed ones are found along the (account_id, sort_at) index.
create index events_open_status_sort on events (account_id, status, sort_at desc) where status <> 'completed';
-- Identity retention: when the purge cleared a row's identity (email, phone, names, customer id) past the window. The
-- purge walks the rows not yet cleared, oldest first, so each row is visited once and then leaves the index.
alter table events add column identity_cleared_at timestamptz;
alter table reports add column identity_cleared_at timestamptz;
create index events_identity_due on events (created_at) where identity_cleared_at is null;
create index reports_identity_due on reports (created_at) where identity_cleared_at is null;
`,
  },
  {
    version: 20,
    name: 'rate limits: request counts shared by the instances on one PostgreSQL',
    sql: `
-- Requests per key (a client address or a site key, as a keyed hash: never the address itself) in one fixed window of
-- the collector's or the webhook's limits. Each instance counts in memory and adds its counts here in batches about
-- once a second; rows of windows that ended are deleted. Unlogged: counts are worth nothing after a crash.
create unlogged table rate_limit_counts (
  bucket text not null,
  key_id text not null,
  window_start bigint not null,
  hits integer not null,
  primary key (bucket, key_id, window_start)
);
create index rate_limit_counts_window on rate_limit_counts (window_start);
`,
  },
  {
    version: 21,
    name: 'reports whose events are built after a burst',
    sql: `
-- A report taken in during a burst of the webhook is stored (and answered) first; its events, actions and outbox rows
-- are built right after the burst (webhook/deferred-fanout.ts), which deletes its row here in the same statement.
-- received_at: when the report was received (the pairing window and an unpaired event's time count from there). A
-- table of its own, not a column of reports: building a report then changes no row of reports and none of its indexes.
create table report_fanouts (
  report_id text primary key,
  received_at timestamptz not null
);
`,
  },
  {
    version: 22,
    name: 'snapshots without the per-row check of their site',
    sql: `
-- The collector's busiest write checked every snapshot's site_id against sites, row by row (a lookup of the site and a
-- lock on its row, from a trigger): 6 µs of PGlite's time per snapshot and 0.1 ms per statement, about a seventh of the
-- snapshot upsert's cost (docs/benchmarks.md, eleventh pass). The check cannot fail: the collector takes site_id from
-- the sites row it has just found by the site key, and no site is ever deleted (the API has no such operation). Every
-- other table keeps its foreign key to sites.
alter table snapshots drop constraint if exists snapshots_site_id_fkey;
`,
  },
  {
    version: 23,
    name: 'dashboard sign-in links and sessions remember the API key that asked for them',
    sql: `
-- A sign-in link asked for with an API key (POST /v1/dashboard/sign-in-links, what 'cnv dashboard' does beside a
-- running service), and the session opened with it, name that key: revoking the key ends them, so a leaked key stops
-- at its revocation instead of living on as a week-long session that can make new keys. Null: issued by the operator
-- on the store (the first start, 'cnv dashboard' on a stopped service).
alter table dashboard_sign_in_tokens add column if not exists api_key_id text;
alter table dashboard_sessions add column if not exists api_key_id text;
create index if not exists dashboard_sessions_api_key on dashboard_sessions (api_key_id) where api_key_id is not null;
`,
  },
  {
    version: 24,
    name: 'API keys remember when they were last used',
    sql: `
-- When the key last authenticated a request (REST, MCP), to the minute: the dashboard's keys page shows it, so a key
-- can be revoked knowing whether anything still uses it. Null: never used (or not since this version).
alter table api_keys add column if not exists last_used_at timestamptz;
`,
  },
  {
    version: 25,
    name: 'erased reports and adjustments keep a keyed hash of their caller id',
    sql: `
-- An erasure replaces a customer_event_id (or adjustment_id) that holds the person's email, phone or customer id. So that
-- a retry of the erased report or adjustment is still answered as a repeat (and writes nothing), the erased row keeps a
-- keyed hash of the caller's id (HMAC under the service's secret, as the erasure audit: nobody learns the id from it).
-- Set on every erased report (it also marks the report erased: adjustments of it are refused). Null: not erased.
alter table reports add column if not exists erased_id_hash text;
create index if not exists reports_erased_id_hash on reports (site_id, erased_id_hash) where erased_id_hash is not null;
alter table adjustments add column if not exists erased_id_hash text;
create index if not exists adjustments_erased_id_hash on adjustments (site_id, erased_id_hash) where erased_id_hash is not null;
`,
  },
  {
    version: 26,
    name: 'the Events page lists erased conversions',
    sql: `
-- The dashboard's "erased" status choice: an account's erased events, newest first. They are few, so along the account's
-- (account_id, sort_at) index a page of them would read every event of the account; this index holds only them.
create index if not exists events_erased_sort on events (account_id, sort_at desc) where erased_at is not null;
`,
  },
  {
    version: 27,
    name: 'destinations are listed in pages, as every other list',
    sql: `
-- GET /v1/destinations takes limit, starting_after and ending_before like the other lists, whose pages are read along
-- seq (db/keyset.ts). The connections already stored are numbered in the order that list showed them (created_at, then
-- id); a reconnect (an upsert) keeps its row, so its place in the list. New connections take the next numbers.
alter table destinations add column if not exists seq bigint;
update destinations set seq = ordered.n from (select id, row_number() over (order by created_at, id) as n from destinations) as ordered where destinations.id = ordered.id;
alter table destinations alter column seq set not null;
alter table destinations alter column seq add generated always as identity;
select setval(pg_get_serial_sequence('destinations', 'seq'), (select coalesce(max(seq), 0) + 1 from destinations), false);
alter table destinations add constraint destinations_seq_key unique (seq);
create index if not exists destinations_account_seq on destinations (account_id, seq);
`,
  },
  {
    version: 28,
    name: 'the service records the public URL it serves',
    sql: `
-- What a running service tells the tools that share its store, one row per fact: 'public_url', the base URL its snippet,
-- sign-in links and hosted pages carry, written at every start, so that \`cnv\` prints the same links without being
-- told the service's PORT, HOST or CNV_PUBLIC_URL again. Several services on one PostgreSQL: the last started wins.
create table if not exists service_facts (
  name text primary key,
  value text not null,
  recorded_at timestamptz not null default now()
);
`,
  },
  {
    version: 29,
    name: 'handoff links are found by their hash, their token is stored sealed',
    sql: `
-- A handoff's link is a credential for a day: token_hash (SHA-256 hex of the token, as api keys) is what the hosted page
-- looks it up by, and token is sealed with the service key at the next start (handoffs/token-upgrade.ts; SQL has no
-- key), so a backup never holds a live link. Re-runnable: it fills only the rows without a hash.
alter table handoffs add column if not exists token_hash text;
update handoffs set token_hash = encode(sha256(convert_to(token, 'UTF8')), 'hex') where token_hash is null;
alter table handoffs alter column token_hash set not null;
create unique index if not exists handoffs_token_hash on handoffs (token_hash);
`,
  },
  {
    version: 30,
    name: 'a handoff remembers the choices made before its sign-in',
    sql: `
-- What the person chose on the sign-in page before the platform's consent screen (ConnectField.beforeSignIn, field
-- name -> value: Google's api), since it decides the scopes asked for; the form after the sign-in takes it from here.
-- Null: nothing chosen (every platform but Google, and sign-ins started before this version).
alter table handoffs add column if not exists oauth_choices jsonb;
`,
  },
  {
    version: 31,
    name: "an event keeps its visitor's consent",
    sql: `
-- Delivery read the visitor's Consent Mode signals only from the snapshot (or form submission), which the snapshot
-- retention deletes: a conversion sent after that went out as if the visitor had never answered. Events now keep
-- them in data.consent when paired (pairing.ts, form-submissions.ts); this gives the events stored before theirs, from
-- the rows still there. Re-runnable: only events without data.consent are written.
update events e set data = e.data || jsonb_build_object('consent', s.consent)
from snapshots s
where s.site_id = e.site_id and s.correlation_token = e.data ->> 'correlation_token' and s.consent is not null
  and not (e.data ? 'consent');
update events e set data = e.data || jsonb_build_object('consent', f.consent)
from form_submissions f
where f.id = e.data ->> 'form_submission_id' and f.consent is not null and not (e.data ? 'consent');
`,
  },
  {
    version: 32,
    name: 'a restatement dated before one already recorded is superseded',
    sql: `
-- A restatement whose occurred_at is earlier than that of a restatement of the same conversion already recorded (a
-- billing system's webhooks delivered out of order) is recorded but superseded: never sent, never the conversion's
-- value (webhook/adjustment-sql.ts). Its results are settled when it is recorded; this says it is not one of the
-- adjustments a platform received (delivery dates each adjustment after the ones before it that were sent).
-- Adjustments recorded before this version applied in the order they arrived: none is superseded.
alter table adjustments add column if not exists superseded boolean not null default false;
`,
  },
  {
    version: 33,
    name: 'adjustments are numbered in the order they arrived',
    sql: `
-- The order adjustments of one conversion arrived in, as the platforms received them: seq, numbered when the row is
-- inserted, after the lock on its report's row (webhook/adjustment-sql.ts), so of two that arrive at once the one that
-- commits second has the higher number. created_at (now(): when its transaction began) could say the opposite on
-- PostgreSQL, where the transaction that began first may wait on the lock and commit second. The adjustments already
-- stored are numbered in the order their results were sent in (adjustment_results.seq, also drawn after that lock);
-- one without results (its report had no action then) before those of its report that have some, then created_at, id.
alter table adjustments add column if not exists seq bigint;
update adjustments set seq = ordered.n from (select j.id, row_number() over (order by (select min(r.seq) from adjustment_results r where r.adjustment_id = j.id) nulls first, j.created_at, j.id) as n from adjustments j) as ordered where adjustments.id = ordered.id;
alter table adjustments alter column seq set not null;
alter table adjustments alter column seq add generated always as identity;
select setval(pg_get_serial_sequence('adjustments', 'seq'), (select coalesce(max(seq), 0) + 1 from adjustments), false);
alter table adjustments add constraint adjustments_seq_key unique (seq);
create index if not exists adjustments_report_seq on adjustments (report_id, seq);
`,
  },
];

/**
 * Applies every migration not yet applied, in order, in one transaction under an advisory lock, so that several
 * services starting at once on one PostgreSQL neither race on the bookkeeping table nor apply a version twice.
 * Returns the versions applied.
 */
export async function migrate(db: Database): Promise<number[]> {
  return db.transaction(async (tx) => {
    await tx.query('select pg_advisory_xact_lock(7412001)');
    await tx.query(`create table if not exists schema_migrations (
      version integer primary key, name text not null, applied_at timestamptz not null default now())`);
    const applied = new Set(
      (await tx.query<{ version: number }>('select version from schema_migrations')).map((r) => Number(r.version)),
    );
    const done: number[] = [];
    for (const migration of MIGRATIONS) {
      if (applied.has(migration.version)) continue;
      for (const statement of splitStatements(migration.sql)) await tx.query(statement);
      await tx.query('insert into schema_migrations (version, name) values ($1, $2)', [migration.version, migration.name]);
      done.push(migration.version);
    }
    return done;
  });
}

/**
 * The migrations recorded in the store that this version does not have, in order: the store was last used by a newer
 * version of cnv (a downgrade, or an older process started beside newer ones on one PostgreSQL). The migrations only
 * add, so this version runs on it; the service says so when it starts (docs/operations.md, Upgrades).
 */
export async function migrationsUnknownHere(db: Queryable): Promise<number[]> {
  const known = new Set(MIGRATIONS.map((migration) => migration.version));
  const recorded = await db.query<{ version: number }>('select version from schema_migrations order by version');
  return recorded.map((row) => Number(row.version)).filter((version) => !known.has(version));
}

/** Splits a migration script into statements (our migrations use no semicolons inside literals or bodies). */
function splitStatements(sql: string): string[] {
  return sql
    .split(/;\s*$/m)
    .map((s) => s.replace(/^\s*--.*$/gm, '').trim())
    .filter(Boolean);
}
