/** The client's options, their defaults, and the checks that turn a misconfiguration into an error at construction. */
import { CLIENT_ATTEMPT_TIMEOUT_MS, isTriggerKey, saasSignupPath, TRIGGER_KEY_PATTERN } from '../protocol/webhook';
import type { BackoffSettings } from './backoff';
import type { TransientFailure } from './attempt';
import { meantName } from './names';

/** Told before each retry: which attempt failed, how, and how long the client waits now. */
export interface RetryEvent {
  /** The attempt that just failed (1-based). */
  attempt: number;
  delayMs: number;
  failure: TransientFailure;
}

export interface CnvClientOptions {
  /** Base URL of the webhook host ({webhook_base_url}), an origin such as `https://hooks.example.com`. */
  webhookBaseUrl: string;
  /** The site's public key. */
  siteKey: string;
  /** The trigger key of the flow's API trigger: 1 to 64 characters of `[A-Za-z0-9_-]`. */
  triggerKey: string;
  /** The webhook secret of the trigger. Keep it on the server. */
  secret: string;
  /** Attempts in all, first included (default 4). */
  maxAttempts?: number;
  /** Per-attempt timeout in ms, reading the response included (default 5000). */
  timeoutMs?: number;
  /** Ceiling of the first backoff in ms, doubled per failure (default 500). */
  baseDelayMs?: number;
  /** Largest backoff ceiling in ms (default 8000). */
  maxDelayMs?: number;
  /**
   * Largest Retry-After honoured in ms (default 60000: the service's rate-limit window, so a 429 is waited out in one
   * go); a longer one is shortened to this.
   */
  maxRetryAfterMs?: number;
  /** Called before each retry, e.g. to log it. */
  onRetry?: (event: RetryEvent) => void;
  /** The fetch to use (default: the global fetch). */
  fetch?: typeof fetch;
  /** For tests: how to wait (default setTimeout). */
  sleep?: (ms: number) => Promise<void>;
  /** For tests: the jitter source in [0, 1) (default Math.random). */
  random?: () => number;
  /** For tests: the clock in ms (default Date.now); signature timestamps and HTTP-date Retry-After use it. */
  now?: () => number;
}

/** A misconfigured client: thrown by `createCnvClient`, never by `reportSignup`. */
export class CnvConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'CnvConfigError';
  }
}

export interface ResolvedOptions extends BackoffSettings {
  url: string;
  path: string;
  /** The webhook host's origin and the site key, for the other webhooks of the site (stages, adjustments). */
  origin: string;
  siteKey: string;
  secret: string;
  maxAttempts: number;
  timeoutMs: number;
  onRetry: ((event: RetryEvent) => void) | null;
  fetch: typeof fetch | null;
  sleep: (ms: number) => Promise<void>;
  random: () => number;
  now: () => number;
}

export const DEFAULTS = {
  maxAttempts: 4,
  timeoutMs: CLIENT_ATTEMPT_TIMEOUT_MS,
  baseDelayMs: 500,
  maxDelayMs: 8000,
  maxRetryAfterMs: 60_000,
} as const;

/** Every option createCnvClient takes: any other key is a misspelling (`timeout`, `maxRetries`), refused at once. */
const OPTION_NAMES: readonly (keyof CnvClientOptions)[] = [
  'webhookBaseUrl', 'siteKey', 'triggerKey', 'secret', 'maxAttempts', 'timeoutMs', 'baseDelayMs', 'maxDelayMs',
  'maxRetryAfterMs', 'onRetry', 'fetch', 'sleep', 'random', 'now',
];

/** Checks the options and fills in defaults; throws CnvConfigError naming the bad option. */
export function resolveOptions(options: CnvClientOptions): ResolvedOptions {
  if (!options || typeof options !== 'object') throw new CnvConfigError('createCnvClient needs an options object.');
  for (const name of Object.keys(options)) {
    if ((OPTION_NAMES as readonly string[]).includes(name)) continue;
    const meant = meantName(name, OPTION_NAMES);
    throw new CnvConfigError(
      `${name} is not an option of createCnvClient: ${meant ? `did you mean ${meant}?` : `its options are ${OPTION_NAMES.join(', ')}.`}`,
    );
  }
  refuseSecretElsewhere(options);
  const origin = webhookOrigin(options.webhookBaseUrl);
  if (typeof options.siteKey !== 'string' || options.siteKey.length === 0) {
    throw new CnvConfigError('siteKey must be a non-empty string (the site key of the install snippet).');
  }
  if (!isTriggerKey(options.triggerKey)) {
    throw new CnvConfigError(
      `triggerKey must match ${TRIGGER_KEY_PATTERN} (1 to 64 letters, digits, _ or -); got ${JSON.stringify(options.triggerKey)}.`,
    );
  }
  if (typeof options.secret !== 'string' || options.secret.length === 0) {
    throw new CnvConfigError('secret must be the non-empty webhook secret of the trigger.');
  }
  if (options.secret !== options.secret.trim()) {
    // A secret read from a file or pasted with its line break: every signature would be refused as no_signature_match.
    throw new CnvConfigError(
      'secret has white space at its start or end (a line break from a file or a paste?): webhook secrets have none, ' +
        'and a signature made with it never matches. Trim it.',
    );
  }
  for (const name of ['onRetry', 'fetch', 'sleep', 'random', 'now'] as const) {
    if (options[name] !== undefined && typeof options[name] !== 'function') {
      throw new CnvConfigError(`${name} must be a function.`);
    }
  }
  const path = saasSignupPath(options.siteKey, options.triggerKey);
  return {
    url: origin + path,
    path,
    origin,
    siteKey: options.siteKey,
    secret: options.secret,
    maxAttempts: integerOption('maxAttempts', options.maxAttempts, DEFAULTS.maxAttempts, 1, 20),
    timeoutMs: integerOption('timeoutMs', options.timeoutMs, DEFAULTS.timeoutMs, 1, 120_000),
    baseDelayMs: integerOption('baseDelayMs', options.baseDelayMs, DEFAULTS.baseDelayMs, 0, 600_000),
    maxDelayMs: integerOption('maxDelayMs', options.maxDelayMs, DEFAULTS.maxDelayMs, 0, 600_000),
    maxRetryAfterMs: integerOption('maxRetryAfterMs', options.maxRetryAfterMs, DEFAULTS.maxRetryAfterMs, 0, 600_000),
    onRetry: options.onRetry ?? null,
    fetch: options.fetch ?? null,
    sleep: options.sleep ?? ((ms) => new Promise((resolve) => setTimeout(resolve, ms))),
    random: options.random ?? Math.random,
    now: options.now ?? Date.now,
  };
}

/** The shape of every webhook secret the service makes: `whsec_` and 32 letters and digits. */
const SECRET_SHAPE = /^whsec_[A-Za-z0-9]{32}$/;

const PLACE_OF: Record<'webhookBaseUrl' | 'siteKey' | 'triggerKey', string> = {
  webhookBaseUrl: 'the webhook host, such as https://hooks.example.com',
  siteKey: 'the site key of the install snippet',
  triggerKey: "the key of the flow's API trigger",
};

/**
 * The webhook secret given as another option (two environment variables swapped): refused without repeating it. A
 * secret is shaped like a valid site key and trigger key, so it would otherwise be accepted and sent in the URL path
 * (proxy logs), and the service's 404 for an unknown site key, which names the key, would carry it into the result's
 * message; as webhookBaseUrl it would be repeated in the error saying it is not a URL.
 */
function refuseSecretElsewhere(options: CnvClientOptions): void {
  for (const name of ['webhookBaseUrl', 'siteKey', 'triggerKey'] as const) {
    const value: unknown = options[name];
    if (typeof value !== 'string') continue;
    const secret: unknown = options.secret;
    // A key may begin with whsec_ (the spec allows any [A-Za-z0-9_-]); one shaped exactly like a secret is one.
    const shaped = name === 'webhookBaseUrl' ? value.trim().startsWith('whsec_') : SECRET_SHAPE.test(value.trim());
    const isSecret = shaped || (typeof secret === 'string' && secret.trim() !== '' && value.trim() === secret.trim());
    if (isSecret) {
      throw new CnvConfigError(
        `${name} holds the webhook secret (not shown here): were two settings swapped? ${name} is ${PLACE_OF[name]}; ` +
          'the secret goes in `secret` only. If it was logged or committed anywhere, rotate it.',
      );
    }
  }
}

/**
 * The origin of the webhook base URL; the signed path starts at /api/webhook-bridge/, so no other path may precede it.
 * The messages never repeat credentials, a query or a fragment of the value: they end up in logs.
 */
function webhookOrigin(value: unknown): string {
  let url: URL;
  try {
    url = new URL(String(value));
  } catch {
    throw new CnvConfigError(`webhookBaseUrl must be an absolute http(s) URL; got ${JSON.stringify(withoutUserInfo(String(value)))}.`);
  }
  if (url.username || url.password) {
    throw new CnvConfigError(
      `webhookBaseUrl must not contain credentials (a user name or password before the host); got ${url.protocol}//***@${url.host}. ` +
        'The webhook is authenticated by its signature (secret), not by the URL.',
    );
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') {
    throw new CnvConfigError(`webhookBaseUrl must use http or https; got ${url.protocol}`);
  }
  if ((url.pathname !== '/' && url.pathname !== '') || url.search || url.hash) {
    const extra = url.search || url.hash ? ' (query and fragment not shown)' : '';
    throw new CnvConfigError(
      `webhookBaseUrl must be an origin such as https://hooks.example.com (no path, query or fragment); got ${url.origin}${url.pathname}${extra}.`,
    );
  }
  return url.origin;
}

/** A URL-ish string with anything between `//` and `@` (user info) masked. */
function withoutUserInfo(text: string): string {
  return text.replace(/\/\/[^/?#]*@/, '//***@');
}

function integerOption(name: string, value: number | undefined, fallback: number, min: number, max: number): number {
  if (value === undefined) return fallback;
  if (!Number.isInteger(value) || value < min || value > max) {
    throw new CnvConfigError(`${name} must be an integer from ${min} to ${max}; got ${String(value)}.`);
  }
  return value;
}
