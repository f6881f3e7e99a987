/**
 * The contract between delivery and the ad platforms. Every platform folder (`destinations/<type>/`) exports one
 * `DestinationPlatform`; `destinations/registry.ts` lists them. Delivery knows nothing of any platform beyond this file.
 *
 * Delivery groups due event actions by connection (one destination account), cuts them into batches of at most
 * `maxBatchSize`, and calls `sendBatch` once per batch. Batches of different connections run concurrently and their
 * outcomes are recorded as each batch ends, so one slow account never delays another.
 *
 * Tokens that heal (one mechanism for every platform and every send, conversions and adjustments alike:
 * `delivery/token-healing.ts`; a platform opts in by returning `token_refused`):
 * - `SendContext.accessToken()` gives the connection's cached access token, refreshed before it expires.
 * - When the platform refuses that token before its expiry (a revoked grant, a password change, clock skew), the
 *   platform returns `{kind: 'token_refused'}` for the events of the refused request (never `failed`). Delivery then
 *   drops the cached token, refreshes once, and sends those events again in the same round.
 * - A refused refresh (`invalid_grant`: `accessToken()` throws `ReauthorizationRequired`; a platform lets it propagate),
 *   a token refused again right after a refresh, or a refused token of a platform without a refresh token (Meta's
 *   system-user token) marks the connection `reauthorization_required`: its conversions stay `queued` (never failed),
 *   the account is notified (`destination.reauthorization_required`), and a new handoff resumes them
 *   (`destination.recovered`).
 *
 * Consent: with `consent.ad_user_data === 'denied'` no user identifier of any kind (hashed or not, platform click-id
 * cookies that identify a person included) may leave cnv; a click id only where the platform's documents allow it
 * without consent (each platform's module says what it verified). When nothing may be sent, the platform returns
 * `{kind: 'skipped', reason}` (code `consent_denied`).
 *
 * Dedup ids: a platform that deduplicates on an event id uses `dedupEventId(input)` (the report's
 * `customer_event_id`, or the form's `submission_id`), so a browser tag given the same id dedupes with cnv, and a
 * resend carries the same id.
 */
import type { RawIdentity } from '../../protocol/identity';
import type { Settings } from '../settings';

/** Google Consent Mode v2 signals as the loader read them from the page's dataLayer. */
export interface ConsentSignals {
  ad_user_data: 'granted' | 'denied' | null;
  ad_personalization: 'granted' | 'denied' | null;
}

/**
 * What fired the event: a signed webhook report of a signup (`saas_signup`) or of a later stage of the customer
 * (`conversion`: a trial, a qualified lead, a payment, a renewal), or a form tool's submission seen in the browser.
 */
export type EventTrigger = 'saas_signup' | 'conversion' | 'form_submission';

/** Everything a platform needs to send one event action. Raw identity never leaves the adapter except hashed. */
export interface DeliveryInput {
  eventId: string;
  eventActionId: string;
  /** Destination type, e.g. `google-ads`. */
  destination: string;
  /** The flow action's `config` object, validated at publish by the platform's `checkAction`. */
  actionConfig: Record<string, unknown>;
  trigger: EventTrigger;
  /** When the conversion happened. */
  occurredAt: Date;
  siteKey: string;
  /** IANA timezone of the site. */
  siteTimezone: string;
  /** The reporter's stable id (webhook `customer_event_id`, or the form `submission_id`); null when there is none. */
  customerEventId: string | null;
  /** Click ids of the delivered touch, keyed lower-case as the loader stores them (`gclid`, `fbclid`, `msclkid`, …). */
  clickIds: Record<string, string>;
  /** When the loader captured that touch (the landing), or null. */
  touchCapturedAt: Date | null;
  /** Platform cookies read by the loader at snapshot time (`_fbp`, `_fbc`, `_uetmsclkid`, `li_fat_id`, …). */
  cookies: Record<string, string>;
  /** The page the conversion happened on (the snapshot's `page_url`), or null. */
  pageUrl: string | null;
  /** The visitor's user agent and IP address as the collector saw them with the snapshot, or null. */
  userAgent: string | null;
  ipAddress: string | null;
  consent: ConsentSignals;
  /** Raw identity fields; adapters normalise and hash them per their platform's rules and never store them. */
  identity: RawIdentity;
  /**
   * What the conversion is worth, in the currency's major unit (29.9 for 29.90 EUR), 0 to 1e9 with at most 6 decimals;
   * null when the report gave none. Always with `currency` when set. Each platform sends it in its own fields.
   */
  value: number | null;
  /** ISO 4217 code of `value` (three capital letters); null exactly when `value` is. */
  currency: string | null;
  /** The reporter's stable id of the customer or account (links stages to the signup); null when none was given. */
  customerId: string | null;
}

/** An adjustment of a conversion already sent: restate its value, or retract it. */
export type AdjustmentKind = 'restate' | 'retract';

/** One adjustment of one delivered event action, as a platform gets it. */
export interface AdjustmentInput {
  /** cnv's id of this adjustment result (one per adjustment and event action): stable across resends. */
  adjustmentResultId: string;
  /** The reporter's `adjustment_id`. */
  adjustmentId: string;
  type: AdjustmentKind;
  /** The new total value and its currency (restate); null for a retraction. */
  value: number | null;
  currency: string | null;
  /**
   * The adjustment's time as sent (delivery/adjustments.ts, adjustmentSendTime): its occurred_at to the second, but
   * at least a second after the conversion and after the previous adjustment of the same conversion.
   */
  occurredAt: Date;
  /** The conversion as it was delivered: the same input `sendBatch` got, so the platform can name the same conversion. */
  original: DeliveryInput;
  /** The PII-free summary of what the original delivery sent (its transaction or order id, click id, time, …). */
  originalRequest: RequestSummary | null;
}

/** What became of one adjustment. */
export type AdjustmentOutcome =
  /** The platform accepted the adjustment. */
  | { kind: 'adjusted'; request: RequestSummary }
  /** The platform's documents define no such operation for this conversion: never sent, with the reason. */
  | { kind: 'unsupported'; reason: string; request?: RequestSummary }
  | { kind: 'retry'; error: DeliveryError; afterMs?: number; request?: RequestSummary }
  | { kind: 'retry_later'; error: DeliveryError; afterMs: number; request?: RequestSummary }
  | { kind: 'failed'; error: DeliveryError; request?: RequestSummary }
  /** The platform refused the access token: healed exactly as for conversions ("Tokens that heal" above). */
  | { kind: 'token_refused'; error: DeliveryError; request?: RequestSummary };

/**
 * A send's outcome as an adjustment's: accepted is adjusted (its request as `adjusted` says), a skip (consent) is an
 * adjustment that cannot be made, with the skip's reason and its hint (what to do, if anything); the rest carries over.
 */
export function adjustmentOutcomeOf(outcome: DeliveryOutcome, adjusted: (request: RequestSummary) => RequestSummary = (r) => r): AdjustmentOutcome {
  if (outcome.kind === 'delivered') return { kind: 'adjusted', request: adjusted(outcome.request) };
  if (outcome.kind === 'skipped') {
    const { message, hint } = outcome.reason;
    return { kind: 'unsupported', reason: hint ? `${message} ${hint}` : message, ...(outcome.request ? { request: outcome.request } : {}) };
  }
  return outcome;
}

/** The connected destination account a batch goes to. */
export interface Connection {
  /** The destination row id (`dst_…`). */
  id: string;
  /** Non-secret settings stored on the connection (account ids, pixel id, …), as the platform's `connect` wrote them. */
  settings: Record<string, unknown>;
  /** Decrypted secret settings (a system-user token, a developer token, …). Never logged, never returned. */
  credentials: Record<string, string>;
}

/**
 * The credential holding the scope an OAuth grant was given at its sign-in (space-separated, as the token answer's
 * `scope`), stored with its refresh token by the hosted handoff; not a secret. Connections made before it have none.
 */
export const GRANTED_SCOPE_CREDENTIAL = 'oauth_granted_scope';

/**
 * The credential holding the id of the service's OAuth client a grant was issued to (its sign-in's
 * `CNV_<PLATFORM>_OAUTH_CLIENT_ID`), stored with its refresh token by the hosted handoff; not a secret. A token
 * endpoint refusing the client of a grant issued to another (the operator replaced the client: Google answers
 * `unauthorized_client`) refuses that grant, not the service's client: the connection must be authorized again.
 * Connections made before it have none.
 */
export const OAUTH_CLIENT_CREDENTIAL = 'oauth_client_id';

/** What delivery gives a platform besides the batch. */
export interface SendContext {
  settings: Settings;
  connection: Connection;
  /** A valid OAuth access token for the connection (refreshed when needed); throws `ReauthorizationRequired`. */
  accessToken(): Promise<string>;
  /** Aborts the send (worker stopping); pass it on to the HTTP call. */
  signal: AbortSignal;
  /** Per-request timeout in milliseconds. */
  timeoutMs: number;
  now(): Date;
}

/** A delivery error as recorded on the event action and shown through the API and the dashboard. */
export interface DeliveryError {
  /** Stable machine code, e.g. `click_too_old`, `rate_limited`, `network_error`. */
  code: string;
  /**
   * What happened, in a sentence. Never contains an identity value, a token or a secret: a platform's words quoted in it
   * (or in `hint`) go through `platform-text.ts`, which every platform is served through (registry.ts).
   */
  message: string;
  /** For a permanent failure: what the user should change, in plain words. */
  hint?: string;
  /** HTTP status of the platform's answer, when there was one. */
  status?: number;
}

/** A PII-free description of what was sent (hashes, ids, kinds), stored on the event action and shown to the user. */
export type RequestSummary = Record<string, unknown>;

export type DeliveryOutcome =
  /** Accepted by the platform; `duplicate: true` when the platform said it already had it (also delivered). */
  | { kind: 'delivered'; request: RequestSummary; duplicate?: boolean; platformRequestId?: string }
  /** A transient fault: send again with backoff; `afterMs` is the platform's own wish (Retry-After), if it said. */
  | { kind: 'retry'; error: DeliveryError; afterMs?: number; request?: RequestSummary }
  /** Not yet possible but expected to become so (e.g. a conversion action created minutes ago): send again after `afterMs`. */
  | { kind: 'retry_later'; error: DeliveryError; afterMs: number; request?: RequestSummary }
  /** Can never succeed as it is. */
  | { kind: 'failed'; error: DeliveryError; request?: RequestSummary }
  /**
   * Deliberately not sent, and never will be (the visitor denied `ad_user_data` consent and nothing may go without it).
   * The action's status is `skipped` with `reason`; it never makes the event `failed`.
   */
  | { kind: 'skipped'; reason: DeliveryError; request?: RequestSummary }
  /**
   * The platform refused the access token the request carried (its own expired/invalid-token answer: HTTP 401,
   * Google `UNAUTHENTICATED`, Microsoft `AuthenticationTokenExpired` / `InvalidCredentials`, LinkedIn 401, Meta code
   * 190). Delivery handles it the same way for every platform (see "Tokens that heal" above): nothing to do in the
   * platform but return this outcome for the events the refused request carried.
   */
  | { kind: 'token_refused'; error: DeliveryError; request?: RequestSummary };

/** One input of a hosted connect page. */
export interface ConnectField {
  name: string;
  label: string;
  hint: string;
  required: boolean;
  placeholder?: string;
  /** Rendered as a password input, never echoed back, stored encrypted. */
  secret?: boolean;
  /** Only when the platform's optional sign-in was not used (the credential the sign-in would have given). */
  withoutSignIn?: boolean;
  /**
   * The values the field takes, with their words: the hosted page shows a choice, starting at the connection's current
   * one when the page replaces a connection (`storedChoice`), else at the first.
   */
  choices?: ReadonlyArray<{ value: string; label: string }>;
  /** A choice stored as another value than its form's (`limited_data_use: true` for `on`): its form value. */
  storedChoice?: (settings: Readonly<Record<string, unknown>>) => string;
  /** Whether this service's operator set the value for every account (then the hosted page leaves the field out). */
  providedBy?: (settings: Settings) => boolean;
  /**
   * An id the platform's connection test checks against the signed-in user's access (ConnectionTestResult.refusedFields):
   * after the sign-in, the hosted page runs the test before storing anything and refuses ids the user may not use.
   */
  checkedOnConnect?: boolean;
  /**
   * A choice asked on the sign-in page, before the platform's consent screen, because it decides what the sign-in asks
   * for (OAuthProvider.scopesFor): Google's `api`. The form after the sign-in shows it as chosen, not as a field.
   */
  beforeSignIn?: boolean;
}

/** What the hosted page knows besides the submitted fields. */
export interface ConnectContext {
  /** Whether the platform's OAuth sign-in completed for this handoff (its tokens are added to the credentials). */
  signedIn: boolean;
  /** The scopes the platform granted at the sign-in (its token answer's `scope`), when it said; else those asked. */
  grantedScopes?: readonly string[];
}

/** A problem with a submitted form or an action config, located by its parameter path. */
export interface Problem {
  param: string;
  message: string;
}

/** The OAuth 2.0 authorization code flow (with PKCE) of a platform; URLs and client come from the settings. */
export interface OAuthProvider {
  authorizeUrl(settings: Settings): string;
  tokenUrl(settings: Settings): string;
  clientId(settings: Settings): string;
  clientSecret(settings: Settings): string;
  /** The scopes the sign-in asks for, and every refresh of a grant that stored none (connections before scopesFor). */
  scopes: readonly string[];
  /**
   * The scopes to ask for given the choices made before the sign-in (ConnectField.beforeSignIn, by field name); the
   * grant's refresh asks for what was granted then. Without it, always `scopes`.
   */
  scopesFor?: (choices: Readonly<Record<string, string>>) => readonly string[];
  /** Extra authorize parameters (e.g. Google's `access_type=offline`, `prompt=consent`). */
  extraAuthorizeParams?: Readonly<Record<string, string>>;
  /**
   * How the token endpoint takes the client: `body` (client_id and client_secret in the form, RFC 6749 §2.3.1; the
   * default) or `basic` (HTTP Basic authentication with them, as Reddit's token endpoint requires).
   */
  clientAuthentication?: 'body' | 'basic';
  /** Headers every token request carries (Reddit throttles requests without a descriptive User-Agent). */
  tokenHeaders?: Readonly<Record<string, string>>;
  /**
   * The sign-in is one way to connect, not the only one: the connect form alone also connects (a token entered on
   * the page, Reddit's conversion access token). The hosted page offers the sign-in when the service has an OAuth
   * client for the platform, and the form either way; `ConnectForm.signedIn` tells the form which it got.
   */
  optional?: boolean;
}

/** The result of parsing a connect form: non-secret settings, secret credentials, and a line saying what is connected. */
export type ConnectResult =
  | { ok: true; settings: Record<string, unknown>; credentials: Record<string, string>; summary: string }
  | { ok: false; errors: Problem[] };

/** What a test of a connection found. */
export interface ConnectionTestResult {
  ok: boolean;
  /** What the platform said, in a sentence (never a credential). */
  message: string;
  /** The error, when not ok. */
  error?: DeliveryError;
  /**
   * The platform refused the connection's own credential, one no refresh can replace (a pasted access token): the
   * connection is then marked `reauthorization_required`, as a delivery refused the same way would mark it.
   */
  credentialRefused?: boolean;
  /**
   * The connect form's fields whose values the platform refused for these credentials (ids the signed-in user has no
   * access to, e.g. Microsoft's customer and account ids): the hosted page refuses its form on them, storing nothing.
   */
  refusedFields?: readonly string[];
  /**
   * Names the platform knows that a flow action's config field must match exactly (Microsoft's offline conversion
   * goals for `conversion_name`): the test then names each of the account's flow actions that matches none.
   */
  actionNames?: { field: string; names: string[]; what: string };
}

/** One ad platform: how it is connected, how a flow action is checked, how a batch is sent and a connection tested. */
export interface DestinationPlatform {
  /** The destination type, e.g. `google-ads`. */
  readonly type: string;
  /** Human name, e.g. `Google Ads`. */
  readonly label: string;
  /** What connecting does, in a sentence for the consent screen. */
  readonly consent: string;
  /** OAuth flow run by the hosted page before the form, or null when the form alone connects (Meta). */
  readonly oauth: OAuthProvider | null;
  /** The form of the hosted page (after OAuth, if any). */
  readonly fields: readonly ConnectField[];
  /** Checks the submitted form and splits it into settings and encrypted credentials. */
  parseConnectForm(form: Record<string, string>, context?: ConnectContext): ConnectResult;
  /** Problems of one flow action's `config` (param is its path, e.g. `actions_config[0].config`). */
  checkAction(config: Record<string, unknown>, param: string, trigger: EventTrigger): Problem[];
  /**
   * Where this platform counts each cnv event as a conversion of its own whatever the reporter's `customer_event_id`
   * (Google: the conversion action, whose transaction id cnv makes per event and action), as a key for one action's
   * `config`; null for a config without one. Two live flows firing on one conversion and sending it to the same key
   * send it twice there. Absent: the platform deduplicates on `dedupEventId`, which the events of one conversion share.
   */
  readonly countsEachEventIn?: (config: Record<string, unknown>) => string | null;
  /** Largest batch `sendBatch` takes. */
  readonly maxBatchSize: number;
  /** Sends one batch to one connection; returns one outcome per input, in order. Never throws for a platform answer. */
  sendBatch(inputs: readonly DeliveryInput[], ctx: SendContext): Promise<DeliveryOutcome[]>;
  /** Checks the connection without recording a conversion (validate-only, test event code, …). */
  testConnection(ctx: SendContext): Promise<ConnectionTestResult>;
  /**
   * For platforms that process uploads after accepting them (Google's Data Manager API): what became of an accepted
   * request, asked `diagnoseAfterMs` after it was accepted. `final: false` asks again later.
   */
  readonly diagnose?: (platformRequestId: string, ctx: SendContext) => Promise<Diagnosis>;
  readonly diagnoseAfterMs?: number;
  /**
   * Applies adjustments (restate, retract) of conversions this platform already accepted: one outcome per input, in
   * order; `unsupported` with the reason for a kind (or a conversion) its documents give no operation for. Absent:
   * the platform has no adjustment operation at all, and every adjustment is `unsupported` with
   * `adjustmentsUnsupportedReason`. Batches hold at most `maxBatchSize` inputs of one connection.
   */
  readonly adjustBatch?: (inputs: readonly AdjustmentInput[], ctx: SendContext) => Promise<AdjustmentOutcome[]>;
  /**
   * Why this platform takes no adjustments, in a sentence naming its documents (when `adjustBatch` is absent); what
   * the user can do instead follows it (adjustmentsUnsupported).
   */
  readonly adjustmentsUnsupportedReason?: string;
}

/**
 * What the user can do about an adjustment a platform without an adjustment operation never gets: nothing more reaches
 * the platform for that conversion, so cnv's own corrected value is the one to report from; and an adjustment that
 * arrives before the conversion is first sent is folded into that send (delivery/round.ts, sendInput).
 */
export function adjustmentsUnsupportedNextStep(label: string): string {
  return (
    `${label} keeps the conversion as it was sent: use the corrected value cnv keeps (the event's current_value, the ` +
    "dashboard's Value) in your own reports. An adjustment that arrives before a conversion is first sent is applied to " +
    'that send (a retracted one is not sent).'
  );
}

/** The reason an adjustment cannot reach a platform without `adjustBatch`, and what to do instead. */
export function adjustmentsUnsupported(platform: Pick<DestinationPlatform, 'label' | 'adjustmentsUnsupportedReason'>): string {
  const why = platform.adjustmentsUnsupportedReason ?? `${platform.label} defines no operation that changes or takes back a conversion it has received.`;
  return `${why} ${adjustmentsUnsupportedNextStep(platform.label)}`;
}

/** What a platform reported about an accepted request once it processed it. */
export type Diagnosis =
  | { ok: true; final: boolean; state: string; message: string; details: Record<string, unknown> }
  | { ok: false; error: DeliveryError };

/**
 * The id a platform deduplicates on: the reporter's `customer_event_id` (or the form's `submission_id`), which the
 * customer's browser tag can be given too; cnv's event id when there is none. Stable across resends.
 */
export function dedupEventId(input: Pick<DeliveryInput, 'customerEventId' | 'eventId'>): string {
  return input.customerEventId || input.eventId;
}

/**
 * Whether a conversion is a paid one for a platform's default event name (Meta `Purchase`, Reddit `PURCHASE`, TikTok
 * `Purchase`): it carries a value above 0. A stage worth 0 (a free trial) is not a purchase.
 */
export function carriesPaidValue(input: Pick<DeliveryInput, 'value'>): boolean {
  return input.value !== null && input.value > 0;
}

/** Consent denied for ad user data: no user identifier of any kind may be sent. */
export function adUserDataDenied(input: Pick<DeliveryInput, 'consent'>): boolean {
  return input.consent.ad_user_data === 'denied';
}

/** The code of a `skipped` outcome's reason when the visitor's consent held the conversion back. */
export const CONSENT_DENIED_CODE = 'consent_denied';

/** The reason of a `skipped` outcome for an event held back by consent. */
export function consentDenied(platformLabel: string, detail: string): DeliveryError {
  return {
    code: CONSENT_DENIED_CODE,
    message: `The visitor denied ad_user_data consent on the page, so cnv sent nothing to ${platformLabel}: ${detail}`,
    hint: 'Nothing to fix: this is the visitor’s choice.',
  };
}

/**
 * Thrown by `SendContext.accessToken()` when the platform refused the refresh token (`invalid_grant`), or when the
 * connection holds none (it is marked `reauthorization_required` then too).
 * `credentialsReplaced`: a new handoff had already replaced the refused credentials, but they could not be taken into
 * this send (its settings changed, or it is no longer connected): the items are due again at once, loaded afresh.
 */
export class ReauthorizationRequired extends Error {
  constructor(
    readonly destinationType: string,
    readonly credentialsReplaced = false,
  ) {
    super(`The ${destinationType} connection must be authorized again: open a new connect_destination handoff.`);
    this.name = 'ReauthorizationRequired';
  }
}

/**
 * The platform's token endpoint refused this service's own OAuth client (`invalid_client`, Google's `deleted_client`, a
 * bare 401: connections.ts; `unauthorized_client` at a refresh is the grant's refusal instead): the operator's settings
 * are at fault, not the connection, which stays `connected`. A platform lets it propagate, as it does
 * `ReauthorizationRequired`: what waits on it waits (queued, no attempt counted) until the client works again; `error`
 * (code `oauth_client_refused`) says which settings to fix.
 */
export class OAuthClientRefused extends Error {
  constructor(
    readonly platformType: string,
    readonly error: DeliveryError,
  ) {
    super(error.message);
    this.name = 'OAuthClientRefused';
  }

  /** A connection test's answer: not passed, the reason and the settings to fix in its message. */
  testResult(): { ok: false; message: string; error: DeliveryError } {
    return { ok: false, message: `${this.error.message} ${this.error.hint ?? ''}`.trim(), error: this.error };
  }
}
