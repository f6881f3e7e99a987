/**
 * The hosted side of a handoff: what its page shows, and completing it (connect a destination, or connect the API
 * trigger source and reveal its webhook secret once). Exactly one completion wins; a completed handoff changes nothing.
 */
import type { Database, Queryable } from '../../db/db';
import { platformApiElsewhere, platformFakeValues, type Settings } from '../../settings';
import {
  claimPendingHandoff, findHandoffByOAuthState, findHandoffByToken, handoffExpired, handoffGrant, handoffSignInChoices, lockAccount, newerHandoffCompleted,
  recordHandoffGrant, startHandoffOAuth,
  type HostedHandoffRow,
} from './sql';
import { findSite, type SiteRow } from '../sites';
import { accountName } from '../../accounts';
import { connectTriggerSource } from '../../webhook';
import { triggerKeysOfSite } from '../flows';
import { WEBHOOK_PREFIX, apiTriggerPath } from '../../../protocol/webhook';
import {
  AccessTokens,
  authorizeUrl,
  exchangeCode,
  findConnection,
  GRANTED_SCOPE_CREDENTIAL,
  OAUTH_CLIENT_CREDENTIAL,
  oauthClientRefusedError,
  oauthClientSetting,
  scopesToAsk,
  sendContextFor,
  pkcePair,
  platformFor,
  sealCredentials,
  upsertDestination,
  type ConnectField,
  type DeliveryError,
  type DestinationPlatform,
  type Problem,
} from '../../destinations';
import { resumeDeliveries } from '../../delivery';
import { enqueueDestinationNotification } from '../../notifications';
import { openedOrNull, serviceSecretBox } from '../../db/secret-box';
import { newUrlToken } from '../../db/ids';

/** Where a site's API trigger reports go. */
export interface WebhookTarget {
  /** The signup webhook's URL with `{trigger_key}` standing for the key the user picks in a flow. */
  urlTemplate: string;
  /** A later stage's webhook URL (a `conversion` API trigger) with `{stage_key}` standing for the flow's key. */
  stageUrlTemplate: string;
  /** Concrete URLs for the keys the site's flows already use, each at the webhook of its kind. */
  known: { key: string; type: 'saas_signup' | 'conversion'; url: string }[];
}

export type HostedHandoff =
  | {
      kind: 'destination';
      handoff: HostedHandoffRow;
      destination: DestinationPlatform;
      /** Whether the form may be shown: the platform's OAuth step is done, or it has none, or it is optional. */
      authorized: boolean;
      /** Whether the platform's OAuth sign-in completed for this handoff. */
      signedIn: boolean;
      /** Whether the page offers an optional sign-in (the platform has one and the service has its OAuth client). */
      signInOffered: boolean;
      /** What the account has connected of this type already (a handoff replaces it), or null. */
      replaces: { status: string; settings: Record<string, unknown> } | null;
      /** The name of the account that receives the connection. */
      accountName: string;
      /** Where this service sends the platform's API calls when a setting points them elsewhere (the demo's fake), or null. */
      apiElsewhere: { setting: string; url: string } | null;
      /**
       * The form values the demo's local fake accepts (field name → value), when apiElsewhere is that fake (settings'
       * localFakes); null otherwise, above all with the real platform.
       */
      fakeValues: Readonly<Record<string, string>> | null;
      /** The names of the form's fields this service's operator set for every account (not shown: ConnectField.providedBy). */
      provided: string[];
      /** What was chosen before the sign-in (ConnectField.beforeSignIn, field name → value); {} when nothing was. */
      signInChoices: Record<string, string>;
    }
  | { kind: 'trigger_source'; handoff: HostedHandoffRow; site: SiteRow; webhook: WebhookTarget; accountName: string };

/** The webhook URL of a site's API trigger (template and the keys in use). */
export async function webhookTarget(db: Queryable, settings: Settings, site: SiteRow): Promise<WebhookTarget> {
  const keys = await triggerKeysOfSite(db, site.id);
  return {
    urlTemplate: `${settings.webhookBaseUrl}${WEBHOOK_PREFIX}/saas-signup/${encodeURIComponent(site.site_key)}/{trigger_key}`,
    stageUrlTemplate: `${settings.webhookBaseUrl}${WEBHOOK_PREFIX}/conversion/${encodeURIComponent(site.site_key)}/{stage_key}`,
    known: keys.map(({ key, type }) => ({
      key,
      type,
      url: `${settings.webhookBaseUrl}${apiTriggerPath(site.site_key, key, type)}`,
    })),
  };
}

/** The connect form's fields that this service's operator set for every account (ConnectField.providedBy). */
export function providedFields(settings: Settings, destination: DestinationPlatform): string[] {
  return destination.fields.filter((field) => field.providedBy?.(settings) === true).map((field) => field.name);
}

/** The handoff behind a hosted url token, with what its page needs; null for an unknown token. */
export async function openHostedHandoff(db: Queryable, settings: Settings, token: string): Promise<HostedHandoff | null> {
  // Tokens are base62; anything else cannot match, so skip the query.
  if (!/^[A-Za-z0-9]{16,64}$/.test(token)) return null;
  const handoff = await findHandoffByToken(db, token);
  if (!handoff) return null;
  // Every page says whose account receives the connection.
  const owner = await accountName(db, handoff.account_id);
  if (handoff.purpose === 'connect_destination') {
    const destination = platformFor(handoff.destination_type ?? '');
    if (!destination) return null;
    // A grant sealed under another CNV_SECRET_KEY cannot be used: the page asks to sign in again.
    const grant = destination.oauth !== null ? await handoffGrant(db, handoff.id) : null;
    const signedIn = grant !== null && openedOrNull(serviceSecretBox(settings), grant) !== null;
    const optional = destination.oauth?.optional === true;
    const authorized = destination.oauth === null || optional || signedIn;
    const signInOffered = optional && !signedIn && missingOAuthSetting(settings, destination) === null;
    const existing = await findConnection(db, handoff.account_id, destination.type);
    return {
      kind: 'destination', handoff, destination, authorized, signedIn, signInOffered,
      replaces: existing ? { status: existing.status, settings: existing.settings } : null, accountName: owner,
      apiElsewhere: platformApiElsewhere(settings, destination.type),
      fakeValues: platformFakeValues(settings, destination.type),
      provided: providedFields(settings, destination),
      signInChoices: signedIn ? await handoffSignInChoices(db, handoff.id) : {},
    };
  }
  const site = handoff.site_id ? await findSite(db, handoff.account_id, handoff.site_id) : null;
  return site ? { kind: 'trigger_source', handoff, site, webhook: await webhookTarget(db, settings, site), accountName: owner } : null;
}

type DestinationHandoff = Extract<HostedHandoff, { kind: 'destination' }>;
type TriggerSourceHandoff = Extract<HostedHandoff, { kind: 'trigger_source' }>;

/** Connects the destination with the submitted consent form, or says what is wrong with the form. */
export async function completeDestinationHandoff(
  db: Database,
  settings: Settings,
  hosted: DestinationHandoff,
  form: Record<string, string>,
): Promise<
  | { kind: 'invalid'; errors: Problem[] }
  | { kind: 'already_completed' }
  /** A newer handoff of the same account and platform completed first: its connection stays, this one changes nothing. */
  | { kind: 'superseded' }
  | { kind: 'connected'; summary: string }
> {
  if (hosted.handoff.status === 'completed') return { kind: 'already_completed' };
  if (await newerHandoffCompleted(db, hosted.handoff.id)) return { kind: 'superseded' };
  const oauth = hosted.destination.oauth;
  const grant = oauth ? await handoffGrant(db, hosted.handoff.id) : null;
  const box = serviceSecretBox(settings);
  const opened = grant === null ? null : openedOrNull(box, grant);
  const granted = opened === null ? {} : (JSON.parse(opened) as Record<string, string>);
  // A choice made before the sign-in is the one its scopes were asked for: it wins over the form's.
  const chosen = grant === null ? {} : await handoffSignInChoices(db, hosted.handoff.id);
  const scope = granted[GRANTED_SCOPE_CREDENTIAL];
  const grantedScopes = scope !== undefined ? scope.split(' ').filter(Boolean) : oauth ? scopesToAsk(oauth, chosen) : [];
  const parsed = hosted.destination.parseConnectForm({ ...form, ...chosen }, { signedIn: grant !== null, grantedScopes });
  if (!parsed.ok) return { kind: 'invalid', errors: parsed.errors };
  let credentials = parsed.credentials;
  if (oauth && !grant && !oauth.optional) {
    return { kind: 'invalid', errors: [{ param: 'oauth', message: `Sign in with ${hosted.destination.label} first.` }] };
  }
  if (grant) {
    // Sealed before the service's key changed (a restart with another CNV_SECRET_KEY): signing in again replaces it.
    if (opened === null) return { kind: 'invalid', errors: [{ param: 'oauth', message: `The sign-in with ${hosted.destination.label} cannot be read any more (the service's key changed since): sign in with ${hosted.destination.label} again.` }] };
    credentials = { ...credentials, ...granted };
  }
  // The check may refresh the grant's access token; a refresh token the platform rotated meanwhile lands in `credentials`.
  const refused = await connectionRefused(db, settings, hosted, form, { id: hosted.handoff.id, settings: parsed.settings, credentials }, grant !== null);
  if (refused.length > 0) return { kind: 'invalid', errors: refused };
  return db.transaction(async (tx) => {
    // Completions of one account take turns, so an older link completed at the same moment as a newer one never lands
    // after it: whichever comes second sees the other (a newer one completed: superseded; an older one: replaced).
    await lockAccount(tx, hosted.handoff.account_id);
    if (await newerHandoffCompleted(tx, hosted.handoff.id)) return { kind: 'superseded' } as const;
    const claimed = await claimPendingHandoff(tx, hosted.handoff.token, { destination_type: hosted.destination.type, summary: parsed.summary });
    if (!claimed) return { kind: 'already_completed' } as const;
    const before = await findConnection(tx, claimed.account_id, hosted.destination.type);
    const connected = await upsertDestination(tx, claimed.account_id, hosted.destination.type, parsed.settings, sealCredentials(box, credentials));
    if (before?.status === 'reauthorization_required') {
      await enqueueDestinationNotification(tx, connected.id, 'destination.recovered', `${hosted.destination.label} was connected again; the conversions that waited are being sent.`);
    }
    // Conversions that waited for this connection (a refused refresh token) go out now.
    await resumeDeliveries(tx, claimed.account_id, hosted.destination.type);
    return { kind: 'connected', summary: parsed.summary } as const;
  });
}

/** How long the check of a pasted credential may take before the connection is made without it. */
export const PASTED_CREDENTIAL_CHECK_MS = 10_000;

/**
 * The form checked with the platform's connection test before anything is stored, when it carries a pasted credential
 * (Meta's or TikTok's access token), or ids the test checks (ConnectField.checkedOnConnect) after the platform's sign-in.
 * Problems on the fields the platform refused: the pasted credential itself (a wrong or revoked token), or the ids the
 * credentials may not use (Microsoft's customer and account, LinkedIn's ad account), which would otherwise show
 * "connected" until the first conversion failed. Any other outcome (the platform down, slow, another fault) connects as
 * before, with no problem: the connection test on the dashboard says more.
 */
async function connectionRefused(
  db: Database,
  settings: Settings,
  hosted: DestinationHandoff,
  form: Record<string, string>,
  connection: { id: string; settings: Record<string, unknown>; credentials: Record<string, string> },
  signedIn: boolean,
): Promise<Problem[]> {
  const platform = hosted.destination;
  const pasted = signedIn ? undefined : platform.fields.find((f) => f.secret && (form[f.name] ?? '').trim() !== '');
  if (!pasted && !(signedIn && platform.fields.some((f) => f.checkedOnConnect))) return [];
  try {
    const tokens = new AccessTokens({ db, settings, box: serviceSecretBox(settings), now: () => new Date() });
    const ctx = sendContextFor(platform, connection, {
      settings, tokens, signal: AbortSignal.timeout(PASTED_CREDENTIAL_CHECK_MS), timeoutMs: PASTED_CREDENTIAL_CHECK_MS, now: () => new Date(),
    });
    const result = await platform.testConnection(ctx);
    const said = result.error ? `${result.error.message}${result.error.hint ? ` ${result.error.hint}` : ''}` : result.message;
    if (pasted && result.credentialRefused) {
      return [{ param: pasted.name, message: `${platform.label} refused this ${pasted.label.replace(/^Access token/, 'access token')}: ${result.error?.message ?? result.message}` }];
    }
    // Only fields the page shows (a field the operator set for everyone is not the user's to correct).
    const shown = platform.fields.filter((f) => !hosted.provided.includes(f.name)).map((f) => f.name);
    const fields = (result.ok ? [] : (result.refusedFields ?? [])).filter((name) => shown.includes(name));
    // The platform's words once, under the first field; the others point to them.
    const first = platform.fields.find((f) => f.name === fields[0])?.label ?? fields[0];
    return fields.map((param, i) => ({
      param,
      message: i === 0 ? `${platform.label} refused ${fields.length > 1 ? 'these ids' : 'this id'}: ${said}` : `Refused together with the ${first} above.`,
    }));
  } catch {
    return [];
  }
}

/**
 * Connects the site's API trigger source with a new webhook secret (rotating an existing one). The secret is returned
 * for the page alone: it is never logged and never stored anywhere an API reads.
 */
export async function completeTriggerSourceHandoff(
  db: Database,
  settings: Settings,
  hosted: TriggerSourceHandoff,
): Promise<{ kind: 'already_completed' } | { kind: 'connected'; secret: string; rotated: boolean }> {
  if (hosted.handoff.status === 'completed') return { kind: 'already_completed' };
  return db.transaction(async (tx) => {
    const claimed = await claimPendingHandoff(tx, hosted.handoff.token, { trigger_source: 'api', site_id: hosted.site.id });
    if (!claimed) return { kind: 'already_completed' } as const;
    const { secret, created } = await connectTriggerSource(tx, serviceSecretBox(settings), claimed.account_id, hosted.site.id, 'api');
    return { kind: 'connected', secret, rotated: !created } as const;
  });
}

/** What a state this service issues looks like (a url token); anything else names no sign-in. */
export const OAUTH_STATE_PATTERN = /^[A-Za-z0-9]{16,64}$/;

/** Where the platform sends the user back after its consent screen. */
export function oauthCallbackUrl(settings: Settings): string {
  return `${settings.publicUrl}/handoffs/oauth/callback`;
}

/**
 * Starts the platform's OAuth step: a fresh state bound to the handoff and a PKCE pair whose verifier is kept sealed.
 * Returns the authorize URL to redirect to (and the state, which the route binds to the browser: browser-binding.ts),
 * or why it cannot start.
 */
export async function beginHandoffOAuth(
  db: Queryable,
  settings: Settings,
  hosted: DestinationHandoff,
  choices: Readonly<Record<string, string>> = {},
): Promise<{ kind: 'redirect'; url: string; state: string } | { kind: 'not_configured'; setting: string } | { kind: 'not_needed' }> {
  const oauth = hosted.destination.oauth;
  if (!oauth || hosted.handoff.status === 'completed') return { kind: 'not_needed' };
  const missing = missingOAuthSetting(settings, hosted.destination);
  if (missing) return { kind: 'not_configured', setting: missing };
  const pkce = pkcePair();
  const state = newUrlToken();
  const started = await startHandoffOAuth(db, hosted.handoff.token, state, serviceSecretBox(settings).seal(pkce.verifier), choices);
  if (!started) return { kind: 'not_needed' };
  const scopes = scopesToAsk(oauth, choices);
  return { kind: 'redirect', state, url: authorizeUrl(oauth, settings, { state, redirectUri: oauthCallbackUrl(settings), codeChallenge: pkce.challenge, scopes }) };
}

/**
 * The value a choice starts at: the one made at the last sign-in (a choice asked before it), else the connection's this
 * handoff replaces (a reconnect keeps the API it sent through, and its Limited Data Use), else the field's first.
 */
export function defaultChoice(hosted: DestinationHandoff, field: ConnectField): string {
  const valid = (value: unknown): value is string => typeof value === 'string' && (field.choices ?? []).some((choice) => choice.value === value);
  const made = hosted.signInChoices[field.name];
  const settings = hosted.replaces?.settings;
  const connected = settings && (field.storedChoice ? field.storedChoice(settings) : settings[field.name]);
  return valid(made) ? made : valid(connected) ? connected : field.choices![0]!.value;
}

/**
 * The choices a sign-in page sent (ConnectField.beforeSignIn fields the operator did not set), each one of its field's
 * values; a field not sent takes its first value, as the page preselects it. Problems for a value the field does not take.
 */
export function signInChoicesOf(hosted: DestinationHandoff, query: Readonly<Record<string, unknown>>): { choices: Record<string, string> } | { problem: string } {
  const choices: Record<string, string> = {};
  for (const field of hosted.destination.fields) {
    if (!field.beforeSignIn || !field.choices || hosted.provided.includes(field.name)) continue;
    const sent = query[field.name];
    const value = sent === undefined || sent === '' ? defaultChoice(hosted, field) : sent;
    if (typeof value !== 'string' || !field.choices.some((choice) => choice.value === value)) {
      return { problem: `Choose one of the listed values for "${field.label}": ${field.choices.map((c) => c.label).join(', ')}.` };
    }
    choices[field.name] = value;
  }
  return { choices };
}

/**
 * The setting to set when the service lacks a part of the OAuth client of a platform that needs one (its id, else its
 * secret); null when it has both.
 */
export function missingOAuthSetting(settings: Settings, platform: DestinationPlatform): string | null {
  if (!platform.oauth) return null;
  if (!platform.oauth.clientId(settings)) return oauthClientSetting(platform.type, 'ID');
  if (!platform.oauth.clientSecret(settings)) return oauthClientSetting(platform.type, 'SECRET');
  return null;
}

/**
 * Finishes the OAuth step from the platform's callback: exchanges the code (with the PKCE verifier) and keeps the
 * refresh token sealed on the handoff until its form completes it. Returns the handoff token to continue on. The route
 * calls it only for a browser that holds the state's cookie (browser-binding.ts): the state alone is not enough.
 */
export async function finishHandoffOAuth(
  db: Queryable,
  settings: Settings,
  query: { state?: string; code?: string; error?: string },
): Promise<
  | { kind: 'continue'; token: string }
  | { kind: 'unknown_state' }
  | { kind: 'refused'; token: string; message: string }
  /** The platform refused the service's own OAuth client: the operator's setup, not the user's sign-in, is at fault. */
  | { kind: 'client_refused'; token: string; error: DeliveryError; oauthError: string }
  /** A newer handoff of the same account and platform completed meanwhile: this sign-in is not kept. */
  | { kind: 'superseded'; token: string }
> {
  if (!query.state || !OAUTH_STATE_PATTERN.test(query.state)) return { kind: 'unknown_state' };
  const box = serviceSecretBox(settings);
  const found = await findHandoffByOAuthState(db, box, query.state);
  // A handoff whose token does not open (sealed under another CNV_SECRET_KEY) has no page to continue on.
  if (!found || !found.oauth_verifier || found.token === null) return { kind: 'unknown_state' };
  const handoff = { ...found, token: found.token, oauth_verifier: found.oauth_verifier };
  // An expired link's page says so; the platform's code is not exchanged.
  if (handoffExpired(handoff)) return { kind: 'continue', token: handoff.token };
  const platform = platformFor(handoff.destination_type ?? '');
  if (!platform?.oauth) return { kind: 'unknown_state' };
  // A sign-in that comes back after a newer link of the account connected this platform: its grant is not kept (the
  // newer one's stays), and the code is not exchanged.
  if (await newerHandoffCompleted(db, handoff.id)) return { kind: 'superseded', token: handoff.token };
  if (query.error || !query.code) {
    const reason = query.error === 'access_denied' ? 'You declined the request.' : 'The sign-in did not complete.';
    return { kind: 'refused', token: handoff.token, message: `${reason} Nothing was connected; you can try again.` };
  }
  const codeVerifier = openedOrNull(box, handoff.oauth_verifier);
  if (codeVerifier === null) {
    return { kind: 'refused', token: handoff.token, message: `This sign-in was started before the service's key changed, so it cannot be finished. Nothing was connected; sign in with ${platform.label} again.` };
  }
  const result = await exchangeCode(
    platform.oauth,
    settings,
    { code: query.code, redirectUri: oauthCallbackUrl(settings), codeVerifier },
    { signal: AbortSignal.timeout(15_000), timeoutMs: 10_000, now: () => new Date() },
  );
  // The code is spent either way; the handoff stays pending, so its link signs in again once the operator fixed the client.
  if (!result.ok && result.kind === 'client_refused') {
    const error = oauthClientRefusedError(platform, result.oauthError, result.error.status);
    return { kind: 'client_refused', token: handoff.token, error, oauthError: result.oauthError };
  }
  if (!result.ok) return { kind: 'refused', token: handoff.token, message: `${platform.label} did not issue a token: ${result.error.message}` };
  if (!result.tokens.refreshToken) {
    return {
      kind: 'refused',
      token: handoff.token,
      message: `${platform.label} issued no refresh token, so cnv could not deliver after an hour. Remove cnv's access in your ${platform.label} account settings, then try again.`,
    };
  }
  // Where the scopes depend on a choice (scopesFor), the grant keeps the scope it was given: its refreshes ask for that.
  // The client it was issued to goes with it: a later refusal of another client's grant is the grant's (connections.ts).
  const grant: Record<string, string> = { refresh_token: result.tokens.refreshToken, [OAUTH_CLIENT_CREDENTIAL]: platform.oauth.clientId(settings) };
  if (platform.oauth.scopesFor) {
    grant[GRANTED_SCOPE_CREDENTIAL] = result.tokens.scope ?? scopesToAsk(platform.oauth, await handoffSignInChoices(db, handoff.id)).join(' ');
  }
  await recordHandoffGrant(db, handoff.id, box.seal(JSON.stringify(grant)));
  return { kind: 'continue', token: handoff.token };
}

