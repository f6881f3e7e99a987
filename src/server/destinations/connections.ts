/**
 * A connection at send time: its decrypted credentials and a valid OAuth access token, refreshed before it expires
 * and cached per connection. A refused refresh token (`invalid_grant`) marks the connection
 * `reauthorization_required` and throws `ReauthorizationRequired`: its conversions wait for a new handoff.
 *
 * Every write a send makes to its connection (marking it, storing a rotated refresh token) is made only while the
 * stored credentials are still the ones the send loaded: a send that started before a reconnect never marks nor
 * overwrites the new grant. Refused with credentials a reconnect replaced meanwhile, a send takes the new ones and
 * refreshes again at once.
 *
 * A refresh that rotates the refresh token (Microsoft issues a new one every time) stores the access token it came
 * with beside it, sealed with the rest of the credentials: another process, whose cached token belongs to a refresh
 * token the store no longer holds, takes that access token while it is valid instead of refreshing again (which would
 * rotate the refresh token once more and send the first process refreshing in turn, every round).
 */
import type { Database, Queryable } from '../db/db';
import { openedOrNull, type SecretBox } from '../db/secret-box';
import type { Settings } from '../settings';
import { GRANTED_SCOPE_CREDENTIAL, OAUTH_CLIENT_CREDENTIAL, OAuthClientRefused, ReauthorizationRequired, type Connection, type DeliveryError, type DestinationPlatform, type SendContext } from './destination';
import { oauthClientRefusedError, refreshAccessToken } from './oauth';
import { forgetClientRefused, recordClientRefused } from './client-refusals';
import { findConnectionsById, markConnectedAgain, markReauthorizationRequired, replaceCredentials, type ConnectionRow, type GuardedWrite } from './sql';

/** Refresh a cached access token this long before it expires. */
export const ACCESS_TOKEN_MARGIN_MS = 5 * 60_000;

/** A token endpoint that could not be reached or answered 5xx: the send is retried later. */
export class TokenUnavailable extends Error {
  constructor(readonly error: DeliveryError) {
    super(error.message);
    this.name = 'TokenUnavailable';
  }
}

/** How often the log says, per platform, that its OAuth client is refused (as often as waiting items look again). */
export const CLIENT_REFUSED_LOG_EVERY_MS = 10 * 60_000;

/**
 * A connection's stored credentials do not open with the service's key: they were sealed under another
 * CNV_SECRET_KEY (or `secret.key`), e.g. after a restore or a key change. A fact about that one connection, never a
 * store fault: its conversions wait for it to be connected again (or for the old key), every other one goes out.
 */
export class CredentialsUnreadable extends Error {
  constructor() {
    super('stored credentials do not open with the current CNV_SECRET_KEY');
    this.name = 'CredentialsUnreadable';
  }
}

/** Why a connection whose credentials do not open waits (its rows' error, its notification, a connection test). */
export function credentialsUnreadableError(label: string, type: string): DeliveryError {
  return {
    code: 'reauthorization_required',
    message: `cnv cannot read the stored ${label} credentials: they were encrypted with another CNV_SECRET_KEY (the service now runs with a different key, e.g. after a restore).`,
    hint: `Connect ${label} again (Reconnect on the dashboard's Destinations page, or a connect_destination handoff for ${type} through the API), or restart the service with the CNV_SECRET_KEY that sealed them.`,
  };
}

/** Whether a sealed value opens with the box (the start's check of the store, see unreadable-secrets.ts). */
export function opens(box: SecretBox, sealed: string): boolean {
  return openedOrNull(box, sealed) !== null;
}

/**
 * Opens a connection's sealed credentials (a JSON object of strings); throws `CredentialsUnreadable` when they were
 * sealed under another key (or altered).
 */
export function openCredentials(box: SecretBox, sealed: string | null): Record<string, string> {
  if (!sealed) return {};
  const plain = openedOrNull(box, sealed);
  if (plain === null) throw new CredentialsUnreadable();
  const value = JSON.parse(plain) as unknown;
  if (typeof value !== 'object' || value === null) return {};
  return Object.fromEntries(Object.entries(value).filter((e): e is [string, string] => typeof e[1] === 'string'));
}

/** Seals credentials for storage. */
export function sealCredentials(box: SecretBox, credentials: Record<string, string>): string | null {
  return Object.keys(credentials).length === 0 ? null : box.seal(JSON.stringify(credentials));
}

/**
 * The keys under which the stored credentials keep the access token of the last rotating refresh and its expiry (an
 * ISO date). Never part of the credentials a platform sees: `toConnection` takes them out.
 */
const STORED_ACCESS_TOKEN = 'oauth_access_token';
const STORED_ACCESS_TOKEN_EXPIRES_AT = 'oauth_access_token_expires_at';

/** An access token stored with the credentials, for the refresh token it was issued with. */
interface StoredAccessToken {
  token: string;
  expiresAt: number;
  refreshToken: string;
}

/** Splits opened credentials into those a platform sees and the access token stored with them (if whole). */
function withoutStoredToken(opened: Record<string, string>): { credentials: Record<string, string>; accessToken: StoredAccessToken | null } {
  const { [STORED_ACCESS_TOKEN]: token, [STORED_ACCESS_TOKEN_EXPIRES_AT]: expires, ...credentials } = opened;
  const expiresAt = expires === undefined ? Number.NaN : Date.parse(expires);
  const refreshToken = credentials.refresh_token;
  const accessToken = token && refreshToken && Number.isFinite(expiresAt) ? { token, expiresAt, refreshToken } : null;
  return { credentials, accessToken };
}

/**
 * What each connection was loaded with: its row's sealed credentials (each seal is unique, so they tell whether a
 * new handoff replaced them), settings, and the access token stored with them. Keyed by the connection's credentials
 * object, which copies of the connection (a test's extra settings) share and which a refresh updates in place.
 */
const loadedFrom = new WeakMap<Record<string, string>, { sealed: string | null; settings: string; accessToken: StoredAccessToken | null }>();

/** The sealed credentials the connection was loaded with, or undefined for one not loaded from its row. */
function sealedOf(connection: Connection): string | null | undefined {
  return loadedFrom.get(connection.credentials)?.sealed;
}

/** The connection as a platform sees it. */
export function toConnection(row: ConnectionRow, box: SecretBox): Connection {
  const { credentials, accessToken } = withoutStoredToken(openCredentials(box, row.credentials));
  loadedFrom.set(credentials, { sealed: row.credentials, settings: JSON.stringify(row.settings), accessToken });
  return { id: row.id, settings: row.settings, credentials };
}

/**
 * Marks the connection `connected` again after a check proved its stored credentials work (a connection test), when
 * it was `reauthorization_required` and its credentials are still those the check used; `onRecovered` runs in the
 * same transaction (notification, waiting deliveries made due). True when it was marked.
 */
export async function markRecovered(db: Database, connection: Connection, onRecovered: (tx: Queryable) => Promise<void>): Promise<boolean> {
  const used = sealedOf(connection);
  if (used === undefined) return false;
  return db.transaction(async (tx) => {
    if ((await markConnectedAgain(tx, connection.id, used)) !== 'written') return false;
    await onRecovered(tx);
    return true;
  });
}

/** The context a platform's calls for one connection run in: settings, credentials, a fresh access token on demand. */
export function sendContextFor(
  platform: DestinationPlatform,
  connection: Connection,
  deps: { settings: Settings; tokens: AccessTokens; signal: AbortSignal; timeoutMs: number; now: () => Date },
): SendContext {
  return {
    settings: deps.settings,
    connection,
    accessToken: () => deps.tokens.get(platform, connection, { signal: deps.signal, timeoutMs: deps.timeoutMs }),
    signal: deps.signal,
    timeoutMs: deps.timeoutMs,
    now: deps.now,
  };
}

/** Access tokens by connection id, in memory (a restart refreshes once, unless the stored credentials carry a valid one). */
export class AccessTokens {
  private readonly cache = new Map<string, { token: string; expiresAt: number; refreshToken: string }>();
  private readonly pending = new Map<string, Promise<string>>();
  /** The last access token a platform refused, per connection: never taken from the store again (see `forget`). */
  private readonly refused = new Map<string, string>();
  /** Platforms whose OAuth client this process saw refused, and when the log last said so. */
  private readonly clientRefusedLogged = new Map<string, number>();

  constructor(
    private readonly deps: {
      db: Database;
      settings: Settings;
      box: SecretBox;
      now: () => Date;
      /**
       * Told once, in the transaction that marks it, when a connection turns `reauthorization_required` (the
       * notification is queued there, so it is never lost nor sent for a change that did not happen).
       */
      onReauthorizationRequired?: (tx: Queryable, connectionId: string, reason: DeliveryError) => Promise<void>;
      /** Where a refused OAuth client is said, once per platform per CLIENT_REFUSED_LOG_EVERY_MS (never a secret). */
      log?: { error(obj: object, msg?: string): void; info(obj: object, msg?: string): void };
    },
  ) {}

  /** A valid access token for the connection (refreshing it with its refresh token when needed). */
  async get(platform: DestinationPlatform, connection: Connection, ctx: { signal: AbortSignal; timeoutMs: number }): Promise<string> {
    if (!platform.oauth) throw new ReauthorizationRequired(platform.type);
    const refreshToken = connection.credentials.refresh_token;
    if (!refreshToken) {
      // Nothing to refresh with: marked like a refused grant, so the connection says it needs a new authorization and
      // its conversions wait for it (a connection still `connected` would have them due again at once, see
      // recordOutcomes in delivery/outbox-sql.ts).
      const marked = await this.requireReauthorization(connection, {
        code: 'reauthorization_required',
        message: `cnv holds no ${platform.label} refresh token for this connection, so it cannot authorize its calls.`,
        hint: `Connect ${platform.label} again.`,
      });
      throw new ReauthorizationRequired(platform.type, marked === 'replaced');
    }
    const cached = this.cache.get(connection.id);
    const now = this.deps.now().getTime();
    if (cached && cached.refreshToken === refreshToken && cached.expiresAt - ACCESS_TOKEN_MARGIN_MS > now) return cached.token;
    // Another process refreshed (and rotated) this grant: its access token, stored with the credentials, serves here too.
    const stored = loadedFrom.get(connection.credentials)?.accessToken;
    if (
      stored &&
      stored.refreshToken === refreshToken &&
      stored.expiresAt - ACCESS_TOKEN_MARGIN_MS > now &&
      stored.token !== this.refused.get(connection.id)
    ) {
      this.cache.set(connection.id, stored);
      return stored.token;
    }
    // One refresh at a time per refresh token (not per connection: a send loaded before a reconnect holds the old one).
    const key = `${connection.id} ${refreshToken}`;
    let pending = this.pending.get(key);
    if (!pending) {
      pending = this.refresh(platform, connection, refreshToken, ctx, false).finally(() => this.pending.delete(key));
      this.pending.set(key, pending);
    }
    return pending;
  }

  /**
   * Forgets a connection's token (the platform refused it): the next `get` refreshes, and never takes that token again
   * from the stored credentials.
   */
  forget(connectionId: string): void {
    const cached = this.cache.get(connectionId);
    if (cached) this.refused.set(connectionId, cached.token);
    this.cache.delete(connectionId);
  }

  /** Whether a refused access token of this connection can be replaced by a refresh. */
  canRefresh(platform: DestinationPlatform, connection: Connection): boolean {
    return platform.oauth !== null && Boolean(connection.credentials.refresh_token);
  }

  /**
   * Marks the connection `reauthorization_required` (its conversions wait for a new handoff) and tells the hook when
   * it was `connected` until now, so the notification goes out once. Nothing is marked when a new handoff replaced
   * the credentials the refused send used (`replaced`): the new grant was never refused.
   */
  async requireReauthorization(connection: Connection, reason: DeliveryError): Promise<GuardedWrite> {
    return this.requireReauthorizationOf(connection.id, sealedOf(connection), reason);
  }

  /**
   * As requireReauthorization, for a connection row whose credentials (`sealed`, as loaded) do not open
   * (`CredentialsUnreadable`): marked only while those are still the stored ones, and told what to do (connect it
   * again, or restore the key that sealed them). `reason` is what its waiting conversions say.
   */
  async requireReauthorizationForUnreadable(
    row: { id: string; credentials: string | null },
    platform: { label: string; type: string },
  ): Promise<{ marked: GuardedWrite; reason: DeliveryError }> {
    const reason = credentialsUnreadableError(platform.label, platform.type);
    const marked = await this.requireReauthorizationOf(row.id, row.credentials, { ...reason, message: `${reason.message} ${reason.hint}` });
    return { marked, reason };
  }

  private async requireReauthorizationOf(connectionId: string, sealed: string | null | undefined, reason: DeliveryError): Promise<GuardedWrite> {
    this.cache.delete(connectionId);
    const hook = this.deps.onReauthorizationRequired;
    return this.deps.db.transaction(async (tx) => {
      const marked = await markReauthorizationRequired(tx, connectionId, sealed);
      if (marked === 'written' && hook) await hook(tx, connectionId, reason);
      return marked;
    });
  }

  /**
   * Records a platform's refused client (shown on its destinations) at every refusal, so a record another process
   * forgot meanwhile (a refresh that worked there) is made again at once; and says it in the log, at most once per
   * platform per CLIENT_REFUSED_LOG_EVERY_MS: the settings' names and the endpoint's code, never a value.
   */
  private async clientRefused(platform: DestinationPlatform, error: DeliveryError): Promise<void> {
    const now = this.deps.now();
    await recordClientRefused(this.deps.db, platform.type, error, now);
    const last = this.clientRefusedLogged.get(platform.type);
    if (last !== undefined && now.getTime() - last < CLIENT_REFUSED_LOG_EVERY_MS) return;
    this.clientRefusedLogged.set(platform.type, now.getTime());
    this.deps.log?.error(
      { destination: platform.type, code: error.code, status: error.status, hint: error.hint },
      `${platform.label}'s token endpoint refused this service's OAuth client: its conversions and adjustments wait (queued, nothing lost) until the client works again`,
    );
  }

  /**
   * A refresh worked: the platform's client is no longer shown refused, whoever recorded it (this process, another one
   * sharing the store, a connection test of the API), and that is said once.
   */
  private async clientWorksAgain(platform: DestinationPlatform): Promise<void> {
    this.clientRefusedLogged.delete(platform.type);
    if (!(await forgetClientRefused(this.deps.db, platform.type))) return;
    this.deps.log?.info({ destination: platform.type }, `${platform.label}'s token endpoint accepts this service's OAuth client again`);
  }

  /**
   * Takes into `connection` (in place: every batch and context holding it sees them) the credentials a new handoff
   * stored while it was in flight, when the connection is `connected` with the same settings. False otherwise (then
   * its rows wait and are loaded afresh later).
   */
  private async adopt(connection: Connection): Promise<boolean> {
    const loaded = loadedFrom.get(connection.credentials);
    const row = (await findConnectionsById(this.deps.db, [connection.id])).get(connection.id);
    if (!loaded || !row || row.status !== 'connected' || JSON.stringify(row.settings) !== loaded.settings) return false;
    let fresh: Record<string, string>;
    try {
      fresh = openCredentials(this.deps.box, row.credentials);
    } catch (error) {
      if (error instanceof CredentialsUnreadable) return false; // its rows wait and are loaded afresh (and marked) later
      throw error;
    }
    const { credentials: visible, accessToken } = withoutStoredToken(fresh);
    const credentials = connection.credentials;
    for (const key of Object.keys(credentials)) delete credentials[key];
    Object.assign(credentials, visible);
    loadedFrom.set(credentials, { sealed: row.credentials, settings: loaded.settings, accessToken });
    return true;
  }

  private async refresh(
    platform: DestinationPlatform,
    connection: Connection,
    refreshToken: string,
    ctx: { signal: AbortSignal; timeoutMs: number },
    adopted: boolean,
  ): Promise<string> {
    // The scope the grant was given at its sign-in (GRANTED_SCOPE_CREDENTIAL), when stored: a refresh may not ask for more.
    const granted = connection.credentials[GRANTED_SCOPE_CREDENTIAL];
    const result = await refreshAccessToken(platform.oauth!, this.deps.settings, refreshToken, { ...ctx, now: this.deps.now }, granted);
    if (result.ok) {
      const rotated = result.tokens.refreshToken;
      const fresh = { token: result.tokens.accessToken, expiresAt: result.tokens.expiresAt.getTime(), refreshToken: rotated ?? refreshToken };
      if (rotated && rotated !== refreshToken) {
        // Microsoft rotates refresh tokens: keep the newest, or the next refresh after a restart would fail. Stored
        // only over the credentials it came from: a new handoff's grant stays (this send still uses the old one). The
        // access token goes with it, so other processes use it rather than rotate the grant again (see the top).
        const loaded = loadedFrom.get(connection.credentials);
        const sealed = sealCredentials(this.deps.box, {
          ...connection.credentials,
          refresh_token: rotated,
          [STORED_ACCESS_TOKEN]: fresh.token,
          [STORED_ACCESS_TOKEN_EXPIRES_AT]: new Date(fresh.expiresAt).toISOString(),
        });
        const write = await replaceCredentials(this.deps.db, connection.id, sealed, sealedOf(connection));
        connection.credentials.refresh_token = rotated;
        if (loaded && write === 'written') loadedFrom.set(connection.credentials, { ...loaded, sealed, accessToken: fresh });
      }
      this.cache.set(connection.id, fresh);
      await this.clientWorksAgain(platform);
      return fresh.token;
    }
    // The refusal is the grant's, not the service's client's, for a grant issued to another client than the service's
    // now (the operator replaced it), and for `unauthorized_client` whatever the grant: the client authenticated but
    // may not use this grant (RFC 6749 §5.2: Google's answer to another client's grant; Microsoft's when the ad
    // account's organization removed or disabled the app), so the operator's settings work and this connection must be
    // made again. (At a sign-in's code exchange it stays the client's: the hosted page says so.)
    const issuedTo = connection.credentials[OAUTH_CLIENT_CREDENTIAL];
    const otherClient =
      result.kind === 'client_refused' &&
      (result.oauthError === 'unauthorized_client' || (issuedTo !== undefined && issuedTo !== platform.oauth!.clientId(this.deps.settings)));
    if (result.kind === 'client_refused' && !otherClient) {
      const error = oauthClientRefusedError(platform, result.oauthError, result.error.status);
      await this.clientRefused(platform, error);
      throw new OAuthClientRefused(platform.type, error);
    }
    if (result.kind === 'invalid_grant' || otherClient) {
      const reason: DeliveryError =
        result.kind === 'client_refused'
          ? {
              code: 'reauthorization_required',
              message:
                `${platform.label} refused this connection's authorization (${[result.oauthError, `HTTP ${result.error.status}`].filter(Boolean).join(', ')}): ` +
                "the service's OAuth client may no longer use it (it was given to another client of this service, or the ad account's organization removed or blocked the app).",
              hint: `Connect ${platform.label} again. If ${platform.label} refuses that sign-in too, the connect page says what the service's operator must fix.`,
              ...(result.error.status === undefined ? {} : { status: result.error.status }),
            }
          : result.error;
      // Refused credentials that a new handoff replaced meanwhile: the new grant was not refused; refresh with it now.
      const replaced = (await this.requireReauthorization(connection, reason)) === 'replaced';
      if (replaced && !adopted && (await this.adopt(connection))) {
        const next = connection.credentials.refresh_token;
        if (next) return this.refresh(platform, connection, next, ctx, true);
      }
      // Replaced but not taken over (other settings, or not connected now): the items are loaded afresh at once.
      throw new ReauthorizationRequired(platform.type, replaced);
    }
    throw new TokenUnavailable(result.error);
  }
}
