import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { createCnvClient, CnvConfigError, type CnvClientOptions, type RetryEvent } from '../../src/client';
import { CORRELATION_COOKIE } from '../../src/protocol/cookies';
import { saasSignupPath } from '../../src/protocol/webhook';
import { fakeTime, startFakeWebhook, type FakeWebhook } from './fake-webhook';

const SECRET = 'whsec_test0000000000000000000000000';
const TOKEN = 'Abcdefghijklmnopqrstuv';
const COOKIE = `${CORRELATION_COOKIE}=${TOKEN}`;

let hook: FakeWebhook;
let time: ReturnType<typeof fakeTime>;

beforeEach(async () => {
  hook = await startFakeWebhook(SECRET);
  time = fakeTime();
});
afterEach(async () => {
  await hook.close();
});

function client(options: Partial<CnvClientOptions> = {}) {
  return createCnvClient({
    webhookBaseUrl: hook.baseUrl,
    siteKey: 'sk_live1',
    triggerKey: 'signup',
    secret: SECRET,
    sleep: time.sleep,
    now: time.now,
    random: () => 1 - Number.EPSILON,
    baseDelayMs: 1000,
    ...options,
  });
}

describe('reportSignup: a correlated report', () => {
  it('posts the spec body, signed, to the saas-signup path and returns the parsed response', async () => {
    const result = await client().reportSignup({
      cookieHeader: COOKIE,
      customerEventId: 'user_42',
      email: 'Ada@Example.com',
      firstName: 'Ada',
    });
    expect(result).toEqual({
      ok: true,
      sent: true,
      attempts: 1,
      response: { status: 'promoted', promoted_count: 1, customer_event_id: 'user_42', correlated: true },
      correlationToken: TOKEN,
      tokenProblem: null,
    });
    expect(hook.requests).toHaveLength(1);
    const [req] = hook.requests;
    expect(req!.method).toBe('POST');
    expect(req!.url).toBe('/api/webhook-bridge/saas-signup/sk_live1/signup');
    expect(req!.headers['content-type']).toBe('application/json');
    expect(req!.headers['x-service-signature']).toMatch(/^t=\d+,v1=[0-9a-f]{64}$/);
    expect(req!.verification.ok).toBe(true);
    expect(req!.json).toEqual({
      correlation_token: TOKEN,
      customer_event_id: 'user_42',
      email: 'Ada@Example.com',
      phone: null,
      first_name: 'Ada',
      last_name: null,
      allow_uncorrelated: false,
    });
  });

  it('signs the timestamp of its own clock', async () => {
    await client().reportSignup({ cookieHeader: COOKIE, customerEventId: 'user_1' });
    expect(hook.requests[0]!.timestamp).toBe(Math.floor(time.now() / 1000));
  });

  it('sends non-ASCII identity fields as UTF-8 bytes that match the signature', async () => {
    const result = await client().reportSignup({ cookieHeader: COOKIE, customerEventId: 'ü-1', lastName: 'Łukasiewicz 🙂' });
    expect(result.ok).toBe(true);
    expect(hook.requests[0]!.json.last_name).toBe('Łukasiewicz 🙂');
  });

  it('URL-encodes a site key outside the path-safe set, and signs the encoded path', async () => {
    const result = await client({ siteKey: 'site key/é?' }).reportSignup({ cookieHeader: COOKIE, customerEventId: 'u' });
    expect(result.ok).toBe(true);
    expect(hook.requests[0]!.url).toBe(saasSignupPath('site key/é?', 'signup'));
    expect(hook.requests[0]!.url).toBe('/api/webhook-bridge/saas-signup/site%20key%2F%C3%A9%3F/signup');
  });

  it('uses an injected fetch', async () => {
    const spy = vi.fn(globalThis.fetch);
    await client({ fetch: spy }).reportSignup({ cookieHeader: COOKIE, customerEventId: 'u' });
    expect(spy).toHaveBeenCalledTimes(1);
    expect(String(spy.mock.calls[0]![0])).toBe(`${hook.baseUrl}/api/webhook-bridge/saas-signup/sk_live1/signup`);
  });
});

describe('reportSignup: without a correlation token', () => {
  it('sends nothing and says why when there is no cookie', async () => {
    const result = await client().reportSignup({ cookieHeader: 'other=1', customerEventId: 'user_1' });
    expect(result).toMatchObject({ ok: false, sent: false, reason: 'no_correlation_token', tokenProblem: 'missing' });
    expect(hook.requests).toHaveLength(0);
  });

  it('sends nothing when given neither request, header nor token', async () => {
    const result = await client().reportSignup({ customerEventId: 'user_1' });
    expect(result).toMatchObject({ ok: false, sent: false, reason: 'no_correlation_token' });
    expect(hook.requests).toHaveLength(0);
  });

  it('ignores a cookie value that is not a token, sends nothing, and says the cookie was malformed', async () => {
    const result = await client().reportSignup({ cookieHeader: `${CORRELATION_COOKIE}=not-a-token`, customerEventId: 'u' });
    expect(result).toMatchObject({ ok: false, sent: false, reason: 'no_correlation_token', tokenProblem: 'malformed' });
    expect(!result.ok && result.message).toMatch(/no valid token/);
    expect(hook.requests).toHaveLength(0);
  });

  it('ignores an explicit correlationToken of the wrong shape', async () => {
    const result = await client().reportSignup({ correlationToken: 'short', customerEventId: 'u' });
    expect(result).toMatchObject({ reason: 'no_correlation_token', tokenProblem: 'malformed' });
    expect(hook.requests).toHaveLength(0);
  });

  it('sends with a null token and allow_uncorrelated true when allowUncorrelated is set', async () => {
    const result = await client().reportSignup({ customerEventId: 'user_1', email: 'a@b.co', allowUncorrelated: true });
    expect(result).toMatchObject({ ok: true, correlationToken: null, tokenProblem: 'missing', attempts: 1 });
    expect(hook.requests[0]!.json).toMatchObject({ correlation_token: null, allow_uncorrelated: true, email: 'a@b.co' });
  });

  it('still sends the token and allow_uncorrelated true when a token exists and allowUncorrelated is set', async () => {
    await client().reportSignup({ cookieHeader: COOKIE, customerEventId: 'u', allowUncorrelated: true });
    expect(hook.requests[0]!.json).toMatchObject({ correlation_token: TOKEN, allow_uncorrelated: true });
  });
});

describe('reportSignup: input checks before sending', () => {
  it.each([
    ['empty', ''],
    ['blank (white space only, which the service refuses)', ' \t '],
    ['201 characters', 'x'.repeat(201)],
    ['201 emoji', '😀'.repeat(201)],
    ['not a string', 42],
    ['missing', undefined],
  ])('refuses a customerEventId that is %s, sending nothing', async (_name, id) => {
    const result = await client().reportSignup({ cookieHeader: COOKIE, customerEventId: id as string });
    expect(result).toMatchObject({ ok: false, sent: false, reason: 'invalid_input', param: 'customerEventId' });
    expect(!result.ok && result.message).toMatch(/1 to 200 characters/);
    expect(hook.requests).toHaveLength(0);
  });

  it('accepts a customerEventId of exactly 200 characters, counted as characters (200 emoji are 400 UTF-16 units)', async () => {
    for (const id of ['x'.repeat(200), '😀'.repeat(200)]) {
      const result = await client().reportSignup({ cookieHeader: COOKIE, customerEventId: id });
      expect(result.ok).toBe(true);
    }
  });

  it('refuses an identity field that is not a string', async () => {
    const result = await client().reportSignup({ cookieHeader: COOKIE, customerEventId: 'u', email: { a: 1 } as unknown as string });
    expect(result).toMatchObject({ reason: 'invalid_input', param: 'email' });
    expect(hook.requests).toHaveLength(0);
  });

  it('refuses an identity field longer than the service accepts (512 characters), before sending', async () => {
    const result = await client().reportSignup({ cookieHeader: COOKIE, customerEventId: 'u', lastName: 'a'.repeat(513) });
    expect(result).toMatchObject({ reason: 'invalid_input', param: 'lastName' });
    expect(hook.requests).toHaveLength(0);
    const longest = await client().reportSignup({ cookieHeader: COOKIE, customerEventId: 'v', lastName: 'a'.repeat(512) });
    expect(longest.ok).toBe(true);
  });

  it('refuses a key that is no field of its input (a typo), naming the field it likely meant, in every method', async () => {
    const signup = await client().reportSignup({ cookieHeader: COOKIE, customerEventId: 'u', customerID: 'cus_1' } as never);
    expect(signup).toMatchObject({ ok: false, sent: false, reason: 'invalid_input', param: 'customerID' });
    expect(!signup.ok && signup.message).toContain('did you mean customerId?');
    const snake = await client().reportConversion('paid', { customerId: 'cus_1', customerEventId: 'inv_1', occurred_at: '2026-11-20T00:00:00Z' } as never);
    expect(snake).toMatchObject({ reason: 'invalid_input', param: 'occurred_at' });
    expect(!snake.ok && snake.message).toContain('did you mean occurredAt?');
    const stranger = await client().adjustConversion({ adjustmentId: 'a', customerEventId: 'inv_1', type: 'retract', note: 'x' } as never);
    expect(stranger).toMatchObject({ reason: 'invalid_input', param: 'note' });
    expect(!stranger.ok && stranger.message).toContain('its fields are adjustmentId, customerEventId, type, value, currency, occurredAt.');
    expect(hook.requests).toHaveLength(0);
  });
});

describe('createCnvClient: configuration errors throw', () => {
  const base: CnvClientOptions = { webhookBaseUrl: 'https://hooks.example.com', siteKey: 's', triggerKey: 'signup', secret: 'x' };
  it.each([
    ['a trigger key with a space', { triggerKey: 'sign up' }, /triggerKey must match/],
    ['a trigger key of 65 characters', { triggerKey: 'k'.repeat(65) }, /triggerKey/],
    ['an empty secret', { secret: '' }, /secret/],
    ['a secret with its line break (read from a file)', { secret: 'whsec_Q1w2E3r4T5y6U7i8O9p0A1s2D3f4G5h6\n' }, /^(?!.*Q1w2E3r4)secret has white space at its start or end/],
    ['a secret with a leading space (pasted)', { secret: ' whsec_Q1w2E3r4T5y6U7i8O9p0A1s2D3f4G5h6' }, /^(?!.*Q1w2E3r4)secret has white space/],
    ['an empty site key', { siteKey: '' }, /siteKey/],
    ['a base URL with a path', { webhookBaseUrl: 'https://hooks.example.com/api' }, /origin/],
    ['a relative base URL', { webhookBaseUrl: '/hooks' }, /absolute/],
    ['zero attempts', { maxAttempts: 0 }, /maxAttempts/],
    ['a fractional timeout', { timeoutMs: 1.5 }, /timeoutMs/],
    ['a misspelled option, naming the one meant', { timeout: 100 }, /^timeout is not an option of createCnvClient: did you mean timeoutMs\?$/],
    ['an option in snake case', { max_attempts: 2 }, /did you mean maxAttempts\?/],
    ['an unknown option, listing the options', { bogus: 1 }, /^bogus is not an option of createCnvClient: its options are webhookBaseUrl, siteKey, .*, now\.$/],
  ])('rejects %s', (_name, override, message) => {
    expect(() => createCnvClient({ ...base, ...override } as CnvClientOptions)).toThrow(CnvConfigError);
    expect(() => createCnvClient({ ...base, ...override } as CnvClientOptions)).toThrow(message);
  });

  it.each([
    ['a user and password', 'https://u:s3cr3tpw@h.example.com'],
    ['a user only', 'https://s3cr3tpw@h.example.com/'],
    ['credentials and a path', 'https://u:s3cr3tpw@h.example.com/api?x=1'],
  ])('refuses credentials in the base URL (%s) without repeating them', (_name, webhookBaseUrl) => {
    let thrown: unknown;
    try {
      createCnvClient({ ...base, webhookBaseUrl });
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(CnvConfigError);
    const message = (thrown as Error).message;
    expect(message).toMatch(/must not contain credentials/);
    expect(message).toContain('https://***@h.example.com');
    expect(message).not.toContain('s3cr3tpw');
  });

  it('does not repeat the query of a base URL it refuses, nor user info of one it cannot parse', () => {
    expect(() => createCnvClient({ ...base, webhookBaseUrl: 'https://h.example.com/?token=s3cr3tpw' })).toThrow(/^(?!.*s3cr3tpw).*origin.*query and fragment not shown/);
    expect(() => createCnvClient({ ...base, webhookBaseUrl: 'https://u:s3cr3tpw@' })).toThrow(/^(?!.*s3cr3tpw).*absolute/);
  });

  it.each([
    ['webhookBaseUrl', { webhookBaseUrl: 'whsec_Q1w2E3r4T5y6U7i8O9p0A1s2D3f4G5h6' }],
    ['siteKey', { siteKey: 'whsec_Q1w2E3r4T5y6U7i8O9p0A1s2D3f4G5h6' }],
    ['triggerKey (a secret is shaped like a valid key)', { triggerKey: 'whsec_Q1w2E3r4T5y6U7i8O9p0A1s2D3f4G5h6' }],
    ['triggerKey equal to the secret, whatever its shape', { triggerKey: 'SameAsSecret_9', secret: 'SameAsSecret_9' }],
  ])('refuses the webhook secret given as %s (swapped settings), without repeating it', (name, override) => {
    let thrown: unknown;
    try {
      createCnvClient({ ...base, ...override } as CnvClientOptions);
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(CnvConfigError);
    const message = (thrown as Error).message;
    expect(message).toMatch(new RegExp(`^${name.split(' ')[0]} holds the webhook secret \\(not shown here\\): were two settings swapped\\?`));
    expect(message).not.toMatch(/Q1w2E3r4|SameAsSecret/);
  });

  it('accepts a trigger key that merely begins with whsec_ (the spec allows it)', () => {
    expect(() => createCnvClient({ ...base, triggerKey: 'whsec_signup' })).not.toThrow();
  });

  it('accepts a base URL with a trailing slash', () => {
    expect(() => createCnvClient({ ...base, webhookBaseUrl: 'https://hooks.example.com/' })).not.toThrow();
  });
});

describe('reportSignup: retries', () => {
  it('retries a 500, re-signing with a fresh timestamp, and returns the attempts taken', async () => {
    hook.script({ status: 500, body: { error: { type: 'api_error', code: 'internal', message: 'boom' } } });
    const retries: RetryEvent[] = [];
    // A wait of at least a second, so the fresh timestamp differs from the first whatever the start time.
    const result = await client({ baseDelayMs: 2000, onRetry: (e) => retries.push(e) }).reportSignup({ cookieHeader: COOKIE, customerEventId: 'u' });
    expect(result).toMatchObject({ ok: true, attempts: 2 });
    expect(hook.requests).toHaveLength(2);
    const [first, second] = hook.requests;
    expect(first!.verification.ok && second!.verification.ok).toBe(true);
    expect(second!.rawBody.equals(first!.rawBody)).toBe(true);
    expect(second!.timestamp).toBeGreaterThan(first!.timestamp!);
    expect(second!.headers['x-service-signature']).not.toBe(first!.headers['x-service-signature']);
    expect(retries).toEqual([
      { attempt: 1, delayMs: time.delays[0], failure: { kind: 'http', httpStatus: 500, error: { type: 'api_error', code: 'internal', message: 'boom' } } },
    ]);
  });

  it('backs off exponentially up to maxDelayMs, with the jitter drawn from random', async () => {
    hook.script({ status: 503 }, { status: 503 }, { status: 503 }, { status: 503 });
    const result = await client({ maxAttempts: 5, baseDelayMs: 1000, maxDelayMs: 5000 }).reportSignup({ cookieHeader: COOKIE, customerEventId: 'u' });
    expect(result.ok).toBe(true);
    expect(time.delays).toEqual([999, 1999, 3999, 4999]);
  });

  it('gives up after maxAttempts transient failures and says what failed last', async () => {
    hook.script({ status: 502 }, { status: 502 }, { status: 503 });
    const result = await client({ maxAttempts: 3 }).reportSignup({ cookieHeader: COOKIE, customerEventId: 'u' });
    expect(result).toMatchObject({ ok: false, sent: true, reason: 'gave_up', attempts: 3, lastFailure: { kind: 'http', httpStatus: 503 } });
    expect(!result.ok && result.message).toMatch(/after 3 attempt/);
    expect(hook.requests).toHaveLength(3);
    expect(time.delays).toHaveLength(2); // no wait after the last attempt
  });

  it('waits at least the Retry-After seconds of a 429', async () => {
    hook.script({ status: 429, headers: { 'retry-after': '7' } });
    const result = await client({ random: () => 0 }).reportSignup({ cookieHeader: COOKIE, customerEventId: 'u' });
    expect(result).toMatchObject({ ok: true, attempts: 2 });
    expect(time.delays).toEqual([7000]);
  });

  it('honours a Retry-After given as an HTTP date', async () => {
    const start = time.now();
    const at = new Date(Math.ceil(start / 1000) * 1000 + 12_000);
    hook.script({ status: 503, headers: { 'retry-after': at.toUTCString() } });
    await client({ random: () => 0 }).reportSignup({ cookieHeader: COOKIE, customerEventId: 'u' });
    expect(time.delays).toEqual([at.getTime() - start]);
  });

  it('shortens a very long Retry-After to maxRetryAfterMs', async () => {
    hook.script({ status: 429, headers: { 'retry-after': '3600' } });
    await client({ random: () => 0, maxRetryAfterMs: 20_000 }).reportSignup({ cookieHeader: COOKIE, customerEventId: 'u' });
    expect(time.delays).toEqual([20_000]);
  });

  // The attempt's timeout runs on vitest's fake setTimeout: the test decides when time passes, so neither a slow
  // machine (a real answer arriving after the timeout) nor a fast one changes what is tested.
  describe('on fake timers', () => {
    beforeEach(() => {
      vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    });
    afterEach(() => {
      vi.useRealTimers();
    });

    /** Waits (on real I/O, no clock) until the fake has received `count` requests. */
    async function requestsArrived(count: number): Promise<void> {
      while (hook.requests.length < count) await new Promise((resolve) => setImmediate(resolve));
    }

    it('ends a hanging attempt at exactly timeoutMs and retries it', async () => {
      hook.script('hang');
      const retries: RetryEvent[] = [];
      let settled = false;
      const report = client({ timeoutMs: 150, onRetry: (e) => retries.push(e) })
        .reportSignup({ cookieHeader: COOKIE, customerEventId: 'u' })
        .finally(() => (settled = true));
      await requestsArrived(1);
      await vi.advanceTimersByTimeAsync(149);
      expect(retries).toEqual([]);
      expect(settled).toBe(false);
      await vi.advanceTimersByTimeAsync(1);
      expect(retries).toHaveLength(1);
      expect(retries[0]!.failure).toEqual({ kind: 'timeout', timeoutMs: 150 });
      expect(await report).toMatchObject({ ok: true, attempts: 2 });
      expect(hook.requests).toHaveLength(2);
    });

    it('gives up on a service that always hangs, one timeout per attempt', async () => {
      hook.script('hang', 'hang');
      const report = client({ timeoutMs: 100, maxAttempts: 2 }).reportSignup({ cookieHeader: COOKIE, customerEventId: 'u' });
      await requestsArrived(1);
      await vi.advanceTimersByTimeAsync(100);
      await requestsArrived(2);
      await vi.advanceTimersByTimeAsync(100);
      expect(await report).toMatchObject({ reason: 'gave_up', attempts: 2, lastFailure: { kind: 'timeout', timeoutMs: 100 } });
      expect(hook.requests).toHaveLength(2);
    });
  });

  it('retries after a connection reset', async () => {
    hook.script('reset');
    const retries: RetryEvent[] = [];
    const result = await client({ onRetry: (e) => retries.push(e) }).reportSignup({ cookieHeader: COOKIE, customerEventId: 'u' });
    expect(result).toMatchObject({ ok: true, attempts: 2 });
    expect(retries[0]!.failure.kind).toBe('network');
  });

  it('retries when nothing listens, and gives up naming the network error', async () => {
    const url = hook.baseUrl;
    await hook.close();
    const result = await client({ webhookBaseUrl: url, maxAttempts: 2 }).reportSignup({ cookieHeader: COOKIE, customerEventId: 'u' });
    expect(result).toMatchObject({ reason: 'gave_up', attempts: 2, lastFailure: { kind: 'network' } });
    expect(!result.ok && result.message).toMatch(/ECONNREFUSED/);
    hook = await startFakeWebhook(SECRET); // for afterEach
  });
});

describe('reportSignup: fails fast on other client errors', () => {
  it('returns a 400 with the service error after one attempt', async () => {
    const error = { type: 'invalid_request_error', code: 'parameter_invalid', message: 'customer_event_id is too long', param: 'customer_event_id' };
    hook.script({ status: 400, body: { error } });
    const result = await client().reportSignup({ cookieHeader: COOKIE, customerEventId: 'u' });
    expect(result).toMatchObject({ ok: false, sent: true, reason: 'rejected', httpStatus: 400, attempts: 1, error });
    expect(!result.ok && result.message).toMatch(/customer_event_id is too long/);
    expect(hook.requests).toHaveLength(1);
    expect(time.delays).toHaveLength(0);
  });

  it('returns a 401 for a wrong secret with a hint at the secret and the clock', async () => {
    const result = await client({ secret: 'whsec_wrong' }).reportSignup({ cookieHeader: COOKIE, customerEventId: 'u' });
    expect(result).toMatchObject({ reason: 'rejected', httpStatus: 401, attempts: 1, error: { code: 'no_signature_match' } });
    expect(!result.ok && result.message).toMatch(/current webhook secret/);
    expect(hook.requests).toHaveLength(1);
  });

  it.each([
    ['no_webhook_secret', /no webhook secret yet: connect its API trigger source .* set `secret` to the secret its page shows\.$/],
    ['timestamp_outside_tolerance', /Check this machine's clock: the signature's time must be within 5 minutes of the service's\.$/],
  ])('gives a 401 %s the advice of its own cause, not the secret’s', async (code, advice) => {
    hook.script({ status: 401, body: { error: { type: 'authentication_error', code, message: 'Said by the service.' } } });
    const result = await client().reportSignup({ cookieHeader: COOKIE, customerEventId: 'u' });
    expect(result).toMatchObject({ reason: 'rejected', httpStatus: 401, error: { code } });
    expect(!result.ok && result.message).toMatch(advice);
    expect(!result.ok && result.message).toContain(`${code}: Said by the service.`);
    expect(!result.ok && result.message).not.toMatch(/rotated/);
  });

  it('keeps a 4xx without an error envelope as error null', async () => {
    hook.script({ status: 404, body: 'not here' });
    const result = await client().reportSignup({ cookieHeader: COOKIE, customerEventId: 'u' });
    expect(result).toMatchObject({ reason: 'rejected', httpStatus: 404, error: null });
    expect(!result.ok && result.message).toMatch(/no such webhook.*Check siteKey and webhookBaseUrl/);
  });

  it.each(['site_not_found', 'route_not_found'])('points a 404 %s at the address (siteKey, webhookBaseUrl)', async (code) => {
    hook.script({ status: 404, body: { error: { type: 'not_found_error', code, message: 'No such thing.' } } });
    const result = await client().reportSignup({ cookieHeader: COOKIE, customerEventId: 'u' });
    expect(!result.ok && result.message).toMatch(new RegExp(`no such webhook \\(HTTP 404, ${code}: No such thing\\.\\)\\. Check siteKey and webhookBaseUrl`));
  });

  it("passes any other 404 on as the service said it, without the address hint (an adjustment's unknown customer_event_id)", async () => {
    const error = { type: 'not_found_error', code: 'resource_missing', message: "No conversion was reported with customer_event_id 'x1'.", param: 'customer_event_id' };
    hook.script({ status: 404, body: { error } });
    const result = await client().adjustConversion({ adjustmentId: 'a1', customerEventId: 'x1', type: 'retract' });
    expect(result).toMatchObject({ ok: false, sent: true, reason: 'rejected', httpStatus: 404, error });
    const message = !result.ok ? result.message : '';
    expect(message).toBe(`The service rejected the report (HTTP 404, resource_missing: ${error.message}).`);
    expect(message).not.toMatch(/webhook|siteKey|webhookBaseUrl/);
  });

  it('does not follow a redirect, which would change the signed path', async () => {
    hook.script({ status: 308, headers: { location: 'https://elsewhere.example/x' } });
    const result = await client().reportSignup({ cookieHeader: COOKIE, customerEventId: 'u' });
    expect(result).toMatchObject({ reason: 'rejected', httpStatus: 308, attempts: 1 });
    expect(!result.ok && result.message).toMatch(/redirects.*elsewhere\.example/);
    expect(hook.requests).toHaveLength(1);
  });

  it('reports a 2xx whose body is not a webhook response', async () => {
    hook.script({ status: 200, body: '<html>welcome</html>' });
    const result = await client().reportSignup({ cookieHeader: COOKIE, customerEventId: 'u' });
    expect(result).toMatchObject({ ok: false, sent: true, reason: 'unexpected_response', httpStatus: 200, attempts: 1 });
  });
});

describe('reportSignup: wrongly typed options from untyped callers', () => {
  const untyped = (input: Record<string, unknown>) => client().reportSignup(input as never);
  it.each([
    ['cookieHeader', { cookieHeader: 5 }],
    ['cookieHeader', { cookieHeader: { cookie: COOKIE } }],
    ['cookieHeader', { cookieHeader: [COOKIE, 5] }],
    ['correlationToken', { correlationToken: 5 }],
    ['correlationToken', { correlationToken: { token: TOKEN } }],
    ['request', { request: 'GET /' }],
    ['request', { request: {} }],
    ['request', { request: { headers: { cookie: 5 } } }],
    ['request', { request: { headers: { get: () => 5 } } }],
  ])('returns invalid_input for param %s (%j), sending nothing', async (param, wrong) => {
    const result = await untyped({ customerEventId: 'x1', ...wrong });
    expect(result).toMatchObject({ ok: false, sent: false, reason: 'invalid_input', param });
    expect(hook.requests).toHaveLength(0);
  });

  it('checks them for reportConversion too', async () => {
    const result = await client().reportConversion('paid', { customerEventId: 'x1', customerId: 'c1', cookieHeader: 5 } as never);
    expect(result).toMatchObject({ ok: false, sent: false, reason: 'invalid_input', param: 'cookieHeader' });
  });

  it('refuses an occurredAt without a time zone, which would be read in this machine’s zone, and sends one with its zone in UTC', async () => {
    for (const occurredAt of ['2026-11-28T10:00:00', '2026-11-28 10:00:00Z', '2026-11-28', 'yesterday', new Date(Number.NaN)]) {
      const stage = await client().reportConversion('paid', { customerEventId: 'x1', customerId: 'c1', cookieHeader: COOKIE, occurredAt });
      expect(stage, String(occurredAt)).toMatchObject({ ok: false, sent: false, reason: 'invalid_input', param: 'occurredAt' });
      const adjustment = await client().adjustConversion({ adjustmentId: 'a1', customerEventId: 'x1', type: 'retract', occurredAt });
      expect(adjustment, String(occurredAt)).toMatchObject({ ok: false, sent: false, reason: 'invalid_input', param: 'occurredAt' });
    }
    expect(hook.requests).toHaveLength(0);
    await client().reportConversion('paid', { customerEventId: 'x1', customerId: 'c1', cookieHeader: COOKIE, occurredAt: '2026-11-28T10:00:00+01:00' });
    expect(hook.requests[0]!.json.occurred_at).toBe('2026-11-28T09:00:00.000Z');
  });

  it('still accepts a null cookie header and a request without a cookie', async () => {
    expect(await untyped({ customerEventId: 'x1', cookieHeader: null })).toMatchObject({ reason: 'no_correlation_token' });
    expect(await untyped({ customerEventId: 'x1', request: { headers: {} } })).toMatchObject({ reason: 'no_correlation_token' });
    expect(await untyped({ customerEventId: 'x1', request: new Request('https://x.example', { headers: { cookie: COOKIE } }) })).toMatchObject({ ok: true });
  });
});

describe('reportSignup: an onRetry hook that throws', () => {
  it('is ignored: the retries go on and the report resolves', async () => {
    hook.script({ status: 503 }, { status: 503 });
    let calls = 0;
    const result = await client({
      onRetry: () => {
        calls++;
        throw new Error('logger down');
      },
    }).reportSignup({ cookieHeader: COOKIE, customerEventId: 'u' });
    expect(result).toMatchObject({ ok: true, attempts: 3 });
    expect(calls).toBe(2);
    expect(hook.requests).toHaveLength(3);
  });
});

describe('reportSignup: an async onRetry hook that rejects', () => {
  it('is ignored too: no unhandled rejection (which ends a Node process), the retries go on', async () => {
    hook.script({ status: 503 }, { status: 503 });
    const unhandled: unknown[] = [];
    const onUnhandled = (reason: unknown) => unhandled.push(reason);
    process.on('unhandledRejection', onUnhandled);
    try {
      let calls = 0;
      const result = await client({
        onRetry: async () => {
          calls++;
          throw new Error('logger down');
        },
      }).reportSignup({ cookieHeader: COOKIE, customerEventId: 'u' });
      expect(result).toMatchObject({ ok: true, attempts: 3 });
      expect(calls).toBe(2);
      // Unhandled rejections are reported after the microtask queue drains: give them the chance.
      await new Promise((done) => setImmediate(done));
      await new Promise((done) => setImmediate(done));
      expect(unhandled).toEqual([]);
    } finally {
      process.off('unhandledRejection', onUnhandled);
    }
  });
});

describe('reportSignup: the response', () => {
  it("has the service's correlated flag", async () => {
    const result = await client().reportSignup({ cookieHeader: COOKIE, customerEventId: 'u' });
    expect(result.ok && result.response.correlated).toBe(true);
  });

  it('is not taken as a webhook response without it', async () => {
    hook.script({ status: 200, body: { status: 'promoted', promoted_count: 1, customer_event_id: 'u' } });
    const result = await client().reportSignup({ cookieHeader: COOKIE, customerEventId: 'u' });
    expect(result).toMatchObject({ ok: false, reason: 'unexpected_response' });
  });
});
