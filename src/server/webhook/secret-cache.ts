/**
 * Webhook secrets by site, cached in memory for a few seconds: the webhook's hot path must not read trigger_sources on
 * every report. Only what a stale cache could get wrong is re-read before it decides:
 * - a signature that matches none of the cached secrets (or a site with none cached) is checked again against the
 *   stored secrets before it is refused, so a secret created or rotated a moment ago works at once;
 * - a signature that matches only the cached *previous* secret is checked again too, so a grace period cut short in
 *   the store ends at once.
 * What remains stale for at most the TTL: a current secret replaced twice within the TTL (the first rotation moves it
 * to previous, which still verifies for 24 hours, so a single rotation never makes the cache accept a dead secret).
 * The secrets are stored sealed; they are opened once per fill of the cache, never per request.
 * A connected trigger source whose secrets do not open with the service's key (CNV_SECRET_KEY changed) is refused as a
 * wrong secret is (`no_signature_match`), until the secret is rotated; the start warns about such sources.
 */
import type { Queryable } from '../db/db';
import type { SecretBox } from '../db/secret-box';
import { TtlCache } from '../db/ttl-cache';
import { findOpenedWebhookSecrets, secretsValidAt, type OpenedWebhookSecrets } from './secret-sql';
import { signatureFailure, type VerifySignatureResult } from './signature';

/** How long looked-up secrets are reused. */
export const WEBHOOK_SECRET_CACHE_TTL_MS = 5_000;

/** Verdicts a fresh read of the secrets could change. */
function mayBeStale(verdict: VerifySignatureResult): boolean {
  return verdict.ok ? verdict.secretIndex > 0 : verdict.code === 'no_signature_match' || verdict.code === 'no_secret';
}

/** A TTL cache of sites' webhook secrets; concurrent misses of one site share one query. Sites without one are not cached. */
export class WebhookSecretCache {
  readonly #cache: TtlCache<string, OpenedWebhookSecrets>;
  readonly #clock: () => number;

  constructor(db: Queryable, box: SecretBox, ttlMs: number = WEBHOOK_SECRET_CACHE_TTL_MS, clock: () => number = Date.now) {
    this.#cache = new TtlCache((siteId) => findOpenedWebhookSecrets(db, box, siteId), { ttlMs, clock });
    this.#clock = clock;
  }

  /**
   * Verifies a request with the secrets valid now for the site (`check` runs the signature verification over them).
   * Returns null when the site has no webhook secret at all, even after a fresh read.
   */
  async verify(siteId: string, check: (secrets: readonly string[]) => VerifySignatureResult): Promise<VerifySignatureResult | null> {
    const cached = this.#cache.cached(siteId);
    if (cached) {
      const secrets = secretsValidAt(await cached, new Date(this.#clock()));
      if (secrets.length > 0) {
        const verdict = check(secrets);
        if (!mayBeStale(verdict)) return verdict;
      }
    }
    // Re-read before any refusal (and before trusting a previous secret), so a rotation made a moment ago counts at once.
    const row = await this.#cache.refresh(siteId);
    if (!row) return null;
    const verdict = check(secretsValidAt(row, new Date(this.#clock())));
    // Connected, but its secret does not open with this key: refused as a signature made with a wrong secret.
    return !verdict.ok && verdict.code === 'no_secret' ? signatureFailure('no_signature_match') : verdict;
  }
}
